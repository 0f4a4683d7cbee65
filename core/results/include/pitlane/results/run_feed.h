#pragma once
// What a run reports, as it happens, to whoever keeps it (store::RunRecorder writes it into the
// history). Defined here, below the session and the store, so that neither knows the other:
// session::ExperimentRunner calls the feeds added to it (addFeed) before it emits the matching
// signal, so a feed has written an event before anyone else hears of it. Every call comes on
// the runner's thread. No Qt.
#include "pitlane/protocol/events.h"
#include "pitlane/results/run_result.h"

#include <memory>

namespace pitlane::results {

class RunFeed {
public:
    RunFeed() = default;
    RunFeed(const RunFeed&) = delete;
    RunFeed& operator=(const RunFeed&) = delete;
    virtual ~RunFeed() = default;

    // A run begins: `live` (every arm exists, pending) is the source's result, updated in place
    // as the run goes and readable until the next runBegins or sourceClosed.
    virtual void runBegins(const RunResult& live) = 0;
    virtual void armPhaseChanged(int arm) = 0;
    // A worker's event, decoded and already folded into `live`; `elapsedMs` since the run began.
    virtual void armEvent(int arm, const protocol::Event& event, double elapsedMs) = 0;
    // live.arms[arm].samples[first, first + count) are new.
    virtual void samplesAppended(int arm, int first, int count) = 0;
    virtual void warmupAppended(int arm) = 0;   // live.arms[arm].warmup_ns grew
    virtual void metricsAppended(int arm) = 0;  // live.arms[arm].metrics.back() is new
    // The arm's status is final (ok, failed, timeout, cancelled).
    virtual void armFinished(int arm, double elapsedMs) = 0;
    virtual void runFinished() = 0;
    // The source is destroyed: `live` must not be read any more.
    virtual void sourceClosed() = 0;

    // What a source keeps of its feeds: it expires when the feed is destroyed, so either may go
    // first.
    std::weak_ptr<RunFeed*> handle() const { return self_; }

private:
    std::shared_ptr<RunFeed*> self_ = std::make_shared<RunFeed*>(this);
};

}  // namespace pitlane::results
