// The `sweep` block of a preset (issue 15, "Cluster sweeps"): models x batch sizes, each slice
// one preset with the preset's arms (or those named) at that model and batch size. Each field is
// checked on its own; every error names "sweep.<field>". `pitlane-cli sweep` writes the slices
// (expandSweep) and runs them locally or as a Slurm job array.
#include "pitlane/spec/preset.h"
#include "text_util.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace pitlane::spec {

namespace {

constexpr std::size_t kMaxListed = 256;   // models, batch sizes
constexpr int kMaxBatch = 1 << 20;
constexpr std::size_t kMaxSliceErrors = 10;  // errors of the slices reported, then a count

template <class F>
void step(std::vector<SpecError>& errors, F&& f) {
    try {
        f();
    } catch (const SpecError& e) {
        errors.push_back(e);
    }
}

std::vector<std::string> names(const json& v, const std::string& f, const std::string& where,
                               const std::string& what) {
    if (!v.is_array() || v.empty())
        throw SpecError(where, f, "expected a non-empty list of " + what + ", got " + detail::shown(v));
    if (v.size() > kMaxListed)
        throw SpecError(where, f, "has " + std::to_string(v.size()) + " entries; at most " +
                                      std::to_string(kMaxListed));
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string fi = f + "[" + std::to_string(i) + "]";
        if (!v[i].is_string() || v[i].get<std::string>().empty())
            throw SpecError(where, fi, "expected a non-empty string (" + what + "), got " + detail::shown(v[i]));
        if (!seen.insert(v[i].get<std::string>()).second)
            throw SpecError(where, fi, detail::shown(v[i]) + " is listed twice");
        out.push_back(v[i].get<std::string>());
    }
    return out;
}

std::string sliceLabel(const std::string& model, int batch) {
    const std::string stem = fs::path(model).stem().string();
    return (stem.empty() ? model : stem) + (batch > 0 ? "/b" + std::to_string(batch) : std::string());
}

}  // namespace

SweepSpec parseSweep(const json& j, const std::string& where, const std::vector<ArmSpec>& arms,
                     std::vector<SpecError>& errors) {
    SweepSpec s;
    s.enabled = true;
    if (!j.is_object()) {
        errors.emplace_back(where, "sweep",
                            "expected an object, e.g. {\"models\": [\"mlp\", \"lstm\"], "
                            "\"batch_sizes\": [1, 8], \"arms\": \"all\"}");
        return s;
    }
    for (const auto& [key, v] : j.items())
        if (key != "models" && key != "batch_sizes" && key != "arms")
            errors.emplace_back(where, "sweep." + detail::shown(key), "unknown field (expected models, batch_sizes, arms)");
    if (!j.contains("models") && !j.contains("batch_sizes"))
        errors.emplace_back(where, "sweep",
                            "needs models or batch_sizes (or both): a sweep of one slice is the preset itself");
    if (j.contains("models"))
        step(errors, [&] { s.models = names(j["models"], "sweep.models", where, "models: bundled names or TorchScript files"); });
    if (j.contains("batch_sizes")) step(errors, [&] {
        const auto& v = j["batch_sizes"];
        if (!v.is_array() || v.empty())
            throw SpecError(where, "sweep.batch_sizes", "expected a non-empty list of batch sizes, e.g. [1, 8, 32], got " + detail::shown(v));
        if (v.size() > kMaxListed)
            throw SpecError(where, "sweep.batch_sizes", "has " + std::to_string(v.size()) +
                                                            " entries; at most " + std::to_string(kMaxListed));
        std::set<int> seen;
        for (std::size_t i = 0; i < v.size(); ++i) {
            const std::string fi = "sweep.batch_sizes[" + std::to_string(i) + "]";
            if (!v[i].is_number_integer() || v[i].get<long long>() < 1 || v[i].get<long long>() > kMaxBatch)
                throw SpecError(where, fi, "expected a batch size between 1 and " + std::to_string(kMaxBatch) +
                                               ", got " + detail::shown(v[i]));
            if (!seen.insert(v[i].get<int>()).second)
                throw SpecError(where, fi, detail::shown(v[i]) + " is listed twice");
            s.batch_sizes.push_back(v[i].get<int>());
        }
    });
    if (j.contains("arms")) step(errors, [&] {
        const auto& v = j["arms"];
        if (v.is_string()) {
            if (v.get<std::string>() != "all")
                throw SpecError(where, "sweep.arms", "expected \"all\" or a list of arm names, got " + detail::shown(v));
            return;
        }
        s.arms = names(v, "sweep.arms", where, "arm names");
        for (std::size_t i = 0; i < s.arms.size(); ++i) {
            const bool known = std::any_of(arms.begin(), arms.end(),
                                           [&](const ArmSpec& a) { return a.name == s.arms[i]; });
            if (!known)
                throw SpecError(where, "sweep.arms[" + std::to_string(i) + "]",
                                "no arm is named \"" + s.arms[i] + "\" in this preset's arms");
        }
    });
    const std::size_t slices = std::max<std::size_t>(1, s.models.size()) *
                               std::max<std::size_t>(1, s.batch_sizes.size());
    if (slices > kMaxSweepSlices)
        errors.emplace_back(where, "sweep", "models x batch_sizes make " + std::to_string(slices) +
                                                " slices; at most " + std::to_string(kMaxSweepSlices));
    return s;
}

