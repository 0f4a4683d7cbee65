// The checks of every string a preset holds (preset_strings.h).
#include "preset_strings.h"

#include "text_util.h"

#include <string>
#include <vector>

namespace pitlane::spec::detail {

namespace {

using json = nlohmann::json;

// Every string of a preset, wherever it is (issue 28: a NUL cut "tiny_add.pt\0.evil" short, arm
// names with newlines or escape codes reached the terminal and the reports, 10 MB names were
// echoed on every progress line). No NUL or control character (C0, DEL, C1) anywhere, but tabs
// and newlines in free text (description, lesson); a length limit for each kind.
struct StringRule {
    const char* what;
    std::size_t max;   // characters (UTF-8 code points)
    bool multiline;    // tabs and newlines allowed
};
constexpr StringRule kNameRule{"a name", 128, false};      // shown in tables, plots, progress lines
constexpr StringRule kPathRule{"a file path", 4096, false};  // PATH_MAX
constexpr StringRule kTextRule{"free text", 65536, true};
constexpr StringRule kValueRule{"a value", 1024, false};     // knob values, dtypes, ... (choices)

struct PathStep {
    const std::string* key;  // nullptr in an array
    std::size_t index;
};

const StringRule& ruleFor(const std::vector<PathStep>& path) {
    auto key = [&](std::size_t i, const char* k) { return i < path.size() && path[i].key && *path[i].key == k; };
    auto index = [&](std::size_t i) { return i < path.size() && !path[i].key; };
    if (path.size() == 1) {
        if (key(0, "name")) return kNameRule;
        if (key(0, "model") || key(0, "remote_worker")) return kPathRule;
        if (key(0, "description")) return kTextRule;
    }
    if (key(0, "lesson")) return kTextRule;
    if (path.size() == 3 && key(0, "arms") && index(1)) {
        if (key(2, "name")) return kNameRule;
        if (key(2, "model")) return kPathRule;
    }
    if (path.size() == 3 && key(0, "sweep") && index(2)) {
        if (key(1, "models")) return kPathRule;
        if (key(1, "arms")) return kNameRule;
    }
    return kValueRule;
}

std::string fieldOf(const std::vector<PathStep>& path) {
    std::string f;
    for (const auto& step : path) {
        if (!step.key) {
            f += "[" + std::to_string(step.index) + "]";
        } else {
            if (!f.empty()) f += ".";
            f += step.key->empty() ? std::string("\"\"") : detail::shown(*step.key);
        }
    }
    return f;
}

// Why `s` breaks `rule` ("" when it does not).
std::string stringProblem(const std::string& s, const StringRule& rule) {
    std::size_t chars = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if ((c & 0xC0) != 0x80) ++chars;
        const bool c1 = c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                        static_cast<unsigned char>(s[i + 1]) <= 0x9F;
        if (c == 0)
            return std::string("contains a NUL character (at byte ") + std::to_string(i) +
                   "): nothing after it would be seen, " + rule.what + " cannot contain one";
        if ((c < 0x20 && !(rule.multiline && (c == '\n' || c == '\t'))) || c == 0x7F || c1) {
            char code[16];
            std::snprintf(code, sizeof code, "U+%04X", c1 ? static_cast<unsigned char>(s[i + 1]) : c);
            return std::string("contains a control character (") + code + " at byte " + std::to_string(i) +
                   "): " + rule.what + " is " + (rule.multiline ? "text without control characters "
                                                                   "but tabs and newlines"
                                                                 : "one line of printable text");
        }
    }
    if (chars > rule.max)
        return "is " + std::to_string(chars) + " characters long; " + rule.what + " has at most " +
               std::to_string(rule.max);
    return {};
}

void checkStringsAt(const json& v, std::vector<PathStep>& path, Errors& errs, std::set<std::string>& refused) {
    if (v.is_string()) {
        const std::string why = stringProblem(v.get_ref<const std::string&>(), ruleFor(path));
        if (!why.empty()) {
            const std::string f = fieldOf(path);
            errs.add(f, why);
            refused.insert(f);
        }
    } else if (v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it) {
            path.push_back({&it.key(), 0});
            checkStringsAt(it.value(), path, errs, refused);
            path.pop_back();
        }
    } else if (v.is_array()) {
        for (std::size_t i = 0; i < v.size(); ++i) {
            path.push_back({nullptr, i});
            checkStringsAt(v[i], path, errs, refused);
            path.pop_back();
        }
    }
}

// Recursion at most kMaxPresetDepth deep (checked before).
}  // namespace

void checkStrings(const json& j, Errors& errs, std::set<std::string>& refused) {
    std::vector<PathStep> path;
    checkStringsAt(j, path, errs, refused);
}

}  // namespace pitlane::spec::detail
