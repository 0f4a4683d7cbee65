// Preset files: parsing, model resolution and validation.
#include "pitlane/spec/preset.h"

#include "pitlane/spec/lesson.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace pitlane::spec {

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
        throw SpecError(where, f, "expected a list of dimension sizes, e.g. [3, 224, 224]");
    std::vector<std::int64_t> shape;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_number_integer() || v[i].get<long long>() < 1 ||
            v[i].get<long long>() > (1LL << 31))
            throw SpecError(where, f + "[" + std::to_string(i) + "]",
                            "expected a dimension size >= 1, got " + v[i].dump());
        shape.push_back(v[i].get<std::int64_t>());
    }
    return shape;
}

int intField(const json& obj, const char* key, int def, int minValue, const std::string& where,
             const std::string& prefix) {
    if (!obj.contains(key)) return def;
    const auto& v = obj[key];
    const auto f = prefix + "." + key;
    if (!v.is_number_integer()) throw SpecError(where, f, "expected an integer, got " + v.dump());
    const auto n = v.get<long long>();
    if (n < minValue || n > 100000000)
        throw SpecError(where, f,
                        "must be between " + std::to_string(minValue) + " and 100000000, got " +
                            std::to_string(n));
    return static_cast<int>(n);
}

}  // namespace

std::vector<InputSpec> parseInputs(const json& j, const std::string& where,
                                   const std::string& prefix) {
    if (!j.is_array() || j.empty())
        throw SpecError(where, prefix,
                        "expected a non-empty list of inputs, e.g. [{\"shape\": [3, 224, 224], "
                        "\"dtype\": \"float32\"}]");
    std::vector<InputSpec> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const auto f = prefix + "[" + std::to_string(i) + "]";
        const auto& e = j[i];
        if (!e.is_object()) throw SpecError(where, f, "expected an object with \"shape\"");
        InputSpec in;
        for (const auto& [key, v] : e.items()) {
            if (key == "shape") {
                in.shape = parseShape(v, where, f + ".shape");
            } else if (key == "dtype") {
                if (!v.is_string() ||
                    std::find(kDtypes.begin(), kDtypes.end(), v.get<std::string>()) == kDtypes.end())
                    throw SpecError(where, f + ".dtype",
                                    "unknown dtype " + v.dump() +
                                        " (expected one of float32, float64, float16, bfloat16, "
                                        "int64, int32)");
                in.dtype = v.get<std::string>();
            } else if (key == "shapes") {
                if (!v.is_array() || v.empty())
                    throw SpecError(where, f + ".shapes", "expected a non-empty list of shapes");
                for (std::size_t s = 0; s < v.size(); ++s)
                    in.shapes.push_back(
                        parseShape(v[s], where, f + ".shapes[" + std::to_string(s) + "]"));
            } else {
                throw SpecError(where, f + "." + key,
                                "unknown input field (expected shape, dtype, shapes)");
            }
        }
        if (!e.contains("shape") && in.shapes.empty())
            throw SpecError(where, f + ".shape", "missing (every input needs a shape)");
        if (in.shape.empty() && !in.shapes.empty()) in.shape = in.shapes.front();
        out.push_back(std::move(in));
    }
    return out;
}

json inputsToJson(const std::vector<InputSpec>& inputs) {
    json a = json::array();
    for (const auto& in : inputs) {
        json e{{"shape", in.shape}, {"dtype", in.dtype}};
        if (!in.shapes.empty()) e["shapes"] = in.shapes;
        a.push_back(e);
    }
    return a;
}

json readModelSidecar(const std::string& modelPath) {
    auto side = fs::path(modelPath).replace_extension(".json");
    std::ifstream f(side);
    if (!f) return json();
    try {
        return json::parse(f);
    } catch (const std::exception&) {
        return json();
    }
}

