// Preset files: parsing, model resolution and validation.
#include "pitlane/spec/preset.h"
#include "pitlane/spec/model_preset.h"

#include "pitlane/spec/lesson.h"
#include "pitlane/spec/remote_hosts.h"
#include "pitlane/spec/run_limits.h"
#include "arm_models.h"
#include "json_file.h"
#include "preset_errors.h"
#include "preset_strings.h"
#include "text_util.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace pitlane::spec {

using detail::Errors;
using detail::checkStrings;

SpecError::SpecError(std::string where, std::string field, std::string reason)
    : std::runtime_error(where + ": " + (field.empty() ? std::string() : field + ": ") + reason),
      where_(std::move(where)),
      field_(std::move(field)),
      reason_(std::move(reason)) {}

const std::vector<std::string>& bundledModelNames() {
    static const std::vector<std::string> names = {"resnet18", "mobilenet_v3_small", "transformer",
                                                   "lstm", "mlp"};
    return names;
}

std::string findModelDir(const std::string& exeDir) {
    if (const char* env = std::getenv("PITLANE_MODEL_DIR"); env && *env) return env;
    for (const auto& candidate :
         {fs::path(exeDir) / "models", fs::path(exeDir) / ".." / "share" / "pitlane" / "models"}) {
        std::error_code ec;
        if (fs::is_directory(candidate, ec)) return fs::weakly_canonical(candidate).string();
    }
    return {};
}

namespace {

const std::vector<std::string> kDtypes = {"float32", "float64", "float16", "bfloat16", "int64",
                                          "int32"};

std::vector<std::int64_t> parseShape(const json& v, const std::string& where,
                                     const std::string& f) {
    if (!v.is_array())
        throw SpecError(where, f, "expected a list of dimension sizes, e.g. [3, 224, 224] (or [\"N\", 3, 224, 224]: N is the batch)");
    std::vector<std::int64_t> shape;
    for (std::size_t i = 0; i < v.size(); ++i) {
        // A leading "N" marks the batch dimension where it is prepended anyway: ["N", 3, 64, 64]
        // is [3, 64, 64].
        if (i == 0 && v.size() > 1 && v[i].is_string() && v[i].get<std::string>() == "N") continue;
        if (!v[i].is_number_integer() || v[i].get<long long>() < 1 ||
            v[i].get<long long>() > (1LL << 31))
            throw SpecError(where, f + "[" + std::to_string(i) + "]",
                            "expected a dimension size >= 1, got " + detail::shown(v[i]));
        shape.push_back(v[i].get<std::int64_t>());
    }
    return shape;
}

int intField(const json& obj, const char* key, int def, int minValue, const std::string& where,
             const std::string& prefix) {
    if (!obj.contains(key)) return def;
    const auto& v = obj[key];
    const auto f = prefix + "." + key;
    if (!v.is_number_integer()) throw SpecError(where, f, "expected an integer, got " + detail::shown(v));
    // 18446744073709551615 read as a long long is -1: an unsigned beyond the range is too large,
    // and the number is echoed as written.
    const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > 100000000u;
    const long long n = huge ? LLONG_MAX : v.get<long long>();
    if (n < minValue || n > 100000000)
        throw SpecError(where, f,
                        "must be between " + std::to_string(minValue) + " and 100000000, got " +
                            detail::shown(v));
    return static_cast<int>(n);
}

}  // namespace

