#pragma once
// The regression gate of `pitlane-cli run PRESET --baseline RUN_ID|latest|baseline
// [--max-slowdown PCT]` (issue 29): each arm against the baseline run's arm of the same name,
// unpaired (runs made at different times share no blocks). An arm fails the gate only when it is
// slower than its baseline by more than PCT *and* the whole 95 % CI of the slowdown lies beyond
// PCT: noise that merely could be a slowdown never fails a CI job.
#include "cli_common.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace pitlane::cli {

constexpr int kExitGateFailed = 4;

struct GateOptions {
    QString baseline;             // "" = no gate; a run id, "latest" or "baseline"
    double maxSlowdownPct = 5.0;  // --max-slowdown
};

// The baseline run `g.baseline` names for a run of `presetName`, resolved before anything is
// measured: a run id (it must exist), "latest" (the newest finished run of that preset name) or
// "baseline" (the newest run of that preset name marked as baseline). nullopt with `why` set.
std::optional<qint64> resolveBaseline(const store::RunStore& history, const GateOptions& g,
                                      const QString& presetName, std::string& why);

struct GateResult {
    bool failed = false;
    nlohmann::json json;  // "gate": baseline run, threshold, one entry per arm
    std::string table;    // the printed lines
};
// Compares every arm of the stored run `runId` with its namesake in `baselineId`.
GateResult runGate(const store::RunStore& history, qint64 runId, qint64 baselineId, const GateOptions& g);

}  // namespace pitlane::cli
