#pragma once
// Which run the window's views show: the live run of the ExperimentRunner, or a finished one
// from the history (a stored run, or a comparison of arms of two runs) from the moment one is
// opened until the next run starts.
#include "pitlane/results/run_result.h"
#include "pitlane/session/experiment_runner.h"

#include <QString>
#include <QStringList>

#include <memory>

namespace pitlane::app {

class ShownRun {
public:
    explicit ShownRun(const session::ExperimentRunner* live) : live_(live) {}

    const results::RunResult& result() const { return stored_ ? *stored_ : live_->result(); }
    bool isStored() const { return static_cast<bool>(stored_); }
    // The stored run or comparison (shared with the plots); null while the live run is shown.
    const std::shared_ptr<const results::RunResult>& stored() const { return stored_; }
    qint64 storedId() const { return storedId_; }        // 0 for a comparison of two runs
    const QString& heading() const { return heading_; }  // names it above the verdict
    const QStringList& notes() const { return notes_; }  // what a reader must know to trust it

    void showStored(results::RunResult run, qint64 id, const QString& heading,
                    const QStringList& notes) {
        stored_ = std::make_shared<const results::RunResult>(std::move(run));
        storedId_ = id;
        heading_ = heading;
        notes_ = notes;
    }
    void followLive() {
        stored_.reset();
        storedId_ = 0;
        heading_.clear();
        notes_.clear();
    }

private:
    const session::ExperimentRunner* live_;
    std::shared_ptr<const results::RunResult> stored_;
    qint64 storedId_ = 0;
    QString heading_;
    QStringList notes_;
};

}  // namespace pitlane::app
