// Typed protocol events (events.h).
#include "pitlane/protocol/events.h"

namespace pitlane::protocol {

namespace {

json withoutEnvelope(const json& j) {
    json out = j;
    out.erase("v");
    out.erase("type");
    return out;
}

template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
    if (v) j[key] = *v;
}

}  // namespace

EventType eventType(const json& event) {
    static const std::vector<std::pair<const char*, EventType>> kTypes = {
        {kHello, EventType::Hello},         {kLoaded, EventType::Loaded},
        {kApplied, EventType::Applied},     {kSamples, EventType::Samples},
        {kMetrics, EventType::Metrics},     {kBlockDone, EventType::BlockDone},
        {kWarning, EventType::Warning},     {kError, EventType::Error},
        {kBye, EventType::Bye}};
    const auto it = event.find("type");
    if (it == event.end() || !it->is_string()) return EventType::Unknown;
    const auto& type = it->get_ref<const std::string&>();
    for (const auto& [name, t] : kTypes)
        if (type == name) return t;
    return EventType::Unknown;
}

Hello helloFromJson(const json& j) {
    Hello e;
    e.pid = j.value("pid", e.pid);
    e.protocol = j.value("protocol", e.protocol);
    e.worker_version = j.value("worker_version", e.worker_version);
    e.environment = j.value("environment", json::object());
    return e;
}

Loaded loadedFromJson(const json& j) {
    Loaded e;
    e.load_ms = j.value("load_ms", e.load_ms);
    e.freeze_ms = j.value("freeze_ms", e.freeze_ms);
    e.optimize_ms = j.value("optimize_ms", e.optimize_ms);
    e.first_forward_ms = j.value("first_forward_ms", e.first_forward_ms);
    e.parameters = j.value("parameters", e.parameters);
    e.file_size_bytes = j.value("file_size_bytes", e.file_size_bytes);
    e.fields = withoutEnvelope(j);
    return e;
}

Applied appliedFromJson(const json& j) {
    return {withoutEnvelope(j)};
}

Metrics metricsFromJson(const json& j) {
    Metrics e;
    e.rss_bytes = j.value("rss_bytes", e.rss_bytes);
    e.peak_rss_bytes = j.value("peak_rss_bytes", e.peak_rss_bytes);
    e.tensor_bytes = j.value("tensor_bytes", e.tensor_bytes);
    e.tensor_peak_bytes = j.value("tensor_peak_bytes", e.tensor_peak_bytes);
    e.cpu_user_s = j.value("cpu_user_s", e.cpu_user_s);
    e.cpu_sys_s = j.value("cpu_sys_s", e.cpu_sys_s);
    e.ctx_voluntary = j.value("ctx_voluntary", e.ctx_voluntary);
    e.ctx_involuntary = j.value("ctx_involuntary", e.ctx_involuntary);
    e.migrations = j.value("migrations", e.migrations);
    e.minor_faults = j.value("minor_faults", e.minor_faults);
    e.major_faults = j.value("major_faults", e.major_faults);
    e.core_util_pct = j.value("core_util_pct", std::vector<double>{});
    e.raw = j;
    return e;
}

BlockDone blockDoneFromJson(const json& j) {
    BlockDone e;
    e.block = j.value("block", e.block);
    e.phase = j.value("phase", e.phase);
    e.iters = j.value("iters", e.iters);
    e.batch_size = j.value("batch_size", e.batch_size);
    e.wall_ms = j.value("wall_ms", e.wall_ms);
    if (j.contains("minor_faults")) e.minor_faults = j["minor_faults"].get<std::int64_t>();
    if (j.contains("major_faults")) e.major_faults = j["major_faults"].get<std::int64_t>();
    if (j.contains("cpu_ms")) e.cpu_ms = j["cpu_ms"].get<double>();
    if (j.contains("involuntary_switches")) e.involuntary_switches = j["involuntary_switches"].get<std::int64_t>();
    e.stopped = j.value("stopped", false);
    return e;
}

