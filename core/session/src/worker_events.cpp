// ExperimentRunner: what a worker event does to the run. It is decoded, checked against what the
// worker was told (protocol_check.h), folded into the arm's result (event_fold.h, a pure
// function), and the runner then does what the fold says. Events of a worker started ahead of its
// round are held back by replicate_rounds.cpp until the round starts.
#include "pitlane/session/experiment_runner.h"

#include "pitlane/protocol/events.h"
#include "pitlane/session/event_fold.h"

namespace pitlane::session {

namespace {

QString badEventText(const nlohmann::json& ev, const std::exception& e) {
    return QString::fromStdString(badEventWarning(ev, e.what()));
}

}  // namespace

using json = nlohmann::json;
namespace R = results;

void ExperimentRunner::failProtocol(int arm, const std::string& why) {
    auto& a = result_.arms[arm];
    if (a.status != R::kPending) return;
    const std::size_t dropped = discardMeasurements(a);
    failArm(arm, R::kFailed, protocol::code::kProtocolViolation,
            why + "; the arm is failed and none of its results are used (" + std::to_string(dropped) +
                " samples received before were discarded)");
    abandon(arm);
}

// An event that does not decode (a field of the wrong JSON type) is not handled: where it
// would answer a command, the worker broke the protocol; a metrics, warning, error or bye event
// is ignored with a warning (readers never crash on what they cannot read). readEvent
// (protocol_check.h) decides which.
std::optional<protocol::Event> ExperimentRunner::decodeFrom(int arm, int worker, const json& ev) {
    EventRead decoded = readEvent(ev, worker, result_.arms[arm].status == R::kPending);
    if (!decoded.violation.empty()) failProtocol(arm, decoded.violation);
    if (!decoded.warning.empty())
        emit logMessage(arm, QStringLiteral("warning"), QString::fromStdString(decoded.warning));
    return std::move(decoded.event);
}

void ExperimentRunner::onEvent(int arm, int worker, const json& ev) {
    auto& a = result_.arms[arm];
    // An arm that broke the protocol hears nothing more from its workers.
    if (a.error && a.error->code == protocol::code::kProtocolViolation) return;
    const auto event = decodeFrom(arm, worker, ev);
    if (!event) return;
    if (a.status == R::kPending) {
        auto& ws = arms_[arm].workers[std::size_t(worker)];
        if (const std::string why = protocolViolation(ws.told, *event); !why.empty()) {
            failProtocol(arm, "worker " + std::to_string(worker) + " broke the protocol: " + why);
            return;
        }
    }
    if (activeFor(arm) && !std::holds_alternative<protocol::Metrics>(*event)) armTimer();
    try {
        // A serving level's events change its level first (serving_tasks.cpp).
        if (const auto* batches = std::get_if<protocol::ServeBatches>(&*event)) handle(arm, worker, *batches);
        if (const auto* done = std::get_if<protocol::BlockDone>(&*event); done && done->serving)
            onServeDone(arm, worker, *done);
        apply(arm, worker, foldEvent(a, sourceOf(arm, worker), *event));
    } catch (const std::exception& e) {
        emit logMessage(arm, QStringLiteral("warning"), badEventText(ev, e));
    }
    // Observers read result(): the event is announced once it is stored there.
    toFeeds([&](R::RunFeed& f) { f.armEvent(arm, *event, elapsedMs()); });
    emit armEvent(arm, *event);
}

FoldSource ExperimentRunner::sourceOf(int arm, int worker) {
    const auto& st = arms_[arm];
    return {worker, st.round, std::size_t(st.workers[std::size_t(worker)].procIndex), activeFor(arm), elapsedMs()};
}

// What the fold asks, in the order it lists it (event_fold.h).
void ExperimentRunner::apply(int arm, int worker, const FoldEffects& fx) {
    auto& st = arms_[arm];
    if (fx.helloSeen) st.workers[std::size_t(worker)].helloSeen = true;
    if (fx.checkApplied) checkApplied(arm, worker, *fx.checkApplied);
    if (fx.warmupAppended) {
        toFeeds([arm](R::RunFeed& f) { f.warmupAppended(arm); });
        emit warmupAppended(arm);
    }
    if (fx.samplesFirst >= 0) {
        st.doneIters += fx.samplesCount;
        toFeeds([&](R::RunFeed& f) { f.samplesAppended(arm, fx.samplesFirst, fx.samplesCount); });
        emit samplesAppended(arm, fx.samplesFirst, fx.samplesCount);
    }
    if (fx.metricsAppended) {
        toFeeds([arm](R::RunFeed& f) { f.metricsAppended(arm); });
        emit metricsAppended(arm);
    }
    for (const auto& w : fx.warnings) emit logMessage(arm, QStringLiteral("warning"), QString::fromStdString(w));
    if (fx.unplan > 0) unplan(arm, fx.unplan);
    if (fx.failure) {
        failArm(arm, R::kFailed, fx.failure->code, fx.failure->message, fx.failure->detail);
        abandon(arm);
    }
    if (fx.taskDone) taskDoneBy(arm, worker);
    if (fx.helloSeen && !active_.empty()) sendCurrent();  // a task may have waited for this start-up
}

}  // namespace pitlane::session