namespace {


// One input: each of its fields on its own.
InputSpec parseInput(const json& e, const std::string& f, Errors& errs) {
    const std::string& where = errs.where();
    InputSpec in;
    if (!e.is_object()) {
        errs.add(f, "expected an object with \"shape\"");
        return in;
    }
    for (const auto& [key, v] : e.items()) {
        const std::string fk = f + "." + detail::shown(key);
        errs.step(fk, [&, &key = key, &v = v] {
            if (key == "shape") {
                in.shape = parseShape(v, where, fk);
            } else if (key == "dtype") {
                if (!v.is_string() ||
                    std::find(kDtypes.begin(), kDtypes.end(), v.get<std::string>()) == kDtypes.end())
                    throw SpecError(where, fk,
                                    "unknown dtype " + detail::shown(v) +
                                        " (expected one of float32, float64, float16, bfloat16, "
                                        "int64, int32)");
                in.dtype = v.get<std::string>();
            } else if (key == "shapes") {
                if (!v.is_array() || v.empty())
                    throw SpecError(where, fk, "expected a non-empty list of shapes");
                for (std::size_t s = 0; s < v.size(); ++s)
                    in.shapes.push_back(parseShape(v[s], where, fk + "[" + std::to_string(s) + "]"));
            } else if (key == "batch_dim") {
                if (!v.is_boolean())
                    throw SpecError(where, fk,
                                    "expected true (knobs.batch_size is prepended to the shape) or "
                                    "false (the shape is the whole tensor's), got " + detail::shown(v));
                in.batch_dim = v.get<bool>();
            } else {
                throw SpecError(where, fk, "unknown input field (expected shape, dtype, shapes, batch_dim)");
            }
        });
    }
    if (!e.contains("shape") && !e.contains("shapes"))
        errs.add(f + ".shape", "missing (every input needs a shape)");
    if (in.shape.empty() && !in.shapes.empty()) in.shape = in.shapes.front();
    return in;
}

std::vector<InputSpec> collectInputs(const json& j, const std::string& prefix, Errors& errs) {
    if (!j.is_array() || j.empty()) {
        errs.add(prefix,
                 "expected a non-empty list of inputs, e.g. [{\"shape\": [3, 224, 224], "
                 "\"dtype\": \"float32\"}]");
        return {};
    }
    std::vector<InputSpec> out;
    for (std::size_t i = 0; i < j.size(); ++i)
        out.push_back(parseInput(j[i], prefix + "[" + std::to_string(i) + "]", errs));
    return out;
}

}  // namespace

std::vector<InputSpec> parseInputs(const json& j, const std::string& where,
                                   const std::string& prefix) {
    Errors errs(where);
    auto out = collectInputs(j, prefix, errs);
    if (!errs.list().empty()) throw errs.list().front();
    return out;
}

json inputsToJson(const std::vector<InputSpec>& inputs) {
    json a = json::array();
    for (const auto& in : inputs) {
        json e{{"shape", in.shape}, {"dtype", in.dtype}};
        if (!in.shapes.empty()) e["shapes"] = in.shapes;
        if (!in.batch_dim) e["batch_dim"] = false;
        a.push_back(e);
    }
    return a;
}


