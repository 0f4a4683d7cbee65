#pragma once
// Runs an experiment in rounds of fresh worker processes (run.processes replicates per arm, in
// order-balanced rounds A1 B1, B2 A2, ...). In each round every arm gets a new process (K for the
// `workers` knob), configured one at a time (so cold costs are not measured under contention),
// warmed up, then measured in interleaved blocks A B A B ... so drift hits every arm; the
// measured blocks are shared out among the rounds. Shared by pitlane-cli and the window.
// QtCore only.
#include "pitlane/protocol/events.h"
#include "pitlane/results/run_feed.h"
#include "pitlane/results/run_result.h"
#include "pitlane/session/protocol_check.h"
#include "pitlane/session/remaining_time.h"
#include "pitlane/session/remote_launch.h"
#include "pitlane/session/round_plan.h"
#include "pitlane/session/startup_watch.h"
#include "pitlane/spec/preset.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <atomic>
#include <deque>
#include <map>
#include <set>
#include <memory>
#include <vector>

namespace pitlane::session {

class WorkerProcess;
class CompileStep;  // compile_step.h
struct FoldSource;   // event_fold.h
struct FoldEffects;  // event_fold.h

// Cancelled: stopped by the user (Stop, Esc, Ctrl+C) before it had measured all it was asked.
// Compiling: its exported program is being compiled into an AOTInductor package (compile_step.h).
enum class ArmPhase {
    Pending,
    Compiling,
    Starting,
    Loading,
    Ready,
    WarmingUp,
    Measuring,
    Waiting,
    Done,
    Failed,
    Cancelled
};
QString phaseName(ArmPhase p);

struct RunnerOptions {
    QString workerPath;  // pitlane-worker
    int stopGraceMs = 1000;  // after SIGTERM, SIGKILL
    // The start-up allowance (startup_watch.h): how long a worker may go without a hello before
    // the watchdog looks at what it does. 0: run.event_timeout_ms, at least 30 s.
    int startupAllowanceMs = 0;
};

// Where pitlane-worker is: $PITLANE_WORKER, else next to the running executable.
QString defaultWorkerPath();

class ExperimentRunner : public QObject {
    Q_OBJECT
public:
    explicit ExperimentRunner(RunnerOptions options, QObject* parent = nullptr);
    ~ExperimentRunner() override;

    void start(const spec::Preset& preset);
    // Cancel: every worker is asked to stop, then killed; everything measured is kept.
    void stop();
    bool isRunning() const { return running_; }
    // The last run was stopped by stop() (the user), not ended by its plan or a failure.
    bool wasStopped() const { return stopping_; }

    const results::RunResult& result() const { return result_; }
    ArmPhase phase(int arm) const;
    // The phase in words, with the seconds spent so far while compiling ("compiling 12 s").
    QString phaseLabel(int arm) const;
    // Seconds the compile under way has taken (0 when none).
    double compileElapsedS() const;
    // Measured iterations of the arm so far (every worker process of it, all rounds) and those
    // planned: the total grows when a round is added (replication, adaptive stopping) and shrinks
    // when a sweep point is given up, so done never exceeds total and they meet when the arm ends ok.
    int doneIters(int arm) const;
    int totalIters(int arm) const;
    double elapsedMs() const { return clock_.isValid() ? double(clock_.elapsed()) : 0.0; }
    // The time the run has left, from its whole plan priced with what it measured so far
    // (remaining_time.h): every task queued, the replication decision still due, and the rounds
    // replication may still add (the high end). Not known before every arm still measuring has
    // measured a block, nor for a serving run; {known, 0, 0} once the run ended.
    RemainingTime remaining() const;
    // `feed` hears of the run under way and every later one (results/run_feed.h), before this
    // object's signals are emitted; not owned: a feed destroyed first is dropped, and a feed
    // outliving this object is told sourceClosed().
    void addFeed(results::RunFeed* feed);
    void removeFeed(results::RunFeed* feed);

signals:
    void armPhaseChanged(int arm, pitlane::session::ArmPhase phase);
    // A worker's event, decoded (protocol/events.h), once it is folded into result(). Events that
    // do not decode, and unknown types, are not announced (a warning is logged, or the arm fails
    // with protocol_violation: worker_events.cpp).
    void armEvent(int arm, const pitlane::protocol::Event& event);
    // New measured samples were appended to result().arms[arm].samples[first, first + count).
    void samplesAppended(int arm, int first, int count);
    void warmupAppended(int arm);
    void metricsAppended(int arm);
    void logMessage(int arm, const QString& level, const QString& text);
    // What the run will measure changed: a budgeted run planned its rounds (budget_plan.h); the
    // text is result().replication["plan"].
    void planChanged(const QString& plan);
    void armFinished(int arm);
    void finished();

private:
    using Task = session::Task;  // round_plan.h
    struct WorkerState {
        std::unique_ptr<WorkerProcess> process;
        int procIndex = -1;  // in result().arms[arm].processes
        // Started ahead of its round: its hello (and an early exit) wait here until the round.
        nlohmann::json bufferedHello;
        bool exitedEarly = false, exitCrashed = false;
        int exitCode = 0;
        bool helloSeen = false;
        StartupProgress startup;  // until its hello: when it started, when it last made progress
        bool quitting = false;
        bool exited = false;
        bool sent = false;      // the current task was sent to this worker
        bool taskDone = false;  // ... and it finished it
        int servingIndex = -1;  // its level being served: in result().arms[arm].serving
        // What it was last told to do: every event it sends must fit (protocol_check.h), else
        // the arm fails with protocol_violation.
        WorkerTold told;
    };
    struct ArmState {
        std::vector<WorkerState> workers;  // this round's: `workers` knob, K concurrent processes
        int round = -1;                    // the replicate its current workers belong to
        std::map<int, std::vector<WorkerState>> ahead;  // later rounds' workers, started early
        ArmPhase phase = ArmPhase::Pending;
        int doneIters = 0, totalIters = 0;
        // The arm's warning about its slowest start-up past the allowance (index in
        // result().arms[arm].warnings, -1: none yet) and that start-up's wall time.
        int slowStartWarning = -1;
        double slowestStartMs = 0;
        // stderr lines already logged for this arm, less their glog prefix (a fresh process
        // prints libtorch's notices again: NativeRT's "missing static dispatched kernels" list
        // was six lines per process); repeats go unlogged, said once.
        std::set<QString> stderrSeen;
        bool stderrRepeatSaid = false;
    };

