// The input spec as people type it (the window's Input spec field, `pitlane-cli run MODEL.pt
// --input ...`): "3x224x224", "[3, 224, 224]:float32", "Nx3x64x64", "128 int64; 128 int64", or
// the preset's JSON list as it is. Turned into the preset's "input" JSON; parsePreset judges it
// and names what is wrong.
#include "pitlane/spec/model_preset.h"
#include "pitlane/protocol/json_limits.h"

#include <regex>

namespace pitlane::spec {

namespace {
std::string trimmed(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}
}  // namespace

nlohmann::json parseInputText(const std::string& text) {
    using json = nlohmann::json;
    std::string t = trimmed(text);
    if (t.empty()) return nullptr;
    // The preset's own JSON ([{"shape": ...}, ...]) as it is.
    if (t.front() == '[' && trimmed(t.substr(1)).rfind('{', 0) == 0) {
        const json j = protocol::parseJsonBounded(t);  // depth-bounded: text a user typed
        return j.is_discarded() ? json(t) : j;         // parsePreset says what it expected
    }
    // "×" (U+00D7) reads as "x".
    for (std::size_t p; (p = t.find("\xC3\x97")) != std::string::npos;) t.replace(p, 2, "x");
    // One input per ';': a shape ("3x64x64", "3,64,64" or "[3, 64, 64]") and an optional dtype
    // after a space or a colon ("3x64x64 float32", "[3,64,64]:float32").
    static const std::regex withDtype(R"(^(.*?)(?:\s*[:\s]\s*([A-Za-z][A-Za-z0-9_]*))?$)");
    static const std::regex separators(R"([x,\s]+)");
    json inputs = json::array();
    std::size_t start = 0;
    while (start <= t.size()) {
        const auto end = std::min(t.find(';', start), t.size());
        std::string part = trimmed(t.substr(start, end - start));
        start = end + 1;
        if (part.empty()) continue;
        std::string dtype;
        std::smatch m;
        // A value range for integer ids at the end: "16:int64[0,50)" (low included, high not).
        static const std::regex range(R"(^(.*?)\s*\[\s*(-?\d{1,18})\s*,\s*(-?\d{1,18})\s*\)$)");
        json low, high;
        if (std::regex_match(part, m, range)) {
            low = std::stoll(m[2].str());
            high = std::stoll(m[3].str());
            part = trimmed(m[1].str());
        }
        // "N" alone after the shape is no dtype ("3x64xN" is refused by the shape's check).
        if (std::regex_match(part, m, withDtype) && m[2].matched && m[2].str() != "N") {
            dtype = m[2].str();
            part = trimmed(m[1].str());
        }
        if (part.size() >= 2 && part.front() == '[' && part.back() == ']')
            part = trimmed(part.substr(1, part.size() - 2));
        if (part.empty()) continue;
        json shape = json::array();
        std::sregex_token_iterator it(part.begin(), part.end(), separators, -1), done;
        for (; it != done; ++it) {
            const std::string d = it->str();
            if (d.empty()) continue;
            std::size_t used = 0;
            long long v = 0;
            try {
                v = std::stoll(d, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used == d.size())
                shape.push_back(v);
            else
                shape.push_back(d);  // "N", or something parsePreset names
        }
        json in = {{"shape", shape}};
        if (!dtype.empty()) in["dtype"] = dtype;
        if (!low.is_null()) in["low"] = low, in["high"] = high;
        inputs.push_back(in);
        if (end == t.size()) break;
    }
    return inputs;
}

}  // namespace pitlane::spec
