// model_probe.h: one worker per arm, configure (load + knobs + one forward), quit.
#include "pitlane/session/model_probe.h"
#include "pitlane/session/paths.h"

#include "pitlane/session/allocator.h"
#include "pitlane/session/sandbox_launch.h"
#include "pitlane/session/worker_process.h"
#include "pitlane/protocol/events.h"
#include "pitlane/spec/arm_model_check.h"

#include <QDir>
#include <QEventLoop>
#include <QTemporaryDir>
#include <QTimer>

namespace pitlane::session {

using json = nlohmann::json;

namespace {

// The worker's answer to the probe: hello is answered with configure (one forward), loaded is
// kept, applied or an error ends it (quit). True once it has answered.
bool onProbeEvent(const json& ev, const spec::Preset& p, const spec::ArmSpec& arm, WorkerProcess& worker,
                  bool& helloSeen, bool answered, ArmProbe& out) {
    const auto type = protocol::eventType(ev);
    if (type == protocol::EventType::Hello && !helloSeen) {
        helloSeen = true;
        json cmd = protocol::makeCommand(protocol::kConfigure);
        cmd["arm"] = armConfigure(p, std::size_t(&arm - p.arms.data()));
        cmd["arm"]["worker_count"] = 1;
        worker.send(cmd);
    } else if (type == protocol::EventType::Loaded) {
        out.loaded = ev;
    } else if (!answered && (type == protocol::EventType::Applied || type == protocol::EventType::Error)) {
        out.ok = type == protocol::EventType::Applied;
        if (!out.ok) {
            out.code = ev.value("code", "error");
            out.message = ev.value("message", "");
        }
        worker.send(protocol::makeCommand(protocol::kQuit));
        return true;
    }
    return answered;
}

// The worker ended before it answered: how, and its last stderr line.
void exitedWhileLoading(const WorkerProcess& worker, int code, bool crashed, ArmProbe& out) {
    out.code = crashed ? "crashed" : "worker_exited";
    const QStringList tail = worker.stderrTail();
    out.message = std::string(crashed ? "the worker died by signal " : "the worker exited with code ") +
                  std::to_string(code) + " while loading the model" +
                  (tail.isEmpty() ? std::string() : "; last stderr: " + tail.last().toStdString());
}

ArmProbe probeOne(const spec::Preset& p, const spec::ArmSpec& arm, const QString& workerPath, int timeoutMs,
                  const std::atomic<bool>* cancel) {
    ArmProbe out;
    out.arm = arm.name;
    if (!arm.host.empty()) {
        out.skipped = "runs on " + arm.host + ": its model is loaded there when the run starts";
        return out;
    }
    const AllocatorLaunch launch = allocatorLaunch(arm.knobs.allocator);
    if (!launch.error.isEmpty()) {
        out.code = "bad_knob";
        out.message = launch.error.toStdString();
        return out;
    }
    QTemporaryDir scratch(scratchTemplate(QStringLiteral("validate")));
    const QString model = QString::fromStdString(arm.model_path.empty() ? p.model_path : arm.model_path);
    WorkerProcess worker(workerPath, sandboxArguments(arm.knobs, scratch.path(), {model}, memoryBudget(1)));
    QProcessEnvironment env = withAllocator(QProcessEnvironment::systemEnvironment(), launch);
    if (preloadsTorchModule(arm)) env.insert(QStringLiteral("PITLANE_WORKER_CUDA"), QStringLiteral("preload"));
    worker.setEnvironment(env);
    QEventLoop loop;
    QTimer timer;
    timer.setSingleShot(true);
    bool helloSeen = false, answered = false, ended = false;
    QObject::connect(&worker, &WorkerProcess::eventReceived, &loop, [&](const json& ev) {
        answered = onProbeEvent(ev, p, arm, worker, helloSeen, answered, out);
    });
    QObject::connect(&worker, &WorkerProcess::exited, &loop, [&](int code, bool crashed) {
        ended = true;
        if (!answered) exitedWhileLoading(worker, code, crashed, out);
        loop.quit();
    });
    QObject::connect(&worker, &WorkerProcess::startFailed, &loop, [&](const QString& why) {
        ended = true;
        out.code = "worker_missing";
        out.message = why.toStdString();
        loop.quit();
    });
    QObject::connect(&timer, &QTimer::timeout, &loop, [&] {
        if (!answered) {
            out.code = "timeout";
            out.message = "the worker did not finish loading the model and one forward in " +
                          std::to_string(timeoutMs / 1000) + " s";
        }
        worker.kill();
        loop.quit();
    });
    timer.start(timeoutMs);
    QTimer poll;
    if (cancel) {
        QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
            if (!cancel->load()) return;
            out.code = "cancelled";
            out.message = "the check was stopped";
            answered = true;
            worker.kill();
            loop.quit();
        });
        poll.start(100);
    }
    worker.start();
    if (!ended) loop.exec();
    if (worker.isRunning()) worker.kill();
    return out;
}

}  // namespace

json armConfigure(const spec::Preset& p, std::size_t arm) {
    const auto& a = p.arms.at(arm);
    return {{"name", a.name},
            {"model_path", a.model_path.empty() ? p.model_path : a.model_path},
            {"input", spec::inputsToJson(a.input.empty() ? p.input : a.input)},
            {"knobs", spec::knobsToJson(a.knobs)},
            {"seed", p.run.seed}};
}

std::vector<ArmProbe> probeArms(const spec::Preset& preset, const QString& workerPath, int timeoutMs,
                                const std::atomic<bool>* cancel) {
    std::vector<ArmProbe> out;
    // The check every run makes first (spec::checkArmModels): an arm whose file fails it is
    // refused with its reason, and no worker loads that file.
    const auto checks = spec::checkArmModels(preset);
    for (const auto& arm : preset.arms) {
        if (cancel && cancel->load()) break;
        const auto& c = checks[std::size_t(&arm - preset.arms.data())];
        if (!c.check.ok) {
            ArmProbe failed;
            failed.arm = arm.name;
            failed.code = c.check.code;
            failed.message = c.check.message;
            out.push_back(std::move(failed));
            continue;
        }
        out.push_back(probeOne(preset, arm, workerPath, timeoutMs, cancel));
    }
    return out;
}

}  // namespace pitlane::session
