// Adaptive and timed stopping and replication (DESIGN.md "Stopping"): after the fixed minimum of
// blocks the runner asks the stopping policy (stopping_policy.h) and queues what it decides.
#include "pitlane/session/experiment_runner.h"
#include "pitlane/session/run_plan.h"
#include "pitlane/session/stopping_policy.h"

#include <QString>
#include <QThread>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace pitlane::session {

using json = nlohmann::json;
namespace R = results;

// Adaptive / timed stopping: decideAdaptive (stopping_policy.cpp) says whether another round of
// blocks is needed; if so it is queued, else the run's stopping record is written.
bool ExperimentRunner::extendAdaptive() {
    const auto& run = result_.preset.run;
    const double elapsed = measureClock_.isValid() ? double(measureClock_.elapsed()) : 0.0;
    const AdaptiveDecision d = decideAdaptive(run, result_.arms, elapsed);
    if (!d.anyPending) return false;
    if (!d.more) {
        result_.stopping = stoppingRecord(run, d, elapsed, nextBlock_, rounds_);
        return false;
    }
    if (run.processes > 1) {
        // The CI's units are processes: only another round of fresh processes narrows it, one
        // like the first planned round (run_plan.h).
        const std::vector<int> blocks = addedRoundBlocks(run);
        queueRound(rounds_, nextBlock_, blocks, false);
        nextBlock_ += int(blocks.size());
        return true;
    }
    for (std::size_t i = 0; i < result_.arms.size(); ++i) {
        if (result_.arms[i].status != R::kPending) continue;
        queueTask({Task::Block, int(i), nextBlock_, run.block_iters, result_.arms[i].batch_size, rounds_ - 1});
    }
    ++nextBlock_;
    return true;
}

// Replication (run.processes .. run.max_processes): after the first `processes` rounds, another
// round of fresh processes is added while any arm's comparison with the baseline is inconclusive
// (stats::conclusive at the interim confidence 97.5 %: neither significant nor within 1/1.1-1.1).
// The stricter interim level pays for looking more than once (simulated in tests/stats: A/A
// false positives stay below 5 % with a bimodal process effect). The last round is judged by the
// reported 95 % CI. The bootstraps run on a thread of their own (a second or more on large runs),
// never on the caller's (the window's UI thread); the runner waits, its workers idle.
bool ExperimentRunner::decideReplication() {
    const auto& run = result_.preset.run;
    auto& rep = result_.replication;
    rep["processes_min"] = run.processes;
    rep["processes_max"] = run.max_processes;
    rep["rule"] =
        "run.processes rounds of fresh worker processes, then one more while a comparison is "
        "neither significant nor within 1/1.1-1.1 at 97.5 % confidence, up to run.max_processes";
    if (!rep.contains("extensions")) rep["extensions"] = json::array();
    rep["processes"] = rounds_;
    if (rounds_ >= run.max_processes) {
        if (!rep["extensions"].empty())
            rep["stopped"] = "run.max_processes reached: the last round is judged by the 95 % CI";
        replicationOver_ = true;
        return false;
    }
    if (result_.arms.size() < 2 || result_.arms.front().status != R::kPending) {
        replicationOver_ = true;
        return false;
    }
    // Copies for the thread: the samples keep arriving into result_ only after a decision.
    std::vector<ReplicationPair> pairs;
    const auto& base = result_.arms.front();
    const auto baseBlocks = base.blocked();
    for (std::size_t i = 1; i < result_.arms.size(); ++i) {
        const auto& a = result_.arms[i];
        if (a.status != R::kPending || a.samples.empty() || base.samples.empty()) continue;
        pairs.push_back({base.name, a.name, baseBlocks, a.blocked()});
    }
    if (pairs.empty()) {
        replicationOver_ = true;
        return false;
    }
    decisionStartMs_ = elapsedMs();
    static int generation = 0;
    const int mine = ++generation == 0 ? ++generation : generation;
    deciding_ = mine;
    const int rounds = rounds_;
    auto reasons = std::make_shared<json>(json::array());
    QThread* thread = QThread::create([pairs = std::move(pairs), reasons, rounds] {
        for (auto& why : inconclusivePairs(pairs, rounds)) reasons->push_back(std::move(why));
    });
    connect(thread, &QThread::finished, this, [this, mine, reasons] {
        if (deciding_ != mine) return;  // a stale decision (stopped, or a new run)
        deciding_ = 0;
        replicationDecided(mine, *reasons);
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
    return true;
}

void ExperimentRunner::replicationDecided(int, const json& reasons) {
    if (decisionStartMs_ >= 0) {
        double samples = 0;  // what the decision compared: every arm still measuring
        for (const auto& a : result_.arms)
            if (a.status == R::kPending) samples += double(a.samples.size());
        costLog_.recordDecision(elapsedMs() - decisionStartMs_, samples);
    }
    decisionStartMs_ = -1;
    if (stopping_ || !running_) {
        finishIfDone();
        return;
    }
    const auto& run = result_.preset.run;
    auto& rep = result_.replication;
    if (reasons.empty()) {
        replicationOver_ = true;
        completeTasks();
        return;
    }
    rep["extensions"].push_back(reasons);
    // A round like the first planned one (run_plan.h), so the plan's "up to" is what can come.
    const std::vector<int> blocks = addedRoundBlocks(run);
    queueRound(rounds_, nextBlock_, blocks, false);
    rep["processes"] = rounds_;
    nextBlock_ += int(blocks.size());
    emit logMessage(-1, QStringLiteral("info"),
                    QStringLiteral("adding replicate %1 (fresh processes): %2")
                        .arg(rounds_)
                        .arg(QString::fromStdString(reasons.front().get<std::string>())));
    next();
}

}  // namespace pitlane::session
