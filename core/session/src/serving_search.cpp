#include "pitlane/session/serving_search.h"

#include "pitlane/protocol/protocol.h"

#include <algorithm>
#include <stdexcept>

namespace pitlane::session {

namespace R = results;

std::uint64_t levelSeed(std::uint64_t runSeed, int round, int level, int worker) {
    std::uint64_t x = runSeed * 0x9E3779B97F4A7C15ULL + std::uint64_t(round) * 1000003ULL +
                      std::uint64_t(level + 2) * 7919ULL + std::uint64_t(worker) * 104729ULL + 1;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    return x ? x : 1;
}

R::ServingLevel servingLevelFor(const spec::Preset& preset, const Task& t, int round, int worker, int workers) {
    const auto& sv = preset.serving;
    const auto& knobs = preset.arms[std::size_t(t.arm)].knobs;
    R::ServingLevel level;
    level.level = t.level;
    level.process = round;
    level.worker = worker;
    level.rate_per_s = t.rate;
    level.clients = t.clients;
    serving::parseArrival(sv.arrival, &level.load.arrival);
    serving::parseIdleWait(sv.idle_wait, &level.load.idle);
    level.load.rate_per_s = t.rate / workers;
    level.load.clients = t.clients / workers + (worker < t.clients % workers ? 1 : 0);
    level.load.duration_ms = sv.duration_ms;
    level.load.seed = levelSeed(preset.run.seed, round, t.level >= 0 ? t.level : 1000 + t.block, worker);
    level.load.max_batch = knobs.max_batch;
    level.load.max_wait_ms = knobs.max_wait_ms;
    level.load.saturation_ms = sv.saturation_ms;
    return level;
}

nlohmann::json serveCommand(const spec::ServingSpec& sv, const R::ServingLevel& level, int block) {
    auto cmd = protocol::makeCommand(protocol::kServe);
    cmd["block"] = block;
    cmd["arrival"] = sv.arrival;
    cmd["duration_ms"] = sv.duration_ms;
    cmd["seed"] = level.load.seed;
    cmd["saturation_ms"] = sv.saturation_ms;
    cmd["idle_wait"] = sv.idle_wait;
    if (sv.arrival == "closed")
        cmd["clients"] = level.load.clients;
    else
        cmd["rate_per_s"] = level.load.rate_per_s;
    return cmd;
}

double searchStepRate(const R::RunResult& run, std::size_t arm) {
    const double rate = R::nextSearchRate(R::servingPoints(run, arm));
    const auto& levels = run.arms[arm].serving;
    const bool measured = std::any_of(levels.begin(), levels.end(),
                                      [&](const R::ServingLevel& l) { return l.rate_per_s == rate; });
    return rate > 0 && !measured ? rate : 0;
}

void appendServeBatches(R::ServingLevel& level, const protocol::ServeBatches& e) {
    auto& rec = level.record;
    const auto n = e.size.size();
    if (e.first_batch != std::int64_t(rec.batches.size()) || e.free_ns.size() != n || e.start_ns.size() != n ||
        e.end_ns.size() != n)
        throw std::runtime_error("serve_batches out of step with the batches received (first_batch " +
                                 std::to_string(e.first_batch) + ", have " + std::to_string(rec.batches.size()) +
                                 ")");
    for (std::size_t k = 0; k < n; ++k) rec.batches.push_back({e.size[k], e.free_ns[k], e.start_ns[k], e.end_ns[k]});
    rec.arrival_ns.insert(rec.arrival_ns.end(), e.arrival_ns.begin(), e.arrival_ns.end());
}

void closeServingLevel(R::ServingLevel& level, const protocol::BlockDone& e) {
    const auto& sv = *e.serving;
    auto& rec = level.record;
    rec.scheduled = sv.scheduled;
    rec.max_queue = sv.max_queue;
    rec.saturated = sv.saturated;
    // Requests that arrived and were never served (the level stopped early) are not in any
    // serve_batches event: their arrival times are unknown, only their count. They are placed at
    // the level's end, which keeps every count right and never shortens a latency.
    const std::int64_t lastArrival = rec.arrival_ns.empty() ? 0 : rec.arrival_ns.back();
    while (std::int64_t(rec.arrival_ns.size()) < sv.arrived) rec.arrival_ns.push_back(lastArrival);
    level.complete = !e.stopped;
}

}  // namespace pitlane::session
