#pragma once
// Internal to the advisor: what the rules read of one arm, computed once (advice.cpp), and the
// rules themselves (advice_rules.cpp).
#include "pitlane/results/advice.h"

#include <map>
#include <string>

namespace pitlane::results::advice_detail {

struct ArmCtx {
    const RunResult* run = nullptr;
    std::size_t index = 0;
    const ArmResult& arm() const { return run->arms[index]; }
    const protocol::Applied& applied() const { return arm().applied; }
    const json& environment() const { return arm().environment; }

    double median_ns = 0;                    // at the arm's first batch size
    std::map<std::string, double> op_ms;     // profile: self ms per profiled iteration
    double profile_total_ms = 0;             // their sum (0: no profile)
    bool hasProfile() const { return profile_total_ms > 0; }
    int intra_threads = 1, workers = 1;
    int threads = 0;                         // intra-op threads summed over the workers
    int allowed_cores = 0;                   // cores the arm's workers may run on (union)
    double involuntary_per_iter = -1, migrations_per_iter = -1;  // -1: not measured
    double core_use = -1;                    // CPU time / (wall x allowed cores) while measuring
    double tensor_peak_bytes = -1;
};

void applyRules(const ArmCtx& c, std::vector<Advice>& out);
// Advice whose change an arm of the run measured (advice_measured.cpp): cites that measurement
// (Advice::measured_in_run) instead of the rule's estimate. False when the run measured the
// change no faster (not significantly, or slower): then it is no advice.
bool citeMeasuredChange(const RunResult& run, Advice& a);
// The rules on formats, host copies, throughput and start-up (advice_rules_more.cpp), in order.
void formatAndStartupRules(const ArmCtx& c, std::vector<Advice>& out);

}  // namespace pitlane::results::advice_detail
