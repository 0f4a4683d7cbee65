#pragma once
// The verdict of a run as plain rows (one per arm), computed from a RunResult through the same
// results:: functions as pitlane-cli, so the window and the CLI never disagree. No widgets here:
// the rows are a value type handed from a worker thread to the table model.
#include "pitlane/results/run_result.h"
#include "pitlane/widgets/results/serving_snapshot.h"

#include <optional>
#include <string>
#include <vector>

namespace pitlane::widgets {

struct ComparisonRow {
    std::string arm, status, error;
    std::string compile;  // what Pitlane compiled it into (results::compileLine), "" when nothing
    std::size_t n = 0;
    double median_ns = 0, p90_ns = 0, p99_ns = 0, p999_ns = 0;
    double throughput_per_s = 0;  // results::armThroughput: the whole arm's items/s
    std::int64_t peak_rss_bytes = 0;
    bool baseline = false;
    // The process level: page faults per measured iteration over every process of the arm
    // (-1: not reported), its processes (start order) and how they split the variance.
    double minor_faults_per_iter = -1, major_faults_per_iter = -1;
    std::vector<results::ProcessSummary> processes;
    int measured_processes = 0;  // processes with samples at the arm's first batch size
    double process_spread = 0;   // slowest / fastest process median; 0: fewer than 2 measured
    stats::VarianceShares variance;
    std::optional<stats::Comparison>
        comparison;  // absent for the baseline or an arm without samples
    // What its comparison must be read with: what ran differs from what was asked
    // (results::comparisonCaveats).
    std::vector<std::string> caveats;
    std::string not_compared;  // why an arm with samples has no comparison (results::notComparedReason)
    // A serving run (issue 13; VerdictCalculator fills these): no samples, but requests served
    // in complete levels, and this arm against the baseline at each level.
    bool serving = false;
    std::int64_t served_requests = 0;
    int serving_levels = 0;
    std::vector<std::string> serving_comparisons;
    ServingHeadline serving_headline;  // the figures the table shows for a serving arm
};

// Summaries for every arm; comparisons against the first arm when `withComparisons`.
std::vector<ComparisonRow> comparisonRows(const results::RunResult& run,
                                          bool withComparisons = true);

// Page faults per iteration for the table and tooltips: "0", "< 0.01", "0.37", "12.5", "240";
// "" when not reported (negative).
std::string formatPerIter(double perIter);


}  // namespace pitlane::widgets
