// Reading JSON files (presets, model sidecars, results) without ever throwing or aborting on a
// directory, FIFO, device, read error, a key written twice in one object, or nesting deep enough
// to overflow the stack (issue 28: 60 000 nested objects crashed the CLI and the window).
#include "json_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace pitlane::spec {

namespace fs = std::filesystem;

namespace detail {

std::string notARegularFile(const std::string& path, const char* what) {
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {
        // ELOOP: a link to a link to ... itself was reported as "does not exist" (issue 28).
        if (ec == std::errc::too_many_symbolic_link_levels)
            return "cannot open the file: a symlink loop (too many levels of symbolic links)";
        return "cannot open the file: " + ec.message();
    }
    if (ec || !fs::exists(status)) {
        std::error_code lec;
        if (fs::is_symlink(fs::symlink_status(path, lec)))
            return "cannot open the file: it is a symbolic link to a file that does not exist";
        return "cannot open the file: it does not exist";
    }
    if (fs::is_directory(status)) return std::string("is a directory, not ") + what;
    if (!fs::is_regular_file(status))
        return std::string("is not a regular file (a device, FIFO or socket), not ") + what;
    return {};
}

bool readJsonFileBounded(const std::string& path, json* out, JsonFileError* error,
                         protocol::JsonLimits limits) {
    *out = json();
    if (auto why = notARegularFile(path, "a JSON file"); !why.empty()) {
        *error = {"", why};
        return false;
    }
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        *error = {"", std::string("cannot open the file: ") + std::strerror(errno)};
        return false;
    }
    limits.refuse_duplicate_keys = true;
    json parsed;
    protocol::BoundedJsonBuilder builder(parsed, limits);
    try {
        if (json::sax_parse(f, &builder)) {
            *out = std::move(parsed);
            return true;
        }
        const auto& failure = builder.failure();
        *error = {failure.field, failure.reason};
    } catch (const std::exception& e) {  // a read error (std::ios_base::failure)
        *error = {"", std::string("cannot read the file: ") + e.what()};
    }
    return false;
}

int jsonDepth(const json& j, int stopAbove) {
    int deepest = 0;
    std::vector<std::pair<const json*, int>> todo{{&j, 1}};
    while (!todo.empty()) {
        const auto [v, depth] = todo.back();
        todo.pop_back();
        if (!v->is_structured()) continue;
        deepest = std::max(deepest, depth);
        if (deepest > stopAbove) return deepest;
        for (const auto& child : *v) todo.emplace_back(&child, depth + 1);
    }
    return deepest;
}

}  // namespace detail

bool readJsonFile(const std::string& path, json* out, std::string* why) {
    detail::JsonFileError error;
    if (detail::readJsonFileBounded(path, out, &error, {})) return true;
    *why = error.field.empty() ? error.reason : error.field + ": " + error.reason;
    return false;
}

json readModelSidecar(const std::string& modelPath) {
    json j;
    std::string why;
    return readJsonFile(fs::path(modelPath).replace_extension(".json").string(), &j, &why) ? j
                                                                                           : json();
}

}  // namespace pitlane::spec
