#pragma once
// One struct per protocol event (ARCHITECTURE.md "Worker protocol"), its fields listed once
// (fieldsOf, record.h): the table is its decoder and its encoder. Readers
// ignore unknown fields; a missing field takes the default written here; a field of the wrong
// JSON type makes the decoder throw std::exception (the reader counts and reports it, the event
// is ignored). Encoders are the decoders' inverse (tests, and anything that writes events).
#include "pitlane/protocol/applied.h"
#include "pitlane/protocol/loop_counters.h"
#include "pitlane/protocol/protocol.h"
#include "pitlane/protocol/record.h"

#include <optional>
#include <variant>

namespace pitlane::protocol {

struct Hello {
    std::int64_t pid = 0;
    int protocol = 0;
    std::string worker_version;
    json environment = json::object();
};
inline auto fieldsOf(const Hello*) {
    using record::field;
    return std::make_tuple(field("pid", &Hello::pid), field("protocol", &Hello::protocol),
                           field("worker_version", &Hello::worker_version),
                           field("environment", &Hello::environment));
}

struct Loaded {
    double load_ms = -1, freeze_ms = -1, optimize_ms = -1, first_forward_ms = -1;
    std::int64_t parameters = -1, file_size_bytes = -1;
    json fields = json::object();  // the whole event without "v" and "type" (kept as reported)
};
inline auto fieldsOf(const Loaded*) {
    using record::field;
    return std::make_tuple(field("load_ms", &Loaded::load_ms), field("freeze_ms", &Loaded::freeze_ms),
                           field("optimize_ms", &Loaded::optimize_ms),
                           field("first_forward_ms", &Loaded::first_forward_ms),
                           field("parameters", &Loaded::parameters),
                           field("file_size_bytes", &Loaded::file_size_bytes));
}

struct Metrics {
    // The worker's own clock when it read its CPU counters: ms since its sampler started
    // (steady clock), so a process's CPU rate is taken over the interval it sampled, not over
    // the times its ticks reached the session (issue 41). -1: not reported.
    double t_ms = -1;
    std::int64_t rss_bytes = 0, peak_rss_bytes = 0;
    std::int64_t tensor_bytes = -1, tensor_peak_bytes = -1;  // -1: not counted
    double cpu_user_s = 0, cpu_sys_s = 0;
    std::int64_t ctx_voluntary = 0, ctx_involuntary = 0, migrations = 0;
    std::int64_t minor_faults = 0, major_faults = 0;  // cumulative, whole process
    std::vector<double> core_util_pct;
    json raw;  // the event as received (GPU fields, CUDA allocator, ...)
};
inline auto fieldsOf(const Metrics*) {
    using record::field;
    using M = Metrics;
    return std::make_tuple(
        field("t_ms", &M::t_ms),
        field("rss_bytes", &M::rss_bytes), field("peak_rss_bytes", &M::peak_rss_bytes),
        field("tensor_bytes", &M::tensor_bytes), field("tensor_peak_bytes", &M::tensor_peak_bytes),
        field("cpu_user_s", &M::cpu_user_s), field("cpu_sys_s", &M::cpu_sys_s),
        field("ctx_voluntary", &M::ctx_voluntary), field("ctx_involuntary", &M::ctx_involuntary),
        field("migrations", &M::migrations), field("minor_faults", &M::minor_faults),
        field("major_faults", &M::major_faults), field("core_util_pct", &M::core_util_pct));
}

// block_done.serving: a serving level's end (engine_run.cpp serveLevel): what it was asked and
// what the loop reports that its serve_batches events do not.
struct ServingDone {
    std::string arrival, idle_wait;
    double rate_per_s = 0, duration_ms = 0, max_wait_ms = 0;
    int clients = 0, max_batch = 0;
    std::int64_t scheduled = 0, arrived = 0, served = 0, batches = 0, max_queue = 0;
    bool saturated = false;
};
inline auto fieldsOf(const ServingDone*) {
    using record::field;
    using S = ServingDone;
    return std::make_tuple(
        field("arrival", &S::arrival), field("rate_per_s", &S::rate_per_s),
        field("clients", &S::clients), field("duration_ms", &S::duration_ms),
        field("max_batch", &S::max_batch), field("max_wait_ms", &S::max_wait_ms),
        field("idle_wait", &S::idle_wait), field("scheduled", &S::scheduled),
        field("arrived", &S::arrived), field("served", &S::served), field("batches", &S::batches),
        field("max_queue", &S::max_queue), field("saturated", &S::saturated));
}
PITLANE_RECORD_OPERATORS(ServingDone)

struct BlockDone {
    int block = -1;
    std::string phase;
    std::int64_t iters = 0;
    int batch_size = 1;
    double wall_ms = 0;
    // getrusage around the timed loop (loop_counters.h); each absent from workers that predate it.
#define PITLANE_OPTIONAL_COUNTER(T, name) std::optional<T> name;
    PITLANE_LOOP_COUNTERS(PITLANE_OPTIONAL_COUNTER)
#undef PITLANE_OPTIONAL_COUNTER
    std::optional<ServingDone> serving;  // a serving level's block_done
    bool stopped = false;                // written only when true
};
inline auto fieldsOf(const BlockDone*) {
    using record::field;
    using B = BlockDone;
    return std::tuple_cat(std::make_tuple(field("block", &B::block), field("phase", &B::phase),
                                          field("iters", &B::iters),
                                          field("batch_size", &B::batch_size),
                                          field("wall_ms", &B::wall_ms)),
                          loopCounterFields<B>(), std::make_tuple(field("serving", &B::serving)));
}

// A serving level's batches so far (engine_run.cpp BatchFlusher): batch k of the event is the
// level's batch first_batch + k; arrival_ns lists the arrivals of the requests those batches
// served, from the level's request first_request on.
struct ServeBatches {
    int block = 0;
    std::int64_t first_batch = 0, first_request = 0;
    std::vector<int> size;
    std::vector<std::int64_t> free_ns, start_ns, end_ns, arrival_ns;
};
inline auto fieldsOf(const ServeBatches*) {
    using record::field;
    using S = ServeBatches;
    return std::make_tuple(field("block", &S::block), field("first_batch", &S::first_batch),
                           field("first_request", &S::first_request), field("size", &S::size),
                           field("free_ns", &S::free_ns), field("start_ns", &S::start_ns),
                           field("end_ns", &S::end_ns), field("arrival_ns", &S::arrival_ns));
}

// An operator profile (engine_profile.cpp): iters, batch_size, wall_ms, profiler, ops[], trace;
// kept as JSON (results::ArmResult::profile, the history's profiles rows).
struct Profile {
    json fields = json::object();  // without "v" and "type"
};

struct Warning {
    std::string code, message;
};
inline auto fieldsOf(const Warning*) {
    using record::field;
    return std::make_tuple(field("code", &Warning::code), field("message", &Warning::message));
}

struct Bye {
    std::int64_t malformed_commands = 0, sampler_ticks = 0, peak_rss_bytes = 0;
    double sampler_cpu_s = 0;
};
inline auto fieldsOf(const Bye*) {
    using record::field;
    return std::make_tuple(field("malformed_commands", &Bye::malformed_commands),
                           field("sampler_ticks", &Bye::sampler_ticks),
                           field("sampler_cpu_s", &Bye::sampler_cpu_s),
                           field("peak_rss_bytes", &Bye::peak_rss_bytes));
}

// Samples and Error are declared in protocol.h.
inline auto fieldsOf(const Samples*) {
    using record::field;
    return std::make_tuple(field("block", &Samples::block), field("phase", &Samples::phase),
                           field("first_iter", &Samples::first_iter),
                           field("batch_size", &Samples::batch_size),
                           field("latency_ns", &Samples::latency_ns));
}

using Event = std::variant<Hello, Loaded, Applied, Samples, Metrics, BlockDone, ServeBatches,
                           Profile, Warning, Error, Bye>;

enum class EventType {
    Hello, Loaded, Applied, Samples, Metrics, BlockDone, ServeBatches, Profile, Warning, Error, Bye,
    Unknown
};
// From the "type" field; Unknown for a type this build does not know (or none).
EventType eventType(const json& event);

Hello helloFromJson(const json& j);
Loaded loadedFromJson(const json& j);
Applied appliedFromJson(const json& j);
Metrics metricsFromJson(const json& j);
BlockDone blockDoneFromJson(const json& j);
ServeBatches serveBatchesFromJson(const json& j);
Profile profileFromJson(const json& j);
Warning warningFromJson(const json& j);
Bye byeFromJson(const json& j);
// Any event: nullopt for an unknown type; throws std::exception on a field of the wrong type.
std::optional<Event> decodeEvent(const json& j);

json toJson(const Hello& e);
json toJson(const Loaded& e);
json toJson(const Applied& e);
json toJson(const Metrics& e);
json toJson(const BlockDone& e);
json toJson(const ServeBatches& e);
json toJson(const Profile& e);
json toJson(const Warning& e);
json toJson(const Bye& e);

}  // namespace pitlane::protocol