namespace {

// Each run field on its own; the rules that combine fields only when none of theirs was refused.
RunSettings parseRunSettings(const json& r, Errors& errs) {
    const std::string& where = errs.where();
    RunSettings run;
    if (!r.is_object()) {
        errs.add("run", "expected an object");
        return run;
    }
    static const std::set<std::string> runKeys = {"warmup_iters", "iters", "block_iters",
                                                  "event_timeout_ms", "seed", "min_time_ms",
                                                  "max_time_ms", "target_ci_pct",
                                                  "processes", "max_processes", "profile_iters",
                                                  "compare_hosts"};
    for (const auto& [key, v] : r.items())
        if (!runKeys.count(key))
            errs.add("run." + detail::shown(key),
                     "unknown field (expected warmup_iters, iters, block_iters, event_timeout_ms, "
                     "seed, min_time_ms, max_time_ms, target_ci_pct, processes, max_processes, "
                     "profile_iters, compare_hosts)");
    std::set<std::string> bad;  // fields whose value was refused
    auto field = [&](const char* key, auto&& parse) {
        if (!errs.step(std::string("run.") + key, parse)) bad.insert(key);
    };
    auto atMost64 = [&](const char* key, int n) {
        if (n > 64)
            throw SpecError(where, std::string("run.") + key,
                            "at most 64 worker processes per arm, got " + std::to_string(n));
    };
    field("warmup_iters", [&] { run.warmup_iters = intField(r, "warmup_iters", run.warmup_iters, 0, where, "run"); });
    field("iters", [&] { run.iters = intField(r, "iters", run.iters, 1, where, "run"); });
    field("block_iters", [&] {
        run.block_iters = intField(r, "block_iters", std::min(run.block_iters, run.iters), 1, where, "run");
    });
    field("event_timeout_ms", [&] {
        run.event_timeout_ms = intField(r, "event_timeout_ms", run.event_timeout_ms, 100, where, "run");
    });
    field("seed", [&] { run.seed = static_cast<std::uint64_t>(intField(r, "seed", 0, 0, where, "run")); });
    field("processes", [&] {
        run.processes = intField(r, "processes", run.processes, 1, where, "run");
        atMost64("processes", run.processes);
    });
    field("min_time_ms", [&] { run.min_time_ms = intField(r, "min_time_ms", 0, 0, where, "run"); });
    field("profile_iters", [&] {
        run.profile_iters = intField(r, "profile_iters", 0, 0, where, "run");
        if (run.profile_iters > 1000)
            throw SpecError(where, "run.profile_iters", "at most 1000 profiled iterations, got " +
                                                            std::to_string(run.profile_iters));
    });
    field("max_time_ms", [&] { run.max_time_ms = intField(r, "max_time_ms", 0, 0, where, "run"); });
    field("target_ci_pct", [&] {
        if (!r.contains("target_ci_pct")) return;
        const auto& v = r["target_ci_pct"];
        // At least 0.1 %: the half-width shrinks as 1/sqrt(blocks), so each tenfold tighter target
        // costs a hundredfold more blocks, and below 0.1 % the machine's own drift between
        // processes (0.5-5 % measured here, DESIGN.md "Measurement") is the floor: 1e-320 was
        // accepted and, without max_time_ms, the run never ended (issue 28).
        if (!v.is_number() || v.get<double>() < kMinTargetCiPct || v.get<double>() > 100)
            throw SpecError(where, "run.target_ci_pct",
                            "expected a percentage from 0.1 to 100, e.g. 1 for +-1 % (below 0.1 % no "
                            "run converges before its time cap), got " + detail::shown(v));
        run.target_ci_pct = v.get<double>();
    });
    auto ok = [&](std::initializer_list<const char*> keys) {
        return std::none_of(keys.begin(), keys.end(), [&](const char* k) { return bad.count(k) > 0; });
    };
    if (ok({"min_time_ms", "max_time_ms"}) && run.max_time_ms > 0 && run.max_time_ms < run.min_time_ms)
        errs.add("run.max_time_ms", "max_time_ms (" + std::to_string(run.max_time_ms) +
                                        ") is below min_time_ms (" + std::to_string(run.min_time_ms) + ")");
    if (!r.contains("processes")) run.processes = std::min(run.processes, run.iters);
    run.max_processes = r.contains("processes") ? run.processes : run.max_processes;
    field("max_processes", [&] {
        run.max_processes = intField(r, "max_processes", run.max_processes, 1, where, "run");
        atMost64("max_processes", run.max_processes);
    });
    if (ok({"processes", "max_processes"}) && run.max_processes < run.processes)
        errs.add("run.max_processes", "max_processes (" + std::to_string(run.max_processes) +
                                          ") is below processes (" + std::to_string(run.processes) + ")");
    if (ok({"processes", "iters"}) && run.processes > run.iters)
        errs.add("run.processes", "processes (" + std::to_string(run.processes) + ") exceeds iters (" +
                                      std::to_string(run.iters) +
                                      "): every process needs at least one measured iteration");
    if (ok({"block_iters", "iters"}) && run.block_iters > run.iters)
        errs.add("run.block_iters", "block_iters (" + std::to_string(run.block_iters) +
                                        ") exceeds iters (" + std::to_string(run.iters) + ")");
    return run;
}

// What a run would hold in memory before any worker starts: its blocks (tasks planned at once)
// and each arm's samples (32 bytes each, kept in the window and the CLI). Counted in 64 bits:
// iters x batch sizes x workers overflowed an int ("1000000/-2094967296 iterations").
void checkRunSize(const Preset& p, Errors& errs) {
    const long long blocks = (static_cast<long long>(p.run.iters) + p.run.block_iters - 1) /
                             std::max(1, p.run.block_iters);
    if (blocks > kMaxBlocks)
        errs.add("run.block_iters", "iters " + std::to_string(p.run.iters) + " in blocks of " +
                                        std::to_string(p.run.block_iters) + " make " +
                                        std::to_string(blocks) + " blocks; at most " +
                                        std::to_string(kMaxBlocks) +
                                        " (raise block_iters)");
    for (std::size_t i = 0; i < p.arms.size(); ++i) {
        const auto& k = p.arms[i].knobs;
        const long long samples = static_cast<long long>(p.run.iters) *
                                  static_cast<long long>(k.batch_size.size()) *
                                  std::max(1, k.workers);
        if (samples > kMaxSamplesPerArm)
            errs.add("arms[" + std::to_string(i) + "]",
                     "iters x batch sizes x workers = " + std::to_string(samples) +
                         " samples; at most " + std::to_string(kMaxSamplesPerArm) +
                         " per arm (" + std::to_string(kMaxSamplesPerArm * 32 / (1 << 20)) +
                         " MiB of samples)");
    }
}

// What a serving preset asks of its arms: the batcher forms the batches, one forward per batch.
// Without a serving block, the batcher's knobs would be silently ignored: an error instead.
void checkServingArms(const Preset& p, Errors& errs) {
    if (p.run.adaptive())
        errs.add("run", "a serving preset runs a fixed plan of levels (serving.rates or clients, "
                        "run.processes rounds): min_time_ms, max_time_ms and target_ci_pct do not apply");
    for (std::size_t i = 0; i < p.arms.size(); ++i) {
        const auto& k = p.arms[i].knobs;
        const std::string f = "arms[" + std::to_string(i) + "].knobs.";
        if (k.batch_size != std::vector<int>{1})
            errs.add(f + "batch_size", "in a serving preset the batcher forms the batches from single "
                                       "requests: leave batch_size at 1 and set max_batch");
        if (k.workload != "inference")
            errs.add(f + "workload", "a serving preset serves inference requests: workload \"" +
                                         k.workload + "\" cannot be served");
        if (p.serving.arrival == "closed")
            for (int c : p.serving.clients)
                if (c < k.workers)
                    errs.add(f + "workers", "workers " + std::to_string(k.workers) +
                                                " share the clients between them: every level needs at "
                                                "least as many clients (serving.clients has " +
                                                std::to_string(c) + ")");
    }
}

void checkNotServingArms(const Preset& p, Errors& errs) {
    for (std::size_t i = 0; i < p.arms.size(); ++i) {
        const auto& k = p.arms[i].knobs;
        const std::string f = "arms[" + std::to_string(i) + "].knobs.";
        if (k.max_batch != 1)
            errs.add(f + "max_batch", "max_batch is the serving batcher's: it needs a serving block "
                                      "(the closed loop times batch_size)");
        if (k.max_wait_ms != 0)
            errs.add(f + "max_wait_ms", "max_wait_ms is the serving batcher's: it needs a serving block");
    }
}

// Each arm on its own, and each of its knobs (parseKnobs collects them).
std::vector<ArmSpec> parseArms(const json& j, Errors& errs) {
    std::vector<ArmSpec> out;
    if (!j.contains("arms") || !j["arms"].is_array()) {
        errs.add("arms", "missing: a preset needs a list of at least one arm");
        return out;
    }
    const auto& arms = j["arms"];
    if (arms.empty()) errs.add("arms", "needs at least one arm");
    // Each arm is at least one worker process (libtorch: ~0.7 s of CPU and ~150 MiB each).
    if (arms.size() > kMaxArms) {
        errs.add("arms", "has " + std::to_string(arms.size()) + " arms; at most " +
                             std::to_string(kMaxArms) + " are measured side by side");
        return out;
    }
    std::set<std::string> armNames;
    for (std::size_t i = 0; i < arms.size(); ++i) {
        const auto f = "arms[" + std::to_string(i) + "]";
        const auto& a = arms[i];
        if (!a.is_object()) {
            errs.add(f, "expected an object with name and knobs");
            continue;
        }
        for (const auto& [key, v] : a.items())
            if (key != "name" && key != "knobs" && key != "host" && key != "model" && key != "input")
                errs.add(f + "." + detail::shown(key), "unknown field (expected name, knobs, model, input, host)");
        ArmSpec arm;
        if (!a.contains("name") || !a["name"].is_string() || a["name"].get<std::string>().empty()) {
            errs.add(f + ".name", "missing: every arm needs a name");
        } else {
            arm.name = a["name"];
            if (!armNames.insert(arm.name).second)
                errs.add(f + ".name", "arm name \"" + detail::shown(arm.name) + "\" is used twice");
        }
        arm.knobs_json = a.value("knobs", json::object());
        arm.knobs = parseKnobs(arm.knobs_json, errs.where(), f + ".knobs", errs.list());
        out.push_back(std::move(arm));
    }
    return out;
}

// The lesson's own fields, then each check on its own (validateLesson stops at the first error
// it finds, so each check is given to it alone and its field renumbered).
void checkLesson(const json& lesson, const std::vector<ArmSpec>& arms, Errors& errs) {
    const std::string& where = errs.where();
    if (!lesson.is_object() || !lesson.contains("checks") || !lesson["checks"].is_array()) {
        errs.step("lesson", [&] { validateLesson(lesson, arms, where); });
        return;
    }
    json head = lesson;
    head.erase("checks");
    errs.step("lesson", [&] { validateLesson(head, arms, where); });
    const auto& checks = lesson["checks"];
    const std::string alone = "lesson.checks[0]";
    for (std::size_t i = 0; i < checks.size(); ++i) {
        const std::string f = "lesson.checks[" + std::to_string(i) + "]";
        try {
            validateLesson(json{{"checks", json::array({checks[i]})}}, arms, where);
        } catch (const SpecError& e) {
            const bool renumber = e.field().rfind(alone, 0) == 0;
            errs.list().emplace_back(e.where(), renumber ? f + e.field().substr(alone.size()) : e.field(),
                                     e.reason());
        } catch (const json::exception& e) {
            errs.add(f, e.what());
        }
    }
}


// The top level: every field on its own; the input from the model's sidecar only when the model
// was found.
Preset parseCollecting(const json& j, const std::string& file, const std::string& modelDir, Errors& errs) {
    const std::string& where = errs.where();
    Preset p;
    p.file = file;
    // Before any copy: copying (and destroying) a tree recurses once per level.
    if (detail::jsonDepth(j, detail::kMaxPresetDepth) > detail::kMaxPresetDepth) {
        std::string field;  // the top-level field that nests too deep
        if (j.is_object())
            for (auto it = j.begin(); it != j.end() && field.empty(); ++it)
                if (detail::jsonDepth(it.value(), detail::kMaxPresetDepth - 1) > detail::kMaxPresetDepth - 1)
                    field = it.key().empty() ? std::string("\"\"") : detail::shown(it.key());
        errs.add(field, "nested more than " + std::to_string(detail::kMaxPresetDepth) +
                            " levels deep (objects and arrays within each other); a preset needs a few");
        return p;
    }
    // The arm limit before anything else (issue 28: 256 k arms were validated, then refused).
    if (j.is_object() && j.contains("arms") && j["arms"].is_array() && j["arms"].size() > kMaxArms) {
        errs.add("arms", "has " + std::to_string(j["arms"].size()) + " arms; at most " +
                             std::to_string(kMaxArms) + " are measured side by side");
        return p;
    }
    p.raw = j;
    if (!j.is_object()) {
        errs.add("", "a preset must be a JSON object");
        return p;
    }
    // Every string first: a field refused here is not judged again by its parser (a model path
    // with a NUL is not also "does not exist").
    std::set<std::string> refused;
    checkStrings(j, errs, refused);
    const std::size_t stringErrors = errs.list().size();
    static const std::set<std::string> known = {"name", "description", "lesson", "model",
                                                "input", "run", "serving", "sweep", "arms",
                                                "host", "remote_worker"};
    for (const auto& [key, v] : j.items())
        if (!known.count(key))
            errs.add(key.empty() ? std::string("\"\"") : detail::shown(key),  // a key "" is named, not blank
                     "unknown field (expected name, description, lesson, model, input, run, serving, "
                     "sweep, arms, host, remote_worker)");
    for (const char* key : {"name", "description"}) {
        if (!j.contains(key)) continue;
        if (!j[key].is_string()) errs.add(key, "expected a string");
        else (std::string(key) == "name" ? p.name : p.description) = j[key];
    }
    if (j.contains("lesson")) p.lesson = j["lesson"];
    const bool modelFound = errs.step("model", [&] {
        if (!j.contains("model"))
            throw SpecError(where, "model", "missing: name a bundled model (resnet18, mobilenet_v3_small, "
                                            "transformer, lstm, mlp) or a model file (TorchScript .pt or "
                                            "AOTInductor .pt2)");
        const auto m = detail::resolveModelField(j["model"], "model", file, where, modelDir);
        p.model = m.written;
        p.model_path = m.path;
        p.bundled = m.bundled;
    });
    const bool inputWritten = j.contains("input");
    if (inputWritten) {
        p.input = collectInputs(j["input"], "input", errs);
    } else if (modelFound) {
        std::string source;
        const json described = detail::describedInput(p.model_path, readModelFormat(p.model_path), &source);
        if (described.is_null())
            errs.add("input", detail::missingInput(p.model_path));
        else
            errs.step("input", [&] { p.input = parseInputs(described, source, "input"); });
    }
    if (j.contains("run")) p.run = parseRunSettings(j["run"], errs);
    if (j.contains("serving")) p.serving = parseServing(j["serving"], where, errs.list());
    p.arms = parseArms(j, errs);
    if (modelFound) detail::resolveArmModels(j, p, inputWritten, modelDir, errs);
    parseRemote(j, p, errs.list());
    detail::checkArmModelsPlacement(p, errs);
    checkLesson(p.lesson, p.arms, errs);
    if (p.serving.enabled) {
        checkServingArms(p, errs);
    } else {
        checkRunSize(p, errs);
        checkNotServingArms(p, errs);
    }
    // An input given whole (batch_dim false) has no batch dimension to put batch_size in.
    for (std::size_t i = 0; i < p.arms.size(); ++i) {
        const auto& inputs = p.arms[i].input.empty() ? p.input : p.arms[i].input;
        for (std::size_t k = 0; k < inputs.size(); ++k)
            if (!inputs[k].batch_dim && p.arms[i].knobs.batch_size != std::vector<int>{1}) {
                errs.add("arms[" + std::to_string(i) + "].knobs.batch_size",
                         "must be 1: input[" + std::to_string(k) +
                             "] gives its whole shape (batch_dim false), so there is no batch "
                             "dimension to put it in");
                break;
            }
    }
    if (p.run.adaptive())
        for (std::size_t i = 0; i < p.arms.size(); ++i)
            if (p.arms[i].knobs.batchSweep())
                errs.add("arms[" + std::to_string(i) + "].knobs.batch_size",
                         "a batch-size sweep cannot be combined with adaptive or timed stopping "
                         "(run.min_time_ms / max_time_ms / target_ci_pct): give the sweep a fixed "
                         "run.iters");
    if (p.name.empty()) p.name = p.model;
    if (j.contains("sweep")) {
        p.sweep = parseSweep(j["sweep"], where, p.arms, errs.list());
        if (errs.list().empty()) checkSweepSlices(p, modelDir, errs.list());
    }
    if (!refused.empty()) {
        auto& list = errs.list();
        std::size_t kept = stringErrors;
        for (std::size_t i = stringErrors; i < list.size(); ++i)
            if (!refused.count(list[i].field())) {
                if (kept != i) list[kept] = std::move(list[i]);  // never onto itself
                ++kept;
            }
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(kept), list.end());
    }
    return p;
}

