// A serving preset's plan (issue 13): each round of fresh processes configures and warms up
// every arm (warmup at batch size 1; the worker runs every batch size up to max_batch once
// before each level's clock starts), then serves every level, arms interleaved (A B at the first rate, A B at the next;
// reversed in odd rounds, like blocks). The SLO search follows the last round, in its processes:
// each step measures each arm at its own next rate (results::nextSearchRate). A level is one
// `serve` command; its batches stream back as serve_batches events, its block_done closes it.
// Part of ExperimentRunner.
#include "pitlane/session/experiment_runner.h"

#include "pitlane/protocol/events.h"
#include "pitlane/session/serving_search.h"
#include "pitlane/session/worker_process.h"

#include <algorithm>

namespace pitlane::session {

using json = nlohmann::json;
namespace R = results;

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

// A search step's rate comes from everything the arm measured so far (serving_search.h).
bool ExperimentRunner::prepareServe(Task& t) {
    if (t.level >= 0) return true;
    t.rate = searchStepRate(result_, std::size_t(t.arm));
    if (t.rate > 0) return true;
    unplan(t.arm, result_.preset.arms[std::size_t(t.arm)].knobs.workers);
    return false;
}

// Each of the arm's K workers serves 1/K of the load (servingLevelFor, serving_search.h).
void ExperimentRunner::sendServe(Task& t) {
    auto& st = arms_[std::size_t(t.arm)];
    auto& a = result_.arms[std::size_t(t.arm)];
    const auto& p = result_.preset;
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
        R::ServingLevel level = servingLevelFor(p, t, st.round, w, k);
        ws.servingIndex = int(a.serving.size());
        const json cmd = serveCommand(p.serving, level, t.block);
        a.serving.push_back(std::move(level));
        ws.process->send(cmd);
    }
}

// The batches of the level being served, as they complete.
void ExperimentRunner::handle(int arm, int worker, const protocol::ServeBatches& e) {
    auto& ws = arms_[std::size_t(arm)].workers[std::size_t(worker)];
    auto& levels = result_.arms[std::size_t(arm)].serving;
    if (ws.servingIndex < 0 || ws.servingIndex >= int(levels.size())) return;
    appendServeBatches(levels[std::size_t(ws.servingIndex)], e);
}

// The level's block_done: what the loop reports that the batches do not (the requests that
// arrived but were never served when it stopped early, the longest queue), and the level is
// complete unless the worker was stopped.
void ExperimentRunner::onServeDone(int arm, int worker, const protocol::BlockDone& e) {
    auto& ws = arms_[std::size_t(arm)].workers[std::size_t(worker)];
    auto& levels = result_.arms[std::size_t(arm)].serving;
    if (ws.servingIndex < 0 || ws.servingIndex >= int(levels.size())) return;
    closeServingLevel(levels[std::size_t(ws.servingIndex)], e);
    ws.servingIndex = -1;
    arms_[std::size_t(arm)].doneIters += 1;
}

}  // namespace pitlane::session
