// Preset files: parsing, model resolution and validation.
#include "pitlane/spec/preset.h"
#include "pitlane/spec/model_preset.h"

#include "pitlane/spec/lesson.h"
#include "pitlane/spec/remote_hosts.h"
#include "pitlane/spec/run_limits.h"
#include "arm_models.h"
#include "json_file.h"
#include "preset_errors.h"
#include "preset_run.h"
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
using detail::checkNotServingArms;
using detail::checkRunSize;
using detail::checkServingArms;
using detail::parseRunSettings;

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
                                          "int32", "int16", "int8", "uint8", "bool"};

std::vector<std::int64_t> parseShape(const json& v, const std::string& where,
                                     const std::string& f) {
    if (!v.is_array())
        throw SpecError(where, f, "expected a list of dimension sizes, e.g. [3, 224, 224] (or [\"N\", 3, 224, 224]: N is the batch)");
    // Bounded before any worker starts (issue 42): a shape of 100 000 dimensions passed validate
    // and ran 21 s a forward; one of 2^40 elements would only fail in the worker's allocator.
    constexpr std::size_t kMaxRank = 12;
    constexpr long long kMaxElements = 1LL << 31;  // 8 GiB of float32, batch not counted
    if (v.size() > kMaxRank + 1 || (v.size() == kMaxRank + 1 && !(v[0].is_string() && v[0].get<std::string>() == "N")))
        throw SpecError(where, f, "a shape of " + std::to_string(v.size()) + " dimensions; at most " +
                                      std::to_string(kMaxRank) + " are accepted");
    std::vector<std::int64_t> shape;
    long long elements = 1;
    for (std::size_t i = 0; i < v.size(); ++i) {
        // A leading "N" marks the batch dimension where it is prepended anyway: ["N", 3, 64, 64]
        // is [3, 64, 64].
        if (i == 0 && v.size() > 1 && v[i].is_string() && v[i].get<std::string>() == "N") continue;
        if (!v[i].is_number_integer() || v[i].get<long long>() < 1 ||
            v[i].get<long long>() > (1LL << 31))
            throw SpecError(where, f + "[" + std::to_string(i) + "]",
                            "expected a dimension size >= 1, got " + detail::shown(v[i]));
        shape.push_back(v[i].get<std::int64_t>());
        elements = elements > kMaxElements / shape.back() ? kMaxElements + 1 : elements * shape.back();
        if (elements > kMaxElements)
            throw SpecError(where, f, "a shape of more than " + std::to_string(kMaxElements) +
                                          " elements (2^31, batch not counted); at most that many are accepted");
    }
    return shape;
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
                                        "int64, int32, int16, int8, uint8, bool)");
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
            } else if (key == "low" || key == "high") {
                if (!v.is_number_integer())
                    throw SpecError(where, fk, "expected an integer (integer inputs are drawn from [low, high)), got " +
                                                   detail::shown(v));
                (key == "low" ? in.low : in.high) = v.get<long long>();
            } else if (key == "example") {
                if (!v.is_boolean())
                    throw SpecError(where, fk,
                                    "expected true (an exported program's example input: the values it was "
                                    "exported with) or false, got " + detail::shown(v));
                in.example = v.get<bool>();
            } else {
                throw SpecError(where, fk, "unknown input field (expected shape, dtype, shapes, batch_dim, low, high, example)");
            }
        });
    }
    if (in.low || in.high) {
        const bool integer = in.dtype == "int64" || in.dtype == "int32" || in.dtype == "int16" || in.dtype == "int8" ||
                             in.dtype == "uint8";
        const long long lo = in.low.value_or(kDefaultIntLow), hi = in.high.value_or(kDefaultIntHigh);
        if (!integer)
            errs.add(f + (in.low ? ".low" : ".high"), "a value range applies to integer inputs (int64, int32, int16, int8, "
                                                      "uint8); this input is " + in.dtype);
        else if (lo >= hi)
            errs.add(f + ".high", "the range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                      ") is empty: high must be above low (values are drawn from [low, high))");
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

namespace {

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
// The one error that stops everything, found before the tree is copied (copying and destroying
// it recurse once per level): it nests too deep, or it has more arms than are measured.
bool refusedWhole(const json& j, Errors& errs) {
    if (detail::jsonDepth(j, detail::kMaxPresetDepth) > detail::kMaxPresetDepth) {
        std::string field;  // the top-level field that nests too deep
        if (j.is_object())
            for (auto it = j.begin(); it != j.end() && field.empty(); ++it)
                if (detail::jsonDepth(it.value(), detail::kMaxPresetDepth - 1) > detail::kMaxPresetDepth - 1)
                    field = it.key().empty() ? std::string("\"\"") : detail::shown(it.key());
        errs.add(field, "nested more than " + std::to_string(detail::kMaxPresetDepth) +
                            " levels deep (objects and arrays within each other); a preset needs a few");
        return true;
    }
    // The arm limit before anything else (issue 28: 256 k arms were validated, then refused).
    if (j.is_object() && j.contains("arms") && j["arms"].is_array() && j["arms"].size() > kMaxArms) {
        errs.add("arms", "has " + std::to_string(j["arms"].size()) + " arms; at most " +
                             std::to_string(kMaxArms) + " are measured side by side");
        return true;
    }
    return false;
}

// The unknown top-level fields, name, description and lesson.
void parseHeader(const json& j, Preset& p, Errors& errs) {
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
}

// The model, and the input: as written, or as the model file describes it. False when the model
// was not found.
bool parseModelAndInput(const json& j, const std::string& file, const std::string& modelDir,
                        Preset& p, Errors& errs) {
    const std::string& where = errs.where();
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
    if (j.contains("input")) {
        p.input = collectInputs(j["input"], "input", errs);
    } else if (modelFound) {
        std::string source;
        const json described = detail::describedInput(p.model_path, readModelFormat(p.model_path), &source);
        if (described.is_null())
            errs.add("input", detail::missingInput(p.model_path));
        else
            errs.step("input", [&] { p.input = parseInputs(described, source, "input"); });
    }
    return modelFound;
}

// Per arm: an input given whole (batch_dim false) has no batch dimension to put batch_size in,
// and a batch-size sweep needs a fixed run.iters.
void checkArmsAgainstInputAndRun(const Preset& p, Errors& errs) {
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
    if (p.run.budgeted())
        for (std::size_t i = 0; i < p.arms.size(); ++i)
            if (p.arms[i].knobs.batchSweep())
                errs.add("arms[" + std::to_string(i) + "].knobs.batch_size",
                         "a batch-size sweep cannot be planned from a time budget (run.budget_ms, "
                         "--time): give the sweep a fixed run.iters");
}

// A field whose string was refused (checkStrings) is not judged again by its parser: the errors
// after the first `from` on such fields are dropped (a model path with a NUL is not also "does
// not exist").
void dropErrorsOnRefused(Errors& errs, std::size_t from, const std::set<std::string>& refused) {
    if (refused.empty()) return;
    auto& list = errs.list();
    std::size_t kept = from;
    for (std::size_t i = from; i < list.size(); ++i)
        if (!refused.count(list[i].field())) {
            if (kept != i) list[kept] = std::move(list[i]);  // never onto itself
            ++kept;
        }
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(kept), list.end());
}

Preset parseCollecting(const json& j, const std::string& file, const std::string& modelDir, Errors& errs) {
    const std::string& where = errs.where();
    Preset p;
    p.file = file;
    if (refusedWhole(j, errs)) return p;
    p.raw = j;
    if (!j.is_object()) {
        errs.add("", "a preset must be a JSON object");
        return p;
    }
    // Every string first.
    std::set<std::string> refused;
    checkStrings(j, errs, refused);
    const std::size_t stringErrors = errs.list().size();
    parseHeader(j, p, errs);
    const bool modelFound = parseModelAndInput(j, file, modelDir, p, errs);
    if (j.contains("run")) p.run = parseRunSettings(j["run"], errs);
    if (j.contains("serving")) p.serving = parseServing(j["serving"], where, errs.list());
    p.arms = parseArms(j, errs);
    if (modelFound) detail::resolveArmModels(j, p, j.contains("input"), modelDir, errs);
    parseRemote(j, p, errs.list());
    detail::checkArmModelsPlacement(p, errs);
    checkLesson(p.lesson, p.arms, errs);
    if (p.serving.enabled) {
        checkServingArms(p, errs);
    } else {
        checkRunSize(p, errs);
        checkNotServingArms(p, errs);
    }
    checkArmsAgainstInputAndRun(p, errs);
    if (p.name.empty()) p.name = p.model;
    if (j.contains("sweep")) {
        p.sweep = parseSweep(j["sweep"], where, p.arms, errs.list());
        if (errs.list().empty()) checkSweepSlices(p, modelDir, errs.list());
    }
    dropErrorsOnRefused(errs, stringErrors, refused);
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

}  // namespace pitlane::spec