// The file read as JSON, or the one error that stops everything (it cannot be opened or parsed,
// it nests deeper than kMaxPresetDepth, or it has more than kMaxArms arms). Bounded while it is
// parsed: the 65th arm stops the parse, so a 100 MB preset of 1.5 M arms is refused at once.
json readPresetJson(const std::string& path, Errors& errs) {
    json j;
    detail::JsonFileError error;
    protocol::JsonLimits limits;
    limits.max_depth = detail::kMaxPresetDepth;
    limits.counted_key = "arms";
    limits.max_items = kMaxArms;
    if (!detail::readJsonFileBounded(path, &j, &error, limits)) {
        if (error.field == "arms" && error.reason.rfind("has more than", 0) == 0)
            errs.add("arms", "has more than " + std::to_string(kMaxArms) + " arms; at most " +
                                 std::to_string(kMaxArms) +
                                 " are measured side by side (the file was not read further)");
        else
            errs.add(error.field, error.reason);
    }
    return j;
}

}  // namespace

Preset parsePreset(const json& j, const std::string& file, const std::string& modelDir) {
    Errors errs(file.empty() ? "<preset>" : file);
    Preset p = parseCollecting(j, file, modelDir, errs);
    if (!errs.list().empty()) throw errs.list().front();
    return p;
}

