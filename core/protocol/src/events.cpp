// Typed protocol events (events.h): each event's codec is its field table (record.h).
#include "pitlane/protocol/events.h"

namespace pitlane::protocol {

namespace {

json withoutEnvelope(const json& j) {
    json out = j;
    out.erase("v");
    out.erase("type");
    return out;
}

template <class R>
R decoded(const json& j) {
    return record::fromJson<R>(j);
}

template <class R>
json encoded(const char* type, const R& e) {
    json j = makeEvent(type);
    record::write(j, e);
    return j;
}

}  // namespace

EventType eventType(const json& event) {
    static const std::vector<std::pair<const char*, EventType>> kTypes = {
        {kHello, EventType::Hello},         {kLoaded, EventType::Loaded},
        {kApplied, EventType::Applied},     {kSamples, EventType::Samples},
        {kMetrics, EventType::Metrics},     {kBlockDone, EventType::BlockDone},
        {kServeBatches, EventType::ServeBatches}, {kProfile, EventType::Profile},
        {kWarning, EventType::Warning},     {kError, EventType::Error},
        {kBye, EventType::Bye}};
    const auto it = event.find("type");
    if (it == event.end() || !it->is_string()) return EventType::Unknown;
    const auto& type = it->get_ref<const std::string&>();
    for (const auto& [name, t] : kTypes)
        if (type == name) return t;
    return EventType::Unknown;
}

Hello helloFromJson(const json& j) { return decoded<Hello>(j); }

Loaded loadedFromJson(const json& j) {
    Loaded e = decoded<Loaded>(j);
    e.fields = withoutEnvelope(j);
    return e;
}

Applied appliedFromJson(const json& j) { return appliedFromFields(withoutEnvelope(j)); }

Metrics metricsFromJson(const json& j) {
    Metrics e = decoded<Metrics>(j);
    e.raw = j;
    return e;
}

BlockDone blockDoneFromJson(const json& j) {
    BlockDone e = decoded<BlockDone>(j);
    e.stopped = j.value("stopped", false);
    return e;
}

ServeBatches serveBatchesFromJson(const json& j) { return decoded<ServeBatches>(j); }

Profile profileFromJson(const json& j) { return {withoutEnvelope(j)}; }

Warning warningFromJson(const json& j) { return decoded<Warning>(j); }

Bye byeFromJson(const json& j) { return decoded<Bye>(j); }

Samples samplesFromJson(const json& j) {
    // block, phase and the latencies are required: a samples event without them is malformed.
    for (const char* key : {"block", "phase", "latency_ns"}) (void)j.at(key);
    return decoded<Samples>(j);
}

Error errorFromJson(const json& j) {
    Error e;
    e.code = j.value("code", std::string(code::kInternal));
    e.message = j.value("message", std::string());
    if (j.contains("detail")) e.detail = j["detail"];
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
        case EventType::ServeBatches: return serveBatchesFromJson(j);
        case EventType::Profile: return profileFromJson(j);
        case EventType::Warning: return warningFromJson(j);
        case EventType::Error: return errorFromJson(j);
        case EventType::Bye: return byeFromJson(j);
        case EventType::Unknown: break;
    }
    return std::nullopt;
}

json toJson(const Hello& e) { return encoded(kHello, e); }

json toJson(const Loaded& e) {
    json j = makeEvent(kLoaded);
    j.update(e.fields);
    record::write(j, e);
    return j;
}

json toJson(const Applied& e) {
    json j = makeEvent(kApplied);
    j.update(appliedFields(e));
    return j;
}

json toJson(const Metrics& e) {
    json j = e.raw.is_object() ? e.raw : makeEvent(kMetrics);
    j["v"] = kVersion;
    j["type"] = kMetrics;
    record::write(j, e);
    return j;
}

json toJson(const BlockDone& e) {
    json j = encoded(kBlockDone, e);
    if (e.stopped) j["stopped"] = true;
    return j;
}

json toJson(const ServeBatches& e) { return encoded(kServeBatches, e); }

json toJson(const Profile& e) {
    json j = makeEvent(kProfile);
    j.update(e.fields);
    return j;
}

json toJson(const Warning& e) { return encoded(kWarning, e); }

json toJson(const Bye& e) { return encoded(kBye, e); }

json toJson(const Samples& s) { return encoded(kSamples, s); }

json toJson(const Error& e) {
    json j = makeEvent(kError);
    j["code"] = e.code;
    j["message"] = e.message;
    if (!e.detail.is_null()) j["detail"] = e.detail;
    return j;
}

}  // namespace pitlane::protocol
