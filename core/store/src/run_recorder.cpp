#include "pitlane/store/run_recorder.h"

#include "pitlane/protocol/events.h"

#include <QCoreApplication>
#include <QEvent>
#include <QTimer>

namespace pitlane::store {

using nlohmann::json;

RunRecorder::RunRecorder(RunStore* store, QString source, QObject* parent)
    : QObject(parent), writer_(std::make_unique<HistoryWriter>(store)), source_(std::move(source)) {}

RunRecorder::RunRecorder(const QString& path, QString source, QObject* parent)
    : QObject(parent),
      writer_(std::make_unique<HistoryWriter>(path, this)),
      source_(std::move(source)) {}

RunRecorder::~RunRecorder() {
    writer_.reset();  // commits what is queued while this object still exists
}

void RunRecorder::flush() {
    writer_->drain();
    // The writer's outcomes are queued calls on this object (HistoryWriter::report).
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
}

void RunRecorder::runBegins(const results::RunResult& live) {
    live_ = &live;
    sourceRunning_ = true;
}

void RunRecorder::sourceClosed() {
    live_ = nullptr;
    sourceRunning_ = false;
}

void RunRecorder::failed(const QString& error) {
    if (errorSent_) return;
    errorSent_ = true;
    runError_ = error;
    emit storeError(error);
}

void RunRecorder::post(std::function<bool(RunStore&, const RecordedRun&)> write,
                       HistoryWriter::Done done) {
    auto ids = run_;
    // The first failure is kept on the writer's side too: the run's last write (finishRun) runs
    // there, maybe before `done` reaches this thread, and must not store the run as ok.
    writer_->post([ids, lost = lostWrite_, write = std::move(write)](RunStore& store) {
                      if (ids->id == 0 || write(store, *ids)) return true;
                      if (lost->isEmpty()) *lost = store.lastError();
                      return false;
                  },
                  [this, done = std::move(done)](bool ok, const QString& error) {
                      if (!ok) failed(error);
                      if (done) done(ok, error);
                  });
}

namespace {
results::RunResult runRows(const results::RunResult& run) {
    results::RunResult r;
    r.preset = run.preset;
    r.preset_json = run.preset_json;
    r.model_sha256 = run.model_sha256;
    r.started_at = run.started_at;
    r.wall_s = run.wall_s;
    for (const auto& a : run.arms) r.arms.push_back(results::armSettings(a));  // the arms row
    return r;
}

// The finished run but its measured samples and serving levels (the writer has its own copy of
// those, gathered from their writes): everything else is small.
results::RunResult runWithoutSamples(const results::RunResult& run) {
    results::RunResult r = runRows(run);
    r.stopping = run.stopping;
    r.replication = run.replication;
    r.interleaved = run.interleaved;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        auto& c = r.arms[i];
        c.warmup_ns = a.warmup_ns;
        c.metrics = a.metrics;
        c.warnings = a.warnings;
        c.caveats = a.caveats;
        c.processes = a.processes;
    }
    return r;
}
}  // namespace

// The experiment row is opened by the run's first phase change (armPhaseChanged(arm) for the
// Starting phase, or Failed for an arm whose model file failed its check): by then every arm
// exists in source() and the model files are checked (their sha256 goes into the row).
bool RunRecorder::ensureBegun() {
    if (recording_) return true;
    if (!hasSource() || !sourceRunning_) return false;
    recording_ = true;
    errorSent_ = false;
    runError_.clear();
    runId_ = 0;
    run_ = std::make_shared<RecordedRun>();
    lostWrite_ = std::make_shared<QString>();
    const std::size_t n = source().arms.size();
    posted_.assign(n, 0);
    servingWritten_ = std::make_shared<std::vector<std::vector<results::ServingLevel>>>(n);
    storedServing_.assign(n, {});
    dirty_.assign(n, false);
    workerErrorSeen_.assign(n, false);
    warmupStored_.assign(n, 0);
    warmupBatch_.assign(n, 1);
    storedProcesses_.assign(n, {});
    profileStored_.assign(n, false);
    auto ids = run_;
    writer_->post(
        [ids, rows = runRows(source()), source = source_](RunStore& store) {
            const auto rec = store.beginRun(rows, source);
            if (rec) *ids = *rec;
            return rec.has_value();
        },
        [this, ids](bool ok, const QString& error) {
            if (!ok) return failed(error);
            if (ids != run_) return;  // a later run began meanwhile
            runId_ = ids->id;
            emit runStarted(runId_);
        });
    return true;
}

