#pragma once
// The metrics tick: a thread of its own that reads /proc every `period_ms` and emits a
// "metrics" event. It never touches the timing thread's data except two atomics.
#include "pitlane/engine/event_sink.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace pitlane::engine {

// Tensor-memory counters, updated by the counting CPU allocator (engine) and read here.
struct TensorCounters {
    std::atomic<std::int64_t> current{0};
    std::atomic<std::int64_t> peak{0};
    std::atomic<bool> installed{false};
};
TensorCounters& tensorCounters();

// Extra fields for each metrics tick (the CUDA module adds caching-allocator stats). Set once,
// before the sampler starts reading it; called on the sampler thread.
void setMetricsHook(std::function<void(nlohmann::json&)> hook);

class MetricsSampler {
public:
    MetricsSampler(EventSink& sink, int period_ms);
    ~MetricsSampler();
    void start();
    void stop();
    // Take a reading now (end of a block), without waiting for the period.
    void tickNow();
    // Cost of the sampler itself (CPU time spent in ticks), for the "bye" event.
    double selfCpuSeconds() const { return self_cpu_ns_.load() / 1e9; }
    std::int64_t ticks() const { return ticks_.load(); }

private:
    void loop();
    EventSink& sink_;
    int period_ms_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool stopping_ = false;
    bool tickRequested_ = false;
    std::atomic<std::int64_t> self_cpu_ns_{0};
    std::atomic<std::int64_t> ticks_{0};
};

}  // namespace pitlane::engine