namespace {

// Model: a bundled name or a path relative to the preset (p.file).
void resolveModel(const json& j, Preset& p, const std::string& where, const std::string& modelDir) {
    if (!j.contains("model") || !j["model"].is_string() || j["model"].get<std::string>().empty())
        throw SpecError(where, "model",
                        "missing: name a bundled model (resnet18, mobilenet_v3_small, "
                        "transformer, lstm, mlp) or a TorchScript file");
    p.model = j["model"];
    const auto& names = bundledModelNames();
    if (std::find(names.begin(), names.end(), p.model) != names.end()) {
        p.bundled = true;
        if (modelDir.empty())
            throw SpecError(where, "model",
                            "bundled model \"" + p.model +
                                "\" requested but no model directory was found (build the "
                                "'models' target or set PITLANE_MODEL_DIR)");
        p.model_path = (fs::path(modelDir) / (p.model + ".pt")).string();
        if (!fs::exists(p.model_path))
            throw SpecError(where, "model",
                            "bundled model \"" + p.model + "\" is missing: " + p.model_path +
                                " does not exist (build the 'models' target)");
    } else {
        fs::path mp(p.model);
        if (mp.is_relative())
            mp = (p.file.empty() ? fs::current_path() : fs::absolute(p.file).parent_path()) / mp;
        std::error_code ec;
        if (!fs::is_regular_file(mp, ec))
            throw SpecError(where, "model",
                            "model file " + mp.string() +
                                " does not exist (and \"" + p.model + "\" is not a bundled model)");
        p.model_path = fs::weakly_canonical(mp).string();
    }
}

RunSettings parseRunSettings(const json& r, const std::string& where) {
    RunSettings run;
    if (!r.is_object()) throw SpecError(where, "run", "expected an object");
    static const std::set<std::string> runKeys = {"warmup_iters", "iters", "block_iters",
                                                  "event_timeout_ms", "seed", "min_time_ms",
                                                  "max_time_ms", "target_ci_pct",
                                                  "processes", "max_processes"};
    for (const auto& [key, v] : r.items())
        if (!runKeys.count(key))
            throw SpecError(where, "run." + key,
                            "unknown field (expected warmup_iters, iters, block_iters, "
                            "event_timeout_ms, seed, min_time_ms, max_time_ms, target_ci_pct, "
                            "processes, max_processes)");
    run.warmup_iters = intField(r, "warmup_iters", run.warmup_iters, 0, where, "run");
    run.iters = intField(r, "iters", run.iters, 1, where, "run");
    run.block_iters = intField(r, "block_iters", std::min(run.block_iters, run.iters), 1,
                                 where, "run");
    run.event_timeout_ms =
        intField(r, "event_timeout_ms", run.event_timeout_ms, 100, where, "run");
    run.seed = static_cast<std::uint64_t>(intField(r, "seed", 0, 0, where, "run"));
    run.processes = intField(r, "processes", run.processes, 1, where, "run");
    if (run.processes > 64)
        throw SpecError(where, "run.processes",
                        "at most 64 worker processes per arm, got " +
                            std::to_string(run.processes));
    run.min_time_ms = intField(r, "min_time_ms", 0, 0, where, "run");
    run.max_time_ms = intField(r, "max_time_ms", 0, 0, where, "run");
    if (r.contains("target_ci_pct")) {
        const auto& v = r["target_ci_pct"];
        if (!v.is_number() || v.get<double>() <= 0 || v.get<double>() > 100)
            throw SpecError(where, "run.target_ci_pct",
                            "expected a percentage in (0, 100], e.g. 1 for +-1 %, got " + v.dump());
        run.target_ci_pct = v.get<double>();
    }
    if (run.max_time_ms > 0 && run.max_time_ms < run.min_time_ms)
        throw SpecError(where, "run.max_time_ms",
                        "max_time_ms (" + std::to_string(run.max_time_ms) +
                            ") is below min_time_ms (" + std::to_string(run.min_time_ms) + ")");
    if (!r.contains("processes")) run.processes = std::min(run.processes, run.iters);
    run.max_processes = r.contains("processes") ? run.processes : run.max_processes;
    run.max_processes = intField(r, "max_processes", run.max_processes, 1, where, "run");
    if (run.max_processes > 64)
        throw SpecError(where, "run.max_processes",
                        "at most 64 worker processes per arm, got " +
                            std::to_string(run.max_processes));
    if (run.max_processes < run.processes)
        throw SpecError(where, "run.max_processes",
                        "max_processes (" + std::to_string(run.max_processes) +
                            ") is below processes (" + std::to_string(run.processes) + ")");
    if (run.processes > run.iters)
        throw SpecError(where, "run.processes",
                        "processes (" + std::to_string(run.processes) +
                            ") exceeds iters (" + std::to_string(run.iters) +
                            "): every process needs at least one measured iteration");
    if (run.block_iters > run.iters)
        throw SpecError(where, "run.block_iters",
                        "block_iters (" + std::to_string(run.block_iters) +
                            ") exceeds iters (" + std::to_string(run.iters) + ")");
    return run;
}

std::vector<ArmSpec> parseArms(const json& j, const std::string& where) {
    std::vector<ArmSpec> out;
    if (!j.contains("arms") || !j["arms"].is_array())
        throw SpecError(where, "arms", "missing: a preset needs a list of at least one arm");
    const auto& arms = j["arms"];
    if (arms.empty()) throw SpecError(where, "arms", "needs at least one arm");
    std::set<std::string> armNames;
    for (std::size_t i = 0; i < arms.size(); ++i) {
        const auto f = "arms[" + std::to_string(i) + "]";
        const auto& a = arms[i];
        if (!a.is_object()) throw SpecError(where, f, "expected an object with name and knobs");
        for (const auto& [key, v] : a.items())
            if (key != "name" && key != "knobs")
                throw SpecError(where, f + "." + key, "unknown field (expected name, knobs)");
        ArmSpec arm;
        if (!a.contains("name") || !a["name"].is_string() || a["name"].get<std::string>().empty())
            throw SpecError(where, f + ".name", "missing: every arm needs a name");
        arm.name = a["name"];
        if (!armNames.insert(arm.name).second)
            throw SpecError(where, f + ".name", "arm name \"" + arm.name + "\" is used twice");
        arm.knobs_json = a.value("knobs", json::object());
        arm.knobs = parseKnobs(arm.knobs_json, where, f + ".knobs");
        out.push_back(std::move(arm));
    }
    return out;
}

}  // namespace

