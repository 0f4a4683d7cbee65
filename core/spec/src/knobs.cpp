// Knob parsing: every bad value gets a message naming the field and the accepted values.
#include "pitlane/spec/preset.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace pitlane::spec {

namespace {

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
    return out;
}

std::string typeName(const json& v) { return v.type_name(); }

std::string oneOf(const json& v, const std::vector<std::string>& allowed, const std::string& where,
                  const std::string& field) {
    if (!v.is_string())
        throw SpecError(where, field,
                        "expected a string (one of " + joined(allowed) + "), got " + typeName(v));
    const auto s = v.get<std::string>();
    if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
        throw SpecError(where, field,
                        "unknown value \"" + s + "\" (expected one of " + joined(allowed) + ")");
    return s;
}

int positiveInt(const json& v, const std::string& where, const std::string& field, int maxValue) {
    if (!v.is_number_integer())
        throw SpecError(where, field, "expected an integer >= 1, got " + v.dump());
    const auto n = v.get<long long>();
    if (n < 1) throw SpecError(where, field, "must be >= 1, got " + std::to_string(n));
    if (n > maxValue)
        throw SpecError(where, field,
                        "must be <= " + std::to_string(maxValue) + ", got " + std::to_string(n));
    return static_cast<int>(n);
}

bool boolean(const json& v, const std::string& where, const std::string& field) {
    if (!v.is_boolean()) throw SpecError(where, field, "expected true or false, got " + v.dump());
    return v.get<bool>();
}

const std::vector<std::string> kKnobNames = {
    "device", "mode", "grad", "jit", "precision", "batch_size", "intra_op_threads",
    "inter_op_threads", "affinity", "cudnn_enabled", "cudnn_benchmark", "cudnn_deterministic",
    "allow_tf32", "memory_format", "workers", "host_sync_each_iter", "input_on_host",
    "profiling_executor", "fuser", "cuda_graph", "allocator"};

}  // namespace