    // worker_events.cpp: each event decoded, checked (protocol_check.h), folded into the arm's
    // result (event_fold.h), then what the fold asks is done (apply).
    void onEvent(int arm, int worker, const nlohmann::json& ev);
    // The decoded event, or nullopt when it is not to be handled (unknown type, or it did not
    // decode: logged, or the arm failed).
    std::optional<protocol::Event> decodeFrom(int arm, int worker, const nlohmann::json& ev);
    // Fails the arm with protocol_violation, its samples discarded (they may have been forged).
    void failProtocol(int arm, const std::string& why);
    FoldSource sourceOf(int arm, int worker);
    void apply(int arm, int worker, const FoldEffects& fx);
    // serving_tasks.cpp: the batches of the level being served.
    void handle(int arm, int worker, const protocol::ServeBatches& e);
    void onExited(int arm, int worker, int code, bool crashed);
    void startRound(int round);
    std::vector<WorkerState> spawnWorkers(int arm, int round);
    QString remoteCommandFor(int arm);     // "" for a local arm
    QStringList localArgumentsFor(int arm);
    void connectWorker(WorkerProcess* proc, int arm, int w, int round);
    void activate(int arm, int round);
    bool startupSettled() const;
    static void quitWorkers(std::vector<WorkerState>& workers);
    // start(): the arms' results, pending; the model files checked (false: the preset's failed).
    void addArmResults(const spec::Preset& preset);
    bool checkModelFiles(const spec::Preset& preset);
    // The tasks of a round (planRound, round_plan.h) into the queue.
    void queueRound(int round, int firstBlock, const std::vector<int>& blockIters, bool allSweepPoints);
    // Queues a task; a measured block's iterations (times the arm's workers) join its total.
    void queueTask(const Task& t);
    // A block that will not be measured, or the part of it a worker will not measure, leaves it.
    void unplan(int arm, int iters);
    void checkApplied(int arm, int worker, const nlohmann::json& applied);
    void taskDoneBy(int arm, int worker);
    void quitArm(int arm);
    void setPhase(int arm, ArmPhase p);
    bool hasWorkLeft(int arm) const;
    // `detail`: the worker's (torch's whole message, the path…), kept in the results.
    void failArm(int arm, const std::string& status, const std::string& code, const std::string& message,
                 const nlohmann::json& detail = {});
    void next();
    void sendCurrent();
    void sendTask(Task& t);
    Task* activeFor(int arm);
    void abandon(int arm);
    void finishIfDone();
    void finalize();
    bool extendAdaptive();
    // budget_rounds.cpp: a run planned from its time budget (budget_plan.h): round 0 is set up
    // and warmed, then its blocks and the rounds that fit are queued; rounds are added while
    // the budget holds another.
    void startBudgeted();
    bool extendBudget();
    // At round `round`'s start: while the queued rounds would end past the budget (the machine
    // got busier than round 0 said), the last ones are dropped, down to kBudgetMinProcesses;
    // true when `round` itself was.
    bool trimBudget(int round);
    bool budgetDesigned_ = false;
    // A budgeted run's warmup iterations in rounds >= 1 (laterWarmupIters, budget_plan.h); -1:
    // run.warmup_iters.
    int laterWarmup_ = -1;
    bool budgetOver_ = false;
    // The group of tasks just finished (active_) and its wall time into costLog_.
    void recordGroupCost();
    CostLog costLog_;
    double groupStartMs_ = -1;     // when the group of tasks under way was sent
    double decisionStartMs_ = -1;  // when the replication decision under way began
    bool replicationOver_ = false; // replication decided not to add another round (or cannot)
    bool decideReplication();
    void replicationDecided(int decision, const nlohmann::json& reasons);
    void completeTasks();
    // serving_tasks.cpp: a serving preset's rounds (levels instead of blocks) and its events.
    void queueServingRound(int round);
    void queueServingSearch();
    bool prepareServe(Task& t);  // false: nothing to measure (the search has converged)
    void sendServe(Task& t);
    void onServeDone(int arm, int worker, const protocol::BlockDone& e);  // e.serving is set
    void armTimer();
    bool allHello(int arm) const;
    int startupTimeoutMs() const;
    // The watchdog while workers are starting: each worker without a hello judged by what it
    // does (startup_watch.h), polled; a task sent and unanswered for run.event_timeout_ms still
    // times out as after start-up.
    void watchStartups();
    // A worker's hello arrived: a start-up past the allowance becomes the arm's warning.
    void noteStarted(int arm, WorkerState& ws);
    bool watchingStartup_ = false;
    double lastEventMs_ = 0;  // when armTimer() last ran (an event of an active arm, or a send)

