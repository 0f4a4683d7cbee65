#include "pitlane/widgets/verdict_calculator.h"

#include <QMetaObject>

namespace pitlane::widgets {

VerdictCalculator::VerdictCalculator(QObject* parent) : QObject(parent) {}

VerdictCalculator::~VerdictCalculator() {
    // The thread only reads its own snapshot; its queued delivery dies with this object.
    if (thread_.joinable()) thread_.join();
}

void VerdictCalculator::reset() {
    ++generation_;
    pending_.reset();
}

void VerdictCalculator::request(const results::RunResult& run, bool final) {
    auto snapshot = verdictSnapshot(run);
    if (busy_) {
        // A final request must not be replaced by a later live one of the same run.
        if (!(pending_ && pending_->second && !final)) pending_.emplace(std::move(snapshot), final);
        return;
    }
    launch(std::move(snapshot), final);
}

void VerdictCalculator::launch(results::RunResult snapshot, bool final) {
    if (thread_.joinable()) thread_.join();
    busy_ = true;
    thread_ = std::thread([this, run = std::move(snapshot), final, gen = generation_] {
        auto rows = comparisonRows(run, true);
        QMetaObject::invokeMethod(
            this,
            [this, rows = std::move(rows), final, gen]() mutable {
                onDone(std::move(rows), final, gen);
            },
            Qt::QueuedConnection);
    });
}

void VerdictCalculator::onDone(std::vector<ComparisonRow> rows, bool final, int generation) {
    if (thread_.joinable()) thread_.join();
    busy_ = false;
    if (generation == generation_) emit ready(rows, final);
    if (pending_) {
        auto next = std::move(*pending_);
        pending_.reset();
        launch(std::move(next.first), next.second);
    }
}

}  // namespace pitlane::widgets
