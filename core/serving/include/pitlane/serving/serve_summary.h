#pragma once
// What one serving level measured, per request and in summary.
#include "pitlane/serving/serve_loop.h"

#include <cstdint>
#include <vector>

namespace pitlane::serving {

// One served request's times (ns). wait = queue_wait + formation_wait: queued behind a busy
// worker, then held by the batcher for the batch to fill (max_wait).
struct RequestTimes {
    std::int64_t end_to_end = 0, queue_wait = 0, formation_wait = 0, inference = 0;
    int batch_size = 0;
};
std::vector<RequestTimes> requestTimes(const LevelRecord& level);

struct LevelSummary {
    std::int64_t scheduled = 0, arrived = 0, served = 0;
    double offered_per_s = 0;   // scheduled / duration (open loop); arrived / wall (closed)
    double achieved_per_s = 0;  // served / wall, wall = max(duration, end of the last batch)
    double wall_ms = 0;
    // End-to-end latency of the served requests, ms; type-7 percentiles (stats::percentile).
    double p50_ms = 0, p90_ms = 0, p99_ms = 0, p999_ms = 0, mean_ms = 0, max_ms = 0;
    double queue_wait_ms = 0, formation_wait_ms = 0, inference_ms = 0;  // means over requests
    double mean_batch = 0;            // requests per batch
    std::vector<std::int64_t> batch_histogram;  // [size] = batches of that size
    std::int64_t max_queue = 0;
    double slo_ms = 0;                // 0: none
    // Requests over the SLO, unserved ones included, over those that arrived; -1 without an SLO.
    double slo_miss_share = -1;
    bool saturated = false;
    bool meets_slo() const { return slo_ms > 0 && !saturated && served > 0 && p99_ms <= slo_ms; }
};

LevelSummary summarize(const LevelRecord& level, const LoadSpec& spec, double slo_ms);

}  // namespace pitlane::serving