json sweepToJson(const SweepSpec& s) {
    if (!s.enabled) return nullptr;
    json j = json::object();
    if (!s.models.empty()) j["models"] = s.models;
    if (!s.batch_sizes.empty()) j["batch_sizes"] = s.batch_sizes;
    j["arms"] = s.arms.empty() ? json("all") : json(s.arms);
    return j;
}

std::vector<SweepSlice> expandSweep(const Preset& p) {
    std::vector<SweepSlice> out;
    if (!p.sweep.enabled) return out;
    const std::vector<std::string> models = p.sweep.models.empty() ? std::vector<std::string>{p.model}
                                                                   : p.sweep.models;
    const std::vector<int> batches = p.sweep.batch_sizes.empty() ? std::vector<int>{0} : p.sweep.batch_sizes;
    const auto& bundled = bundledModelNames();
    const fs::path base = p.file.empty() ? fs::current_path() : fs::absolute(p.file).parent_path();
    for (const auto& model : models) {
        // A file is written as an absolute path: the slice lives in another folder.
        std::string written = model;
        if (std::find(bundled.begin(), bundled.end(), model) == bundled.end() && fs::path(model).is_relative())
            written = (base / model).lexically_normal().string();
        for (int batch : batches) {
            SweepSlice s;
            s.index = out.size();
            s.model = model;
            s.batch_size = batch;
            s.label = sliceLabel(model, batch);
            json j = p.raw.is_object() ? p.raw : presetToJson(p);
            j.erase("sweep");
            j.erase("lesson");  // its checks are about the preset's comparison, not a slice's
            j["name"] = p.name + " [" + s.label + "]";
            if (model != p.model) j.erase("input");
            j["model"] = written;
            json arms = json::array();
            for (const auto& a : j.value("arms", json::array())) {
                const std::string name = a.is_object() ? a.value("name", std::string()) : std::string();
                if (!p.sweep.arms.empty() &&
                    std::find(p.sweep.arms.begin(), p.sweep.arms.end(), name) == p.sweep.arms.end())
                    continue;
                json arm = a;
                if (batch > 0) {
                    if (!arm.contains("knobs") || !arm["knobs"].is_object()) arm["knobs"] = json::object();
                    arm["knobs"]["batch_size"] = batch;
                }
                arms.push_back(arm);
            }
            j["arms"] = arms;
            s.preset = std::move(j);
            out.push_back(std::move(s));
        }
    }
    return out;
}

void checkSweepSlices(const Preset& p, const std::string& modelDir, std::vector<SpecError>& errors) {
    std::size_t reported = 0, more = 0;
    const auto slices = expandSweep(p);
    for (const auto& s : slices) {
        const auto modelIndex = static_cast<std::size_t>(
            std::find(p.sweep.models.begin(), p.sweep.models.end(), s.model) - p.sweep.models.begin());
        for (const auto& e : validatePreset(s.preset, p.file, modelDir)) {
            if (reported >= kMaxSliceErrors) {
                ++more;
                continue;
            }
            ++reported;
            if (e.field() == "model" && !p.sweep.models.empty())
                errors.emplace_back(e.where(), "sweep.models[" + std::to_string(modelIndex) + "]", e.reason());
            else if ((e.field() == "input" || e.field().rfind("input[", 0) == 0) && s.model != p.model)
                errors.emplace_back(e.where(), "sweep.models[" + std::to_string(modelIndex) + "]",
                                    "slice " + s.label + ": " + e.field() + ": " + e.reason());
            else
                errors.emplace_back(e.where(), e.field(), "in sweep slice " + s.label + ": " + e.reason());
        }
    }
    if (more > 0)
        errors.emplace_back(p.file.empty() ? "<preset>" : p.file, "sweep",
                            std::to_string(more) + " more errors in other slices");
}

}  // namespace pitlane::spec
