#pragma once
// Records a run into a RunStore as it happens, from the events of whoever runs it (the session's
// ExperimentRunner in pitlane-cli and the window): the experiment and arm rows when it starts,
// every samples event in its own transaction the moment it is appended, metric ticks, warnings
// and errors, arm statuses, each worker process (pid, cold costs, page faults) as it reports,
// a serving run's levels and their batches as each serve_batches / block_done event arrives,
// each arm's operator profile as its profile event arrives, and the verdict when it finishes.
// A SIGKILL of the process loses nothing already committed.
// The writes go through a HistoryWriter: inline on a store the caller owns (pitlane-cli), or on
// a thread of its own (the window), where they are copies of what the run reported, committed in
// batches, and the stored verdict and lesson are computed there too.
// The store sits below the session: it knows results::RunResult and is fed through
// results::RunFeed (session::ExperimentRunner::addFeed), never the runner's type.
#include "pitlane/results/run_feed.h"
#include "pitlane/store/history_writer.h"
#include "pitlane/store/run_store.h"

#include <QObject>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace pitlane::store {

class RunRecorder : public QObject, public results::RunFeed {
    Q_OBJECT
public:
    // `store` must be open and outlive the recorder. `source` goes to the history list
    // ("cli", "gui").
    RunRecorder(RunStore* store, QString source, QObject* parent = nullptr);
    // Writes on a thread of its own, through its own connection to the history file `path`.
    RunRecorder(const QString& path, QString source, QObject* parent = nullptr);
    // Every write already made is committed before the recorder goes.
    ~RunRecorder() override;
    // Blocks until every write made so far is committed (tests; closing the window).
    void drain() { writer_->drain(); }
    bool writesOnThread() const { return writer_->onThread(); }

    // 0 before the first run's rows are committed (runStarted).
    qint64 runId() const { return runId_; }
    // What storeError last said about the current (or last) run; "" when no write failed. A write on the thread is heard of once it has reached this thread: drain() and
    // deliver the queued calls first (flush()).
    QString runError() const { return runError_; }
    // drain(), then the outcomes of the writes on the thread are delivered here (storeError,
    // runStored) before it returns: what a script asks before it quits.
    void flush();
    // The finished run is on its way to the file (posted by runFinished, its outcome not back
    // yet): runWritten() follows.
    bool writingRunEnd() const { return writingEnd_; }
    // The writer has begun that write (the history file's lock is held, the run's verdict is
    // being computed): runWritten() is not held up by another process's lock any more.
    bool runEndBegun() const { return endBegun_->load(); }

    // The feed (results/run_feed.h), in the order a run produces it: add the recorder to the
    // runner before runner->start(). The experiment row is opened at the run's first phase
    // change (or event), once the files are checked.
    void runBegins(const results::RunResult& live) override;
    void armPhaseChanged(int arm) override;
    void armEvent(int arm, const protocol::Event& event, double elapsedMs) override;
    void samplesAppended(int arm, int first, int count) override;
    void warmupAppended(int arm) override;
    void metricsAppended(int arm) override;
    void armFinished(int arm, double elapsedMs) override;
    void runFinished() override;
    void sourceClosed() override;

signals:
    void runStarted(qint64 id);  // the experiment row is committed
    void runStored(qint64 id);   // the finished run and its verdict are committed
    // A write failed (disk full, file locked too long, ...): sent for the first failure of a
    // run, and once more for the run's end when it stored arms as not complete (finishRun).
    // Recording goes on.
    void storeError(const QString& message);
    // The finished run's write came back, stored or not (after runStored / storeError). The
    // comparisons the writer computed for its verdict are in the fed run's memo by then
    // (results::compareArms): a final verdict computed after this reuses them.
    void runWritten();

private:
    bool ensureBegun();
    void markDirty(int arm);
    void scheduleFlush();
    void flushDirty();
    void syncProcesses(std::size_t arm);
    // Writes what is new in the arm's serving levels (ArmResult::serving, where the runner folds
    // each serve_batches and block_done event): a level's row when it appears or its block_done
    // figures change, and the batches and arrivals added since the last write, as one chunk.
    void syncServing(std::size_t arm);
    // Writes the arm's operator profile (ArmResult::profile) once the runner has it.
    void syncProfile(std::size_t arm);
    // Posts a write about the current run: `write` gets the store and the run's row ids (a
    // write of a run whose rows could not be created is skipped: that failure was reported).
    void post(std::function<bool(RunStore&, const RecordedRun&)> write,
              HistoryWriter::Done done = {});
    void failed(const QString& error);
    void postEvent(int arm, double tMs, nlohmann::json event);

    std::unique_ptr<HistoryWriter> writer_;
    QString source_;
    bool hasSource() const { return live_ != nullptr; }
    const results::RunResult& source() const { return *live_; }
    const results::RunResult* live_ = nullptr;  // the run being fed (runBegins .. sourceClosed)
    bool sourceRunning_ = false;                 // between runBegins and runFinished
    std::shared_ptr<RecordedRun> run_;  // filled by the writer when the rows are committed
    // The first write of the run that failed, set and read on the writer's side only.
    std::shared_ptr<QString> lostWrite_ = std::make_shared<QString>();
    QString runError_;
    // How many of each arm's measured samples were posted to the writer: the finished run's
    // verdict is computed there on those (a copy of the live series, which shares its chunks).
    std::vector<std::size_t> posted_;
    // Every serving level written, per arm, gathered on the writer's side (the serving verdict).
    std::shared_ptr<std::vector<std::vector<results::ServingLevel>>> servingWritten_;
    qint64 runId_ = 0;
    bool recording_ = false;
    bool writingEnd_ = false;  // writingRunEnd()
    std::shared_ptr<std::atomic<bool>> endBegun_ = std::make_shared<std::atomic<bool>>(false);  // runEndBegun()
    bool errorSent_ = false;
    bool flushQueued_ = false;
    std::vector<bool> dirty_;
    std::vector<bool> workerErrorSeen_;
    std::vector<std::size_t> warmupStored_;
    std::vector<int> warmupBatch_;
    std::vector<std::vector<results::ProcessInfo>> storedProcesses_;  // as last written, per arm
    struct StoredLevel {
        std::size_t batches = 0, arrivals = 0;
        bool written = false;
        std::int64_t scheduled = 0, max_queue = 0;
        bool saturated = false, complete = false;
    };
    std::vector<std::vector<StoredLevel>> storedServing_;  // per arm, per level
    std::vector<bool> profileStored_;                       // per arm
};

}  // namespace pitlane::store
