#pragma once
// When a run stops (DESIGN.md "Stopping"): adaptive and timed stopping after the fixed minimum of
// blocks, and replication (another round of fresh processes while a comparison is inconclusive).
// Pure functions of what was measured: ExperimentRunner asks them and queues what they decide;
// tests/session checks them on synthetic samples.
#include "pitlane/results/run_result.h"
#include "pitlane/spec/preset.h"
#include "pitlane/stats/stats.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace pitlane::session {

struct AdaptiveDecision {
    bool anyPending = false;  // some arm is still measuring (else nothing to decide)
    bool more = false;        // measure another round (or block) of every pending arm
    bool stable = true;       // every pending arm's median CI is within run.target_ci_pct
    int capMs = 0;            // the time cap that applied (spec::adaptiveTimeCapMs)
    nlohmann::json perArm = nlohmann::json::object();  // median, CI, half-width per pending arm
};
// More while the minimum time is not reached, or a CI is wider than the target, or the run is
// timed only ("run for T ms"); never past the cap.
AdaptiveDecision decideAdaptive(const spec::RunSettings& run,
                                const std::vector<results::ArmResult>& arms, double elapsedMs);
// The results' `stopping` record once it decided to stop: the rule in words, stable, the time
// measured, the rounds and processes, each arm's CI, and why it is not stable.
nlohmann::json stoppingRecord(const spec::RunSettings& run, const AdaptiveDecision& d,
                              double elapsedMs, int rounds, int processesPerArm);

// A comparison replication looks at: the baseline arm and another, their blocks.
struct ReplicationPair {
    std::string base, arm;
    stats::BlockedSamples a, b;
};
// Each pair still inconclusive at the interim confidence (stats::kInterimConfidence: neither
// significant nor within 1/kTightRatio-kTightRatio) after `rounds` processes, with why. Empty:
// stop replicating. Runs the bootstraps: call it off the UI thread.
std::vector<std::string> inconclusivePairs(const std::vector<ReplicationPair>& pairs, int rounds);

}  // namespace pitlane::session
