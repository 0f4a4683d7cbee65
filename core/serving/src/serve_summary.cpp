#include "pitlane/serving/serve_summary.h"

#include "pitlane/stats/stats.h"

#include <algorithm>
#include <numeric>

namespace pitlane::serving {

std::vector<RequestTimes> requestTimes(const LevelRecord& level) {
    std::vector<RequestTimes> out;
    out.reserve(std::size_t(level.served()));
    std::size_t r = 0;
    for (const auto& b : level.batches) {
        for (int i = 0; i < b.size && r < level.arrival_ns.size(); ++i, ++r) {
            const std::int64_t a = level.arrival_ns[r];
            RequestTimes t;
            t.end_to_end = b.end_ns - a;
            t.inference = b.end_ns - b.start_ns;
            t.queue_wait = std::max<std::int64_t>(0, std::min(b.start_ns, b.free_ns) - a);
            t.formation_wait = b.start_ns - std::max(a, b.free_ns);
            if (t.formation_wait < 0) t.formation_wait = 0;
            t.batch_size = b.size;
            out.push_back(t);
        }
    }
    return out;
}

LevelSummary summarize(const LevelRecord& level, const LoadSpec& spec, double slo_ms) {
    LevelSummary s;
    s.scheduled = level.scheduled;
    s.arrived = std::int64_t(level.arrival_ns.size());
    s.served = level.served();
    s.saturated = level.saturated;
    s.max_queue = level.max_queue;
    s.slo_ms = slo_ms;
    const double lastEnd = level.batches.empty() ? 0 : double(level.batches.back().end_ns) / 1e6;
    s.wall_ms = std::max(spec.duration_ms, lastEnd);
    if (level.saturated) s.wall_ms = std::max(lastEnd, 1e-3);  // it stopped early
    s.offered_per_s = spec.arrival == Arrival::Closed
                          ? double(s.arrived) / (s.wall_ms / 1e3)
                          : double(s.scheduled) / (spec.duration_ms / 1e3);
    s.achieved_per_s = double(s.served) / (s.wall_ms / 1e3);
    const auto times = requestTimes(level);
    if (!times.empty()) {
        std::vector<double> e2e;
        e2e.reserve(times.size());
        double q = 0, f = 0, inf = 0;
        std::int64_t over = 0;
        for (const auto& t : times) {
            e2e.push_back(double(t.end_to_end) / 1e6);
            q += double(t.queue_wait);
            f += double(t.formation_wait);
            inf += double(t.inference);
            if (slo_ms > 0 && double(t.end_to_end) / 1e6 > slo_ms) ++over;
        }
        const double n = double(times.size());
        std::sort(e2e.begin(), e2e.end());
        s.p50_ms = stats::percentileSorted(e2e, 50);
        s.p90_ms = stats::percentileSorted(e2e, 90);
        s.p99_ms = stats::percentileSorted(e2e, 99);
        s.p999_ms = stats::percentileSorted(e2e, 99.9);
        s.mean_ms = std::accumulate(e2e.begin(), e2e.end(), 0.0) / n;
        s.max_ms = e2e.back();
        s.queue_wait_ms = q / n / 1e6;
        s.formation_wait_ms = f / n / 1e6;
        s.inference_ms = inf / n / 1e6;
        if (slo_ms > 0 && s.arrived > 0)
            s.slo_miss_share = double(over + (s.arrived - s.served)) / double(s.arrived);
    } else if (slo_ms > 0 && s.arrived > 0) {
        s.slo_miss_share = 1;
    }
    if (!level.batches.empty()) {
        s.mean_batch = double(s.served) / double(level.batches.size());
        for (const auto& b : level.batches) {
            if (std::size_t(b.size) >= s.batch_histogram.size())
                s.batch_histogram.resize(std::size_t(b.size) + 1, 0);
            ++s.batch_histogram[std::size_t(b.size)];
        }
    }
    return s;
}

}  // namespace pitlane::serving
