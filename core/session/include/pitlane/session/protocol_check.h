#pragma once
// Whether a worker's event fits what the worker was told (ARCHITECTURE.md "Worker protocol"):
// a model that writes into the protocol's pipe (behind ssh, fd 3 is in its reach) can forge
// events, and a forged one rarely fits. A pure function of what the worker was last sent and the
// decoded event: ExperimentRunner fails the arm with protocol_violation on the first misfit;
// tests/session feed it fake event streams.
#include "pitlane/protocol/events.h"
#include "pitlane/session/round_plan.h"

#include <optional>
#include <string>

namespace pitlane::session {

// What a worker was last told to do, and what it has answered of it so far.
struct WorkerTold {
    int kind = -1;  // Task::Kind; -1: nothing yet
    int block = -2, iters = 0, batchSize = 0;
    int samples = 0;    // samples received for it so far
    bool open = false;  // not yet answered (block_done, applied, profile)
    int hellos = 0;     // hello events that fitted
};

// The worker was sent `t`: what it must answer from now on (its hello count stays).
void tell(WorkerTold& told, const Task& t);

// "" when `event` fits `told`, else what is wrong ("a second hello", "samples of block 3 while
// block 2 ran", ...). Counts what fits: the samples of the block, the command answered, the hello.
std::string protocolViolation(WorkerTold& told, const protocol::Event& event);

// An event of this type answers a command (loaded, applied, samples, block_done, serve_batches,
// profile) or opens the conversation (hello): one whose fields do not decode breaks the
// protocol; others (metrics, warning, error, bye) that do not decode are ignored with a warning.
bool answersCommand(protocol::EventType type);

// What an event from worker `worker` (its JSON, as protocol::decode parsed the line) amounts to:
// the decoded event; or, when its fields do not decode, a violation (it answers a command and
// the arm is `checked`, i.e. still pending: the arm fails) or a warning (it is ignored). None of
// the three for a type this build does not know: ignored.
struct EventRead {
    std::optional<protocol::Event> event;
    std::string violation, warning;
};
EventRead readEvent(const nlohmann::json& ev, int worker, bool checked);
// The warning for an event that is ignored because a field does not decode (`why`).
std::string badEventWarning(const nlohmann::json& ev, const std::string& why);
// The violation for a line on the event channel that is not an event: protocol::decode's `why`
// (not JSON, no "type", ...) and the line as protocol::printable shows it (its first 120
// characters are quoted).
std::string malformedLineViolation(int worker, const std::string& why, const std::string& line);

}  // namespace pitlane::session
