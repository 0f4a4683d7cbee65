#include "pitlane/protocol/protocol.h"
#include "pitlane/protocol/json_limits.h"

#include <algorithm>
#include <cstring>

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

// Samples and Error: events.cpp, with the other events.

std::vector<LineBuffer::Line> LineBuffer::feedLines(const char* data, std::size_t n) {
    std::vector<Line> lines;
    const char* end = data + n;
    while (data < end) {
        const char* nl = static_cast<const char*>(std::memchr(data, '\n', std::size_t(end - data)));
        const std::size_t len = std::size_t((nl ? nl : end) - data);
        const std::size_t room = pending_.size() < max_ ? max_ - pending_.size() : 0;
        const std::size_t take = std::min(len, room);
        pending_.append(data, take);
        cut_ += len - take;
        if (!nl) break;
        Line line{std::move(pending_), cut_};
        pending_.clear();
        cut_ = 0;
        if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
        if (!line.text.empty() || line.cut) lines.push_back(std::move(line));
        data = nl + 1;
    }
    return lines;
}

std::vector<std::string> LineBuffer::feed(const char* data, std::size_t n) {
    std::vector<std::string> lines;
    for (auto& l : feedLines(data, n)) {
        if (l.cut) l.text += " \u2026 [" + std::to_string(l.cut) + " bytes cut]";
        lines.push_back(std::move(l.text));
    }
    return lines;
}

std::string printable(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = byte(i);
        if (c < 0x80) {
            out.push_back((c < 0x20 && c != '\t') || c == 0x7f ? '?' : char(c));
            ++i;
            continue;
        }
        // A UTF-8 sequence: kept when well formed and not a C1 control; else one '?' per byte.
        const std::size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        bool ok = len > 0 && i + len <= text.size();
        for (std::size_t k = 1; ok && k < len; ++k) ok = (byte(i + k) & 0xc0) == 0x80;
        if (ok && len == 2 && c == 0xc2 && byte(i + 1) <= 0x9f) ok = false;  // U+0080-U+009F
        if (!ok) {
            out.push_back('?');
            ++i;
            continue;
        }
        out.append(text, i, len);
        i += len;
    }
    return out;
}

}  // namespace pitlane::protocol
