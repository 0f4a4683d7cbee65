// Remote arms (issue 15), the runner's part: every remote host of the preset is prepared once,
// before any worker starts — the worker there, the model in its cache (uploaded when missing),
// a scratch folder (remote_launch.h). The ssh round trips (and an upload) run on a thread of
// their own, never on the caller's (the window's UI thread); next() waits for them.
#include "pitlane/session/experiment_runner.h"

#include <QThread>

#include <atomic>

#include <algorithm>
#include <memory>

namespace pitlane::session {

namespace R = results;

bool ExperimentRunner::prepareRemoteHosts() {
    const auto& preset = result_.preset;
    std::vector<std::string> hosts;
    for (const auto& a : preset.arms)
        if (!a.host.empty() && std::find(hosts.begin(), hosts.end(), a.host) == hosts.end())
            hosts.push_back(a.host);
    if (hosts.empty()) return false;
    static int generation = 0;
    const int mine = ++generation == 0 ? ++generation : generation;
    preparing_ = mine;
    auto preps = std::make_shared<std::vector<RemotePrep>>();
    const QString worker = QString::fromStdString(preset.remote_worker);
    const QString model = QString::fromStdString(preset.model_path);
    const QString sha = QString::fromStdString(result_.model_sha256);
    prepCancelled_ = std::make_shared<std::atomic<bool>>(false);
    QThread* thread = QThread::create([hosts, preps, worker, model, sha, cancelled = prepCancelled_] {
        for (const auto& h : hosts) preps->push_back(prepareRemote(QString::fromStdString(h), worker, model, sha));
        // The run ended meanwhile (stopped, or the runner is gone): nobody will use these.
        if (*cancelled)
            for (const auto& p : *preps) cleanupRemote(p.host, p.scratch);
    });
    connect(thread, &QThread::finished, this, [this, mine, preps] {
        if (preparing_ != mine) {  // stopped meanwhile (or a new run): only clean up
            for (const auto& p : *preps) cleanupRemote(p.host, p.scratch);
            return;
        }
        preparing_ = 0;
        remoteHostsPrepared(*preps);
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
    return true;
}

void ExperimentRunner::remoteHostsPrepared(const std::vector<RemotePrep>& preps) {
    const auto& preset = result_.preset;
    for (const auto& prep : preps) remote_[prep.host.toStdString()] = prep;
    for (std::size_t i = 0; i < preset.arms.size(); ++i) {
        const std::string& host = preset.arms[i].host;
        if (host.empty() || !remote_.count(host)) continue;
        const RemotePrep& prep = remote_.at(host);
        if (!prep.error.isEmpty()) {
            failArm(int(i), R::kFailed, prep.code.toStdString(), prep.error.toStdString());
            continue;
        }
        emit logMessage(int(i), QStringLiteral("info"),
                        prep.uploaded
                            ? QStringLiteral("host %1: model uploaded to %2 (%3 bytes, sha256 checked) in %4 ms")
                                  .arg(prep.host, prep.modelPath)
                                  .arg(prep.uploadedBytes)
                                  .arg(prep.ms, 0, 'f', 0)
                            : QStringLiteral("host %1: model cached at %2 (sha256 checked)")
                                  .arg(prep.host, prep.modelPath));
    }
    if (stopping_) {
        finishIfDone();
        return;
    }
    next();
}

}  // namespace pitlane::session
