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
    // Requests that had arrived by the end of the arrivals (duration) but were not yet served
    // then. A stable server ends with a few batches' worth; an overloaded one with a share of
    // everything that arrived that grows with the duration.
    std::int64_t backlog_at_end = 0;
    bool stopped_early = false;       // the loop stopped: the oldest request waited saturation_ms
    double slo_ms = 0;                // 0: none
    // Requests over the SLO, unserved ones included, over those that arrived; -1 without an SLO.
    double slo_miss_share = -1;
    // Stopped early, or backlog_at_end above max(5 % of the requests that arrived by then,
    // 3 x max_batch + 5): the queue grew without bound (isSaturatedBacklog).
    bool saturated = false;
    bool meets_slo() const { return slo_ms > 0 && !saturated && served > 0 && p99_ms <= slo_ms; }
};

LevelSummary summarize(const LevelRecord& level, const LoadSpec& spec, double slo_ms);

// Several levels at once, requests pooled (percentiles over all of them, counts and the batch
// histogram summed). `parallel`: they ran side by side, each with its share of the load (an
// arm's K workers): the offered and achieved rates add up. Otherwise they are repeats (replicate
// processes): the rates are their mean. Saturated when any was.
LevelSummary summarizePooled(const std::vector<const LevelRecord*>& levels,
                             const std::vector<LoadSpec>& specs, double slo_ms, bool parallel);

// The backlog rule: `backlog` requests unserved when the arrivals ended, of `arrived` by then.
bool isSaturatedBacklog(std::int64_t backlog, std::int64_t arrived, int max_batch);
std::int64_t backlogAtEnd(const LevelRecord& level, double duration_ms);

// The queue length (requests arrived and not yet dispatched) sampled every `step_ns` from 0 to
// the end of the level's last batch.
std::vector<std::int64_t> queueLengthSeries(const LevelRecord& level, std::int64_t step_ns);

}  // namespace pitlane::serving
