#pragma once
// How long a worker may take to say hello (issue 42 item 4): the deadline follows the machine.
// A worker that has not said hello is loading libtorch; on an overloaded machine (20 runs at once,
// 120 workers starting on 2 cores: load 83) that takes minutes of wall time for a fraction of a
// second of CPU. A fixed deadline failed those arms as "hung" although every worker was making
// progress. Here a worker is judged by what it does, read from /proc:
//   - it used no CPU and was neither runnable (waiting for a CPU) nor in disk wait for the whole
//     allowance: it is blocked, not slow -> hung, killed (as early as the old fixed deadline);
//   - it used more CPU than any start-up needs (kCpuCapMinMs, or the allowance if longer): it is
//     spinning -> hung, killed;
//   - it is still starting after kOverloadFactor x the allowance x the load per core: the machine
//     is too overloaded to start it -> failed as "machine_overloaded", saying so;
//   - otherwise it waits; past the allowance, while it shows progress (within the last half
//     allowance), it is "slow", said once as a warning with the load
//     and the CPU it used ("the machine is overloaded: load 23 on 2 cores; the worker used 0.4 s
//     of CPU in 75 s").
// A worker whose CPU cannot be read (a remote worker behind ssh, whose local process is ssh) keeps
// a fixed deadline: the allowance times the local load per core. Pure functions and /proc readers;
// the runner's watchdog (experiment_runner.cpp) polls them. No Qt.
#include <string>

namespace pitlane::session {

// The error code of an arm whose worker could not start because the machine is overloaded (said
// by the session; status "timeout"). A hung worker keeps code "timeout".
inline constexpr const char* kMachineOverloadedCode = "machine_overloaded";

// The machine's load: the 1-minute load average (runnable + disk-wait tasks) and the cores it is
// spread over. Unknown when /proc/loadavg cannot be read.
struct MachineLoad {
    double load1 = -1;
    int cores = 0;
    bool known() const { return load1 >= 0 && cores > 0; }
    // Runnable tasks per core, at least 1 (an idle machine does not shorten a deadline).
    double factor() const;
    std::string text() const;  // "load 23.4 on 2 cores" ("load unknown" when not known)
};

// One process as /proc/PID/stat shows it.
struct ProcStat {
    bool ok = false;
    char state = '?';   // R running/runnable, D disk wait, S sleeping, T stopped, Z zombie, ...
    double cpuMs = 0;   // utime + stime
};

// Parsers of the files' text (the comm field may hold spaces and parentheses); false when the
// text is not what the kernel writes.
bool parseProcStat(const std::string& text, double ticksPerSecond, ProcStat* out);
bool parseLoadavg(const std::string& text, double* load1);

ProcStat readProcStat(long pid);  // ok false when the process is gone or pid <= 0
MachineLoad readMachineLoad();    // /proc/loadavg over the online CPUs

// One worker still starting, as the watchdog last saw it.
struct StartupReading {
    double elapsedMs = 0;        // since it was started
    double cpuMs = -1;           // its CPU time so far; < 0: not known (behind ssh, /proc unreadable)
    double sinceProgressMs = 0;  // since its CPU time last grew or it was last runnable / in disk wait
};

enum class StartupVerdict { Wait, Slow, Hung, Overloaded };

struct StartupJudgement {
    StartupVerdict verdict = StartupVerdict::Wait;
    std::string message;  // for Slow, Hung, Overloaded: what was seen, in words
};

struct StartupPolicy {
    // The allowance: run.event_timeout_ms, at least 30 s (RunnerOptions can set it).
    double allowanceMs = 60000;
    // A start-up takes well under a second of CPU here (0.37 s measured, pip torch 2.11): this
    // much CPU without a hello is a loop, not a start-up.
    static constexpr double kCpuCapMinMs = 30000;
    // A worker still making progress is given up only after this many allowances, scaled by the
    // load per core: then the machine cannot start it in any useful time.
    static constexpr double kOverloadFactor = 5;
    double cpuCapMs() const;
    double overloadCapMs(const MachineLoad& load) const;
};

StartupJudgement judgeStartup(const StartupPolicy& policy, const StartupReading& r, const MachineLoad& load);

// The watchdog's memory of one worker: when it started and when it last made progress.
struct StartupProgress {
    double startedMs = -1;
    double lastCpuMs = -1;
    double lastProgressMs = -1;
    bool slowSaid = false;  // the Slow warning was given
    void start(double nowMs);
    // Takes a /proc reading at nowMs (ok false: CPU unknown) and returns what the policy judges.
    StartupReading observe(double nowMs, const ProcStat& st);
};

// "0.4 s of CPU in 75 s" and the like: seconds with one decimal below 10, whole above.
std::string seconds(double ms);

}  // namespace pitlane::session
