#pragma once
// What a worker's event does to the run's results (results::RunResult): a pure function of the
// arm's result, where the event came from, and the event. ExperimentRunner (worker_events.cpp)
// folds every event that fitted the protocol (protocol_check.h) and then does what the returned
// FoldEffects say (announce, end the worker's task, fail the arm, ...); tests/session fold fake
// event streams, with no process. A serving level's events (serve_batches, block_done.serving)
// change the arm's serving levels in serving_tasks.cpp before they come here.
#include "pitlane/protocol/events.h"
#include "pitlane/results/run_result.h"
#include "pitlane/session/round_plan.h"

#include <optional>
#include <string>
#include <vector>

namespace pitlane::session {

// Where an event came from, as the runner knows it.
struct FoldSource {
    int worker = 0;        // in the arm's current round (the `workers` knob: K)
    int round = 0;         // the replicate its process belongs to
    std::size_t process = 0;  // its process in ArmResult::processes
    const Task* task = nullptr;  // the arm's task being run, if any
    double elapsedMs = 0;  // since the run started (metric ticks)
};

// What the runner must do once the event is folded, in this order.
struct FoldEffects {
    bool helloSeen = false;  // the worker is up: a task waiting for it can be sent
    // A later round's read-back of the knobs, to check against the first round's.
    std::optional<nlohmann::json> checkApplied;
    bool warmupAppended = false;
    int samplesFirst = -1, samplesCount = 0;  // measured samples appended: [first, first + count)
    bool metricsAppended = false;
    std::vector<std::string> warnings;  // log lines (already in ArmResult::warnings where kept)
    int unplan = 0;  // iterations of the task that will not be measured (a sweep point failed)
    std::optional<protocol::Error> failure;  // the arm fails with it (status failed)
    bool taskDone = false;  // the worker finished `task`
};

FoldEffects foldEvent(results::ArmResult& arm, const FoldSource& from, const protocol::Event& event);

// A worker broke the protocol (protocol_check.h): what came before may have been forged to fit,
// so none of the arm's samples are kept. Returns how many were discarded (measured and warmup).
std::size_t discardMeasurements(results::ArmResult& arm);

// An error event's message, or, when it came without one, the first line with something on it
// of its detail (torch's text), so no failure prints an empty reason.
std::string errorReason(const protocol::Error& e);

}  // namespace pitlane::session
