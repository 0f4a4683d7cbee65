#include "pitlane/session/experiment_runner.h"

#include "pitlane/session/budget_plan.h"
#include "pitlane/session/sandbox_launch.h"

#include "pitlane/session/worker_process.h"
#include "pitlane/session/compile_step.h"
#include "pitlane/session/model_probe.h"
#include "pitlane/session/run_plan.h"
#include "pitlane/spec/run_limits.h"
#include "pitlane/spec/arm_model_check.h"
#include "pitlane/spec/model_file.h"

#include <map>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <set>
#include <csignal>
#include <cstdio>

namespace pitlane::session {

using json = nlohmann::json;
namespace R = results;

QString phaseName(ArmPhase p) {
    switch (p) {
        case ArmPhase::Pending: return QStringLiteral("pending");
        case ArmPhase::Compiling: return QStringLiteral("compiling");
        case ArmPhase::Starting: return QStringLiteral("starting");
        case ArmPhase::Loading: return QStringLiteral("loading");
        case ArmPhase::Ready: return QStringLiteral("ready");
        case ArmPhase::WarmingUp: return QStringLiteral("warming up");
        case ArmPhase::Measuring: return QStringLiteral("measuring");
        case ArmPhase::Waiting: return QStringLiteral("waiting");
        case ArmPhase::Done: return QStringLiteral("done");
        case ArmPhase::Failed: return QStringLiteral("failed");
        case ArmPhase::Cancelled: return QStringLiteral("cancelled");
    }
    return {};
}

QString defaultWorkerPath() {
    const QByteArray env = qgetenv("PITLANE_WORKER");
    if (!env.isEmpty()) return QString::fromLocal8Bit(env);
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("pitlane-worker"));
}

ExperimentRunner::ExperimentRunner(RunnerOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)) {
    qRegisterMetaType<ArmPhase>();
    qRegisterMetaType<protocol::Event>();
    watchdog_.setSingleShot(true);
    connect(&watchdog_, &QTimer::timeout, this, [this] {
        if (active_.empty()) return;
        if (watchingStartup_) {
            watchStartups();
            return;
        }
        std::vector<int> hung;
        for (const auto& t : active_)
            if (!t.finished) hung.push_back(t.arm);
        for (int arm : hung) {
            failArm(arm, R::kTimeout, "timeout",
                    allHello(arm) ? "no event from the worker for " + std::to_string(timeoutMs_) +
                                        " ms (run.event_timeout_ms): it was declared hung and killed"
                                  : "the worker did not start (no hello) within " +
                                        std::to_string(startupTimeoutMs()) +
                                        " ms: it was declared hung and killed");
            for (auto& w : arms_[arm].workers)
                if (w.process) w.process->kill();
        }
        next();
    });
    killTimer_.setSingleShot(true);
    connect(&killTimer_, &QTimer::timeout, this, [this] {
        for (auto& a : arms_) {
            for (auto& w : a.workers)
                if (w.process && w.process->isRunning()) w.process->kill();
            for (auto& [r, ws] : a.ahead)
                for (auto& w : ws)
                    if (w.process && w.process->isRunning()) w.process->kill();
        }
        for (auto& p : retired_)
            if (p->isRunning()) p->kill();
    });
}

ExperimentRunner::~ExperimentRunner() {
    for (auto& a : arms_) {
        for (auto& w : a.workers)
            if (w.process) w.process->disconnect(this);
        for (auto& [r, ws] : a.ahead)
            for (auto& w : ws)
                if (w.process) w.process->disconnect(this);
    }
    for (auto& p : retired_) p->disconnect(this);
    if (prepCancelled_) *prepCancelled_ = true;
    toFeeds([](R::RunFeed& f) { f.sourceClosed(); });
}

ArmPhase ExperimentRunner::phase(int arm) const { return arms_.at(arm).phase; }
int ExperimentRunner::doneIters(int arm) const { return arms_.at(arm).doneIters; }
int ExperimentRunner::totalIters(int arm) const { return arms_.at(arm).totalIters; }

