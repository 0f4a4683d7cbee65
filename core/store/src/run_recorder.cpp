#include "pitlane/store/run_recorder.h"

#include "pitlane/session/experiment_runner.h"

#include <QTimer>

namespace pitlane::store {

using nlohmann::json;
using session::ExperimentRunner;

RunRecorder::RunRecorder(RunStore* store, QString source, QObject* parent)
    : QObject(parent), store_(store), source_(std::move(source)) {}

qint64 RunRecorder::armId(int arm) const {
    return arm >= 0 && std::size_t(arm) < run_.armIds.size() ? run_.armIds[std::size_t(arm)] : 0;
}

void RunRecorder::check(bool ok) {
    if (ok || errorSent_) return;
    errorSent_ = true;
    emit storeError(store_->lastError());
}

// The runner emits no "started" signal; its first signal of a run (armPhaseChanged(Starting),
// sent from start() once every arm exists in result()) opens the experiment row.
bool RunRecorder::ensureBegun() {
    if (recording_) return true;
    if (!runner_ || !runner_->isRunning()) return false;
    const auto rec = store_->beginRun(runner_->result(), source_);
    errorSent_ = false;
    check(rec.has_value());
    if (!rec) return false;
    run_ = *rec;
    recording_ = true;
    const std::size_t n = run_.armIds.size();
    dirty_.assign(n, false);
    workerErrorSeen_.assign(n, false);
    warmupStored_.assign(n, 0);
    warmupBatch_.assign(n, 1);
    storedProcesses_.assign(n, {});
    emit runStarted(run_.id);
    return true;
}

// Arm rows (kilobytes of JSON each) are rewritten at most once per loop turn: at the next signal
// the runner sends, or on the next loop turn. armEvent comes once the runner has folded the
// event into result(), and the flush reads result() later still.
void RunRecorder::markDirty(int arm) {
    if (std::size_t(arm) >= dirty_.size()) return;
    dirty_[std::size_t(arm)] = true;
    scheduleFlush();
}

void RunRecorder::scheduleFlush() {
    if (flushQueued_) return;
    flushQueued_ = true;
    QTimer::singleShot(0, this, [this] { flushDirty(); });
}

void RunRecorder::flushDirty() {
    flushQueued_ = false;
    if (!recording_ || !runner_) return;
    const auto& arms = runner_->result().arms;
    for (std::size_t i = 0; i < dirty_.size() && i < arms.size(); ++i)
        if (dirty_[i]) {
            dirty_[i] = false;
            check(store_->updateArm(run_.armIds[i], arms[i]));
        }
    for (std::size_t i = 0; i < run_.armIds.size() && i < arms.size(); ++i) syncProcesses(i);
}

namespace {
bool sameProcess(const results::ProcessInfo& a, const results::ProcessInfo& b) {
    return a.replicate == b.replicate && a.worker == b.worker && a.pid == b.pid &&
           a.load_ms == b.load_ms && a.first_forward_ms == b.first_forward_ms &&
           a.minor_faults == b.minor_faults && a.major_faults == b.major_faults &&
           a.fault_iters == b.fault_iters;
}
}  // namespace

// Writes the processes that changed since the last write: from the first that differs (the
// current round's are the last ones; earlier rounds are final).
void RunRecorder::syncProcesses(std::size_t arm) {
    if (!runner_ || arm >= storedProcesses_.size() || arm >= runner_->result().arms.size()) return;
    const auto& live = runner_->result().arms[arm].processes;
    auto& stored = storedProcesses_[arm];
    std::size_t first = 0;
    while (first < live.size() && first < stored.size() && sameProcess(live[first], stored[first]))
        ++first;
    if (first == live.size()) return;
    const bool ok = store_->updateProcesses(run_.armIds[arm], live, first);
    check(ok);
    if (ok) stored = live;
}

void RunRecorder::attach(ExperimentRunner* runner) {
    runner_ = runner;
    connect(runner, &ExperimentRunner::armPhaseChanged, this, [this](int arm, session::ArmPhase) {
        if (!ensureBegun()) return;
        markDirty(arm);
        flushDirty();
    });
    connect(runner, &ExperimentRunner::armEvent, this, [this](int arm, const json& ev) {
        if (!ensureBegun()) return;
        const std::string type = ev.value("type", std::string());
        if (type == protocol::kWarning || type == protocol::kError) {
            if (type == protocol::kError && std::size_t(arm) < workerErrorSeen_.size())
                workerErrorSeen_[std::size_t(arm)] = true;
            check(store_->appendEvent(run_.id, armId(arm), runner_->elapsedMs(), ev));
        } else if (type == protocol::kSamples && ev.value("phase", std::string()) == "warmup" &&
                   std::size_t(arm) < warmupBatch_.size()) {
            warmupBatch_[std::size_t(arm)] = ev.value("batch_size", 1);
        }
        if (type == protocol::kHello || type == protocol::kLoaded || type == protocol::kApplied ||
            type == protocol::kError || type == protocol::kBye)
            markDirty(arm);
        // A process's pid, cold costs and page faults, committed before anyone else hears of the
        // event (pitlane-cli's "block done" line): only its row, not the arm's.
        if (type == protocol::kHello || type == protocol::kLoaded || type == protocol::kBlockDone)
            syncProcesses(std::size_t(arm));
    });
    connect(runner, &ExperimentRunner::samplesAppended, this,
            [this](int arm, int first, int count) {
                if (!ensureBegun()) return;
                flushDirty();
                check(store_->appendSamples(armId(arm),
                                            runner_->result().arms[std::size_t(arm)].samples,
                                            std::size_t(first), std::size_t(count)));
            });
    connect(runner, &ExperimentRunner::warmupAppended, this, [this](int arm) {
        if (!ensureBegun()) return;
        const auto& ns = runner_->result().arms[std::size_t(arm)].warmup_ns;
        auto& stored = warmupStored_[std::size_t(arm)];
        check(store_->appendWarmup(armId(arm), ns, stored, warmupBatch_[std::size_t(arm)]));
        stored = ns.size();
    });
    connect(runner, &ExperimentRunner::metricsAppended, this, [this](int arm) {
        if (!ensureBegun()) return;
        const auto& m = runner_->result().arms[std::size_t(arm)].metrics;
        if (!m.empty()) check(store_->appendMetric(armId(arm), m.back()));
    });
    connect(runner, &ExperimentRunner::armFinished, this, [this](int arm) {
        if (!ensureBegun()) return;
        const auto& a = runner_->result().arms[std::size_t(arm)];
        check(store_->updateArm(armId(arm), a));
        syncProcesses(std::size_t(arm));
        // Failures the orchestrator decided (crash, timeout, exit) have no worker error event.
        if (a.error && !workerErrorSeen_[std::size_t(arm)])
            check(store_->appendEvent(run_.id, armId(arm), runner_->elapsedMs(),
                                      {{"type", "error"},
                                       {"code", a.error->code},
                                       {"message", a.error->message},
                                       {"status", a.status},
                                       {"source", "orchestrator"}}));
    });
    connect(runner, &ExperimentRunner::finished, this, [this] {
        if (!recording_) return;
        check(store_->finishRun(run_.id, runner_->result()));
        recording_ = false;
        emit runStored(run_.id);
    });
}

}  // namespace pitlane::store
