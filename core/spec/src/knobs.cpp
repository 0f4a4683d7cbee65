// Knob parsing and validation, driven by the knob table: every bad value gets a message naming
// the field and the accepted values.
#include "pitlane/spec/knob_table.h"
#include "pitlane/spec/suggest.h"
#include "knob_limits.h"
#include "text_util.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <set>
#include <vector>

namespace pitlane::spec {

namespace {

using detail::joined;

std::string oneOf(const json& v, const std::vector<std::string>& allowed, const std::string& where,
                  const std::string& field) {
    if (!v.is_string())
        throw SpecError(where, field,
                        "expected a string (one of " + joined(allowed) + "), got " + v.type_name());
    const auto s = v.get<std::string>();
    if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
        throw SpecError(where, field,
                        "unknown value \"" + detail::shown(s) + "\" (expected one of " + joined(allowed) + ")");
    return s;
}

// Why a knob has its minimum, where the number alone does not say.
std::string belowMinimum(const KnobInfo& knob) {
    if (knob.name == "memory_limit_mb")
        return ": " + detail::memoryLimitMinimumWhy();
    return {};
}

int count(const json& v, const KnobInfo& knob, const std::string& where, const std::string& field) {
    const std::string lo = std::to_string(knob.min);
    if (!v.is_number_integer())
        throw SpecError(where, field, "expected an integer >= " + lo + ", got " + detail::shown(v));
    // 18446744073709551615 read as a long long is -1: echoed as written, and too large.
    const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(LLONG_MAX);
    const long long n = huge ? LLONG_MAX : v.get<long long>();
    if (n < knob.min)
        throw SpecError(where, field, "must be >= " + lo + ", got " + detail::shown(v) + belowMinimum(knob));
    if (n > knob.max)
        throw SpecError(where, field,
                        "must be <= " + std::to_string(knob.max) + ", got " + detail::shown(v));
    return static_cast<int>(n);
}

bool boolean(const json& v, const std::string& where, const std::string& field) {
    if (!v.is_boolean()) throw SpecError(where, field, "expected true or false, got " + detail::shown(v));
    return v.get<bool>();
}

std::string device(const json& v, const std::string& where, const std::string& field) {
    if (!v.is_string()) throw SpecError(where, field, "expected \"cpu\" or \"cuda:N\"");
    const auto s = v.get<std::string>();
    const bool cuda = s.rfind("cuda:", 0) == 0 && s.size() > 5 &&
                      std::all_of(s.begin() + 5, s.end(), [](unsigned char c) { return std::isdigit(c); });
    if (s != "cpu" && !cuda)
        throw SpecError(where, field, "unknown device \"" + detail::shown(s) + "\" (expected \"cpu\" or \"cuda:N\")");
    return s;
}

json batchSizes(const json& v, const KnobInfo& knob, const std::string& where,
                const std::string& field) {
    if (!v.is_array()) return count(v, knob, where, field);
    if (v.empty()) throw SpecError(where, field, "a batch-size sweep needs at least one size");
    std::set<int> seen;
    json out = json::array();
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto fi = field + "[" + std::to_string(i) + "]";
        const int b = count(v[i], knob, where, fi);
        if (!seen.insert(b).second)
            throw SpecError(where, fi, "batch size " + std::to_string(b) + " is listed twice");
        out.push_back(b);
    }
    return out;
}

json coreList(const json& v, const KnobInfo& knob, const std::string& where,
              const std::string& field) {
    if (!v.is_array()) return oneOf(v, knob.choices, where, field);
    if (v.empty()) throw SpecError(where, field, "a core list needs at least one core id");
    std::set<int> seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto fi = field + "[" + std::to_string(i) + "]";
        if (!v[i].is_number_integer() || v[i].get<long long>() < knob.min ||
            v[i].get<long long>() > knob.max)
            throw SpecError(where, fi,
                            "expected a core id " + std::to_string(knob.min) + ".." +
                                std::to_string(knob.max) + ", got " + detail::shown(v[i]));
        if (!seen.insert(v[i].get<int>()).second)
            throw SpecError(where, fi, "core " + detail::shown(v[i]) + " is listed twice");
    }
    return v;
}

// An object of booleans named by the row's choices; names left out keep the default's value.
json flags(const json& v, const KnobInfo& knob, const std::string& where, const std::string& field) {
    if (!v.is_object())
        throw SpecError(where, field, "must be an object of booleans (" + joined(knob.choices) + "), got " + detail::shown(v));
    json out = knob.defaultValue;
    for (const auto& [name, value] : v.items()) {
        if (std::find(knob.choices.begin(), knob.choices.end(), name) == knob.choices.end())
            throw SpecError(where, field + "." + name,
                            "unknown option; the options are " + joined(knob.choices));
        if (!value.is_boolean())
            throw SpecError(where, field + "." + name, "must be true or false, got " + detail::shown(value));
        out[name] = value;
    }
    return out;
}