// Every arm's result, pending, with what its knobs say before any worker reads them back.
void ExperimentRunner::addArmResults(const spec::Preset& preset) {
    for (const auto& spec : preset.arms) {
        R::ArmResult a;
        a.name = spec.name;
        a.knobs = spec.knobs;
        spec::readWrittenKnobs(spec.knobs_json, &a.knobs_written);
        a.batch_size = spec.knobs.batch_size.front();
        a.batch_sizes = spec.knobs.batch_size;
        a.workers = spec.knobs.workers;
        a.worker_applied.assign(std::size_t(spec.knobs.workers), protocol::Applied{});
        a.worker_pids.assign(std::size_t(spec.knobs.workers), 0);
        a.host = spec.host;
        result_.arms.push_back(std::move(a));
    }
}

// The model's bytes, checked once before any worker starts: libtorch does not check the zip's
// CRCs, so a damaged file would be measured silently (issue 12). Each file once, however many
// arms measure it; an arm whose file fails is failed alone. False when the preset's model failed.
bool ExperimentRunner::checkModelFiles(const spec::Preset& preset) {
    bool presetModelOk = true;
    for (const auto& [i, path, model] : spec::checkArmModels(preset)) {
        const auto& spec = preset.arms[i];
        auto& a = result_.arms[i];
        a.model = path;
        a.model_sha256 = model.sha256;
        a.model_format = model.ok ? model.format : spec.model_format;
        if (path == preset.model_path) {
            result_.model_sha256 = model.sha256;
            presetModelOk = model.ok;
        }
        if (!model.ok) failArm(int(i), R::kFailed, model.code, model.message);
    }
    return presetModelOk;
}

void ExperimentRunner::start(const spec::Preset& preset) {
    Q_ASSERT(!running_);
    running_ = true;
    stopping_ = finalizing_ = false;
    oomKillsAtStart_ = oomKillCount();
    result_ = {};
    result_.preset = preset;
    result_.preset_json = preset.raw.is_null() ? spec::presetToJson(preset) : preset.raw;
    result_.started_at = R::isoNowUtc();
    timeoutMs_ = preset.run.event_timeout_ms;
    clock_.start();
    lastEventMs_ = 0;
    watchingStartup_ = false;
    arms_.clear();
    arms_.resize(preset.arms.size());
    tasks_.clear();
    active_.clear();
    retired_.clear();
    deciding_ = 0;

    const auto& run = preset.run;
    std::size_t maxSweep = 0;
    for (const auto& spec : preset.arms) maxSweep = std::max(maxSweep, spec.knobs.batch_size.size());
    addArmResults(preset);
    toFeeds([this](R::RunFeed& f) { f.runBegins(result_); });
    const bool presetModelOk = checkModelFiles(preset);
    remote_.clear();
    remoteCommand_.assign(preset.arms.size(), QString());
    preparing_ = 0;
    compileArms();                            // next() waits until the programs are compiled
    if (presetModelOk) prepareRemoteHosts();  // ... and the hosts are ready
    // The measured iterations of each sweep point, as blocks; round r measures a contiguous
    // share of them (round_plan.h).
    const int processes = plannedProcesses(run);
    const std::vector<int> blockIters = blockIterations(run);
    blocksPerPoint_ = int(blockIters.size());
    nextBlock_ = int(maxSweep) * blocksPerPoint_;
    rounds_ = 0;
    measureClock_.invalidate();
    // Round 0 starts the processes of the planned rounds ahead (replicate_rounds.cpp, at most
    // 16); an added round starts its own: that share of round 0's start prices its set-up.
    int perRound = 0;
    for (const auto& a : preset.arms) perRound += a.knobs.workers;
    const int aheadRounds = std::max(1, std::min(processes, 16 / std::max(1, perRound)));
    costLog_ = CostLog(int(preset.arms.size()), preset.serving.enabled ? -1 : processes, 1.0 / aheadRounds);
    groupStartMs_ = decisionStartMs_ = -1;
    replicationOver_ = false;
    budgetDesigned_ = budgetOver_ = false;
    if (run.budgeted() && !preset.serving.enabled) {
        startBudgeted();
        return;
    }
    // What will be measured, said before it is (run_plan.h); what was is added at finalize().
    if (!preset.serving.enabled) {
        const MeasurementPlan plan = measurementPlan(preset);
        result_.replication["asked_iters"] = plan.asked;
        result_.replication["planned_iters"] = {plan.minIters, plan.maxIters};
        result_.replication["plan"] = planText(plan);
    }
    if (preset.serving.enabled) {
        // Levels instead of blocks; run.processes rounds exactly (no replication decision: it
        // judges latency samples), then the SLO search.
        for (int r = 0; r < std::max(1, run.processes); ++r) queueServingRound(r);
        queueServingSearch();
        next();
        return;
    }
    for (int r = 0; r < processes; ++r) {
        const RoundShare share = roundShare(blockIters, processes, r);
        queueRound(r, share.first, share.iters, true);
    }
    // The profile runs in the last round's processes once their blocks are measured: never
    // inside a timed block (a round added later for replication comes after it).
    if (run.profile_iters > 0)
        for (int i = 0; i < int(preset.arms.size()); ++i)
            queueTask({Task::Profile, i, -1, run.profile_iters, preset.arms[std::size_t(i)].knobs.batch_size.front(),
                       processes - 1});
    next();
}

