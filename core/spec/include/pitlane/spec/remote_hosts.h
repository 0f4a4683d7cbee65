#pragma once
// Remote arms (issue 15): an arm, or the whole preset, may name a `host` — an ssh destination
// ("user@host" or an alias of the user's ssh config) where its workers run; `remote_worker` is
// the worker binary there. Arms on different hosts are refused unless `run.compare_hosts` is
// true (different machines are not an A/B of knobs). No Qt, no torch.
#include "pitlane/spec/preset.h"

#include <string>
#include <vector>

namespace pitlane::spec {

// Why `host` is not an ssh destination we pass to ssh ("" when it is one): empty, too long,
// starting with '-' (it would be read as an option), or a character other than letters, digits
// and . _ - @ : [ ] %.
std::string hostProblem(const std::string& host);
// Why `path` cannot be the remote worker ("" when fine): a bare name (looked up on the remote
// PATH) or an absolute path, without whitespace, quotes or shell metacharacters.
std::string remoteWorkerProblem(const std::string& path);

// Reads the preset's `host`, `remote_worker`, `run.compare_hosts` and each arm's `host` from `j`
// into `p` (whose arms are parsed already, in the order of j["arms"]); errors are appended.
void parseRemote(const json& j, Preset& p, std::vector<SpecError>& errs);

// "this machine" for "", else the host as written.
std::string hostLabel(const std::string& host);

}  // namespace pitlane::spec