std::vector<SpecError> validatePreset(const json& j, const std::string& file,
                                      const std::string& modelDir) {
    Errors errs(file.empty() ? "<preset>" : file);
    parseCollecting(j, file, modelDir, errs);
    return std::move(errs.list());
}

Preset loadPresetFile(const std::string& path, const std::string& modelDir) {
    Errors errs(path);
    const json j = readPresetJson(path, errs);
    if (!errs.list().empty()) throw errs.list().front();
    return parsePreset(j, path, modelDir);
}

std::vector<SpecError> validatePresetFile(const std::string& path, const std::string& modelDir) {
    Errors errs(path);
    const json j = readPresetJson(path, errs);
    if (!errs.list().empty()) return std::move(errs.list());
    return validatePreset(j, path, modelDir);
}

json defaultArms(const std::string& format) {
    // One intra-op thread in both arms: on a shared machine torch's default (every core) made
    // worker processes 100x apart (issue 27); the knob stays one click away. The arms differ in
    // one knob and are named after it.
    if (format == kFormatAoti)  // a package has no grad to compare: its A/B is the threads
        return json::array({{{"name", "1 thread"}, {"knobs", {{"intra_op_threads", 1}}}},
                            {{"name", "2 threads"}, {"knobs", {{"intra_op_threads", 2}}}}});
    return json::array({{{"name", "grad enabled"}, {"knobs", {{"mode", "eval"}, {"grad", "enabled"}, {"intra_op_threads", 1}}}},
                        {{"name", "inference_mode"},
                         {"knobs", {{"mode", "eval"}, {"grad", "inference_mode"}, {"intra_op_threads", 1}}}}});
}