// Arm rows (kilobytes of JSON each) are rewritten at most once per loop turn: at the next signal
// the runner sends, or on the next loop turn. armEvent comes once the runner has folded the
// event into source(), and the flush reads source() later still.
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
    const auto& arms = source().arms;
    for (std::size_t i = 0; i < dirty_.size() && i < arms.size(); ++i)
        if (dirty_[i]) {
            dirty_[i] = false;
            post([i, row = results::armSettings(arms[i])](RunStore& store, const RecordedRun& ids) {
                return store.updateArm(ids.armIds[i], row);
            });
        }
    for (std::size_t i = 0; i < dirty_.size() && i < arms.size(); ++i) syncProcesses(i);
}

// Writes the processes that changed since the last write: from the first that differs (the
// current round's are the last ones; earlier rounds are final).
void RunRecorder::syncProcesses(std::size_t arm) {
    if (!hasSource() || arm >= storedProcesses_.size() || arm >= source().arms.size()) return;
    const auto& live = source().arms[arm].processes;
    auto& stored = storedProcesses_[arm];
    std::size_t first = 0;
    while (first < live.size() && first < stored.size() && protocol::record::equal(live[first], stored[first]))
        ++first;
    if (first == live.size()) return;
    post([arm, live, first](RunStore& store, const RecordedRun& ids) {
        return store.updateProcesses(ids.armIds[arm], live, first);
    });
    stored = live;
}

void RunRecorder::syncServing(std::size_t arm) {
    if (!hasSource() || arm >= storedServing_.size() || arm >= source().arms.size()) return;
    const auto& live = source().arms[arm].serving;
    auto& stored = storedServing_[arm];
    if (stored.size() < live.size()) stored.resize(live.size());
    for (std::size_t i = 0; i < live.size(); ++i) {
        const auto& l = live[i];
        auto& s = stored[i];
        if (!s.written || s.scheduled != l.record.scheduled || s.max_queue != l.record.max_queue ||
            s.saturated != l.record.saturated || s.complete != l.complete) {
            s.written = true;
            s.scheduled = l.record.scheduled;
            s.max_queue = l.record.max_queue;
            s.saturated = l.record.saturated;
            s.complete = l.complete;
            post([arm, i, row = results::withoutArrays(l), kept = servingWritten_](RunStore& store,
                                                                     const RecordedRun& ids) {
                auto& levels = (*kept)[arm];
                if (levels.size() <= i) levels.resize(i + 1);
                auto& k = levels[i];
                auto batches = std::move(k.record.batches);
                auto arrivals = std::move(k.record.arrival_ns);
                k = row;
                k.record.batches = std::move(batches);
                k.record.arrival_ns = std::move(arrivals);
                return store.updateServingLevel(ids.armIds[arm], i, row);
            });
        }
        const auto& rec = l.record;
        if (rec.batches.size() <= s.batches && rec.arrival_ns.size() <= s.arrivals) continue;
        ServingChunk chunk;
        chunk.level = i;
        chunk.first_batch = s.batches;
        chunk.first_request = s.arrivals;
        chunk.batches.assign(
            rec.batches.begin() + std::ptrdiff_t(std::min(s.batches, rec.batches.size())),
            rec.batches.end());
        chunk.arrival_ns.assign(
            rec.arrival_ns.begin() + std::ptrdiff_t(std::min(s.arrivals, rec.arrival_ns.size())),
            rec.arrival_ns.end());
        s.batches = rec.batches.size();
        s.arrivals = rec.arrival_ns.size();
        post([arm, chunk = std::move(chunk), kept = servingWritten_](RunStore& store,
                                                                     const RecordedRun& ids) {
            auto& levels = (*kept)[arm];
            if (chunk.level < levels.size()) {
                auto& r = levels[chunk.level].record;
                r.batches.insert(r.batches.end(), chunk.batches.begin(), chunk.batches.end());
                r.arrival_ns.insert(r.arrival_ns.end(), chunk.arrival_ns.begin(),
                                    chunk.arrival_ns.end());
            }
            return store.appendServingChunk(ids.armIds[arm], chunk);
        });
    }
}