std::vector<std::string> knobNames() {
    std::vector<std::string> names;
    for (const auto& k : knobTable()) names.push_back(k.name);
    return names;
}

}  // namespace

json validateKnob(const KnobInfo& knob, const json& v, const std::string& where,
                  const std::string& field) {
    switch (knob.kind) {
        case KnobKind::Choice: return oneOf(v, knob.choices, where, field);
        case KnobKind::Device: return device(v, where, field);
        case KnobKind::Bool:
        case KnobKind::TorchBool: return boolean(v, where, field);
        case KnobKind::Count:
        case KnobKind::OptionalCount: return count(v, knob, where, field);
        case KnobKind::CountOrList: return batchSizes(v, knob, where, field);
        case KnobKind::ChoiceOrCores: return coreList(v, knob, where, field);
        case KnobKind::Flags: return flags(v, knob, where, field);
    }
    throw SpecError(where, field, "knob kind not handled");
}

namespace {

// The cores this process may run on (the worker's default intra_op_threads).
int allowedCores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    return 1;
}

// Combinations torch would reject later with an obscure message: the knobs a rule reads, the
// field it names, and its reason ("" when the combination is fine).
struct KnobRule {
    std::vector<std::string> knobs;
    const char* field;
    std::string (*why)(const Knobs&);
};

const std::vector<KnobRule>& knobRules() {
    static const std::vector<KnobRule> rules = {
        {{"jit", "mode"}, "jit",
         [](const Knobs& k) -> std::string {
             if (k.jit == Jit::None || k.mode != Mode::Train) return {};
             return "jit \"" + choiceName(k.jit) + "\" needs mode \"eval\" (torch::jit::freeze only freezes "
                    "modules in eval mode)";
         }},
        {{"workload", "grad"}, "workload",
         [](const Knobs& k) -> std::string {
             if (k.workload != Workload::TrainStep || k.grad == Grad::Enabled) return {};
             return "workload \"train_step\" needs grad \"enabled\": under grad \"" + choiceName(k.grad) +
                    "\" autograd records no graph, so there is nothing to backpropagate";
         }},
        {{"workload", "jit"}, "workload",
         [](const Knobs& k) -> std::string {
             if (k.workload != Workload::TrainStep || k.jit == Jit::None) return {};
             return "workload \"train_step\" needs jit \"none\": jit \"" + choiceName(k.jit) +
                    "\" freezes the weights into graph constants, so the module has no "
                    "parameters left to train";
         }},
        {{"cuda_graph", "device"}, "cuda_graph",
         [](const Knobs& k) -> std::string {
             return k.cuda_graph && k.device == "cpu"
                        ? "CUDA graphs need a CUDA device (set device to \"cuda:N\")"
                        : "";
         }},
        {{"memory_limit_mb", "intra_op_threads", "inter_op_threads"}, "memory_limit_mb",
         [](const Knobs& k) -> std::string {
             if (!k.memory_limit_mb) return {};
             // intra_op_threads left out: the worker starts one per allowed core (this machine's).
             const int intra = k.intra_op_threads ? *k.intra_op_threads : allowedCores();
             const long long threads = static_cast<long long>(intra) + k.inter_op_threads;
             const long long need = detail::kMemoryMarginMb + detail::kMemoryPerThreadMb * threads;
             if (*k.memory_limit_mb >= need) return {};
             return "memory_limit_mb " + std::to_string(*k.memory_limit_mb) + " is too little for " +
                    std::to_string(threads) + " threads (intra_op_threads " + std::to_string(intra) +
                    (k.intra_op_threads ? "" : ", one per allowed core") + " + inter_op_threads " +
                    std::to_string(k.inter_op_threads) + "): at least " + std::to_string(need) +
                    " MiB (" + std::to_string(detail::kMemoryPerThreadMb) + " MiB per thread + " +
                    std::to_string(detail::kMemoryMarginMb) +
                    " MiB for the worker and its model); below that, thread creation fails and the "
                    "worker aborts or hangs";
         }},
        {{"precision", "device"}, "precision",
         [](const Knobs& k) -> std::string {
             return k.precision == Precision::AutocastFp16 && k.device == "cpu"
                        ? "autocast_fp16 is a CUDA autocast; on the CPU use autocast_bf16"
                        : "";
         }},
    };
    return rules;
}

}  // namespace

