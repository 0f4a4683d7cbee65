#include "pitlane/results/cpu_rates.h"

namespace pitlane::results {

std::optional<CpuRate> CpuRateSeries::add(const MetricTick& tick) {
    const bool workerClock = tick.sampled_ms >= 0;
    const Start now{workerClock ? tick.sampled_ms : tick.t_ms, tick.cpu_s, workerClock};
    const auto [it, first] = start_.try_emplace({tick.worker, tick.process}, now);
    if (first) return std::nullopt;
    Start& start = it->second;
    const double dtMs = now.ms - start.ms, dCpu = now.cpu_s - start.cpu_s;
    if (start.worker_clock != now.worker_clock || dtMs < 0 || dCpu < 0) {
        start = now;  // not the same process's counters: its window starts again here
        return std::nullopt;
    }
    if (dtMs < kCpuRateMinWindowMs) return std::nullopt;  // too short: keep the older start
    start = now;
    CpuRate r;
    r.worker = tick.worker;
    r.process = tick.process;
    r.t_ms = tick.t_ms;
    r.window_ms = dtMs;
    r.worker_clock = workerClock;
    r.pct = 100.0 * dCpu / (dtMs / 1000.0);
    return r;
}

std::vector<CpuRate> processCpuRates(const std::vector<MetricTick>& ticks) {
    CpuRateSeries series;
    std::vector<CpuRate> out;
    for (const auto& t : ticks)
        if (auto r = series.add(t)) out.push_back(*r);
    return out;
}

}  // namespace pitlane::results