void RunRecorder::syncProfile(std::size_t arm) {
    if (!hasSource() || arm >= profileStored_.size() || arm >= source().arms.size()) return;
    const auto& p = source().arms[arm].profile;
    if (!p.is_object() || profileStored_[arm]) return;
    profileStored_[arm] = true;
    post([arm, p](RunStore& store, const RecordedRun& ids) {
        return store.updateProfile(ids.armIds[arm], p);
    });
}

void RunRecorder::armPhaseChanged(int arm) {
    if (!ensureBegun()) return;
    markDirty(arm);
    flushDirty();
}

void RunRecorder::armEvent(int arm, const protocol::Event& ev, double elapsedMs) {
    if (!ensureBegun()) return;
    const auto a = std::size_t(arm);
    const auto* error = std::get_if<protocol::Error>(&ev);
    const auto* blockDone = std::get_if<protocol::BlockDone>(&ev);
    if (const auto* warning = std::get_if<protocol::Warning>(&ev)) {
        postEvent(arm, elapsedMs, protocol::toJson(*warning));
    } else if (error) {
        if (a < workerErrorSeen_.size()) workerErrorSeen_[a] = true;
        postEvent(arm, elapsedMs, protocol::toJson(*error));
    } else if (const auto* s = std::get_if<protocol::Samples>(&ev); s && s->phase == "warmup" && a < warmupBatch_.size()) {
        warmupBatch_[a] = s->batch_size;
    }
    using protocol::Hello, protocol::Loaded, protocol::Applied, protocol::Bye;
    const bool hello = std::holds_alternative<Hello>(ev), loaded = std::holds_alternative<Loaded>(ev);
    if (hello || loaded || std::holds_alternative<Applied>(ev) || error || std::holds_alternative<Bye>(ev))
        markDirty(arm);
    // A process's pid, cold costs and page faults, committed before anyone else hears of the
    // event (pitlane-cli's "block done" line): only its row, not the arm's.
    if (hello || loaded || blockDone) syncProcesses(a);
    // A serving level's batches, and its block_done's figures: committed before anyone else
    // hears of the event, like samples.
    if (std::holds_alternative<protocol::ServeBatches>(ev) || (blockDone && blockDone->serving)) syncServing(a);
    // The operator profile (the runner keeps worker 0's in ArmResult::profile): committed as it
    // arrives, so a run killed afterwards keeps it.
    if (std::holds_alternative<protocol::Profile>(ev)) syncProfile(a);
}

void RunRecorder::postEvent(int arm, double tMs, json ev) {
    post([arm, tMs, ev = std::move(ev)](RunStore& store, const RecordedRun& ids) {
        const qint64 armId = arm >= 0 && std::size_t(arm) < ids.armIds.size()
                                 ? ids.armIds[std::size_t(arm)]
                                 : 0;
        return store.appendEvent(ids.id, armId, tMs, ev);
    });
}

void RunRecorder::samplesAppended(int arm, int first, int count) {
    if (!ensureBegun()) return;
    flushDirty();
    const auto& all = source().arms[std::size_t(arm)].samples;
    const std::size_t from = std::min(std::size_t(first), all.size());
    const std::size_t to = std::min(from + std::size_t(count), all.size());
    results::SampleSeries batch;
    batch.append(all, from, to - from);
    posted_[std::size_t(arm)] = std::max(posted_[std::size_t(arm)], to);
    post([arm, batch = std::move(batch)](RunStore& store, const RecordedRun& ids) {
        return store.appendSamples(ids.armIds[std::size_t(arm)], batch, 0, batch.size());
    });
}

void RunRecorder::warmupAppended(int arm) {
    if (!ensureBegun()) return;
    const auto& ns = source().arms[std::size_t(arm)].warmup_ns;
    auto& stored = warmupStored_[std::size_t(arm)];
    post([arm, ns, first = stored, batch = warmupBatch_[std::size_t(arm)]](
             RunStore& store, const RecordedRun& ids) {
        return store.appendWarmup(ids.armIds[std::size_t(arm)], ns, first, batch);
    });
    stored = ns.size();
}