    // Calls `f` on every feed still alive (addFeed).
    template <class F>
    void toFeeds(F&& f) {
        for (const auto& weak : feeds_)
            if (const auto feed = weak.lock()) f(**feed);
    }
    void announceArmFinished(int arm);  // feeds, then armFinished

    std::vector<std::weak_ptr<results::RunFeed*>> feeds_;
    RunnerOptions options_;
    results::RunResult result_;
    std::vector<ArmState> arms_;
    std::deque<Task> tasks_;
    std::vector<Task> active_;  // the task being run (several when concurrent)
    bool running_ = false;
    bool stopping_ = false;
    bool finalizing_ = false;
    int deciding_ = 0;  // generation of the replication decision being computed (0: none)
    QTimer watchdog_, killTimer_;
    QElapsedTimer clock_;
    int timeoutMs_ = 60000;
    int nextBlock_ = 0;                 // index of the next adaptive round's blocks
    int rounds_ = 0;                    // replicate rounds queued so far
    int blocksPerPoint_ = 0;            // blocks per arm and sweep point (fixed part)
    // Processes of finished rounds, told to quit: kept until they exit.
    std::vector<std::unique_ptr<WorkerProcess>> retired_;
    QElapsedTimer measureClock_;        // since the first measured block was sent
    std::int64_t oomKillsAtStart_ = -1;  // the cgroup's OOM kills when the run started
    // The run's scratch folder: the only place a sandboxed worker may write (its $TMPDIR).
    // Made with the first worker, removed when the run is finalized.
    std::unique_ptr<QTemporaryDir> scratch_;
    QString scratchDir();
    // Remote arms (remote_launch.h): each host's preparation (model in its cache, scratch
    // folder), made in start() before any worker; the scratch folders are removed at finalize.
    // remote_arms.cpp: true when hosts are being prepared (on a thread; next() waits for
    // remoteHostsPrepared). preparing_: the generation of that preparation (0: none).
    std::map<std::string, RemotePrep> remote_;
    int preparing_ = 0;
    std::shared_ptr<std::atomic<bool>> prepCancelled_;  // set when the run ends first
    bool prepareRemoteHosts();
    void remoteHostsPrepared(const std::vector<RemotePrep>& preps);
    // The ssh command line an arm's workers were started with ("" for a local arm).
    std::vector<QString> remoteCommand_;
    // compile_arms.cpp: exported programs compiled before any worker starts (knob compile
    // "aoti"); true while compiling (next() waits for it). compiledPackage_: per arm, the
    // package its workers load ("" when not compiled).
    std::unique_ptr<CompileStep> compiler_;
    bool compiling_ = false;
    std::vector<QString> compiledPackage_;
    bool compileArms();
    void cancelCompile();
    void configureCompiled(int arm, nlohmann::json& armJson) const;
    QStringList readableFor(int arm) const;
};

}  // namespace pitlane::session

Q_DECLARE_METATYPE(pitlane::session::ArmPhase)
Q_DECLARE_METATYPE(pitlane::protocol::Event)
