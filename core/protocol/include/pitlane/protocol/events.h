#pragma once
// One struct and one decoder per protocol event (ARCHITECTURE.md "Worker protocol"). Readers
// ignore unknown fields; a missing field takes the default written here; a field of the wrong
// JSON type makes the decoder throw std::exception (the reader counts and reports it, the event
// is ignored). Encoders are the decoders' inverse (tests, and anything that writes events).
#include "pitlane/protocol/protocol.h"

#include <optional>
#include <variant>

namespace pitlane::protocol {

struct Hello {
    std::int64_t pid = 0;
    int protocol = 0;
    std::string worker_version;
    json environment = json::object();
};

struct Loaded {
    double load_ms = -1, freeze_ms = -1, optimize_ms = -1, first_forward_ms = -1;
    std::int64_t parameters = -1, file_size_bytes = -1;
    json fields = json::object();  // the whole event without "v" and "type" (kept as reported)
};

// The read-back of every knob: kept as JSON (its fields are listed in ARCHITECTURE.md and read
// by name where they are checked).
struct Applied {
    json fields = json::object();  // without "v" and "type"
};

struct Metrics {
    std::int64_t rss_bytes = 0, peak_rss_bytes = 0;
    std::int64_t tensor_bytes = -1, tensor_peak_bytes = -1;  // -1: not counted
    double cpu_user_s = 0, cpu_sys_s = 0;
    std::int64_t ctx_voluntary = 0, ctx_involuntary = 0, migrations = 0;
    std::int64_t minor_faults = 0, major_faults = 0;  // cumulative, whole process
    std::vector<double> core_util_pct;
    json raw;  // the event as received (GPU fields, CUDA allocator, ...)
};

struct BlockDone {
    int block = -1;
    std::string phase;
    std::int64_t iters = 0;
    int batch_size = 1;
    double wall_ms = 0;
    // getrusage around the timed loop; absent from workers that predate page-fault counting.
    std::optional<std::int64_t> minor_faults, major_faults;
    std::optional<double> cpu_ms;  // CPU time of the process across the timed loop
    std::optional<std::int64_t> involuntary_switches;  // the process preempted, same span
    bool stopped = false;
};

struct Warning {
    std::string code, message;
};

struct Bye {
    std::int64_t malformed_commands = 0, sampler_ticks = 0, peak_rss_bytes = 0;
    double sampler_cpu_s = 0;
};

// Samples and Error are declared in protocol.h.
using Event = std::variant<Hello, Loaded, Applied, Samples, Metrics, BlockDone, Warning, Error, Bye>;

enum class EventType { Hello, Loaded, Applied, Samples, Metrics, BlockDone, Warning, Error, Bye, Unknown };
// From the "type" field; Unknown for a type this build does not know (or none).
EventType eventType(const json& event);

Hello helloFromJson(const json& j);
Loaded loadedFromJson(const json& j);
Applied appliedFromJson(const json& j);
Metrics metricsFromJson(const json& j);
BlockDone blockDoneFromJson(const json& j);
Warning warningFromJson(const json& j);
Bye byeFromJson(const json& j);
// Any event: nullopt for an unknown type; throws std::exception on a field of the wrong type.
std::optional<Event> decodeEvent(const json& j);

json toJson(const Hello& e);
json toJson(const Loaded& e);
json toJson(const Applied& e);
json toJson(const Metrics& e);
json toJson(const BlockDone& e);
json toJson(const Warning& e);
json toJson(const Bye& e);

}  // namespace pitlane::protocol