json newModelRun() {
    return {{"warmup_iters", 10}, {"iters", 200}, {"block_iters", 10}};
}

json newModelPresetJson(const std::string& modelPath) {
    return {{"name", fs::path(modelPath).stem().string()},
            {"model", fs::absolute(modelPath).string()},
            {"run", newModelRun()},
            {"arms", defaultArms(readModelFormat(modelPath).format)}};
}

Preset presetForModel(const std::string& modelPath, const std::string& modelDir) {
    return parsePreset(newModelPresetJson(modelPath), "", modelDir);
}

Preset presetForModels(const std::string& modelA, const std::string& modelB, const std::string& modelDir) {
    // Left out, grad is inference_mode for a package; written for TorchScript, so both arms
    // measure inference the same way.
    auto knobs = [](const std::string& path) {
        return readModelFormat(path).format == kFormatAoti
                   ? json{{"intra_op_threads", 1}}
                   : json{{"mode", "eval"}, {"grad", "inference_mode"}, {"intra_op_threads", 1}};
    };
    json j = {{"name", modelLabel(modelA) + " vs " + modelLabel(modelB)},
              {"model", fs::absolute(modelA).string()},
              {"run", newModelRun()},
              {"arms", json::array({{{"name", "A"}, {"knobs", knobs(modelA)}},
                                    {{"name", "B"}, {"model", fs::absolute(modelB).string()}, {"knobs", knobs(modelB)}}})}};
    return parsePreset(j, "", modelDir);
}