void ExperimentRunner::setPhase(int arm, ArmPhase p) {
    if (arms_[arm].phase == p) return;
    arms_[arm].phase = p;
    toFeeds([arm](R::RunFeed& f) { f.armPhaseChanged(arm); });
    emit armPhaseChanged(arm, p);
}

void ExperimentRunner::failArm(int arm, const std::string& status, const std::string& code,
                               const std::string& message, const nlohmann::json& detail) {
    auto& a = result_.arms[arm];
    if (a.status != R::kPending) return;  // the first cause wins
    a.status = status;
    if (!a.error) a.error = protocol::Error{code, message, detail};
    setPhase(arm, ArmPhase::Failed);
    emit logMessage(arm, QStringLiteral("error"),
                    QString::fromStdString(result_.arms[arm].name + " " + status + ": " + message));
    quitArm(arm);
    QTimer::singleShot(2000, this, [this, arm] {
        if (arm >= int(arms_.size())) return;
        for (auto& w : arms_[arm].workers)
            if (w.process) w.process->kill();
        for (auto& [r, ws] : arms_[arm].ahead)
            for (auto& w : ws)
                if (w.process) w.process->kill();
    });
    announceArmFinished(arm);
}

void ExperimentRunner::quitArm(int arm) {
    quitWorkers(arms_[arm].workers);
    for (auto& [r, ws] : arms_[arm].ahead) quitWorkers(ws);
}

// A worker that has not said hello is still loading libtorch (seconds on a busy machine, and
// every worker starts at once): it has not been asked anything yet, so it gets a start-up
// allowance instead of run.event_timeout_ms, and past it the watchdog judges it by what it does
// (startup_watch.h).
int ExperimentRunner::startupTimeoutMs() const {
    return options_.startupAllowanceMs > 0 ? options_.startupAllowanceMs : std::max(timeoutMs_, 30000);
}

bool ExperimentRunner::allHello(int arm) const {
    for (const auto& w : arms_[arm].workers)
        if (!w.helloSeen && !w.exited) return false;
    return true;
}

// An event of an active arm, or a task sent: run.event_timeout_ms counts from now. While workers
// are starting the watchdog polls them instead (watchStartups).
void ExperimentRunner::armTimer() {
    lastEventMs_ = elapsedMs();
    bool starting = !startupSettled();
    for (const auto& t : active_)
        if (!t.finished && !allHello(t.arm)) starting = true;
    if (!starting) {
        watchingStartup_ = false;
        watchdog_.start(timeoutMs_);
        return;
    }
    if (watchingStartup_ && watchdog_.isActive()) return;  // the poll goes on at its pace
    watchingStartup_ = true;
    watchdog_.start(std::clamp(startupTimeoutMs() / 8, 100, 1000));
}

