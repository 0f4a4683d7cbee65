#pragma once
// A worker process's CPU use over time, from its metric ticks (issue 41 item 3): MetricTick::cpu_s
// is the process's cumulative CPU time (user + system, every thread), so its use is the
// difference between two ticks of the same process over the time between them. Two rules make
// the figure what the process could have used, at most min(threads, cores) x 100 %:
// - Only ticks of one process are differenced: an arm's ticks interleave its concurrent workers
//   and its rounds' processes, each with counters of its own, keyed (worker, process).
// - The time is the worker's own: MetricTick::sampled_ms, read beside the CPU counters. When the
//   session received a tick (t_ms) can be 1 ms after the one before while the worker read them
//   60 ms apart (events queue in a pipe while the session's thread waits for a core). Ticks
//   recorded before the worker sent its clock fall back on t_ms.
// The window plot, the HTML / PDF report's CPU chart and the tests read these figures alone.
#include "pitlane/results/run_result.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace pitlane::results {

// A rate is taken over at least this much of the worker's clock: ticks closer to the window's
// start (the tick at each block's end follows the periodic one by a few ms) extend the window
// instead of starting a new one. getrusage counts a thread running on another core only up to
// its last scheduler tick (1 ms at HZ 1000, 4 ms at 250, 10 ms at 100), so each end of a window
// may lag by up to one scheduler tick per running thread.
inline constexpr double kCpuRateMinWindowMs = 250;
// How far a process's figure may read above min(threads, cores) x 100 % (a fraction of that
// bound): the scheduler-tick lag above over a 250 ms window (at most 4 % at HZ 100, 1.6 % at
// 250) and the worker's own sampler and event-writer threads, which run beside its intra-op
// threads (well under 1 % of a core each). docs/ARCHITECTURE.md ("Process CPU"). Nothing is
// clamped to it: the tests bound every figure by it.
inline constexpr double kCpuRateTolerance = 0.05;

struct CpuRate {
    int worker = 0, process = 0;
    double t_ms = 0;        // the run clock at the window's end (MetricTick::t_ms)
    double window_ms = 0;   // the window, on the worker's clock (or the run clock: see above)
    bool worker_clock = true;  // false: a run recorded before the worker sent its clock
    double pct = 0;         // CPU time per wall time, in % of one core
};

// The rates of one arm's ticks, fed in the order they were recorded (the window adds each tick
// as it arrives; processCpuRates feeds a whole list).
class CpuRateSeries {
public:
    // The rate whose window `tick` closes, if it closes one: not for a process's first tick, one
    // within kCpuRateMinWindowMs of its window's start, or one whose clock or CPU time went back
    // (a new process under the same key: its window restarts there).
    std::optional<CpuRate> add(const MetricTick& tick);
    void clear() { start_.clear(); }

private:
    struct Start {
        double ms = 0, cpu_s = 0;
        bool worker_clock = true;
    };
    std::map<std::pair<int, int>, Start> start_;  // (worker, process) -> its window's start
};

// Every rate of an arm's ticks, in tick order.
std::vector<CpuRate> processCpuRates(const std::vector<MetricTick>& ticks);

}  // namespace pitlane::results
