// Remote arms: the `host` fields of a preset and their validation (remote_hosts.h).
#include "pitlane/spec/remote_hosts.h"
#include "text_util.h"

#include <map>

namespace pitlane::spec {

std::string hostProblem(const std::string& host) {
    if (host.empty()) return "expected an ssh destination (user@host or an ssh config alias), got \"\"";
    if (host.size() > 255) return "an ssh destination of at most 255 characters";
    if (host.front() == '-')
        return "\"" + detail::shown(host) + "\" starts with '-': ssh would read it as an option";
    for (const char c : host) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '.' || c == '_' || c == '-' || c == '@' || c == ':' || c == '[' ||
                        c == ']' || c == '%';
        if (!ok)
            return "\"" + detail::shown(host) + "\" is not an ssh destination (user@host or an ssh config alias): "
                   "character '" + detail::shown(std::string(1, c)) + "' is not allowed";
    }
    return {};
}

std::string remoteWorkerProblem(const std::string& path) {
    if (path.empty()) return "expected the worker's name on the remote PATH or an absolute path, got \"\"";
    if (path.size() > 1024) return "a path of at most 1024 characters";
    if (path.find('/') != std::string::npos && path.front() != '/')
        return "\"" + detail::shown(path) + "\" is a relative path: give a name looked up on the remote PATH "
               "(pitlane-worker) or an absolute path";
    for (const char c : path) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '.' || c == '_' || c == '-' || c == '/' || c == '+' || c == ',';
        if (!ok)
            return "\"" + detail::shown(path) + "\": character '" + detail::shown(std::string(1, c)) +
                   "' is not allowed in the remote worker's path (no whitespace, quotes or shell "
                   "metacharacters)";
    }
    return {};
}

std::string hostLabel(const std::string& host) { return host.empty() ? "this machine" : host; }

namespace {

// A host field: a string that passes hostProblem; `out` unchanged otherwise.
bool readHost(const json& v, const std::string& where, const std::string& field, std::string& out,
              std::vector<SpecError>& errs) {
    if (!v.is_string()) {
        errs.emplace_back(where, field, "expected a string (user@host or an ssh config alias), got " + detail::shown(v));
        return false;
    }
    const std::string h = v.get<std::string>();
    if (const std::string why = hostProblem(h); !why.empty()) {
        errs.emplace_back(where, field, why);
        return false;
    }
    out = h;
    return true;
}

}  // namespace

void parseRemote(const json& j, Preset& p, std::vector<SpecError>& errs) {
    const std::string where = p.file.empty() ? "<preset>" : p.file;
    if (!j.is_object()) return;
    if (j.contains("host")) readHost(j["host"], where, "host", p.host, errs);
    if (j.contains("remote_worker")) {
        const auto& v = j["remote_worker"];
        if (!v.is_string())
            errs.emplace_back(where, "remote_worker", "expected a string (a name on the remote PATH or an absolute path)");
        else if (const std::string why = remoteWorkerProblem(v.get<std::string>()); !why.empty())
            errs.emplace_back(where, "remote_worker", why);
        else
            p.remote_worker = v.get<std::string>();
    }
    bool compareOk = true;
    if (j.contains("run") && j["run"].is_object() && j["run"].contains("compare_hosts")) {
        const auto& v = j["run"]["compare_hosts"];
        if (v.is_boolean()) p.run.compare_hosts = v.get<bool>();
        else {
            errs.emplace_back(where, "run.compare_hosts", "expected true or false, got " + detail::shown(v));
            compareOk = false;
        }
    }
    const json& arms = j.contains("arms") && j["arms"].is_array() ? j["arms"] : json::array();
    bool hostsOk = true;
    for (std::size_t i = 0; i < p.arms.size() && i < arms.size(); ++i) {
        auto& arm = p.arms[i];
        arm.host = p.host;
        if (arms[i].is_object() && arms[i].contains("host")) {
            arm.hostWritten = true;
            if (!readHost(arms[i]["host"], where, "arms[" + std::to_string(i) + "].host", arm.host, errs))
                hostsOk = false;
        }
    }
    if (!hostsOk || !compareOk || p.run.compare_hosts || p.arms.empty()) return;
    // Arms interleaved across machines measure the machines, not the knobs: refused unless the
    // preset asks for a host comparison.
    std::map<std::string, std::vector<std::string>> byHost;
    for (const auto& a : p.arms) byHost[a.host].push_back(a.name);
    if (byHost.size() < 2) return;
    std::string list;
    for (const auto& [host, names] : byHost) {
        if (!list.empty()) list += "; ";
        list += hostLabel(host) + ": ";
        for (std::size_t k = 0; k < names.size(); ++k) list += (k ? ", " : "") + names[k];
    }
    for (std::size_t i = 0; i < p.arms.size(); ++i)
        if (p.arms[i].host != p.arms.front().host) {
            errs.emplace_back(where, "arms[" + std::to_string(i) + "].host",
                              "the arms run on different machines (" + list +
                                  "): different machines are not an A/B of knobs; set "
                                  "run.compare_hosts to true to compare the hosts themselves");
            break;
        }
}

}  // namespace pitlane::spec
