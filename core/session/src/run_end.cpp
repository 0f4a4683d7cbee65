// The end of a run (part of ExperimentRunner): Stop, and finishing once every worker process
// has exited (the scratch folder and the remote hosts' folders removed).
#include "pitlane/session/experiment_runner.h"

#include "pitlane/session/worker_process.h"
#include "pitlane/session/compile_step.h"

namespace pitlane::session {

using json = nlohmann::json;
namespace R = results;

// An arm that had measured everything planned for it is ok (the user stopped the others, not
// it); the others are cancelled, with every sample they sent kept.
void ExperimentRunner::stop() {
    if (!running_ || stopping_) return;
    std::vector<bool> complete(arms_.size());
    for (std::size_t i = 0; i < arms_.size(); ++i)
        complete[i] = !result_.arms[i].samples.empty() && !hasWorkLeft(int(i));
    stopping_ = true;
    deciding_ = 0;  // a replication decision still being computed is dropped
    cancelCompile();  // the compiler is killed; its arms are cancelled below
    tasks_.clear();
    watchdog_.stop();
    for (std::size_t i = 0; i < arms_.size(); ++i) {
        if (result_.arms[i].status == R::kPending) {
            result_.arms[i].status = complete[i] ? R::kOk : R::kCancelled;
            setPhase(int(i), complete[i] ? ArmPhase::Done : ArmPhase::Cancelled);
            announceArmFinished(int(i));
        }
        for (auto& w : arms_[i].workers)
            if (w.process && w.process->isRunning()) {
                w.quitting = true;
                w.process->requestStop();
            }
        for (auto& [r, ws] : arms_[i].ahead)
            for (auto& w : ws)
                if (w.process && w.process->isRunning()) {
                    w.quitting = true;
                    w.process->requestStop();
                }
    }
    for (auto& p : retired_)
        if (p->isRunning()) p->requestStop();
    killTimer_.start(options_.stopGraceMs);
    finishIfDone();
}

void ExperimentRunner::finishIfDone() {
    if (!running_ || finalizing_) return;
    if (!stopping_ && (!active_.empty() || !tasks_.empty() || deciding_ || preparing_ || compiling_)) return;
    for (const auto& st : arms_) {
        for (const auto& w : st.workers)
            if (w.process && !w.exited && w.process->isRunning()) return;
        for (const auto& [r, ws] : st.ahead)
            for (const auto& w : ws)
                if (w.process && w.process->isRunning()) return;
    }
    for (const auto& p : retired_)
        if (p->isRunning()) return;
    finalize();
}

void ExperimentRunner::finalize() {
    finalizing_ = true;
    killTimer_.stop();
    watchdog_.stop();
    result_.wall_s = elapsedMs() / 1000.0;
    // What was measured next to what was asked (run_plan.h): per arm, at its first batch size,
    // per worker process running at once, as the plan counts.
    if (result_.replication.contains("asked_iters") || result_.replication.contains("budget_ms")) {
        json measured = json::object();
        for (const auto& a : result_.arms)
            measured[a.name] = int(a.latencies(a.batch_size).size()) / std::max(1, a.workers);
        result_.replication["measured_iters"] = measured;
        // Why what was measured differs from what was asked, in words (absent when it does not).
        auto& rep = result_.replication;
        const int asked = rep.value("asked_iters", 0);
        std::string why;
        for (const auto& a : result_.arms) {
            if (!rep.contains("asked_iters")) {  // a budget asked for no count: only an arm cut short
                if (a.status != R::kOk && a.status != R::kPending)
                    why += (why.empty() ? "" : "; ") + a.name + " ended " + a.status + " before its plan";
                continue;
            }
            const int n = measured.value(a.name, 0);
            if (n > asked && why.empty())
                why = result_.preset.run.adaptive()
                          ? "adaptive stopping added rounds after the asked iterations (see stopping)"
                          : "replication added " + std::to_string(rounds_ - plannedProcesses(result_.preset.run)) +
                                " round(s) of fresh processes while a comparison was inconclusive "
                                "(run.max_processes " + std::to_string(result_.preset.run.max_processes) + ")";
            else if (n < asked)
                why += (why.empty() ? "" : "; ") + a.name + " ended " + a.status + " before its plan";
        }
        if (!why.empty()) rep["measured_reason"] = why;
    }
    scratch_.reset();  // every worker has exited: what a model wrote there goes with it
    for (const auto& [host, prep] : remote_) cleanupRemote(prep.host, prep.scratch);
    remote_.clear();
    preparing_ = 0;  // a preparation still running cleans up after itself
    cancelCompile();
    if (prepCancelled_) *prepCancelled_ = true;
    running_ = false;
    toFeeds([](R::RunFeed& f) { f.runFinished(); });
    emit finished();
}

}  // namespace pitlane::session
