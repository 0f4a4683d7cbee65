#pragma once
// A lesson preset's machine-checked expectations ("lesson.checks"), validated when the preset is
// parsed: every check names arms that exist, a kind and a metric this build knows, and numbers in
// range; a bad one is a SpecError naming "lesson.checks[i].field". Judging a run against them is
// results::checkLesson. No Qt, no torch.
#include "pitlane/spec/preset.h"

#include <string>
#include <vector>

namespace pitlane::spec {

// Check kinds:
//   faster            arm is at least min_ratio (default 1) times faster than `than` (median
//                     latency, hierarchical-bootstrap CI)
//   similar           arm and `than` are within `within` (default 1.1) of each other
//   lower / higher    `metric` of arm is lower / higher than that of `than`, by min_ratio
//   applied           the read-back `field` (dotted path in the applied event) of arm `equals`
//   throughput_grows  a batch-size sweep arm: items/s at batch `to` >= min_ratio x at `from`
//   saturated         serving: arm's queue grew without bound at offered `rate` (every process)
//   keeps_up          serving: arm kept up with offered `rate` (no process saturated)
inline const std::vector<std::string>& lessonCheckKinds() {
    static const std::vector<std::string> k = {"faster", "similar", "lower", "higher", "applied",
                                               "throughput_grows", "saturated", "keeps_up"};
    return k;
}

// Metrics a lower/higher check may name (results::lessonMetric computes them).
inline const std::vector<std::string>& lessonMetricNames() {
    static const std::vector<std::string> m = {
        "median_latency_ns", "throughput_per_s",     "peak_rss_bytes",
        "tensor_peak_bytes", "minor_faults_per_iter", "involuntary_switches_per_iter",
        "load_ms",           "first_forward_ms",      "process_spread"};
    return m;
}

// Throws SpecError(where, "lesson...", reason). `lesson` may be null (no lesson).
void validateLesson(const json& lesson, const std::vector<ArmSpec>& arms, const std::string& where);

}  // namespace pitlane::spec