bool armsDifferInModel(const Preset& p) {
    return std::any_of(p.arms.begin(), p.arms.end(),
                       [&](const ArmSpec& a) { return a.model_path != p.arms.front().model_path; });
}

json presetToJson(const Preset& p) {
    json j;
    j["name"] = p.name;
    if (!p.description.empty()) j["description"] = p.description;
    if (!p.lesson.is_null()) j["lesson"] = p.lesson;
    j["model"] = p.model;
    j["input"] = inputsToJson(p.input);
    j["run"] = {{"warmup_iters", p.run.warmup_iters},
                {"iters", p.run.iters},
                {"block_iters", p.run.block_iters},
                {"processes", p.run.processes},
                {"max_processes", p.run.max_processes},
                {"event_timeout_ms", p.run.event_timeout_ms},
                {"seed", p.run.seed}};
    if (p.run.min_time_ms > 0) j["run"]["min_time_ms"] = p.run.min_time_ms;
    if (p.run.max_time_ms > 0) j["run"]["max_time_ms"] = p.run.max_time_ms;
    if (p.run.target_ci_pct > 0) j["run"]["target_ci_pct"] = p.run.target_ci_pct;
    if (p.run.profile_iters > 0) j["run"]["profile_iters"] = p.run.profile_iters;
    if (p.run.compare_hosts) j["run"]["compare_hosts"] = true;
    if (!p.host.empty()) j["host"] = p.host;
    if (p.remote_worker != "pitlane-worker") j["remote_worker"] = p.remote_worker;
    if (p.serving.enabled) j["serving"] = servingToJson(p.serving);
    if (p.sweep.enabled) j["sweep"] = sweepToJson(p.sweep);
    j["arms"] = json::array();
    for (const auto& a : p.arms) {
        j["arms"].push_back({{"name", a.name}, {"knobs", a.knobs_json}});
        if (!a.model.empty()) j["arms"].back()["model"] = a.model;
        if (a.inputWritten) j["arms"].back()["input"] = inputsToJson(a.input);
        if (a.hostWritten || a.host != p.host) j["arms"].back()["host"] = a.host;
    }
    return j;
}

}  // namespace pitlane::spec
