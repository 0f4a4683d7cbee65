#pragma once
// Records an ExperimentRunner's run into a RunStore as it happens, from the runner's signals
// alone: the experiment and arm rows when it starts, every samples event in its own transaction
// the moment it is appended, metric ticks, warnings and errors, arm statuses, each worker
// process (pid, cold costs, page faults) as it reports, and the verdict when it finishes. A SIGKILL of the process loses nothing the runner had already appended.
#include "pitlane/store/run_store.h"

#include <QObject>
#include <QPointer>

#include <vector>

namespace pitlane::session {
class ExperimentRunner;
}

namespace pitlane::store {

class RunRecorder : public QObject {
    Q_OBJECT
public:
    // `store` must be open and outlive the recorder. `source` goes to the history list
    // ("cli", "gui").
    RunRecorder(RunStore* store, QString source, QObject* parent = nullptr);

    // Follows every run the runner starts from now on. Connect before runner->start().
    void attach(session::ExperimentRunner* runner);
    qint64 runId() const { return run_.id; }  // 0 before the first run started

signals:
    void runStarted(qint64 id);  // the experiment row is committed
    void runStored(qint64 id);   // the finished run and its verdict are committed
    // A write failed (disk full, file locked too long, ...); sent once per run. Recording goes on.
    void storeError(const QString& message);

private:
    bool ensureBegun();
    void markDirty(int arm);
    void scheduleFlush();
    void flushDirty();
    void syncProcesses(std::size_t arm);
    void check(bool ok);
    qint64 armId(int arm) const;

    RunStore* store_;
    QString source_;
    QPointer<session::ExperimentRunner> runner_;
    RecordedRun run_;
    bool recording_ = false;
    bool errorSent_ = false;
    bool flushQueued_ = false;
    std::vector<bool> dirty_;
    std::vector<bool> workerErrorSeen_;
    std::vector<std::size_t> warmupStored_;
    std::vector<int> warmupBatch_;
    std::vector<std::vector<results::ProcessInfo>> storedProcesses_;  // as last written, per arm
};

}  // namespace pitlane::store
