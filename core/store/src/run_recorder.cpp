#include "pitlane/store/run_recorder.h"

#include "pitlane/protocol/events.h"

#include <QTimer>

namespace pitlane::store {

using nlohmann::json;
using protocol::EventType;

RunRecorder::RunRecorder(RunStore* store, QString source, QObject* parent)
    : QObject(parent), store_(store), source_(std::move(source)) {}

void RunRecorder::setSource(QObject* owner, std::function<const results::RunResult&()> result,
                            std::function<bool()> running, std::function<double()> elapsedMs) {
    owner_ = owner;
    result_ = std::move(result);
    running_ = std::move(running);
    elapsedMs_ = std::move(elapsedMs);
}

qint64 RunRecorder::armId(int arm) const {
    return arm >= 0 && std::size_t(arm) < run_.armIds.size() ? run_.armIds[std::size_t(arm)] : 0;
}

void RunRecorder::check(bool ok) {
    if (ok || errorSent_) return;
    errorSent_ = true;
    emit storeError(store_->lastError());
}

// A run has no "started" event; its first call here (armChanged(arm) for the Starting phase,
// sent once every arm exists in result()) opens the experiment row.
bool RunRecorder::ensureBegun() {
    if (recording_) return true;
    if (!hasSource() || !running_()) return false;
    const auto rec = store_->beginRun(result_(), source_);
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
    if (!recording_ || !hasSource()) return;
    const auto& arms = result_().arms;
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
    if (!hasSource() || arm >= storedProcesses_.size() || arm >= result_().arms.size()) return;
    const auto& live = result_().arms[arm].processes;
    auto& stored = storedProcesses_[arm];
    std::size_t first = 0;
    while (first < live.size() && first < stored.size() && sameProcess(live[first], stored[first]))
        ++first;
    if (first == live.size()) return;
    const bool ok = store_->updateProcesses(run_.armIds[arm], live, first);
    check(ok);
    if (ok) stored = live;
}

void RunRecorder::armChanged(int arm) {
    if (!ensureBegun()) return;
    markDirty(arm);
    flushDirty();
}

void RunRecorder::event(int arm, const json& ev) {
    if (!ensureBegun()) return;
    const auto type = protocol::eventType(ev);
    const auto a = std::size_t(arm);
    if (type == EventType::Warning || type == EventType::Error) {
        if (type == EventType::Error && a < workerErrorSeen_.size()) workerErrorSeen_[a] = true;
        check(store_->appendEvent(run_.id, armId(arm), elapsedMs_(), ev));
    } else if (type == EventType::Samples && ev.value("phase", std::string()) == "warmup" &&
               a < warmupBatch_.size()) {
        warmupBatch_[a] = ev.value("batch_size", 1);
    }
    if (type == EventType::Hello || type == EventType::Loaded || type == EventType::Applied ||
        type == EventType::Error || type == EventType::Bye)
        markDirty(arm);
    // A process's pid, cold costs and page faults, committed before anyone else hears of the
    // event (pitlane-cli's "block done" line): only its row, not the arm's.
    if (type == EventType::Hello || type == EventType::Loaded || type == EventType::BlockDone)
        syncProcesses(a);
}

void RunRecorder::samplesAppended(int arm, int first, int count) {
    if (!ensureBegun()) return;
    flushDirty();
    check(store_->appendSamples(armId(arm), result_().arms[std::size_t(arm)].samples,
                                std::size_t(first), std::size_t(count)));
}

void RunRecorder::warmupAppended(int arm) {
    if (!ensureBegun()) return;
    const auto& ns = result_().arms[std::size_t(arm)].warmup_ns;
    auto& stored = warmupStored_[std::size_t(arm)];
    check(store_->appendWarmup(armId(arm), ns, stored, warmupBatch_[std::size_t(arm)]));
    stored = ns.size();
}

void RunRecorder::metricsAppended(int arm) {
    if (!ensureBegun()) return;
    const auto& m = result_().arms[std::size_t(arm)].metrics;
    if (!m.empty()) check(store_->appendMetric(armId(arm), m.back()));
}

void RunRecorder::armFinished(int arm) {
    if (!ensureBegun()) return;
    const auto& a = result_().arms[std::size_t(arm)];
    check(store_->updateArm(armId(arm), a));
    syncProcesses(std::size_t(arm));
    // Failures the orchestrator decided (crash, timeout, exit) have no worker error event.
    if (a.error && !workerErrorSeen_[std::size_t(arm)])
        check(store_->appendEvent(run_.id, armId(arm), elapsedMs_(),
                                  {{"type", "error"},
                                   {"code", a.error->code},
                                   {"message", a.error->message},
                                   {"status", a.status},
                                   {"source", "orchestrator"}}));
}

void RunRecorder::runFinished() {
    if (!recording_ || !hasSource()) return;
    check(store_->finishRun(run_.id, result_()));
    recording_ = false;
    emit runStored(run_.id);
}

}  // namespace pitlane::store