Knobs parseKnobs(const json& j, const std::string& where, const std::string& prefix,
                 std::vector<SpecError>& errors) {
    Knobs k;
    if (j.is_null()) return k;
    if (!j.is_object()) {
        errors.emplace_back(where, prefix, "expected an object of knobs");
        return k;
    }
    std::set<std::string> rejected;  // knobs whose value was refused: no rule reads them
    for (const auto& [key, v] : j.items()) {
        const std::string f = prefix + "." + detail::shown(key);
        const KnobInfo* knob = findKnob(key);
        if (!knob) {
            const std::string near = nearestName(key, knobNames());
            errors.emplace_back(where, f,
                                near.empty() ? "unknown knob (known knobs: " + joined(knobNames()) + ")"
                                             : "unknown knob: did you mean " + near + "? (known knobs: " +
                                                   joined(knobNames()) + ")");
            continue;
        }
        try {
            knob->set(k, validateKnob(*knob, v, where, f));
        } catch (const SpecError& e) {
            errors.push_back(e);
            rejected.insert(key);
        }
    }
    for (const auto& rule : knobRules()) {
        if (std::any_of(rule.knobs.begin(), rule.knobs.end(),
                        [&](const std::string& name) { return rejected.count(name) > 0; }))
            continue;
        const std::string why = rule.why(k);
        if (!why.empty()) errors.emplace_back(where, prefix + "." + rule.field, why);
    }
    return k;
}

Knobs parseKnobs(const json& j, const std::string& where, const std::string& prefix) {
    std::vector<SpecError> errors;
    Knobs k = parseKnobs(j, where, prefix, errors);
    if (!errors.empty()) throw errors.front();
    return k;
}

json knobsToJson(const Knobs& k) {
    json j = json::object();
    for (const auto& knob : knobTable()) {
        json v = knob.get(k);
        if (!v.is_null()) j[knob.name] = std::move(v);
    }
    return j;
}

bool WrittenKnobs::contains(const std::string& name) const {
    return std::find(names.begin(), names.end(), name) != names.end() || verbatim.contains(name);
}

Knobs readWrittenKnobs(const json& j, WrittenKnobs* written) {
    Knobs k;
    WrittenKnobs w;
    if (j.is_object()) {
        std::vector<SpecError> refused;  // read leniently: what is refused stays verbatim
        k = parseKnobs(j, "<stored>", "knobs", refused);
        for (const auto& knob : knobTable()) {
            if (!j.contains(knob.name)) continue;
            if (knob.get(k) == j[knob.name])
                w.names.push_back(knob.name);
            else
                w.verbatim[knob.name] = j[knob.name];
        }
        for (const auto& [key, v] : j.items())
            if (!findKnob(key)) w.verbatim[key] = v;
    }
    if (written) *written = std::move(w);
    return k;
}

json writtenKnobsJson(const Knobs& k, const WrittenKnobs& w) {
    json j = json::object();
    for (const auto& name : w.names)
        if (const KnobInfo* knob = findKnob(name)) j[name] = knob->get(k);
    for (const auto& [key, v] : w.verbatim.items()) j[key] = v;
    return j;
}

bool sameKnobs(const Knobs& a, const Knobs& b) { return knobsToJson(a) == knobsToJson(b); }

std::string knobValuesText(const KnobInfo& knob) {
    const auto range = [&knob] {
        return "integer " + std::to_string(knob.min) + ".." + std::to_string(knob.max);
    };
    switch (knob.kind) {
        case KnobKind::Choice: return joined(knob.choices);
        case KnobKind::Device: return "cpu, cuda:N";
        case KnobKind::Bool:
        case KnobKind::TorchBool: return "true, false";
        case KnobKind::Count:
        case KnobKind::OptionalCount: return range();
        case KnobKind::CountOrList: return range() + ", or a list of them (a sweep)";
        case KnobKind::Flags: return "an object of booleans: " + joined(knob.choices);
        case KnobKind::ChoiceOrCores:
            return joined(knob.choices) + ", or a list of core ids " + std::to_string(knob.min) +
                   ".." + std::to_string(knob.max);
    }
    return {};
}

std::string knobTableMarkdown() {
    std::string md =
        "| knob | values | default | unit | group | CUDA only | what it does |\n"
        "|---|---|---|---|---|---|---|\n";
    for (const auto& k : knobTable()) {
        std::string help = k.help;
        if (!k.unavailable.empty()) help += " (" + k.unavailable + ")";
        md += "| `" + k.name + "` | " + knobValuesText(k) + " | " + k.defaultText + " | " +
              k.unit + " | " + k.group + " | " + (k.cudaOnly ? "yes" : "") + " | " + help + " |\n";
    }
    return md;
}

}  // namespace pitlane::spec

namespace pitlane::spec {

void to_json(json& j, const InductorOptions& o) {
    j = json{{"freezing", o.freezing}, {"max_autotune", o.max_autotune}, {"dynamic_threads", o.dynamic_threads}};
}

void from_json(const json& j, InductorOptions& o) {
    o = InductorOptions{};
    o.freezing = j.value("freezing", o.freezing);
    o.max_autotune = j.value("max_autotune", o.max_autotune);
    o.dynamic_threads = j.value("dynamic_threads", o.dynamic_threads);
}

}  // namespace pitlane::spec
