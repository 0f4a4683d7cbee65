// A serving preset's plan (issue 13): each round of fresh processes configures and warms up
// every arm (warmup at batch size 1; the worker runs every batch size up to max_batch once
// before each level's clock starts), then serves every level, arms interleaved (A B at the first rate, A B at the next;
// reversed in odd rounds, like blocks). The SLO search follows the last round, in its processes:
// each step measures each arm at its own next rate (results::nextSearchRate). A level is one
// `serve` command; its batches stream back as serve_batches events, its block_done closes it.
// Part of ExperimentRunner.
#include "pitlane/session/experiment_runner.h"

#include "pitlane/protocol/events.h"
#include "pitlane/session/worker_process.h"

#include <algorithm>

namespace pitlane::session {

using json = nlohmann::json;
namespace R = results;

namespace {

// Both arms get the same arrival sequence at a level of a round (common random numbers: the
// comparison is not blurred by different luck in the arrivals); rounds and workers differ.
std::uint64_t levelSeed(std::uint64_t runSeed, int round, int level, int worker) {
    std::uint64_t x = runSeed * 0x9E3779B97F4A7C15ULL + std::uint64_t(round) * 1000003ULL +
                      std::uint64_t(level + 2) * 7919ULL + std::uint64_t(worker) * 104729ULL + 1;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    return x ? x : 1;
}

}  // namespace

void ExperimentRunner::queueServingRound(int round) {
    const auto& preset = result_.preset;
    const std::vector<int> order = roundOrder(int(result_.preset.arms.size()), round);
    const bool concurrent = setUpConcurrently(result_.preset, round);
    queueTask({Task::StartRound, -1, -1, 0, 1, round});
    for (int i : order) queueTask({Task::Configure, i, -1, 0, 1, round, concurrent});
    if (preset.run.warmup_iters > 0)
        for (int i : order)
            queueTask({Task::Warmup, i, -1, preset.run.warmup_iters, 1, round, concurrent});
    const auto& sv = preset.serving;
    for (std::size_t l = 0; l < sv.levels(); ++l)
        for (int i : order) {
            Task t{Task::Serve, i, -1, 1, 1, round};
            t.level = int(l);
            if (sv.arrival == "closed")
                t.clients = sv.clients[l];
            else
                t.rate = sv.rates[l];
            queueTask(t);
        }
    rounds_ = std::max(rounds_, round + 1);
}

void ExperimentRunner::queueServingSearch() {
    const auto& preset = result_.preset;
    if (!preset.serving.search()) return;
    const int round = rounds_ - 1;
    for (int step = 0; step < preset.serving.search_steps; ++step)
        for (int i = 0; i < int(preset.arms.size()); ++i) {
            Task t{Task::Serve, i, -1, 1, 1, round};
            t.level = -1;
            queueTask(t);
        }
}

// A search step's rate comes from everything the arm measured so far.
bool ExperimentRunner::prepareServe(Task& t) {
    if (t.level >= 0) return true;
    t.rate = R::nextSearchRate(R::servingPoints(result_, std::size_t(t.arm)));
    // A rate already measured would only repeat a level (and its point would pool two levels of
    // one process as if they ran side by side): the search has converged.
    const auto& levels = result_.arms[std::size_t(t.arm)].serving;
    const bool measured = std::any_of(levels.begin(), levels.end(),
                                      [&](const R::ServingLevel& l) { return l.rate_per_s == t.rate; });
    if (t.rate > 0 && !measured) return true;
    unplan(t.arm, result_.preset.arms[std::size_t(t.arm)].knobs.workers);
    return false;
}

// Each of the arm's K workers serves 1/K of the load (its own arrivals: a Poisson process split
// at random is K Poisson processes of rate/K; the closed loop's clients are shared out).
void ExperimentRunner::sendServe(Task& t) {
    auto& st = arms_[std::size_t(t.arm)];
    auto& a = result_.arms[std::size_t(t.arm)];
    const auto& p = result_.preset;
    const auto& sv = p.serving;
    const auto& knobs = p.arms[std::size_t(t.arm)].knobs;
    if (!measureClock_.isValid()) measureClock_.start();
    setPhase(t.arm, ArmPhase::Measuring);
    for (std::size_t i = 0; i < arms_.size(); ++i)
        if (int(i) != t.arm && result_.arms[i].status == R::kPending &&
            arms_[i].phase == ArmPhase::Measuring && !activeFor(int(i)))
            setPhase(int(i), ArmPhase::Waiting);
    const int k = int(st.workers.size());
    for (int w = 0; w < k; ++w) {
        auto& ws = st.workers[std::size_t(w)];
        if (ws.sent || !ws.helloSeen) continue;
        ws.sent = true;
        ws.taskDone = false;
        tell(ws.told, t);
        R::ServingLevel level;
        level.level = t.level;
        level.process = st.round;
        level.worker = w;
        level.rate_per_s = t.rate;
        level.clients = t.clients;
        serving::parseArrival(sv.arrival, &level.load.arrival);
        serving::parseIdleWait(sv.idle_wait, &level.load.idle);
        level.load.rate_per_s = t.rate / k;
        level.load.clients = t.clients / k + (w < t.clients % k ? 1 : 0);
        level.load.duration_ms = sv.duration_ms;
        level.load.seed = levelSeed(p.run.seed, st.round, t.level >= 0 ? t.level : 1000 + t.block, w);
        level.load.max_batch = knobs.max_batch;
        level.load.max_wait_ms = knobs.max_wait_ms;
        level.load.saturation_ms = sv.saturation_ms;
        ws.servingIndex = int(a.serving.size());
        json cmd = protocol::makeCommand(protocol::kServe);
        cmd["block"] = t.block;
        cmd["arrival"] = sv.arrival;
        cmd["duration_ms"] = sv.duration_ms;
        cmd["seed"] = level.load.seed;
        cmd["saturation_ms"] = sv.saturation_ms;
        cmd["idle_wait"] = sv.idle_wait;
        if (sv.arrival == "closed")
            cmd["clients"] = level.load.clients;
        else
            cmd["rate_per_s"] = level.load.rate_per_s;
        a.serving.push_back(std::move(level));
        ws.process->send(cmd);
    }
}

// The batches of the level being served, as they complete.
void ExperimentRunner::handle(int arm, int worker, const protocol::ServeBatches& e) {
    auto& ws = arms_[std::size_t(arm)].workers[std::size_t(worker)];
    auto& levels = result_.arms[std::size_t(arm)].serving;
    if (ws.servingIndex < 0 || ws.servingIndex >= int(levels.size())) return;
    auto& rec = levels[std::size_t(ws.servingIndex)].record;
    const auto n = e.size.size();
    if (e.first_batch != std::int64_t(rec.batches.size()) || e.free_ns.size() != n ||
        e.start_ns.size() != n || e.end_ns.size() != n)
        throw std::runtime_error("serve_batches out of step with the batches received (first_batch " +
                                 std::to_string(e.first_batch) + ", have " +
                                 std::to_string(rec.batches.size()) + ")");
    for (std::size_t k = 0; k < n; ++k)
        rec.batches.push_back({e.size[k], e.free_ns[k], e.start_ns[k], e.end_ns[k]});
    rec.arrival_ns.insert(rec.arrival_ns.end(), e.arrival_ns.begin(), e.arrival_ns.end());
}

// The level's block_done: what the loop reports that the batches do not (the requests that
// arrived but were never served when it stopped early, the longest queue), and the level is
// complete unless the worker was stopped.
void ExperimentRunner::onServeDone(int arm, int worker, const protocol::BlockDone& e) {
    auto& ws = arms_[std::size_t(arm)].workers[std::size_t(worker)];
    auto& levels = result_.arms[std::size_t(arm)].serving;
    if (ws.servingIndex < 0 || ws.servingIndex >= int(levels.size())) return;
    auto& level = levels[std::size_t(ws.servingIndex)];
    ws.servingIndex = -1;
    const auto& sv = *e.serving;
    level.record.scheduled = sv.scheduled;
    level.record.max_queue = sv.max_queue;
    level.record.saturated = sv.saturated;
    // Requests that arrived and were never served (the level stopped early) are not in any
    // serve_batches event: their arrival times are unknown, only their count. They are placed
    // at the level's end, which keeps every count right and never shortens a latency.
    const std::int64_t lastArrival = level.record.arrival_ns.empty() ? 0 : level.record.arrival_ns.back();
    while (std::int64_t(level.record.arrival_ns.size()) < sv.arrived) level.record.arrival_ns.push_back(lastArrival);
    level.complete = !e.stopped;
    arms_[std::size_t(arm)].doneIters += 1;
}

}  // namespace pitlane::session
