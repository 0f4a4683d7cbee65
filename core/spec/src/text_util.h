#pragma once
// Small text helpers shared by the spec's validators (internal).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace pitlane::spec::detail {

// "a, b, c"
inline std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
    return out;
}

// What an error message echoes of something written in a file (a key, a value, a name): at most
// `max` bytes, cut at a UTF-8 boundary with "…", and control characters (C0, DEL, C1) written as
// \u escapes. A 10 MB key was echoed whole, and a name with escape codes or "\r" could rewrite
// the terminal (issue 28).
inline std::string shownView(std::string_view s, std::size_t max = 80) {
    std::string out;
    const std::size_t n = s.size() < max ? s.size() : max;
    std::size_t cut = n;
    if (n < s.size())
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    for (std::size_t i = 0; i < cut; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        const bool c1 = c == 0xC2 && i + 1 < cut && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                        static_cast<unsigned char>(s[i + 1]) <= 0x9F;
        if (c < 0x20 || c == 0x7F || c1) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c1 ? static_cast<unsigned char>(s[++i]) : c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (cut < s.size()) out += "\u2026";
    return out;
}

inline std::string shown(const std::string& s, std::size_t max = 80) { return shownView(s, max); }

// A JSON value as an error echoes it (its dump, shortened as above; invalid UTF-8 replaced).
inline std::string shown(const nlohmann::json& v, std::size_t max = 80) {
    if (v.is_string()) {
        // Only the head of a long string is dumped: a 10 MB value costs nothing to echo.
        const auto& s = v.get_ref<const std::string&>();
        if (s.size() > max + 8)
            return shownView(nlohmann::json(s.substr(0, max + 8)).dump(-1, ' ', false,
                                                                   nlohmann::json::error_handler_t::replace),
                         max);
    }
    return shownView(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max);
}

}  // namespace pitlane::spec::detail
