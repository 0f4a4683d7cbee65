// ExperimentRunner's feeds (results/run_feed.h): the store's recorder hears of a run through
// them, before the runner's signals are emitted.
#include "pitlane/session/experiment_runner.h"

#include <algorithm>

namespace pitlane::session {

namespace R = results;

void ExperimentRunner::addFeed(R::RunFeed* feed) {
    removeFeed(feed);
    feeds_.push_back(feed->handle());
    if (running_) feed->runBegins(result_);  // added mid-run: it follows the rest of this one
}

void ExperimentRunner::removeFeed(R::RunFeed* feed) {
    feeds_.erase(std::remove_if(feeds_.begin(), feeds_.end(),
                                [feed](const auto& weak) {
                                    const auto f = weak.lock();
                                    return !f || *f == feed;
                                }),
                 feeds_.end());
}

void ExperimentRunner::announceArmFinished(int arm) {
    toFeeds([&](R::RunFeed& f) { f.armFinished(arm, elapsedMs()); });
    emit armFinished(arm);
}

}  // namespace pitlane::session
