// Replicate rounds (DESIGN.md "Measurement": the process is a level of variance): queueing a
// round's tasks in order-balanced order, starting worker processes ahead of their round, and
// making a round's processes the arms' current ones. Part of ExperimentRunner.
#include "pitlane/session/experiment_runner.h"

#include "pitlane/session/allocator.h"
#include "pitlane/session/paths.h"
#include "pitlane/session/sandbox_launch.h"
#include "pitlane/protocol/events.h"
#include "pitlane/session/worker_process.h"

#include <QDir>
#include <QRegularExpression>

#include <algorithm>

namespace pitlane::session {

using json = nlohmann::json;
namespace R = results;

// Queue round `round` (planRound, round_plan.cpp): fresh processes for every arm, configured one
// at a time, warmed up, then the given blocks (ids firstBlock.. within each sweep point)
// interleaved in order-balanced order.
void ExperimentRunner::queueRound(int round, int firstBlock, const std::vector<int>& blockIters,
                                  bool allSweepPoints) {
    for (const Task& t : planRound(result_.preset, round, firstBlock, blockIters, allSweepPoints,
                                   blocksPerPoint_, round > 0 ? laterWarmup_ : -1))
        queueTask(t);
    rounds_ = std::max(rounds_, round + 1);
}

// The progress counters follow the queue: whatever adds blocks (the first rounds, replication,
// adaptive stopping) adds them to the totals here, so no caller has to keep them in step.
void ExperimentRunner::queueTask(const Task& t) {
    tasks_.push_back(t);
    if ((t.kind == Task::Block || t.kind == Task::Serve) &&
        result_.arms[std::size_t(t.arm)].status == R::kPending)
        arms_[std::size_t(t.arm)].totalIters += t.iters * result_.preset.arms[std::size_t(t.arm)].knobs.workers;
}

void ExperimentRunner::unplan(int arm, int iters) {
    auto& total = arms_[std::size_t(arm)].totalIters;
    total = std::max(arms_[std::size_t(arm)].doneIters, total - iters);
}

// Worker processes are started ahead of their round, several rounds at once (up to
// kAheadProcesses processes): libtorch's start-up (~0.7 s of CPU each here, in the static
// initialisers of Debian's libtorch and its ~300 libraries) then happens once, in parallel,
// before anything is measured, instead of between rounds. An idle worker only waits on its stdin
// (its sampler starts with its first command), so it does not disturb the processes measured.
// Configure waits until every started process has said hello, so cold costs are never measured
// next to another process's start-up.
constexpr int kAheadProcesses = 16;

void ExperimentRunner::quitWorkers(std::vector<WorkerState>& workers) {
    for (auto& w : workers)
        if (w.process && w.process->isRunning() && !w.quitting) {
            w.quitting = true;
            w.process->send(protocol::makeCommand(protocol::kQuit));
        }
}

// The previous round's processes are told to quit and kept until they exit; every arm still
// running takes this round's processes (started ahead, or now).
void ExperimentRunner::startRound(int round) {
    int perRound = 0;
    for (const auto& a : result_.preset.arms) perRound += a.knobs.workers;
    // A budgeted run starts each round's processes with the round: every round then costs what
    // round 0's set-up measured (start, load, configure), which is what its design priced
    // (budget_plan.h); a burst of 16 starts at round 1 priced into every round dropped rounds
    // that fitted.
    const bool budgeted = result_.preset.run.budgeted();
    const int rounds = budgeted ? 1 : std::max(1, std::min(rounds_ - round, kAheadProcesses / std::max(1, perRound)));
    for (std::size_t i = 0; i < arms_.size(); ++i) {
        auto& st = arms_[i];
        quitWorkers(st.workers);
        for (auto& w : st.workers)
            if (w.process) retired_.push_back(std::move(w.process));
        st.workers.clear();
        if (result_.arms[i].status != R::kPending) {
            for (auto& [r, ws] : st.ahead) {
                quitWorkers(ws);
                for (auto& w : ws)
                    if (w.process) retired_.push_back(std::move(w.process));
            }
            st.ahead.clear();
            continue;
        }
        if (!st.ahead.count(round)) {
            // Check the allocator once per arm before starting anything.
            const AllocatorLaunch launch = allocatorLaunch(result_.preset.arms[i].knobs.allocator);
            if (!launch.error.isEmpty()) {
                failArm(int(i), R::kFailed, protocol::code::kBadKnob,
                        "knob allocator: " + launch.error.toStdString());
                continue;
            }
            for (int r = round; r < round + rounds; ++r)
                if (!st.ahead.count(r)) st.ahead[r] = spawnWorkers(int(i), r);
        }
    }
    for (std::size_t i = 0; i < arms_.size(); ++i)
        if (result_.arms[i].status == R::kPending && arms_[i].ahead.count(round)) activate(int(i), round);
}

// The round's workers become the arm's current ones: their processes enter the results, and
// what they said while waiting (hello, or an early death) is handled now.
void ExperimentRunner::activate(int arm, int round) {
    auto& st = arms_[std::size_t(arm)];
    auto& a = result_.arms[std::size_t(arm)];
    st.workers = std::move(st.ahead[round]);
    st.ahead.erase(round);
    st.round = round;
    setPhase(arm, ArmPhase::Starting);
    for (std::size_t k = 0; k < st.workers.size(); ++k) {
        auto& ws = st.workers[k];
        R::ProcessInfo info;
        info.replicate = round;
        info.worker = int(k);
        info.pid = ws.process ? long(ws.process->pid()) : 0;
        ws.procIndex = int(a.processes.size());
        a.processes.push_back(info);
        if (round == 0) a.worker_pids[k] = info.pid;
    }
    if (round == 0) a.pid = a.worker_pids.front();
    for (std::size_t k = 0; k < st.workers.size(); ++k) {
        if (a.status != R::kPending) break;
        auto& ws = st.workers[k];
        if (!ws.bufferedHello.is_null()) {
            ws.helloSeen = false;
            onEvent(arm, int(k), ws.bufferedHello);
            ws.bufferedHello = nullptr;
        }
        if (ws.exitedEarly) onExited(arm, int(k), ws.exitCode, ws.exitCrashed);
    }
}

bool ExperimentRunner::startupSettled() const {
    for (std::size_t i = 0; i < arms_.size(); ++i) {
        if (result_.arms[i].status != R::kPending) continue;
        for (const auto& w : arms_[i].workers)
            if (!w.helloSeen && !w.exited) return false;
        for (const auto& [r, ws] : arms_[i].ahead)
            for (const auto& w : ws)
                if (!w.helloSeen && !w.exited && !w.exitedEarly) return false;
    }
    return true;
}

QString ExperimentRunner::scratchDir() {
    if (!scratch_) {
        removeOrphanScratch();  // those of a run killed with SIGKILL
        scratch_ = std::make_unique<QTemporaryDir>(scratchTemplate(QStringLiteral("run")));
    }
    return scratch_->isValid() ? scratch_->path() : QString();
}

// A remote arm's worker command (remote_launch.h): the allocator's variables on the remote
// command line, the scratch folder its host's preparation made; "" for a local arm.
QString ExperimentRunner::remoteCommandFor(int arm) {
    const auto& knobs = result_.preset.arms[std::size_t(arm)].knobs;
    const QString host = QString::fromStdString(result_.preset.arms[std::size_t(arm)].host);
    if (host.isEmpty()) return {};
    const AllocatorLaunch launch = allocatorLaunch(knobs.allocator);
    QStringList vars;
    if (!launch.preload.isEmpty()) vars << QStringLiteral("LD_PRELOAD=") + launch.preload;
    vars << launch.env;
    const QString command = remoteWorkerCommand(QString::fromStdString(result_.preset.remote_worker),
                                                sandboxArguments(knobs, remote_.at(host.toStdString()).scratch,
                                                                 {remote_.at(host.toStdString()).modelPath}),
                                                vars);
    remoteCommand_[std::size_t(arm)] = sshCommandLine(host, command);
    return command;
}

// A local worker's arguments: it reads its model and nothing else of the user's, and the workers
// of a round (every arm's, loaded at once) share the machine's memory budget; a memory_limit_mb
// above its share is lowered, with a warning on the arm.
QStringList ExperimentRunner::localArgumentsFor(int arm) {
    const auto& armSpec = result_.preset.arms[std::size_t(arm)];
    const auto& knobs = armSpec.knobs;
    int perRound = 0;
    for (const auto& a : result_.preset.arms) perRound += a.knobs.workers;
    const MemoryBudget budget = memoryBudget(perRound);
    if (knobs.memory_limit_mb && budget.perWorkerMiB > 0 && *knobs.memory_limit_mb > budget.perWorkerMiB) {
        auto& warnings = result_.arms[std::size_t(arm)].warnings;
        const std::string w = "memory_limit_mb " + std::to_string(*knobs.memory_limit_mb) + " lowered to " +
                              std::to_string(budget.perWorkerMiB) + " MiB per worker: " +
                              std::to_string(budget.workers) + " workers run at once and share " +
                              std::to_string(budget.totalMiB) + " MiB (physical memory less a margin)";
        if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
        auto& caveats = result_.arms[std::size_t(arm)].caveats;
        if (std::find(caveats.begin(), caveats.end(), w) == caveats.end()) caveats.push_back(w);
    }
    return sandboxArguments(knobs, scratchDir(), readableFor(arm), budget);
}

// What worker `w` of the arm's round `round` says goes to the round when it is the arm's current
// one; a worker started ahead keeps its hello (and an early exit) until its round; a retired
// worker's last word gives its peak memory.
void ExperimentRunner::connectWorker(WorkerProcess* proc, int arm, int w, int round) {
    // A worker's own state: in the arm's current round, started ahead, or retired.
    auto ahead = [this, arm, round](int k) -> WorkerState* {
        auto& st = arms_[std::size_t(arm)];
        auto it = st.ahead.find(round);
        return it != st.ahead.end() && k < int(it->second.size()) ? &it->second[std::size_t(k)] : nullptr;
    };
    connect(proc, &WorkerProcess::eventReceived, this, [this, arm, w, round, ahead](const json& ev) {
        auto& st = arms_[std::size_t(arm)];
        if (protocol::eventType(ev) == protocol::EventType::Hello) {
            WorkerState* ws = st.round == round ? (w < int(st.workers.size()) ? &st.workers[std::size_t(w)] : nullptr)
                                                : ahead(w);
            if (ws && !ws->helloSeen) noteStarted(arm, *ws);
        }
        if (st.round == round) {
            onEvent(arm, w, ev);
            return;
        }
        const auto type = protocol::eventType(ev);
        if (WorkerState* ws = ahead(w)) {
            if (type == protocol::EventType::Hello) {
                ws->bufferedHello = ev;
                ws->helloSeen = true;
                sendCurrent();  // a configure may have waited for every start-up to end
            }
            return;
        }
        if (type == protocol::EventType::Bye) {  // a retired worker's last word
            auto& peak = result_.arms[std::size_t(arm)].peak_rss_bytes;
            try {
                peak = std::max(peak, protocol::byeFromJson(ev).peak_rss_bytes);
            } catch (const std::exception&) {
                // A bye that does not decode says nothing of the peak; the process is gone anyway.
            }
        }
    });
    connect(proc, &WorkerProcess::exited, this, [this, arm, w, round, ahead](int code, bool crashed) {
        if (arms_[std::size_t(arm)].round == round) {
            onExited(arm, w, code, crashed);
            return;
        }
        if (WorkerState* ws = ahead(w)) {
            ws->exitedEarly = true;
            ws->exitCode = code;
            ws->exitCrashed = crashed;
            sendCurrent();
        }
        finishIfDone();
    });
    connect(proc, &WorkerProcess::startFailed, this, [this, arm, w, round, ahead](const QString& why) {
        auto& st = arms_[std::size_t(arm)];
        if (st.round != round) {
            if (WorkerState* ws = ahead(w)) ws->exitedEarly = ws->exited = true;
            failArm(arm, R::kFailed, "worker_start_failed", why.toStdString());
            abandon(arm);
            finishIfDone();
            return;
        }
        st.workers[std::size_t(w)].exited = true;
        failArm(arm, R::kFailed, "worker_start_failed", why.toStdString());
        abandon(arm);
        finishIfDone();
    });
    connect(proc, &WorkerProcess::stderrLine, this, [this, arm, round](const QString& l) {
        // The same line from a later process of the arm (its timestamp aside) is logged once;
        // the worker's own stderr tail, which failures quote, keeps every line.
        static const QRegularExpression glogPrefix(QStringLiteral("^\\[[IWEF]\\d{4} [0-9:.]+ [^\\]]*\\] ?"));
        QString key = l;
        key.remove(glogPrefix);
        auto& st = arms_[std::size_t(arm)];
        if (!st.stderrSeen.insert(key).second && round > 0) {
            if (!st.stderrRepeatSaid) {
                st.stderrRepeatSaid = true;
                emit logMessage(arm, QStringLiteral("info"),
                                QStringLiteral("later processes print the same stderr lines as the first: each is shown once"));
            }
            return;
        }
        emit logMessage(arm, QStringLiteral("stderr"), l);
    });
    // On the channel only the worker writes: a line that is not an event means it cannot be
    // trusted with the rest either.
    connect(proc, &WorkerProcess::malformedLine, this,
            [this, arm, w](const QString& line, const QString& why) {
                failProtocol(arm, malformedLineViolation(w, why.toStdString(), line.toStdString()));
            });
}

std::vector<ExperimentRunner::WorkerState> ExperimentRunner::spawnWorkers(int arm, int round) {
    const auto& knobs = result_.preset.arms[std::size_t(arm)].knobs;
    std::vector<WorkerState> workers(std::size_t(knobs.workers));
    QProcessEnvironment env = withAllocator(QProcessEnvironment::systemEnvironment(),
                                            allocatorLaunch(knobs.allocator));
    // An arm on a CUDA device: the worker loads its CUDA module before its sandbox (worker_main.cpp);
    // a CPU arm's worker never loads it.
    if (preloadsTorchModule(result_.preset.arms[std::size_t(arm)]))
        env.insert(QStringLiteral("PITLANE_WORKER_CUDA"), QStringLiteral("preload"));
    const QString host = QString::fromStdString(result_.preset.arms[std::size_t(arm)].host);
    const QString remoteCommand = remoteCommandFor(arm);
    const QStringList localArguments = host.isEmpty() ? localArgumentsFor(arm) : QStringList();
    for (std::size_t k = 0; k < workers.size(); ++k) {
        auto& ws = workers[k];
        if (host.isEmpty()) {
            // PITLANE_WORKER_CHANNEL=stdio: stdin and stdout as behind ssh, where a model can
            // reach the protocol's pipe; the tests of the session's protocol checks use it.
            const bool stdio = qgetenv("PITLANE_WORKER_CHANNEL") == "stdio";
            ws.process = std::make_unique<WorkerProcess>(options_.workerPath, localArguments, nullptr,
                                                         stdio ? WorkerProcess::Channel::Stdio
                                                               : WorkerProcess::Channel::Socket);
            ws.process->setEnvironment(env);
        } else {
            ws.process = std::make_unique<WorkerProcess>(sshProgram(), sshArguments(host, remoteCommand), nullptr,
                                                         WorkerProcess::Channel::Stdio);
            ws.process->setStopByClosingInput(true);
        }
        connectWorker(ws.process.get(), arm, int(k), round);
        ws.startup.start(elapsedMs());  // the start-up watch counts from here (startup_watch.h)
        ws.process->start();
    }
    return workers;
}

}  // namespace pitlane::session
