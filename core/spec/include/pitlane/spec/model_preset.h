#pragma once
// The preset a bare model file opens as (`pitlane MODEL.pt`, File ▸ Open model, a dropped file):
// its JSON, so the window can show it even while it is not valid yet (a model with no sidecar
// waits for its input spec). presetForModel (preset.h) parses the same JSON.
#include <nlohmann/json.hpp>

#include <string>

namespace pitlane::spec {

// {"name": the file's stem, "model": its absolute path, "run": newModelRun(), "arms":
// defaultArms(its format)}.
nlohmann::json newModelPresetJson(const std::string& modelPath);

// The run settings of a new model's A/B: a 30 s time budget (kDefaultQuickBudgetMs, issue 43)
// with blocks of 10 after 10 warmup: the budget plans the processes and the iterations per
// process (budget_plan.h), whatever a forward costs.
nlohmann::json newModelRun();

// The input spec as typed (the window's Input spec field, `pitlane-cli run MODEL --input`):
// "3x224x224", "[3, 224, 224]:float32", "Nx3x64x64" (N marks the batch), "128 int64; 128 int64"
// (one input per ';', float32 when no dtype is given), or the preset's JSON list as it is.
// Returns the preset's "input" JSON (null for empty text); parsePreset judges it.
nlohmann::json parseInputText(const std::string& text);

}  // namespace pitlane::spec