void ExperimentRunner::watchStartups() {
    const double now = elapsedMs();
    const MachineLoad load = readMachineLoad();
    StartupPolicy policy;
    policy.allowanceMs = startupTimeoutMs();
    struct Failure {
        int arm;
        std::string code, message;
        json detail;
    };
    std::vector<Failure> failures;
    for (std::size_t i = 0; i < arms_.size(); ++i) {
        if (result_.arms[i].status != R::kPending) continue;
        // Behind ssh the local process is ssh: its CPU says nothing of the worker's.
        const bool remote = !remoteCommand_[i].isEmpty();
        auto judge = [&](WorkerState& w) {
            if (w.helloSeen || w.exited || w.exitedEarly || !w.process) return;
            const ProcStat st = remote ? ProcStat{} : readProcStat(long(w.process->pid()));
            const StartupReading reading = w.startup.observe(now, st);
            const StartupJudgement j = judgeStartup(policy, reading, load);
            const std::string who = result_.arms[i].name + ": worker pid " + std::to_string(w.process->pid()) + " ";
            if (j.verdict == StartupVerdict::Slow && !w.startup.slowSaid) {
                w.startup.slowSaid = true;
                emit logMessage(int(i), QStringLiteral("warning"), QString::fromStdString(who + j.message));
            } else if (j.verdict == StartupVerdict::Hung || j.verdict == StartupVerdict::Overloaded) {
                json detail = {{"pid", long(w.process->pid())},
                               {"elapsed_ms", std::lround(reading.elapsedMs)},
                               {"startup_allowance_ms", long(policy.allowanceMs)}};
                if (reading.cpuMs >= 0) {
                    detail["cpu_ms"] = std::lround(reading.cpuMs);
                    detail["no_progress_ms"] = std::lround(reading.sinceProgressMs);
                }
                if (load.known()) {
                    detail["load1"] = load.load1;
                    detail["cores"] = load.cores;
                }
                failures.push_back({int(i),
                                    j.verdict == StartupVerdict::Overloaded ? kMachineOverloadedCode
                                                                           : std::string("timeout"),
                                    j.message, detail});
            }
        };
        for (auto& w : arms_[i].workers) judge(w);
        for (auto& [r, ws] : arms_[i].ahead)
            for (auto& w : ws) judge(w);
    }
    // A task sent to a worker that said hello keeps run.event_timeout_ms while others start.
    if (now - lastEventMs_ >= timeoutMs_)
        for (const auto& t : active_) {
            if (t.finished) continue;
            for (const auto& w : arms_[t.arm].workers)
                if (w.sent && !w.taskDone && w.helloSeen && !w.exited) {
                    failures.push_back({t.arm, "timeout",
                                        "no event from the worker for " + std::to_string(timeoutMs_) +
                                            " ms (run.event_timeout_ms): it was declared hung and killed",
                                        {}});
                    break;
                }
        }
    if (failures.empty()) {
        watchdog_.start(std::clamp(startupTimeoutMs() / 8, 100, 1000));
        return;
    }
    for (const auto& f : failures) {
        if (result_.arms[f.arm].status != R::kPending) continue;
        failArm(f.arm, R::kTimeout, f.code, f.message, f.detail);
        for (auto& w : arms_[f.arm].workers)
            if (w.process) w.process->kill();
        for (auto& [r, ws] : arms_[f.arm].ahead)
            for (auto& w : ws)
                if (w.process) w.process->kill();
    }
    for (const auto& f : failures) abandon(f.arm);
    // A configure that waited for the failed arm's start-ups can go now.
    watchingStartup_ = false;
    if (!active_.empty()) sendCurrent();
}

void ExperimentRunner::noteStarted(int arm, WorkerState& ws) {
    if (ws.startup.startedMs < 0 || !ws.process) return;
    const double tookMs = elapsedMs() - ws.startup.startedMs;
    const double allowance = startupTimeoutMs();
    auto& st = arms_[std::size_t(arm)];
    if (tookMs < allowance || tookMs <= st.slowestStartMs) return;
    st.slowestStartMs = tookMs;
    const MachineLoad load = readMachineLoad();
    const ProcStat cpu = remoteCommand_[std::size_t(arm)].isEmpty() ? readProcStat(long(ws.process->pid())) : ProcStat{};
    const std::string w = "slow start: a worker took " + seconds(tookMs) + " to start (start-up allowance " +
                          seconds(allowance) + "; " + (load.factor() > 1 ? "the machine is overloaded: " : "") +
                          load.text() + (cpu.ok ? "; it used " + seconds(cpu.cpuMs) + " of CPU" : std::string()) +
                          "): it was waited for, not failed; what it measured ran on a loaded machine";
    auto& warnings = result_.arms[std::size_t(arm)].warnings;
    if (st.slowStartWarning >= 0 && st.slowStartWarning < int(warnings.size())) warnings[std::size_t(st.slowStartWarning)] = w;
    else {
        st.slowStartWarning = int(warnings.size());
        warnings.push_back(w);
    }
    emit logMessage(arm, QStringLiteral("info"), QString::fromStdString(result_.arms[std::size_t(arm)].name + ": " + w));
}

