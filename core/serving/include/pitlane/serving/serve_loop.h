#pragma once
// One level of a serving experiment: requests arrive (open loop at a rate, or N closed-loop
// clients), a dynamic batcher groups them, one model worker runs the batches. Every request is
// timed from its *scheduled* arrival, so a busy worker cannot hide queueing delay (coordinated
// omission; the wrk2 / MLPerf LoadGen rule).
//
// The batching rule (Triton's dynamic batcher): a batch is dispatched when the worker is free and
// either max_batch requests are queued or the oldest queued request has waited max_wait; it takes
// up to max_batch requests, oldest first.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pitlane::serving {

enum class Arrival { Poisson, Constant, Closed };
const char* arrivalName(Arrival a);
bool parseArrival(const std::string& name, Arrival* out);

// How the batcher waits for the next request or deadline. Sleep: like a server blocked on its
// queue (it sleeps until ~0.3 ms before the deadline, then spins, so it is not late by the
// scheduler's wake-up). Spin: busy-polls, keeping the core and its caches hot at the cost of a
// core. Measured here (resnet18 3x64x64, one thread, 20 % load): a forward after sleeping costs
// ~1.4x a back-to-back one; spinning, 1.0x (docs/PERFORMANCE.md).
enum class IdleWait { Sleep, Spin };
const char* idleWaitName(IdleWait w);
bool parseIdleWait(const std::string& name, IdleWait* out);

struct LoadSpec {
    Arrival arrival = Arrival::Poisson;
    double rate_per_s = 0;      // Poisson, Constant
    int clients = 1;            // Closed: each sends its next request when its last completes
    double duration_ms = 1000;  // arrivals are scheduled in [0, duration)
    std::uint64_t seed = 1;
    int max_batch = 1;
    double max_wait_ms = 0;
    // The oldest queued request waiting longer than this means the queue grows without bound:
    // the level stops early, flagged saturated.
    double saturation_ms = 2000;
    IdleWait idle = IdleWait::Sleep;  // the real clock's way of waiting (SteadyLoopClock)
};

// Scheduled arrival times of an open-loop process, ns from the level's start, in [0, duration).
// Poisson: std::mt19937_64 seeded with `seed`; u = (x >> 11) * 2^-53; gap = -log1p(-u) / rate.
// Constant: k / rate. Empty for Closed.
std::vector<std::int64_t> openArrivals(const LoadSpec& spec);

// One dispatched batch. Its requests are the `size` requests after those of earlier batches.
struct BatchRecord {
    int size = 0;
    std::int64_t free_ns = 0;   // when the worker became free before it (end of the last batch)
    std::int64_t start_ns = 0;  // dispatched: the model starts
    std::int64_t end_ns = 0;    // the model returned
};

struct LevelRecord {
    std::vector<std::int64_t> arrival_ns;  // every request that arrived, in arrival order
    std::vector<BatchRecord> batches;      // served requests: the first sum(size) of arrival_ns
    std::int64_t scheduled = 0;            // requests scheduled in the level (open loop)
    std::int64_t max_queue = 0;            // the longest queue seen when a batch was formed
    bool saturated = false;
    bool failed = false;  // the model failed on a batch (the caller reported why)
    std::int64_t served() const;
};

// The loop's view of time: ns since the level's start.
class LoopClock {
public:
    virtual ~LoopClock() = default;
    virtual std::int64_t now() = 0;
    virtual void sleepUntil(std::int64_t ns) = 0;
};

// Runs the model on a batch of `size` requests; false on an error (the loop stops).
using RunBatch = std::function<bool(int size)>;
// Called with the record so far after each batch (the worker flushes what is new every ~50 ms).
using Progress = std::function<bool(const LevelRecord&)>;
// Asked between batches; true stops the level (the worker was told to stop).
using StopRequested = std::function<bool()>;

LevelRecord runLevel(const LoadSpec& spec, LoopClock& clock, const RunBatch& runBatch,
                     const Progress& progress = {}, const StopRequested& stop = {});

// The real clock: steady_clock from construction.
class SteadyLoopClock : public LoopClock {
public:
    explicit SteadyLoopClock(IdleWait idle = IdleWait::Sleep);
    std::int64_t now() override;
    void sleepUntil(std::int64_t ns) override;

private:
    std::int64_t origin_;
    IdleWait idle_;
};

}  // namespace pitlane::serving
