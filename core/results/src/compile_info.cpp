#include "pitlane/results/compile_info.h"

#include <cstdio>

namespace pitlane::results {

using json = nlohmann::json;

json compileJson(const CompileInfo& c) {
    json j = {{"seconds", c.seconds}, {"cache_hit", c.cache_hit}, {"options", c.options},
              {"torch", c.torch}, {"package", c.package}, {"target", c.target}};
    if (c.compiled_seconds > 0) j["compiled_seconds"] = c.compiled_seconds;
    return j;
}

std::optional<CompileInfo> compileFromJson(const json& j) {
    if (!j.is_object()) return std::nullopt;
    CompileInfo c;
    const auto number = [&](const char* key) {
        return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
    };
    const auto text = [&](const char* key) {
        return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    c.seconds = number("seconds");
    c.compiled_seconds = number("compiled_seconds");
    c.cache_hit = j.contains("cache_hit") && j["cache_hit"].is_boolean() && j["cache_hit"].get<bool>();
    if (j.contains("options") && j["options"].is_object()) {
        try {
            c.options = j["options"].get<spec::InductorOptions>();
        } catch (const json::exception&) {
            c.options = {};  // a stored value of the wrong type: the defaults
        }
    }
    c.torch = text("torch");
    c.package = text("package");
    c.target = text("target");
    return c;
}

namespace {

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, s < 10 ? "%.2f s" : "%.1f s", s);
    return buf;
}

// "freezing, max_autotune, dynamic threads" (what is on), or "default options".
std::string optionWords(const spec::InductorOptions& o) {
    std::string words;
    const auto add = [&](bool on, const char* w) {
        if (on) words += (words.empty() ? "" : ", ") + std::string(w);
    };
    add(o.freezing, "freezing");
    add(o.max_autotune, "max_autotune");
    add(o.dynamic_threads, "dynamic threads");
    return words.empty() ? "no Inductor option on" : words;
}

}  // namespace

std::string compileLine(const CompileInfo& c) {
    const std::string torch = c.torch.empty() ? std::string() : "; torch " + c.torch;
    if (c.cache_hit)
        return "AOTInductor package from the cache (" +
               (c.compiled_seconds > 0 ? "compiled in " + seconds(c.compiled_seconds) + "; " : std::string()) +
               optionWords(c.options) + torch + ")";
    return "compiled in " + seconds(c.seconds) + " (AOTInductor, " + optionWords(c.options) + torch + ")";
}

}  // namespace pitlane::results
