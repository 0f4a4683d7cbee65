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

bool isSaturatedBacklog(std::int64_t backlog, std::int64_t arrived, int max_batch) {
    const double allowance = std::max(0.05 * double(arrived), 3.0 * double(std::max(1, max_batch)) + 5);
    return double(backlog) > allowance;
}

std::int64_t backlogAtEnd(const LevelRecord& level, double duration_ms) {
    const auto end = std::int64_t(duration_ms * 1e6);
    const auto arrived = std::int64_t(
        std::upper_bound(level.arrival_ns.begin(), level.arrival_ns.end(), end) - level.arrival_ns.begin());
    std::int64_t served = 0;
    for (const auto& b : level.batches)
        if (b.end_ns <= end) served += b.size;
    return std::max<std::int64_t>(0, arrived - served);
}

std::vector<std::int64_t> queueLengthSeries(const LevelRecord& level, std::int64_t step_ns) {
    std::vector<std::int64_t> out;
    if (step_ns <= 0) return out;
    const std::int64_t last = level.batches.empty() ? 0 : level.batches.back().end_ns;
    std::size_t arrived = 0, batch = 0;
    std::int64_t dispatched = 0;
    for (std::int64_t t = 0; t <= last; t += step_ns) {
        while (arrived < level.arrival_ns.size() && level.arrival_ns[arrived] <= t) ++arrived;
        while (batch < level.batches.size() && level.batches[batch].start_ns <= t)
            dispatched += level.batches[batch++].size;
        out.push_back(std::max<std::int64_t>(0, std::int64_t(arrived) - dispatched));
    }
    return out;
}

LevelSummary summarizePooled(const std::vector<const LevelRecord*>& levels,
                             const std::vector<LoadSpec>& specs, double slo_ms, bool parallel) {
    LevelSummary s;
    s.slo_ms = slo_ms;
    if (levels.empty()) return s;
    std::vector<double> e2e;
    double q = 0, f = 0, inf = 0, offered = 0, achieved = 0, wall = 0;
    std::int64_t over = 0, batches = 0;
    for (std::size_t k = 0; k < levels.size(); ++k) {
        const LevelRecord& level = *levels[k];
        const LoadSpec& spec = specs[std::min(k, specs.size() - 1)];
        const std::int64_t arrived = std::int64_t(level.arrival_ns.size());
        const std::int64_t served = level.served();
        s.scheduled += level.scheduled;
        s.arrived += arrived;
        s.served += served;
        s.max_queue = std::max(s.max_queue, level.max_queue);
        const std::int64_t backlog = backlogAtEnd(level, spec.duration_ms);
        s.backlog_at_end += backlog;
        s.stopped_early = s.stopped_early || level.saturated;
        const auto endNs = std::int64_t(spec.duration_ms * 1e6);
        const auto arrivedByEnd = std::int64_t(
            std::upper_bound(level.arrival_ns.begin(), level.arrival_ns.end(), endNs) - level.arrival_ns.begin());
        s.saturated = s.saturated || level.saturated ||
                      isSaturatedBacklog(backlog, arrivedByEnd, spec.max_batch);
        const double lastEnd = level.batches.empty() ? 0 : double(level.batches.back().end_ns) / 1e6;
        double w = std::max(spec.duration_ms, lastEnd);
        if (level.saturated) w = std::max(lastEnd, 1e-3);  // it stopped early
        wall = parallel ? std::max(wall, w) : wall + w / double(levels.size());
        const double levelOffered = spec.arrival == Arrival::Closed
                                        ? double(arrived) / (w / 1e3)
                                        : double(level.scheduled) / (spec.duration_ms / 1e3);
        const double levelAchieved = double(served) / (w / 1e3);
        const double share = parallel ? 1.0 : 1.0 / double(levels.size());
        offered += levelOffered * share;
        achieved += levelAchieved * share;
        for (const auto& t : requestTimes(level)) {
            const double ms = double(t.end_to_end) / 1e6;
            e2e.push_back(ms);
            q += double(t.queue_wait);
            f += double(t.formation_wait);
            inf += double(t.inference);
            if (slo_ms > 0 && ms > slo_ms) ++over;
        }
        batches += std::int64_t(level.batches.size());
        for (const auto& b : level.batches) {
            if (std::size_t(b.size) >= s.batch_histogram.size())
                s.batch_histogram.resize(std::size_t(b.size) + 1, 0);
            ++s.batch_histogram[std::size_t(b.size)];
        }
    }
    s.wall_ms = wall;
    s.offered_per_s = offered;
    s.achieved_per_s = achieved;
    if (!e2e.empty()) {
        const double n = double(e2e.size());
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
    }
    if (slo_ms > 0 && s.arrived > 0)
        s.slo_miss_share = double(over + (s.arrived - s.served)) / double(s.arrived);
    if (batches > 0) s.mean_batch = double(s.served) / double(batches);
    return s;
}

LevelSummary summarize(const LevelRecord& level, const LoadSpec& spec, double slo_ms) {
    return summarizePooled({&level}, {spec}, slo_ms, true);
}

}  // namespace pitlane::serving