Knobs parseKnobs(const json& j, const std::string& where, const std::string& prefix) {
    Knobs k;
    if (j.is_null()) return k;
    if (!j.is_object()) throw SpecError(where, prefix, "expected an object of knobs");
    for (const auto& [key, v] : j.items()) {
        const std::string f = prefix + "." + key;
        if (key == "device") {
            if (!v.is_string()) throw SpecError(where, f, "expected \"cpu\" or \"cuda:N\"");
            const auto s = v.get<std::string>();
            bool ok = s == "cpu";
            if (!ok && s.rfind("cuda:", 0) == 0 && s.size() > 5 &&
                std::all_of(s.begin() + 5, s.end(),
                            [](unsigned char c) { return std::isdigit(c); }))
                ok = true;
            if (!ok)
                throw SpecError(where, f,
                                "unknown device \"" + s + "\" (expected \"cpu\" or \"cuda:N\")");
            k.device = s;
        } else if (key == "mode") {
            k.mode = oneOf(v, {"train", "eval"}, where, f);
        } else if (key == "grad") {
            k.grad = oneOf(v, {"enabled", "no_grad", "inference_mode"}, where, f);
        } else if (key == "jit") {
            k.jit = oneOf(v, {"none", "freeze", "freeze_optimize"}, where, f);
        } else if (key == "precision") {
            k.precision = oneOf(v, {"fp32", "autocast_bf16", "autocast_fp16", "half"}, where, f);
        } else if (key == "batch_size") {
            k.batch_size.clear();
            if (v.is_array()) {
                if (v.empty()) throw SpecError(where, f, "a batch-size sweep needs at least one size");
                std::set<int> seen;
                for (std::size_t i = 0; i < v.size(); ++i) {
                    const int b = positiveInt(v[i], where, f + "[" + std::to_string(i) + "]", 1 << 20);
                    if (!seen.insert(b).second)
                        throw SpecError(where, f + "[" + std::to_string(i) + "]",
                                        "batch size " + std::to_string(b) + " is listed twice");
                    k.batch_size.push_back(b);
                }
            } else {
                k.batch_size.push_back(positiveInt(v, where, f, 1 << 20));
            }
        } else if (key == "intra_op_threads") {
            k.intra_op_threads = positiveInt(v, where, f, 4096);
        } else if (key == "inter_op_threads") {
            k.inter_op_threads = positiveInt(v, where, f, 4096);
        } else if (key == "affinity") {
            if (v.is_array()) {
                if (v.empty()) throw SpecError(where, f, "a core list needs at least one core id");
                std::set<int> seen;
                for (std::size_t i = 0; i < v.size(); ++i) {
                    const auto fi = f + "[" + std::to_string(i) + "]";
                    if (!v[i].is_number_integer() || v[i].get<long long>() < 0 ||
                        v[i].get<long long>() > 4095)
                        throw SpecError(where, fi, "expected a core id 0..4095, got " + v[i].dump());
                    const int c = v[i].get<int>();
                    if (!seen.insert(c).second)
                        throw SpecError(where, fi, "core " + std::to_string(c) + " is listed twice");
                    k.affinity_cores.push_back(c);
                }
                k.affinity = "list";
            } else {
                k.affinity = oneOf(v, {"none", "compact", "spread"}, where, f);
            }
        } else if (key == "cudnn_enabled") {
            k.cudnn_enabled = boolean(v, where, f);
        } else if (key == "cudnn_benchmark") {
            k.cudnn_benchmark = boolean(v, where, f);
        } else if (key == "cudnn_deterministic") {
            k.cudnn_deterministic = boolean(v, where, f);
        } else if (key == "allow_tf32") {
            k.allow_tf32 = boolean(v, where, f);
        } else if (key == "memory_format") {
            k.memory_format = oneOf(v, {"contiguous", "channels_last"}, where, f);
        } else if (key == "workers") {
            k.workers = positiveInt(v, where, f, 64);
        } else if (key == "host_sync_each_iter") {
            k.host_sync_each_iter = boolean(v, where, f);
        } else if (key == "input_on_host") {
            k.input_on_host = boolean(v, where, f);
        } else if (key == "profiling_executor") {
            k.profiling_executor = boolean(v, where, f);
        } else if (key == "fuser") {
            k.fuser = boolean(v, where, f);
        } else if (key == "cuda_graph") {
            k.cuda_graph = boolean(v, where, f);
        } else if (key == "allocator") {
            k.allocator = oneOf(v, {"system", "jemalloc", "tcmalloc"}, where, f);
        } else {
            throw SpecError(where, f, "unknown knob (known knobs: " + joined(kKnobNames) + ")");
        }
    }
    // Combinations torch would reject later with an obscure message.
    if (k.jit != "none" && k.mode == "train")
        throw SpecError(where, prefix + ".jit",
                        "jit \"" + k.jit + "\" needs mode \"eval\" (torch::jit::freeze only "
                        "freezes modules in eval mode)");
    if (k.cuda_graph && k.device == "cpu")
        throw SpecError(where, prefix + ".cuda_graph",
                        "CUDA graphs need a CUDA device (set device to \"cuda:N\")");
    if (k.precision == "autocast_fp16" && k.device == "cpu")
        throw SpecError(where, prefix + ".precision",
                        "autocast_fp16 is a CUDA autocast; on the CPU use autocast_bf16");
    return k;
}

json knobsToJson(const Knobs& k) {
    json j;
    j["device"] = k.device;
    j["mode"] = k.mode;
    j["grad"] = k.grad;
    j["jit"] = k.jit;
    j["precision"] = k.precision;
    if (k.batch_size.size() == 1)
        j["batch_size"] = k.batch_size.front();
    else
        j["batch_size"] = k.batch_size;
    if (k.intra_op_threads) j["intra_op_threads"] = *k.intra_op_threads;
    j["inter_op_threads"] = k.inter_op_threads;
    if (k.affinity == "list")
        j["affinity"] = k.affinity_cores;
    else
        j["affinity"] = k.affinity;
    if (k.cudnn_enabled) j["cudnn_enabled"] = *k.cudnn_enabled;
    if (k.cudnn_benchmark) j["cudnn_benchmark"] = *k.cudnn_benchmark;
    if (k.cudnn_deterministic) j["cudnn_deterministic"] = *k.cudnn_deterministic;
    if (k.allow_tf32) j["allow_tf32"] = *k.allow_tf32;
    j["memory_format"] = k.memory_format;
    j["workers"] = k.workers;
    j["host_sync_each_iter"] = k.host_sync_each_iter;
    j["input_on_host"] = k.input_on_host;
    if (k.profiling_executor) j["profiling_executor"] = *k.profiling_executor;
    if (k.fuser) j["fuser"] = *k.fuser;
    if (k.cuda_graph) j["cuda_graph"] = true;
    j["allocator"] = k.allocator;
    return j;
}

}  // namespace pitlane::spec
