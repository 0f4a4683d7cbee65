// Remote arms (issue 15), the runner's part: every remote host of the preset is prepared once,
// before any worker starts — the worker there, the model in its cache (uploaded when missing),
// a scratch folder (remote_launch.h). The ssh round trips (and an upload) run on a thread of
// their own, never on the caller's (the window's UI thread); next() waits for them. Which hosts,
// and what each arm makes of its host's preparation, are remote_prep.h's pure functions.
#include "pitlane/session/experiment_runner.h"
#include "pitlane/session/remote_prep.h"

#include <QThread>

#include <atomic>
#include <memory>

namespace pitlane::session {

namespace R = results;

bool ExperimentRunner::prepareRemoteHosts() {
    const auto& preset = result_.preset;
    const std::vector<std::string> hosts = remoteHosts(preset);
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
    const auto outcomes = remoteArmOutcomes(preset, preps);
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const auto& o = outcomes[i];
        if (o.kind == RemoteArmOutcome::Failed)
            failArm(int(i), R::kFailed, o.code.toStdString(), o.text.toStdString());
        else if (o.kind == RemoteArmOutcome::Ready)
            emit logMessage(int(i), QStringLiteral("info"), o.text);
    }
    if (stopping_) {
        finishIfDone();
        return;
    }
    next();
}

}  // namespace pitlane::session
