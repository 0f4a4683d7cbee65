// The preset of the paired gate, `pitlane-cli run PRESET --against BASELINE_PRESET|MODEL`
// (cli_gate.h, issue 41): the preset's arms, each with its twin measuring the baseline's
// configuration ("A (baseline)"), in one run with the preset's run settings, so that the twins
// are interleaved block by block and replicated in the same rounds of processes as every arm.
#include "cli_gate.h"

#include <QFileInfo>

#include <filesystem>
#include <set>

namespace pitlane::cli {

namespace {

using nlohmann::json;

bool isModelFile(const QString& path) {
    return path.endsWith(QLatin1String(".pt")) || path.endsWith(QLatin1String(".pt2"));
}

std::string joinNames(const std::vector<spec::ArmSpec>& arms) {
    std::string s;
    for (const auto& a : arms) s += (s.empty() ? "\"" : ", \"") + a.name + "\"";
    return s;
}

// Every error of `errors`, one line each, then what they were found in.
std::string errorLines(const std::vector<spec::SpecError>& errors, const std::string& what) {
    std::string s;
    for (const auto& e : errors) s += std::string(e.what()) + "\n";
    return s + "pitlane-cli: --against: " + what + ": " + std::to_string(errors.size()) +
           (errors.size() == 1 ? " error" : " errors");
}

// The preset as JSON, without what concerns its own arms alone (a lesson's checks, a sweep).
json presetJsonForTwins(const spec::Preset& p) {
    json j = p.raw.is_object() ? p.raw : spec::presetToJson(p);
    j.erase("lesson");
    j.erase("sweep");
    return j;
}

// The baseline as a preset of its own, validated: a preset file as it is, a model file as the
// preset's arms with that model.
std::optional<spec::Preset> baselinePreset(const spec::Preset& preset, const QString& against,
                                           const std::string& modelDir, std::string& why) {
    const std::string file = against.toStdString();
    if (!QFileInfo(against).isFile()) {
        why = "--against " + file + ": no such file (name a baseline preset or a model file, .pt / .pt2)";
        return std::nullopt;
    }
    if (!isModelFile(against)) {
        const auto errors = spec::validatePresetFile(file, modelDir);
        if (!errors.empty()) {
            why = errorLines(errors, "invalid baseline preset " + file);
            return std::nullopt;
        }
        return spec::loadPresetFile(file, modelDir);
    }
    // A model file: the preset with its model, and every arm's own, replaced by it.
    json j = presetJsonForTwins(preset);
    const std::string model = std::filesystem::absolute(file).string();
    j["model"] = model;
    for (auto& arm : j["arms"])
        if (arm.is_object() && arm.contains("model")) arm["model"] = model;
    const auto errors = spec::validatePreset(j, preset.file, modelDir);
    if (!errors.empty()) {
        why = errorLines(errors, "the preset's arms with the model " + file + " (the baseline) are not valid");
        return std::nullopt;
    }
    return spec::parsePreset(j, preset.file, modelDir);
}

}  // namespace

std::optional<spec::Preset> pairedPreset(const spec::Preset& preset, const QString& against,
                                         const std::string& modelDir, std::string& why) {
    const std::string presetFile = preset.file.empty() ? preset.name : preset.file;
    if (preset.serving.enabled) {
        why = "--against: " + presetFile + ": serving: a serving run has no per-iteration latencies to "
              "gate on (run the preset without its serving block)";
        return std::nullopt;
    }
    const auto base = baselinePreset(preset, against, modelDir, why);
    if (!base) return std::nullopt;
    const std::string baseFile = against.toStdString();
    // Arm by arm, by name, both ways.
    std::set<std::string> names;
    for (const auto& a : preset.arms) names.insert(a.name);
    for (std::size_t i = 0; i < base->arms.size(); ++i)
        if (!names.count(base->arms[i].name)) {
            why = "--against: " + baseFile + ": arms[" + std::to_string(i) + "].name: \"" + base->arms[i].name +
                  "\" is not an arm of " + presetFile + " (its arms: " + joinNames(preset.arms) +
                  "); the paired gate measures each arm against the baseline's arm of the same name";
            return std::nullopt;
        }
    std::vector<const spec::ArmSpec*> twins;
    for (const auto& a : preset.arms) {
        const auto it = std::find_if(base->arms.begin(), base->arms.end(),
                                     [&](const spec::ArmSpec& b) { return b.name == a.name; });
        if (it == base->arms.end()) {
            why = "--against: " + baseFile + ": arms: no arm \"" + a.name + "\" (its arms: " +
                  joinNames(base->arms) + "); the paired gate measures each arm of " + presetFile +
                  " against the baseline's arm of the same name";
            return std::nullopt;
        }
        if (names.count(pairedBaselineName(a.name))) {
            why = "--against: " + presetFile + ": arms: \"" + pairedBaselineName(a.name) +
                  "\" is the name the paired gate gives arm \"" + a.name + "\"'s baseline: rename that arm";
            return std::nullopt;
        }
        twins.push_back(&*it);
    }
    // The twins first (the first arm is what the run's table compares against), then the arms.
    json j = presetJsonForTwins(preset);
    json arms = json::array();
    for (const auto* b : twins) {
        json t = {{"name", pairedBaselineName(b->name)},
                  {"knobs", b->knobs_json.is_object() ? b->knobs_json : json::object()},
                  // Absolute: a model resolved against a relative folder ($PITLANE_MODEL_DIR, the
                  // baseline preset's) would be looked up again beside this preset.
                  {"model", std::filesystem::absolute(b->model_path).string()},
                  {"input", spec::inputsToJson(b->input)}};
        if (!b->host.empty()) t["host"] = b->host;
        arms.push_back(t);
    }
    for (const auto& a : j["arms"]) arms.push_back(a);
    j["arms"] = arms;
    try {
        return spec::parsePreset(j, preset.file, modelDir);
    } catch (const spec::SpecError& e) {
        why = std::string(e.what()) + "\npitlane-cli: --against: " + presetFile +
              " with the baseline's arms of " + baseFile + " is not a valid preset";
        return std::nullopt;
    }
}

}  // namespace pitlane::cli