Warning warningFromJson(const json& j) {
    return {j.value("code", std::string()), j.value("message", std::string())};
}

Bye byeFromJson(const json& j) {
    Bye e;
    e.malformed_commands = j.value("malformed_commands", e.malformed_commands);
    e.sampler_ticks = j.value("sampler_ticks", e.sampler_ticks);
    e.sampler_cpu_s = j.value("sampler_cpu_s", e.sampler_cpu_s);
    e.peak_rss_bytes = j.value("peak_rss_bytes", e.peak_rss_bytes);
    return e;
}

std::optional<Event> decodeEvent(const json& j) {
    switch (eventType(j)) {
        case EventType::Hello: return helloFromJson(j);
        case EventType::Loaded: return loadedFromJson(j);
        case EventType::Applied: return appliedFromJson(j);
        case EventType::Samples: return samplesFromJson(j);
        case EventType::Metrics: return metricsFromJson(j);
        case EventType::BlockDone: return blockDoneFromJson(j);
        case EventType::Warning: return warningFromJson(j);
        case EventType::Error: return errorFromJson(j);
        case EventType::Bye: return byeFromJson(j);
        case EventType::Unknown: break;
    }
    return std::nullopt;
}

json toJson(const Hello& e) {
    json j = makeEvent(kHello);
    j["pid"] = e.pid;
    j["protocol"] = e.protocol;
    j["worker_version"] = e.worker_version;
    j["environment"] = e.environment;
    return j;
}

json toJson(const Loaded& e) {
    json j = makeEvent(kLoaded);
    j.update(e.fields);
    j["load_ms"] = e.load_ms;
    j["freeze_ms"] = e.freeze_ms;
    j["optimize_ms"] = e.optimize_ms;
    j["first_forward_ms"] = e.first_forward_ms;
    j["parameters"] = e.parameters;
    j["file_size_bytes"] = e.file_size_bytes;
    return j;
}

json toJson(const Applied& e) {
    json j = makeEvent(kApplied);
    j.update(e.fields);
    return j;
}

json toJson(const Metrics& e) {
    json j = e.raw.is_object() ? e.raw : makeEvent(kMetrics);
    j["v"] = kVersion;
    j["type"] = kMetrics;
    j["rss_bytes"] = e.rss_bytes;
    j["peak_rss_bytes"] = e.peak_rss_bytes;
    j["tensor_bytes"] = e.tensor_bytes;
    j["tensor_peak_bytes"] = e.tensor_peak_bytes;
    j["cpu_user_s"] = e.cpu_user_s;
    j["cpu_sys_s"] = e.cpu_sys_s;
    j["ctx_voluntary"] = e.ctx_voluntary;
    j["ctx_involuntary"] = e.ctx_involuntary;
    j["migrations"] = e.migrations;
    j["minor_faults"] = e.minor_faults;
    j["major_faults"] = e.major_faults;
    j["core_util_pct"] = e.core_util_pct;
    return j;
}

json toJson(const BlockDone& e) {
    json j = makeEvent(kBlockDone);
    j["block"] = e.block;
    j["phase"] = e.phase;
    j["iters"] = e.iters;
    j["batch_size"] = e.batch_size;
    j["wall_ms"] = e.wall_ms;
    put(j, "minor_faults", e.minor_faults);
    put(j, "major_faults", e.major_faults);
    put(j, "cpu_ms", e.cpu_ms);
    put(j, "involuntary_switches", e.involuntary_switches);
    if (e.stopped) j["stopped"] = true;
    return j;
}

json toJson(const Warning& e) {
    json j = makeEvent(kWarning);
    j["code"] = e.code;
    j["message"] = e.message;
    return j;
}

json toJson(const Bye& e) {
    json j = makeEvent(kBye);
    j["malformed_commands"] = e.malformed_commands;
    j["sampler_ticks"] = e.sampler_ticks;
    j["sampler_cpu_s"] = e.sampler_cpu_s;
    j["peak_rss_bytes"] = e.peak_rss_bytes;
    return j;
}

}  // namespace pitlane::protocol
