#include "pitlane/session/protocol_check.h"

#include <QString>

#include <algorithm>
#include <array>
#include <initializer_list>

namespace pitlane::session {

namespace {

using protocol::Event;

// The wire name of an event, in the order of protocol::Event's alternatives.
std::string typeName(const Event& event) {
    static const std::array<const char*, std::variant_size_v<Event>> kNames = {
        protocol::kHello,   protocol::kLoaded,   protocol::kApplied, protocol::kSamples,
        protocol::kMetrics, protocol::kBlockDone, protocol::kServeBatches, protocol::kProfile,
        protocol::kWarning, protocol::kError,    protocol::kBye};
    return kNames[event.index()];
}

std::string kindName(int kind) {
    switch (kind) {
        case Task::Configure: return "configure";
        case Task::Warmup: return "warmup";
        case Task::Block: return "run";
        case Task::Serve: return "serve";
        case Task::Profile: return "profile";
        default: return "nothing";
    }
}

// "" when the worker has a command of one of `kinds` open.
std::string answering(const WorkerTold& told, const Event& event, std::initializer_list<int> kinds) {
    if (told.open && std::find(kinds.begin(), kinds.end(), told.kind) != kinds.end()) return {};
    return "a \"" + typeName(event) + "\" event while the worker had " +
           (told.open ? "been sent " + kindName(told.kind) : std::string("no command open"));
}

std::string samplesViolation(WorkerTold& told, const protocol::Samples& s) {
    const std::string phase = told.kind == Task::Warmup ? "warmup" : "measure";
    const auto n = std::int64_t(s.latency_ns.size());
    if (s.phase != phase) return "samples of phase \"" + s.phase + "\" during a " + phase + " block";
    if (s.block != told.block)
        return "samples of block " + std::to_string(s.block) + " while block " + std::to_string(told.block) + " ran";
    if (s.batch_size != told.batchSize)
        return "samples at batch size " + std::to_string(s.batch_size) + " while " +
               std::to_string(told.batchSize) + " ran";
    if (s.first_iter != told.samples)
        return "samples from iteration " + std::to_string(s.first_iter) + " of block " + std::to_string(s.block) +
               " after " + std::to_string(told.samples) + " had come";
    if (told.samples + n > told.iters)
        return std::to_string(told.samples + n) + " samples in block " + std::to_string(s.block) + " of " +
               std::to_string(told.iters) + " iterations";
    told.samples += int(n);
    return {};
}

std::string blockDoneViolation(WorkerTold& told, const protocol::BlockDone& b) {
    told.open = false;
    if (b.block != told.block)
        return "block_done of block " + std::to_string(b.block) + " while block " + std::to_string(told.block) + " ran";
    if (told.kind != Task::Serve && b.iters != told.samples)
        return "block_done of block " + std::to_string(told.block) + " says " + std::to_string(b.iters) +
               " iterations; " + std::to_string(told.samples) + " samples came";
    return {};
}

}  // namespace

void tell(WorkerTold& told, const Task& t) {
    const int hellos = told.hellos;
    told = WorkerTold{int(t.kind), t.kind == Task::Warmup ? -1 : t.block, t.iters, t.batchSize, 0, true, hellos};
}

std::string protocolViolation(WorkerTold& told, const Event& event) {
    if (std::holds_alternative<protocol::Hello>(event)) {
        if (told.hellos > 0) return "a second hello";
        ++told.hellos;
        return {};
    }
    if (std::holds_alternative<protocol::Loaded>(event)) return answering(told, event, {Task::Configure});
    if (std::holds_alternative<protocol::Applied>(event) || std::holds_alternative<protocol::Profile>(event)) {
        const int kind = std::holds_alternative<protocol::Applied>(event) ? Task::Configure : Task::Profile;
        auto why = answering(told, event, {kind});
        told.open = false;
        return why;
    }
    if (const auto* sb = std::get_if<protocol::ServeBatches>(&event)) {
        if (auto why = answering(told, event, {Task::Serve}); !why.empty()) return why;
        if (sb->block != told.block)
            return "serve_batches of block " + std::to_string(sb->block) + " while block " +
                   std::to_string(told.block) + " was served";
        return {};
    }
    if (const auto* s = std::get_if<protocol::Samples>(&event)) {
        if (auto why = answering(told, event, {Task::Warmup, Task::Block}); !why.empty()) return why;
        return samplesViolation(told, *s);
    }
    if (const auto* b = std::get_if<protocol::BlockDone>(&event)) {
        if (auto why = answering(told, event, {Task::Warmup, Task::Block, Task::Serve}); !why.empty()) return why;
        return blockDoneViolation(told, *b);
    }
    return {};  // metrics, warning, error, bye: at any time
}

bool answersCommand(protocol::EventType type) {
    using T = protocol::EventType;
    switch (type) {
        case T::Hello: case T::Loaded: case T::Applied: case T::Samples: case T::BlockDone:
        case T::ServeBatches: case T::Profile: return true;
        default: return false;
    }
}

EventRead readEvent(const nlohmann::json& ev, int worker, bool checked) {
    EventRead r;
    try {
        r.event = protocol::decodeEvent(ev);  // nullopt for a type this build does not know
    } catch (const std::exception& e) {
        if (checked && answersCommand(protocol::eventType(ev)))
            r.violation = "worker " + std::to_string(worker) + " broke the protocol: a \"" +
                          ev.value("type", std::string()) + "\" event that does not decode (" + e.what() + ")";
        else
            r.warning = badEventWarning(ev, e.what());
    }
    return r;
}

std::string badEventWarning(const nlohmann::json& ev, const std::string& why) {
    return "ignored a bad " + ev.value("type", std::string()) + " event: " + why;
}

std::string malformedLineViolation(int worker, const std::string& why, const std::string& line) {
    // 120 characters as QString counts them (UTF-16 units), as the message has always quoted.
    return "worker " + std::to_string(worker) + " broke the protocol: a line that is not an event (" + why +
           "): " + QString::fromStdString(line).left(120).toStdString();
}

}  // namespace pitlane::session