ExperimentRunner::Task* ExperimentRunner::activeFor(int arm) {
    for (auto& t : active_)
        if (t.arm == arm && !t.finished) return &t;
    return nullptr;
}

// The arm's part of the active task ended without finishing (it failed): go on once the rest of
// a concurrent group is done.
void ExperimentRunner::abandon(int arm) {
    Task* t = activeFor(arm);
    if (!t) return;
    t->finished = true;
    for (const auto& m : active_)
        if (!m.finished) return;
    next();
}

void ExperimentRunner::next() {
    if (preparing_ || compiling_) return;  // remoteHostsPrepared() / the compile step go on
    watchdog_.stop();
    recordGroupCost();
    active_.clear();
    while (!tasks_.empty() && !stopping_) {
        Task t = tasks_.front();
        tasks_.pop_front();
        if (t.kind == Task::StartRound) {
            if (!trimBudget(t.round)) startRound(t.round);
            continue;
        }
        if (result_.arms[t.arm].status != R::kPending) continue;  // failed arms are skipped
        if (t.kind != Task::Configure && result_.arms[t.arm].sweep_failures.count(t.batchSize)) {
            // This point of the sweep failed (e.g. out of memory): go on with the next.
            if (t.kind == Task::Block) unplan(t.arm, t.iters * result_.preset.arms[t.arm].knobs.workers);
            continue;
        }
        if (t.kind == Task::Serve && !prepareServe(t)) continue;
        active_.push_back(t);
        // A concurrent task takes its neighbours of the same kind and round along.
        while (t.concurrent && !tasks_.empty() && tasks_.front().concurrent &&
               tasks_.front().kind == t.kind && tasks_.front().round == t.round) {
            const Task m = tasks_.front();
            tasks_.pop_front();
            if (result_.arms[m.arm].status != R::kPending) continue;
            if (m.kind != Task::Configure && result_.arms[m.arm].sweep_failures.count(m.batchSize)) {
                if (m.kind == Task::Block) unplan(m.arm, m.iters * result_.preset.arms[m.arm].knobs.workers);
                continue;
            }
            active_.push_back(m);
        }
        for (const auto& m : active_)
            for (auto& w : arms_[m.arm].workers) w.sent = w.taskDone = false;
        groupStartMs_ = elapsedMs();
        sendCurrent();
        return;
    }
    if (stopping_) return;
    if (result_.preset.run.budgeted() && !result_.preset.serving.enabled) {
        if (extendBudget()) {
            next();
            return;
        }
    } else if (result_.preset.run.adaptive()) {
        if (extendAdaptive()) {
            next();
            return;
        }
    } else if (!result_.preset.serving.enabled && decideReplication()) {
        return;  // the decision is computed off this thread; replicationDecided() goes on
    }
    completeTasks();
}

// Every task done: arms still pending finished fine.
void ExperimentRunner::completeTasks() {
    for (std::size_t i = 0; i < arms_.size(); ++i) {
        auto& a = result_.arms[i];
        if (a.status == R::kPending) {
            a.status = R::kOk;
            setPhase(int(i), ArmPhase::Done);
            announceArmFinished(int(i));
        }
        quitArm(int(i));
    }
    killTimer_.start(2000);
    finishIfDone();
}

void ExperimentRunner::sendCurrent() {
    if (active_.empty()) return;
    armTimer();
    for (auto& t : active_)
        if (!t.finished) sendTask(t);
}

