#pragma once
// The advisor: rules that read what a run measured (the knobs read back from torch and the OS,
// the environment manifest, the metrics, the cold costs and the operator profile) and say what
// to try next, per arm, ranked by the measured evidence. Each piece of advice carries the number
// that triggered it and, where the change is a knob, the arm's knobs with the change applied
// (validated by the same code as a preset), so the window and scripts can add it as an arm and
// measure it. No Qt, no torch. The rules and their thresholds are listed in docs/ADVISOR.md.
#include "pitlane/results/run_result.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace pitlane::results {

// What a piece of advice would improve, in the order advice is ranked: the time of one
// iteration first, then throughput (items/s), then start-up costs.
enum class AdviceTier { Latency = 0, Throughput = 1, Startup = 2 };
const char* tierName(AdviceTier t);

// An arm of the same run that measured an advised change (issue 44): its knobs are the advised
// arm's with the change applied, on the same model. Its speed against the advised arm, > 1 when
// the change is faster, with the comparison's 95 % CI and p-value (the verdict's own when one of
// the two is the baseline).
struct MeasuredChange {
    std::string arm;
    double ratio = 0, ci_low = 0, ci_high = 0, p_value = 1;
};

struct Advice {
    std::string rule;        // stable id, e.g. "autograd_in_inference" (docs/ADVISOR.md)
    std::size_t arm = 0;     // index in RunResult::arms
    AdviceTier tier = AdviceTier::Latency;
    std::string title;       // what to try: "Turn autograd off (grad = inference_mode)"
    std::string evidence;    // the measured numbers that triggered it, in words
    std::string metric;      // the triggering metric ("profile_share", "minor_faults_per_iter", ...)
    double value = 0;        // its measured value
    double threshold = 0;    // the rule's threshold on it
    // Share of the arm's time (or of its cores, for throughput; of its start-up, for start-up
    // advice) the change addresses, 0..1: from the operator profile or the metrics where they
    // show it (`measured`), otherwise a documented prior (`measured` false). The rank.
    double share = 0;
    bool measured = false;
    json change = json::object();  // knobs to set; empty when the change is not a knob
    json arm_knobs;                // the arm's knobs with `change` applied (validated); null if none
    std::string action;            // what to do when the change is not a knob (or in addition)
    // Set when the run has an arm that measured `change`: the advice cites that measurement
    // (`measured` true, `share` 1 - 1/ratio, the evidence starts with it) instead of a prior;
    // a change the run measured no faster is no advice at all.
    std::optional<MeasuredChange> measured_in_run;
};

// Every rule against every arm that measured something, ranked per arm (tier, then share,
// largest first). Arms in the order of the run.
std::vector<Advice> advise(const RunResult& run);
// The advice for one arm (ranked); empty when none.
std::vector<Advice> adviceFor(const std::vector<Advice>& all, std::size_t arm);

// A preset arm (name, knobs) for the advice: the arm's name with the change ("A + mode=eval");
// null when the change is not a valid knob change, or when an arm of the run measured it.
json suggestedArm(const RunResult& run, const Advice& a);
// The preset as run with one arm added per piece of advice that is a knob change (at most
// `perArm` per arm, the first ones); names made unique.
json presetWithSuggestedArms(const RunResult& run, const std::vector<Advice>& advice,
                             std::size_t perArm = 1);

json adviceToJson(const RunResult& run, const std::vector<Advice>& advice);
// The CLI's "Advice" section ("" when there is none).
std::string adviceText(const RunResult& run, const std::vector<Advice>& advice);
// "mode=eval, jit=freeze_optimize"
std::string changeText(const json& change);

// Thresholds (docs/ADVISOR.md).
inline constexpr double kAdviceCopyShare = 0.10;        // copy / to / contiguous ops
inline constexpr double kAdviceFusableShare = 0.25;     // conv + batch-norm + activation ops
inline constexpr double kAdviceBlasShare = 0.05;        // BLAS-backed ops under reference BLAS
inline constexpr double kAdviceMigrationsPerIter = 0.5;
inline constexpr double kAdviceLowCoreUse = 0.6;        // CPU time / (wall x allowed cores)
inline constexpr double kAdviceColdRatio = 10.0;        // first forward / steady median
inline constexpr double kAdviceNewShapeRatio = 3.0;     // first call of a new shape / median
inline constexpr double kAdviceSlowerRatio = 1.10;      // bf16 / channels_last vs its sibling

}  // namespace pitlane::results
