#pragma once
// Remote arms (issue 15), the runner's decisions about preparing the hosts, as pure functions:
// which hosts to prepare, and what each arm makes of its host's preparation. remote_arms.cpp
// runs the preparation (ssh, on a thread) between the two; tests/session check them with no ssh.
#include "pitlane/session/remote_launch.h"
#include "pitlane/spec/preset.h"

#include <string>
#include <vector>

namespace pitlane::session {

// The distinct hosts of the preset's arms, in the order of their first arm (a local arm's ""
// is none): each is prepared once.
std::vector<std::string> remoteHosts(const spec::Preset& preset);

// What one arm makes of the preparation of its host.
struct RemoteArmOutcome {
    enum Kind {
        Nothing,  // a local arm, or its host was not prepared
        Failed,   // the host failed: the arm fails with `code` and `text` (the prep's)
        Ready     // the host is ready: `text` is the info line for the arm's log
    } kind = Nothing;
    QString code, text;
};

// One outcome per arm of `preset`, in arm order, given the preparations of its hosts.
std::vector<RemoteArmOutcome> remoteArmOutcomes(const spec::Preset& preset, const std::vector<RemotePrep>& preps);

}  // namespace pitlane::session
