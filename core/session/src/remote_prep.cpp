// Remote arms: which hosts a run prepares and what each arm makes of its host's preparation
// (remote_prep.h).
#include "pitlane/session/remote_prep.h"

#include <algorithm>

namespace pitlane::session {

std::vector<std::string> remoteHosts(const spec::Preset& preset) {
    std::vector<std::string> hosts;
    for (const auto& a : preset.arms)
        if (!a.host.empty() && std::find(hosts.begin(), hosts.end(), a.host) == hosts.end())
            hosts.push_back(a.host);
    return hosts;
}

namespace {

RemoteArmOutcome outcomeOf(const RemotePrep& prep) {
    if (!prep.error.isEmpty()) return {RemoteArmOutcome::Failed, prep.code, prep.error};
    return {RemoteArmOutcome::Ready, {},
            prep.uploaded ? QStringLiteral("host %1: model uploaded to %2 (%3 bytes, sha256 checked) in %4 ms")
                                .arg(prep.host, prep.modelPath)
                                .arg(prep.uploadedBytes)
                                .arg(prep.ms, 0, 'f', 0)
                          : QStringLiteral("host %1: model cached at %2 (sha256 checked)")
                                .arg(prep.host, prep.modelPath)};
}

}  // namespace

std::vector<RemoteArmOutcome> remoteArmOutcomes(const spec::Preset& preset, const std::vector<RemotePrep>& preps) {
    std::vector<RemoteArmOutcome> outcomes(preset.arms.size());
    for (std::size_t i = 0; i < preset.arms.size(); ++i) {
        const std::string& host = preset.arms[i].host;
        if (host.empty()) continue;
        // The last preparation of the host counts (as when the runner stores them by host).
        const auto prep = std::find_if(preps.rbegin(), preps.rend(),
                                       [&](const RemotePrep& p) { return p.host.toStdString() == host; });
        if (prep != preps.rend()) outcomes[i] = outcomeOf(*prep);
    }
    return outcomes;
}

}  // namespace pitlane::session