void RunRecorder::metricsAppended(int arm) {
    if (!ensureBegun()) return;
    const auto& m = source().arms[std::size_t(arm)].metrics;
    if (m.empty()) return;
    post([arm, tick = m.back()](RunStore& store, const RecordedRun& ids) {
        return store.appendMetric(ids.armIds[std::size_t(arm)], tick);
    });
}

void RunRecorder::armFinished(int arm, double elapsedMs) {
    if (!ensureBegun()) return;
    const auto a = std::size_t(arm);
    const auto& live = source().arms[a];
    dirty_[a] = false;
    post([a, row = results::armSettings(live)](RunStore& store, const RecordedRun& ids) {
        return store.updateArm(ids.armIds[a], row);
    });
    syncProcesses(a);
    syncServing(a);
    // Failures the orchestrator decided (crash, timeout, exit) have no worker error event.
    if (live.error && !workerErrorSeen_[a])
        postEvent(arm, elapsedMs,
                  {{"type", "error"},
                   {"code", live.error->code},
                   {"message", live.error->message},
                   {"status", live.status},
                   {"source", "orchestrator"}});
}

// The finished run goes to the writer, with the samples it has already written: its verdict
// (the bootstraps) and lesson are computed there, off the caller's thread, which copies no
// samples (a copy of 400 000 held the UI thread ~50 ms; SampleSeries copies share chunks).
void RunRecorder::runFinished() {
    sourceRunning_ = false;
    if (!recording_ || !hasSource()) return;
    for (std::size_t i = 0; i < storedServing_.size(); ++i) syncServing(i);
    for (std::size_t i = 0; i < profileStored_.size(); ++i) syncProfile(i);
    recording_ = false;
    auto ids = run_;
    // The comparisons (bootstraps) computed on either side serve the other: the caller's when
    // it already compared the arms, the writer's back to the caller's run (compareArms checks
    // the key, i.e. that they were computed on as many samples).
    auto memo = std::make_shared<std::optional<results::RunResult::ComparisonMemo>>(
        source().comparison_memo);
    // The samples posted: the live series shared (its chunks are not copied), or its first
    // `posted` samples where the recording began after some had come.
    std::vector<results::SampleSeries> written;
    for (std::size_t i = 0; i < source().arms.size(); ++i) {
        const auto& live = source().arms[i].samples;
        const std::size_t n = i < posted_.size() ? posted_[i] : 0;
        if (n == live.size()) {
            written.push_back(live);
        } else {
            written.emplace_back();
            written.back().append(live, 0, n);
        }
    }
    writingEnd_ = true;
    endBegun_->store(false);
    post(
        [run = runWithoutSamples(source()), written = std::move(written),
         serving = servingWritten_, lost = lostWrite_, begun = endBegun_,
         memo](RunStore& store, const RecordedRun& rec) mutable {
            begun->store(true);
            for (std::size_t i = 0; i < run.arms.size() && i < written.size(); ++i)
                run.arms[i].samples = std::move(written[i]);
            for (std::size_t i = 0; i < run.arms.size() && i < serving->size(); ++i)
                run.arms[i].serving = std::move((*serving)[i]);
            run.comparison_memo = *memo;
            // Arms the file does not hold whole are stored as failed (not_stored), never ok.
            const bool ok = store.finishRun(rec.id, run, *lost);
            *memo = run.comparison_memo;
            return ok;
        },
        [this, ids, memo](bool ok, const QString& error) {
            if (*memo && hasSource() && !source().comparison_memo) source().comparison_memo = *memo;
            if (ok && ids->id != 0) emit runStored(ids->id);
            // What the run's end stored instead ("run 3 is stored as not complete: arm A: ...")
            // is said even after an earlier failure was: it is the last word on the run.
            if (!ok && errorSent_ && error != runError_) {
                errorSent_ = false;
                failed(error);
            }
            writingEnd_ = false;
            emit runWritten();
        });
}

}  // namespace pitlane::store
