#include "pitlane/serving/serve_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace pitlane::serving {

std::int64_t LevelRecord::served() const {
    std::int64_t n = 0;
    for (const auto& b : batches) n += b.size;
    return n;
}

LevelRecord runLevel(const LoadSpec& spec, LoopClock& clock, const RunBatch& runBatch,
                     const Progress& progress, const StopRequested& stop) {
    LevelRecord rec;
    const bool closed = spec.arrival == Arrival::Closed;
    // Scheduled arrivals; in the closed loop they are added as requests complete (each client
    // sends its next request the moment its last one returns), which keeps them in time order.
    std::vector<std::int64_t> schedule = closed ? std::vector<std::int64_t>(
                                                      std::size_t(std::max(1, spec.clients)), 0)
                                                : openArrivals(spec);
    rec.scheduled = std::int64_t(schedule.size());
    const std::int64_t durationNs = std::int64_t(spec.duration_ms * 1e6);
    const std::int64_t maxWaitNs = std::int64_t(std::llround(spec.max_wait_ms * 1e6));
    const std::int64_t saturationNs = std::int64_t(spec.saturation_ms * 1e6);
    const std::size_t maxBatch = std::size_t(std::max(1, spec.max_batch));
    std::size_t admitted = 0;  // schedule[0, admitted) have arrived
    std::size_t served = 0;    // schedule[0, served) are in a batch; the queue is [served, admitted)
    std::int64_t freeAt = 0;
    rec.arrival_ns.reserve(schedule.size());
    for (;;) {
        if (stop && stop()) break;
        const std::int64_t now = clock.now();
        while (admitted < schedule.size() && schedule[admitted] <= now)
            rec.arrival_ns.push_back(schedule[admitted++]);
        const std::size_t queued = admitted - served;
        if (queued == 0) {
            if (admitted == schedule.size()) break;  // nothing queued, nothing more to come
            clock.sleepUntil(schedule[admitted]);
            continue;
        }
        const std::int64_t oldest = schedule[served];
        if (now - oldest > saturationNs) {
            rec.saturated = true;
            break;
        }
        if (queued < maxBatch && now < oldest + maxWaitNs) {
            std::int64_t wake = oldest + maxWaitNs;
            if (admitted < schedule.size()) wake = std::min(wake, schedule[admitted]);
            clock.sleepUntil(wake);
            continue;
        }
        const int size = int(std::min(queued, maxBatch));
        rec.max_queue = std::max(rec.max_queue, std::int64_t(queued));
        BatchRecord b;
        b.size = size;
        b.free_ns = freeAt;
        b.start_ns = clock.now();
        const bool ok = runBatch(size);
        b.end_ns = clock.now();
        if (!ok) {
            rec.failed = true;
            break;
        }
        rec.batches.push_back(b);
        served += std::size_t(size);
        freeAt = b.end_ns;
        if (closed && b.end_ns < durationNs)
            for (int i = 0; i < size; ++i) schedule.push_back(b.end_ns);
        if (progress && !progress(rec)) break;
    }
    const std::int64_t end = clock.now();
    while (admitted < schedule.size() && schedule[admitted] <= end)
        rec.arrival_ns.push_back(schedule[admitted++]);
    if (closed) rec.scheduled = std::int64_t(schedule.size());
    return rec;
}

namespace {
std::int64_t steadyNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

SteadyLoopClock::SteadyLoopClock(IdleWait idle) : origin_(steadyNs()), idle_(idle) {}

std::int64_t SteadyLoopClock::now() {
    return steadyNs() - origin_;
}

void SteadyLoopClock::sleepUntil(std::int64_t ns) {
    constexpr std::int64_t kSpinNs = 300'000;
    if (idle_ == IdleWait::Sleep) {
        const std::int64_t sleep = ns - kSpinNs - now();
        if (sleep > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(sleep));
    }
    while (now() < ns) {
    }
}

}  // namespace pitlane::serving
