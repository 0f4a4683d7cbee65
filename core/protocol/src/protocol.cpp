#include "pitlane/protocol/protocol.h"
#include "pitlane/protocol/json_limits.h"

namespace pitlane::protocol {

json makeEvent(const char* type) { return json{{"v", kVersion}, {"type", type}}; }
json makeCommand(const char* cmd) { return json{{"v", kVersion}, {"cmd", cmd}}; }

std::string encode(const json& message) {
    // Replace invalid UTF-8 instead of throwing: a model's error text can carry any bytes.
    return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<json> decode(const std::string& line, Kind kind, std::string* error) {
    auto fail = [&](std::string why) -> std::optional<json> {
        if (error) *error = std::move(why);
        return std::nullopt;
    };
    // Depth-bounded: a line nested 300 000 deep must not overflow the stack when the event is
    // copied (issue 28).
    JsonFailure why;
    json j = parseJsonBounded(line, &why);
    if (j.is_discarded())
        return fail(why.kind == JsonFailure::Depth ? why.reason : std::string("not valid JSON"));
    if (!j.is_object()) return fail("not a JSON object");
    const char* key = kind == Kind::Event ? "type" : "cmd";
    if (!j.contains(key) || !j[key].is_string())
        return fail(std::string("missing string field \"") + key + "\"");
    if (!j.contains("v") || !j["v"].is_number_integer())
        return fail("missing protocol version \"v\"");
    if (j["v"].get<int>() != kVersion)
        return fail("protocol version " + j["v"].dump() + " (this build speaks " +
                    std::to_string(kVersion) + ")");
    return j;
}

json toJson(const Samples& s) {
    json j = makeEvent(kSamples);
    j["block"] = s.block;
    j["phase"] = s.phase;
    j["first_iter"] = s.first_iter;
    j["batch_size"] = s.batch_size;
    j["latency_ns"] = s.latency_ns;
    return j;
}

Samples samplesFromJson(const json& j) {
    Samples s;
    s.block = j.at("block").get<int>();
    s.phase = j.at("phase").get<std::string>();
    s.first_iter = j.value("first_iter", 0);
    s.batch_size = j.value("batch_size", 1);
    s.latency_ns = j.at("latency_ns").get<std::vector<std::int64_t>>();
    return s;
}

json toJson(const Error& e) {
    json j = makeEvent(kError);
    j["code"] = e.code;
    j["message"] = e.message;
    if (!e.detail.is_null()) j["detail"] = e.detail;
    return j;
}

Error errorFromJson(const json& j) {
    Error e;
    e.code = j.value("code", std::string(code::kInternal));
    e.message = j.value("message", std::string());
    if (j.contains("detail")) e.detail = j["detail"];
    return e;
}

std::vector<std::string> LineBuffer::feed(const char* data, std::size_t n) {
    std::vector<std::string> lines;
    pending_.append(data, n);
    std::size_t start = 0;
    for (;;) {
        const auto nl = pending_.find('\n', start);
        if (nl == std::string::npos) break;
        std::string line = pending_.substr(start, nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) lines.push_back(std::move(line));
        start = nl + 1;
    }
    pending_.erase(0, start);
    return lines;
}

}  // namespace pitlane::protocol
