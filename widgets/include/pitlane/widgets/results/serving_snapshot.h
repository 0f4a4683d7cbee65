#pragma once
// A serving run's figures for the window (issue 13), as one value type: each arm's points per
// offered rate (or clients), its highest rate within the SLO, the comparisons against the
// baseline and the verdict's lines. Computed off the UI thread (VerdictCalculator: the pooled
// percentiles of every level, and compareServing's bootstrap), handed to the plots and the
// verdict as a shared snapshot. No widgets here.
#include "pitlane/results/run_result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pitlane::widgets {

// An arm's figures at one level for the verdict table (issue 44: the table of a serving run was a
// row of dashes): the highest rate within the SLO; without an SLO (or missing it at every
// rate) the highest listed level it kept up with (not saturated), else its lowest. With the
// comparison against the baseline at that level when both measured it.
struct ServingHeadline {
    bool known = false;
    std::string level;  // "400 req/s", "8 clients"
    std::string why;    // "the highest rate within the SLO (p99 <= 50 ms)", ...
    double p50_ms = 0, p90_ms = 0, p99_ms = 0, p999_ms = 0;
    double achieved_per_s = 0;  // requests served per second there (every worker)
    bool saturated = false;
    bool compared = false;  // against the baseline at the same level
    double p99_ratio = 0, p99_lo = 0, p99_hi = 0;  // this arm's p99 / the baseline's, 95 % CI
    bool significant = false;
};

struct ServingSnapshot {
    struct Arm {
        std::string name;
        std::vector<results::ServingPoint> points;  // increasing rate (or clients)
        results::SloCapacity capacity;
        std::vector<std::string> comparisons;  // this arm against the baseline, per level
        std::int64_t served = 0;               // requests served in its complete levels
        int levels = 0;                        // complete levels (every process and worker)
        ServingHeadline headline;
    };
    bool closedLoop = false;  // levels are client counts, not offered rates
    double slo_ms = 0;        // 0: none
    bool live = false;        // arms still running were compared as if they had finished
    std::vector<Arm> arms;
    std::vector<std::string> verdict;  // results::servingVerdict
    // results::servingTable without its verdict lines: one row per arm and level, the CLI's
    // table (the window's Levels tab; issue 27: the window had none).
    std::string table;
};

// The headline of one arm's points (servingHeadline picks the level; comparisons are
// compareServing's, those of `arm` are searched for the level).
ServingHeadline servingHeadline(const std::vector<results::ServingPoint>& points,
                                const results::SloCapacity& capacity, double slo_ms,
                                const std::vector<results::ServingComparison>& comparisons, std::size_t arm);

// The snapshot of `run` (a serving run; empty arms otherwise). `live`: the run is still going.
// compareServing only compares arms that finished; for a live snapshot the caller passes a run
// whose running arms are marked ok (what they served so far is what is compared).
ServingSnapshot servingSnapshot(const results::RunResult& run, bool live);

// What an empty serving plot says: waiting for a level while the run goes, or that a finished
// run (a stored one) has none.
std::string servingEmptyText(const results::RunResult& run, const std::string& waiting);

// "400 req/s" or "8 clients".
std::string servingLevelName(double rate_per_s, int clients);

}  // namespace pitlane::widgets
