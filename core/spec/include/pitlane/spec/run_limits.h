#pragma once
// Bounds that validation and the runner share (issue 28). Kept out of preset.h, which most of the
// project includes.
#include "pitlane/spec/preset.h"

#include <algorithm>

namespace pitlane::spec {

// run.target_ci_pct below this is refused (preset.cpp says why).
inline constexpr double kMinTargetCiPct = 0.1;

// Adaptive stopping always ends: without run.max_time_ms, a run with target_ci_pct (or
// min_time_ms) stops after this long, or after min_time_ms when that is longer, and says "not
// stable" when the target was not met. 5 minutes: the window's and the CLI's run is interactive,
// and a target that 5 minutes of blocks cannot reach needs a looser target or an explicit cap.
inline constexpr int kDefaultAdaptiveCapMs = 300000;

// The time cap adaptive stopping runs under (ms).
inline int adaptiveTimeCapMs(const RunSettings& run) {
    return run.max_time_ms > 0 ? run.max_time_ms : std::max(kDefaultAdaptiveCapMs, run.min_time_ms);
}

// A time budget (run.budget_ms, issue 43): what a bare model's quick run gets (`pitlane-cli run
// MODEL.pt`, the window's new-model preset), the least a budget may be, and the processes per
// arm a budgeted run measures at the least (the CI's process level needs three) and at the most
// (pyperf's 20) unless run.max_processes says otherwise.
inline constexpr int kDefaultQuickBudgetMs = 30000;
inline constexpr int kMinBudgetMs = 2000;
inline constexpr int kBudgetMinProcesses = 3;
inline constexpr int kBudgetMaxProcesses = 20;

}  // namespace pitlane::spec
