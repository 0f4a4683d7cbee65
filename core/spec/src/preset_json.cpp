// Presets written out: a parsed preset back to JSON, its inputs, and the presets the window and
// `pitlane-cli run MODEL` make for a model file (preset.h).
#include "pitlane/spec/model_file.h"
#include "pitlane/spec/model_preset.h"
#include "pitlane/spec/run_limits.h"
#include "pitlane/spec/preset.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace pitlane::spec {

json inputsToJson(const std::vector<InputSpec>& inputs) {
    json a = json::array();
    for (const auto& in : inputs) {
        json e{{"shape", in.shape}, {"dtype", in.dtype}};
        if (!in.shapes.empty()) e["shapes"] = in.shapes;
        if (!in.batch_dim) e["batch_dim"] = false;
        if (in.example) e["example"] = true;
        if (in.low) e["low"] = *in.low;
        if (in.high) e["high"] = *in.high;
        a.push_back(e);
    }
    return a;
}

json defaultArms(const std::string& format) {
    // One intra-op thread in both arms: on a shared machine torch's default (every core) made
    // worker processes 100x apart (issue 27); the knob stays one click away. The arms differ in
    // one knob and are named after it.
    // An exported program: as exported (NativeRT) against compiled (AOTInductor, cached), the
    // question a torch.export user asks first.
    if (format == kFormatExported)
        return json::array({{{"name", "NativeRT"}, {"knobs", {{"compile", "none"}, {"intra_op_threads", 1}}}},
                            {{"name", "AOTInductor"}, {"knobs", {{"compile", "aoti"}, {"intra_op_threads", 1}}}}});
    if (format == kFormatAoti)  // a package has no grad to compare: its A/B is the threads
        return json::array({{{"name", "1 thread"}, {"knobs", {{"intra_op_threads", 1}}}},
                            {{"name", "2 threads"}, {"knobs", {{"intra_op_threads", 2}}}}});
    return json::array({{{"name", "grad enabled"}, {"knobs", {{"mode", "eval"}, {"grad", "enabled"}, {"intra_op_threads", 1}}}},
                        {{"name", "inference_mode"},
                         {"knobs", {{"mode", "eval"}, {"grad", "inference_mode"}, {"intra_op_threads", 1}}}}});
}

json newModelRun() {
    // Planned from a time budget (issue 43): a model of any size gives its verdict in about as long.
    return {{"warmup_iters", 10}, {"block_iters", 10}, {"budget_ms", kDefaultQuickBudgetMs}};
}

json newModelPresetJson(const std::string& modelPath) {
    const ModelFormat format = readModelFormat(modelPath);
    json arms = defaultArms(format.format);
    // A package whose kernels have a thread count compiled in: intra_op_threads does not reach
    // them, so "1 thread" vs "2 threads" would both run that count (issue 41). Its A/B is then a
    // knob that applies to any package: the allocator.
    const auto threads = format.metadata.find("kernel_threads");
    if (format.format == kFormatAoti && threads != format.metadata.end() && threads->second != "dynamic" &&
        threads->second != "none")
        arms = json::array({{{"name", "glibc malloc"}, {"knobs", {{"allocator", "system"}, {"intra_op_threads", 1}}}},
                            {{"name", "jemalloc"}, {"knobs", {{"allocator", "jemalloc"}, {"intra_op_threads", 1}}}}});
    return {{"name", fs::path(modelPath).stem().string()},
            {"model", fs::absolute(modelPath).string()},
            {"run", newModelRun()},
            {"arms", arms}};
}

Preset presetForModel(const std::string& modelPath, const std::string& modelDir) {
    return parsePreset(newModelPresetJson(modelPath), "", modelDir);
}

Preset presetForModels(const std::string& modelA, const std::string& modelB, const std::string& modelDir) {
    // Left out, grad is inference_mode for a package; written for TorchScript, so both arms
    // measure inference the same way.
    auto knobs = [](const std::string& path) {
        const std::string format = readModelFormat(path).format;
        return format == kFormatAoti || format == kFormatExported
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
    if (p.run.budgeted()) {  // the budget plans iters and processes: written, they would be exact
        j["run"].erase("iters");
        j["run"].erase("processes");
        j["run"]["budget_ms"] = p.run.budget_ms;
        if (p.run.max_processes == kBudgetMaxProcesses) j["run"].erase("max_processes");
    }
    if (p.run.min_time_ms > 0) j["run"]["min_time_ms"] = p.run.min_time_ms;
    if (p.run.max_time_ms > 0) j["run"]["max_time_ms"] = p.run.max_time_ms;
    if (p.run.target_ci_pct > 0) j["run"]["target_ci_pct"] = p.run.target_ci_pct;
    if (p.run.profile_iters > 0) j["run"]["profile_iters"] = p.run.profile_iters;
    if (p.run.compare_hosts) j["run"]["compare_hosts"] = true;
    if (p.run.energy_idle_ms != RunSettings{}.energy_idle_ms) j["run"]["energy_idle_ms"] = p.run.energy_idle_ms;
    if (p.run.energy_cooldown_ms != RunSettings{}.energy_cooldown_ms)
        j["run"]["energy_cooldown_ms"] = p.run.energy_cooldown_ms;
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