Preset parsePreset(const json& j, const std::string& file, const std::string& modelDir) {
    const std::string where = file.empty() ? "<preset>" : file;
    if (!j.is_object()) throw SpecError(where, "", "a preset must be a JSON object");
    static const std::set<std::string> known = {"name", "description", "lesson", "model",
                                                "input", "run", "arms"};
    for (const auto& [key, v] : j.items())
        if (!known.count(key))
            throw SpecError(where, key,
                            "unknown field (expected name, description, lesson, model, input, "
                            "run, arms)");
    Preset p;
    p.file = file;
    p.raw = j;
    if (j.contains("name")) {
        if (!j["name"].is_string()) throw SpecError(where, "name", "expected a string");
        p.name = j["name"];
    }
    if (j.contains("description")) {
        if (!j["description"].is_string())
            throw SpecError(where, "description", "expected a string");
        p.description = j["description"];
    }
    if (j.contains("lesson")) p.lesson = j["lesson"];
    resolveModel(j, p, where, modelDir);
    if (j.contains("input")) {
        p.input = parseInputs(j["input"], where, "input");
    } else {
        const auto side = readModelSidecar(p.model_path);
        if (!side.is_object() || !side.contains("input"))
            throw SpecError(where, "input",
                            "missing: the model has no sidecar describing its input, so the "
                            "preset must give one");
        p.input = parseInputs(side["input"], p.model_path + " (sidecar)", "input");
    }
    if (j.contains("run")) p.run = parseRunSettings(j["run"], where);
    p.arms = parseArms(j, where);
    validateLesson(p.lesson, p.arms, where);
    if (p.run.adaptive())
        for (std::size_t i = 0; i < p.arms.size(); ++i)
            if (p.arms[i].knobs.batchSweep())
                throw SpecError(where, "arms[" + std::to_string(i) + "].knobs.batch_size",
                                "a batch-size sweep cannot be combined with adaptive or timed "
                                "stopping (run.min_time_ms / max_time_ms / target_ci_pct): give "
                                "the sweep a fixed run.iters");
    if (p.name.empty()) p.name = p.model;
    return p;
}

Preset loadPresetFile(const std::string& path, const std::string& modelDir) {
    std::ifstream f(path);
    if (!f) throw SpecError(path, "", "cannot open the file");
    json j;
    try {
        j = json::parse(f);
    } catch (const json::parse_error& e) {
        throw SpecError(path, "", std::string("not valid JSON: ") + e.what());
    }
    return parsePreset(j, path, modelDir);
}

Preset presetForModel(const std::string& modelPath, const std::string& modelDir) {
    json j = {{"name", fs::path(modelPath).stem().string()},
              {"model", fs::absolute(modelPath).string()},
              {"arms",
               json::array({{{"name", "A"}, {"knobs", {{"mode", "eval"}, {"grad", "enabled"}}}},
                            {{"name", "B"},
                             {"knobs", {{"mode", "eval"}, {"grad", "inference_mode"}}}}})}};
    return parsePreset(j, "", modelDir);
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
    j["arms"] = json::array();
    for (const auto& a : p.arms)
        j["arms"].push_back({{"name", a.name}, {"knobs", a.knobs_json}});
    return j;
}

}  // namespace pitlane::spec
