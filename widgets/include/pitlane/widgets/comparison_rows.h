#pragma once
// The verdict of a run as plain rows (one per arm), computed from a RunResult through the same
// results:: functions as pitlane-cli, so the window and the CLI never disagree. No widgets here:
// the rows are a value type handed from a worker thread to the table model.
#include "pitlane/results/run_result.h"

#include <optional>
#include <string>
#include <vector>

namespace pitlane::widgets {

struct ComparisonRow {
    std::string arm, status, error;
    std::size_t n = 0;
    double median_ns = 0, p90_ns = 0, p99_ns = 0, throughput_per_s = 0;
    std::int64_t peak_rss_bytes = 0;
    bool baseline = false;
    std::optional<stats::Comparison>
        comparison;  // absent for the baseline or an arm without samples
};

// Summaries for every arm; comparisons against the first arm when `withComparisons`.
std::vector<ComparisonRow> comparisonRows(const results::RunResult& run,
                                          bool withComparisons = true);

// The part of a RunResult the verdict needs (no metrics, warmups or manifests): cheap to copy to
// a worker thread while the run goes on.
results::RunResult verdictSnapshot(const results::RunResult& run);

}  // namespace pitlane::widgets