void ExperimentRunner::sendTask(Task& t) {
    auto& st = arms_[t.arm];
    // A budgeted run's round 0 warms up for a share of the budget at most, priced by the arm's
    // first forward (round0WarmupIters, budget_plan.h); the worker is told the count it runs.
    if (t.kind == Task::Warmup && t.round == 0 && result_.preset.run.budgeted() && !budgetDesigned_ &&
        !st.workers.empty() && !st.workers.front().sent) {
        double first = -1;
        for (const auto& pr : result_.arms[std::size_t(t.arm)].processes)
            if (pr.replicate == 0 && pr.first_forward_ms > 0) first = std::max(first, pr.first_forward_ms);
        const int iters = round0WarmupIters(t.iters, first, result_.preset.run.budget_ms);
        if (iters != t.iters) {
            emit logMessage(t.arm, QStringLiteral("info"),
                            QStringLiteral("round 0 warms up %1 of the %2 iterations asked: its first forward took %3 ms, "
                                           "and a warmup may take %4 % of the budget")
                                .arg(iters)
                                .arg(t.iters)
                                .arg(first, 0, 'f', 0)
                                .arg(kRound0WarmupShare * 100, 0, 'f', 0));
            t.iters = iters;
        }
    }
    if (t.kind == Task::Configure && !startupSettled()) return;  // sent when the last hello comes
    if (t.kind == Task::Serve) {
        sendServe(t);
        return;
    }
    if (t.kind == Task::Profile) {
        json cmd = protocol::makeCommand(protocol::kProfileCmd);
        cmd["iters"] = t.iters;
        cmd["batch_size"] = t.batchSize;
        for (auto& ws : st.workers)
            if (!ws.sent && ws.helloSeen) {
                ws.sent = true;
                ws.taskDone = false;
                tell(ws.told, t);
                ws.process->send(cmd);
            }
        return;
    }
    const auto& p = result_.preset;
    json cmd;
    if (t.kind == Task::Configure) {
        cmd = protocol::makeCommand(protocol::kConfigure);
        cmd["arm"] = armConfigure(p, std::size_t(t.arm));
        cmd["arm"]["worker_count"] = int(st.workers.size());
        if (const auto& host = p.arms[t.arm].host; !host.empty() && remote_.count(host))
            cmd["arm"]["model_path"] = remote_.at(host).modelPath.toStdString();
        configureCompiled(t.arm, cmd["arm"]);
    } else {
        if (t.kind == Task::Block && !measureClock_.isValid()) measureClock_.start();
        cmd = protocol::makeCommand(protocol::kRun);
        cmd["block"] = t.kind == Task::Warmup ? -1 : t.block;
        cmd["phase"] = t.kind == Task::Warmup ? "warmup" : "measure";
        cmd["iters"] = t.iters;
        cmd["batch_size"] = t.batchSize;
        setPhase(t.arm, t.kind == Task::Warmup ? ArmPhase::WarmingUp : ArmPhase::Measuring);
        for (std::size_t i = 0; i < arms_.size(); ++i)
            if (int(i) != t.arm && result_.arms[i].status == R::kPending &&
                arms_[i].phase == ArmPhase::Measuring && !activeFor(int(i)))
                setPhase(int(i), ArmPhase::Waiting);
    }
    // Every worker of the arm gets the task at once (K concurrent workers); one that has not
    // said hello yet gets it when it does.
    for (std::size_t w = 0; w < st.workers.size(); ++w) {
        auto& ws = st.workers[w];
        if (ws.sent || !ws.helloSeen) continue;
        ws.sent = true;
        ws.taskDone = false;
        tell(ws.told, t);
        if (t.kind == Task::Configure) {
            cmd["arm"]["worker_index"] = int(w);
            // Issue 46: one process of the run measures the idle draw (the first arm's first,
            // configured while no other arm runs anything).
            if (t.round == 0 && t.arm == 0 && w == 0 && p.run.energy_idle_ms > 0)
                cmd["arm"]["energy_idle"] = {{"cooldown_ms", p.run.energy_cooldown_ms},
                                             {"window_ms", p.run.energy_idle_ms}};
            else
                cmd["arm"].erase("energy_idle");
            setPhase(t.arm, ArmPhase::Loading);  // only once a worker really got the model
        }
        ws.process->send(cmd);
    }
}

void ExperimentRunner::taskDoneBy(int arm, int worker) {
    Task* t = activeFor(arm);
    if (!t) return;
    arms_[arm].workers[worker].taskDone = true;
    for (const auto& w : arms_[arm].workers)
        if (!w.taskDone) return;
    t->finished = true;
    if (t->kind == Task::Configure) setPhase(arm, ArmPhase::Ready);
    for (const auto& m : active_)
        if (!m.finished) return;
    next();
}

