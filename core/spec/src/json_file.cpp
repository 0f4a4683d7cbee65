// Reading JSON files (presets, model sidecars, results) without ever throwing or aborting on a
// directory, FIFO, device, read error, or a key written twice in one object.
#include "pitlane/spec/preset.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace pitlane::spec {

namespace fs = std::filesystem;

bool readJsonFile(const std::string& path, json* out, std::string* why) {
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
        *why = "cannot open the file: it does not exist";
        return false;
    }
    if (fs::is_directory(status)) {
        *why = "is a directory, not a JSON file";
        return false;
    }
    if (!fs::is_regular_file(status)) {
        *why = "is not a regular file (a device, FIFO or socket), not a JSON file";
        return false;
    }
    std::ifstream f(path);
    if (!f) {
        *why = std::string("cannot open the file: ") + std::strerror(errno);
        return false;
    }
    // JSON allows a key twice and the parser keeps the last value: a second "model" would
    // silently run another model. Refused, naming the key.
    std::vector<std::set<std::string>> keys;
    std::string duplicate;
    auto noDuplicates = [&](int, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::object_start) {
            keys.emplace_back();
        } else if (event == json::parse_event_t::object_end) {
            if (!keys.empty()) keys.pop_back();
        } else if (event == json::parse_event_t::key && !keys.empty() &&
                   !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
            duplicate = parsed.get<std::string>();
        }
        return true;
    };
    try {
        *out = json::parse(f, noDuplicates);
        if (duplicate.empty()) return true;
        *why = "the key \"" + duplicate +
               "\" appears twice in one object (only one value can be meant; JSON parsers keep "
               "the last silently)";
        *out = json();
        return false;
    } catch (const json::parse_error& e) {
        *why = std::string("not valid JSON: ") + e.what();
    } catch (const std::exception& e) {  // a read error (std::ios_base::failure)
        *why = std::string("cannot read the file: ") + e.what();
    }
    return false;
}

json readModelSidecar(const std::string& modelPath) {
    json j;
    std::string why;
    return readJsonFile(fs::path(modelPath).replace_extension(".json").string(), &j, &why) ? j
                                                                                           : json();
}

}  // namespace pitlane::spec
