#pragma once
// Runs an experiment: one worker process per arm, configured one at a time (so cold costs are
// not measured under contention), then measured in interleaved blocks A B A B ... so drift hits
// every arm. Shared by pitlane-cli and the window. QtCore only.
#include "pitlane/results/run_result.h"
#include "pitlane/spec/preset.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <deque>
#include <memory>
#include <vector>

namespace pitlane::session {

class WorkerProcess;

enum class ArmPhase { Pending, Starting, Loading, Ready, WarmingUp, Measuring, Waiting, Done, Failed };
QString phaseName(ArmPhase p);

struct RunnerOptions {
    QString workerPath;  // pitlane-worker
    int stopGraceMs = 1000;  // after SIGTERM, SIGKILL
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

    const results::RunResult& result() const { return result_; }
    ArmPhase phase(int arm) const;
    int doneIters(int arm) const;
    int totalIters(int arm) const;
    double elapsedMs() const { return clock_.isValid() ? double(clock_.elapsed()) : 0.0; }

signals:
    void armPhaseChanged(int arm, pitlane::session::ArmPhase phase);
    void armEvent(int arm, const nlohmann::json& event);
    // New measured samples were appended to result().arms[arm].samples[first, first + count).
    void samplesAppended(int arm, int first, int count);
    void warmupAppended(int arm);
    void metricsAppended(int arm);
    void logMessage(int arm, const QString& level, const QString& text);
    void armFinished(int arm);
    void finished();

private:
    struct Task {
        enum Kind { Configure, Warmup, Block } kind;
        int arm;
        int block = -1;
        int iters = 0;
        int batchSize = 1;
    };
    struct WorkerState {
        std::unique_ptr<WorkerProcess> process;
        bool helloSeen = false;
        bool quitting = false;
        bool exited = false;
        bool sent = false;      // the current task was sent to this worker
        bool taskDone = false;  // ... and it finished it
    };
    struct ArmState {
        std::vector<WorkerState> workers;  // `workers` knob: K concurrent processes
        ArmPhase phase = ArmPhase::Pending;
        int doneIters = 0, totalIters = 0;
    };

    void onEvent(int arm, int worker, const nlohmann::json& ev);
    void onExited(int arm, int worker, int code, bool crashed);
    void taskDoneBy(int arm, int worker);
    void quitArm(int arm);
    void setPhase(int arm, ArmPhase p);
    void failArm(int arm, const std::string& status, const std::string& code, const std::string& message);
    void next();
    void sendCurrent();
    void finishIfDone();
    void finalize();
    bool extendAdaptive();
    void armTimer();
    bool allHello(int arm) const;
    int startupTimeoutMs() const;

    RunnerOptions options_;
    results::RunResult result_;
    std::vector<ArmState> arms_;
    std::deque<Task> tasks_;
    std::optional<Task> current_;
    bool running_ = false;
    bool stopping_ = false;
    bool finalizing_ = false;
    QTimer watchdog_, killTimer_;
    QElapsedTimer clock_;
    int timeoutMs_ = 60000;
    int nextBlock_ = 0;                 // index of the next adaptive round's blocks
    QElapsedTimer measureClock_;        // since the first measured block was sent
};

}  // namespace pitlane::session

Q_DECLARE_METATYPE(pitlane::session::ArmPhase)