void ExperimentRunner::onExited(int arm, int worker, int code, bool crashed) {
    auto& ws = arms_[arm].workers[worker];
    ws.exited = true;
    auto& a = result_.arms[arm];
    if (a.status == R::kPending && !ws.quitting) {
        const auto tail = ws.process->stderrTail().join('\n').right(600).toStdString();
        const QString remote = remoteCommand_[std::size_t(arm)];
        if (stopping_) {
            a.status = R::kCancelled;
            setPhase(arm, ArmPhase::Cancelled);
            announceArmFinished(arm);
        } else if (!remote.isEmpty() && !remoteExitCode(code, crashed).isEmpty()) {
            // ssh itself ended (the connection was cut or lost) or the remote shell could not
            // run the worker: the arm failed, what it measured stays.
            failArm(arm, R::kFailed, remoteExitCode(code, crashed).toStdString(),
                    remoteExitMessage(QString::fromStdString(a.host), remote, code, crashed).toStdString() +
                        (tail.empty() ? "" : "; last stderr: " + tail));
        } else if (crashed && code == SIGKILL && oomKillsAtStart_ >= 0 && oomKillCount() > oomKillsAtStart_) {
            // Nobody here sent it: the kernel's OOM killer did, for the machine or its cgroup.
            const MemoryBudget budget = memoryBudget(1);
            failArm(arm, R::kFailed, protocol::code::kOutOfMemory,
                    "out of memory: worker " + std::to_string(ws.process->pid()) +
                        " was killed by the kernel's out-of-memory killer (oom_kill in memory.events went from " +
                        std::to_string(oomKillsAtStart_) + " to " + std::to_string(oomKillCount()) + "; " +
                        (budget.cgroup ? "this cgroup's" : "the machine's") + " memory is " +
                        std::to_string(budget.physicalMiB) +
                        " MiB): lower memory_limit_mb, the workers or the arms run at once" +
                        (tail.empty() ? "" : "; last stderr: " + tail));
        } else if (crashed) {
            const std::string sig = strsignal(code) ? strsignal(code) : "unknown";
            failArm(arm, code == SIGKILL ? R::kKilled : R::kCrashed,
                    code == SIGKILL ? "killed" : "crashed",
                    "worker " + std::to_string(ws.process->pid()) + " died by signal " + std::to_string(code) + " (" + sig + ")" +
                        (tail.empty() ? "" : "; last stderr: " + tail));
        } else {
            failArm(arm, R::kFailed, "worker_exit",
                    "worker exited with code " + std::to_string(code) + " before finishing" +
                        (tail.empty() ? "" : "; last stderr: " + tail));
        }
        abandon(arm);
    }
    finishIfDone();
}

// Every replicate must have applied the same settings as the first: a knob read back differently
// in a later process is a warning naming the field (the processes are then not replicates).
void ExperimentRunner::checkApplied(int arm, int worker, const json& applied) {
    auto& a = result_.arms[std::size_t(arm)];
    if (worker >= int(a.worker_applied.size())) return;
    const json ref = protocol::appliedFields(a.worker_applied[std::size_t(worker)]);
    if (!ref.is_object() || !applied.is_object()) return;
    // Fields that name the process rather than a setting.
    static const std::set<std::string> perProcess = {"pid", "process_threads", "parallel_info",
                                                     "worker_index", "worker_count"};
    // Measurements inside a setting: the sandbox's memory limit sits on top of what the process
    // had mapped when it started (data_at_start_bytes, and so the RLIMIT_DATA read back), which
    // differs by some MiB from process to process; the limit asked for (memory_limit_bytes) is
    // the setting.
    auto setting = [](const std::string& key, json v) {
        if (key == "sandbox" && v.is_object()) {
            v.erase("data_at_start_bytes");
            if (v.contains("read_back") && v["read_back"].is_object()) v["read_back"].erase("rlimit_data_bytes");
        }
        // Each process extracts a package into a folder of its own.
        if (key == "package" && v.is_object()) v.erase("extracted_to");
        return v;
    };
    for (const auto& [key, v] : applied.items()) {
        if (perProcess.count(key) || (ref.contains(key) && setting(key, ref[key]) == setting(key, v))) continue;
        const std::string msg = "applied setting \"" + key + "\" differs between processes (" +
                                (ref.contains(key) ? ref[key].dump() : std::string("absent")) +
                                " in the first, " + v.dump() + " in replicate " +
                                std::to_string(arms_[std::size_t(arm)].round + 1) + ")";
        if (std::find(a.warnings.begin(), a.warnings.end(), msg) != a.warnings.end()) continue;
        a.warnings.push_back(msg);
        emit logMessage(arm, QStringLiteral("warning"), QString::fromStdString(a.name + ": " + msg));
    }
}

// Whether the arm still has something to measure in the tasks planned so far.
bool ExperimentRunner::hasWorkLeft(int arm) const {
    auto pending = [arm](const Task& t) {
        return (t.arm == arm || t.arm < 0) && t.kind != Task::Configure && t.kind != Task::Profile;
    };
    if (std::any_of(tasks_.begin(), tasks_.end(), pending)) return true;
    return std::any_of(active_.begin(), active_.end(),
                       [&](const Task& t) { return !t.finished && pending(t); });
}

// The group of tasks that just ended, with its wall time since it was sent (a configure's
// includes waiting for the processes' start-up), prices the tasks still to come.
void ExperimentRunner::recordGroupCost() {
    if (groupStartMs_ < 0 || active_.empty()) return;
    bool complete = true;
    for (const auto& t : active_) complete = complete && t.finished && result_.arms[std::size_t(t.arm)].status == R::kPending;
    if (complete) costLog_.record(active_, elapsedMs() - groupStartMs_);
    groupStartMs_ = -1;
}

RemainingTime ExperimentRunner::remaining() const {
    RemainingTime r;
    if (!running_) {
        r.known = !result_.arms.empty();
        return r;
    }
    const auto& preset = result_.preset;
    if (preset.serving.enabled || stopping_) return r;
    const auto pendingArm = [&](int arm) { return arm < 0 || result_.arms[std::size_t(arm)].status == R::kPending; };
    RemainingInput in;
    for (const auto& t : active_)
        if (!t.finished && pendingArm(t.arm)) in.pending.push_back(t);
    if (!in.pending.empty() && groupStartMs_ >= 0) in.activeElapsedMs = elapsedMs() - groupStartMs_;
    for (const auto& t : tasks_)
        if (pendingArm(t.arm)) in.pending.push_back(t);
    for (std::size_t i = 0; i < result_.arms.size(); ++i) {
        in.workers.push_back(preset.arms[i].knobs.workers);
        if (pendingArm(int(i))) in.samplesDone += double(result_.arms[i].samples.size());
    }
    const auto& run = preset.run;
    if (run.budgeted()) {
        // Planned to end at the budget: what is queued, and rounds added while it holds another.
        const ObservedCosts costs = costLog_.costs();
        r = estimateRemaining(in, costs);
        const double toBudget = std::max(0.0, double(run.budget_ms) - elapsedMs());
        if (!budgetDesigned_) {
            r.known = true;
            r.lowMs = r.highMs = toBudget;
        } else if (r.known) {
            r.highMs = std::max(r.lowMs, budgetOver_ ? r.lowMs : toBudget);
        }
        return r;
    }
    if (run.adaptive()) {
        const double measured = measureClock_.isValid() ? double(measureClock_.elapsed()) : 0.0;
        in.adaptiveCapLeftMs = std::max(0.0, spec::adaptiveTimeCapMs(run) - measured);
    } else if (!replicationOver_ && result_.arms.size() >= 2) {
        in.decisionDue = rounds_ < run.max_processes;
        in.roundsMayBeAdded = std::max(0, run.max_processes - rounds_);
        for (const auto& t : planRound(preset, std::max(1, rounds_), nextBlock_, addedRoundBlocks(run), false,
                                       blocksPerPoint_))
            if (pendingArm(t.arm)) in.addedRound.push_back(t);
    }
    if (decisionStartMs_ >= 0) in.decisionDue = false;  // under way: what is left of it below
    const ObservedCosts costs = costLog_.costs();
    r = estimateRemaining(in, costs);
    if (decisionStartMs_ >= 0 && r.known) {
        const double left = std::max(0.0, analysisMs(costs, in.samplesDone) - (elapsedMs() - decisionStartMs_));
        r.lowMs += left;
        r.highMs += left;
    }
    return r;
}

}  // namespace pitlane::session
