#pragma once
// The time a run has left, from its whole plan (issue 41: one arm's pace since it started
// measuring said "20.2 s left" 24 s into a run that took 2 min 05 s, because rounds of fresh
// processes, their model loads and warmups, and the rounds replication adds were not counted).
// Every task still to come is priced with what the run measured so far: an arm's measured
// iteration (wall time of its blocks / their iterations), its warmup iteration, its set-up alone
// (process start, hello, configure, model load), a later round's set-up of every arm at once, a
// replication decision's bootstraps; rounds that may still be added are priced like the last
// planned round. A pure function: the runner gathers the costs (ExperimentRunner::remaining()),
// tests/session checks it against plans computed by hand.
#include "pitlane/session/round_plan.h"

#include <string>
#include <vector>

namespace pitlane::session {

// What the run measured so far; < 0: not measured yet.
struct ObservedCosts {
    std::vector<double> blockMsPerIter;   // per arm: wall time of its blocks / their iterations
    std::vector<double> warmupMsPerIter;  // per arm: of its warmups run alone
    std::vector<double> configureMs;      // per arm: set-up alone (start, hello, configure, load)
    double concurrentConfigureMs = -1;    // a later planned round's set-up of every arm at once
    // A round replication added starts its processes then (the planned ones were started ahead,
    // during round 0): its set-up (mean; < 0: none yet, priced as the longest set-up alone,
    // which includes a start) from round `addedFromRound` on (< 0: no such rounds).
    double addedConfigureMs = -1;
    int addedFromRound = -1;
    // Before an added round's set-up is measured: round 0's set-ups alone are its loads (the
    // shortest) plus, for the first, the start of every process started ahead; an added round
    // starts this share of them (its processes / those started ahead in round 0), and a start
    // on a machine with fewer cores than processes takes time in proportion to how many start.
    double addedStartShare = 1;
    double concurrentWarmupMs = -1;       // ... and its warmups at once (mean)
    // A replication decision's bootstraps per sample compared (mean of ms / samples); < 0: not
    // measured yet (analysisMs then uses kAnalysisPrior*). The verdict's analysis at the end of
    // the run (the CLI's table, the window's verdict) runs the same bootstraps on every sample.
    double analysisMsPerSample = -1;
};

// Before a decision was measured: 10 ms + 35 us per sample (the decisions measured on this 2-core
// machine: 13 ms for 120 samples of the default preset, 1.4 s for 40 000 of an mlp run).
inline constexpr double kAnalysisPriorMs = 10;
inline constexpr double kAnalysisPriorMsPerSample = 0.035;
// A decision's (or the final verdict's) bootstraps over `samples` samples.
double analysisMs(const ObservedCosts& c, double samples);

// The costs as means of what was measured: the runner records each group of tasks it ran (one
// task, or the concurrent set-up of a round) with its wall time, and each replication decision.
class CostLog {
public:
    // Rounds from `addedFromRound` on were added (replication, adaptive stopping): their set-up
    // is logged apart (-1: none are).
    explicit CostLog(int arms = 0, int addedFromRound = -1, double addedStartShare = 1);
    // A group of tasks sent together and finished after `ms` (blocks: one arm's; set-up and
    // warmup: one arm's, or every arm's at once when concurrent).
    void record(const std::vector<Task>& group, double ms);
    void recordDecision(double ms, double samples);
    ObservedCosts costs() const;

private:
    struct Mean {
        double sum = 0, n = 0;
        void add(double v, double w = 1) { sum += v, n += w; }
        double get() const { return n > 0 ? sum / n : -1; }
    };
    std::vector<Mean> block_, warmup_, configure_;
    Mean concurrentConfigure_, addedConfigure_, concurrentWarmup_, analysis_;
    int addedFrom_ = -1;
    double addedStartShare_ = 1;
};

struct RemainingTime {
    bool known = false;  // false until every arm still to measure has a measured warmup or block
    double lowMs = 0;    // the tasks queued, the replication decision due, the verdict's analysis
    double highMs = 0;   // ... and every round that may still be added (== lowMs when none)
};

struct RemainingInput {
    // Tasks not finished, in queue order: the group under way first (its members flagged
    // concurrent when they run at once), then the queue; StartRound costs nothing.
    std::vector<Task> pending;
    double activeElapsedMs = 0;  // time the group under way has run (taken off its cost)
    // Rounds replication may still add, each like `addedRound` (planRound's tasks of one), and
    // whether a replication decision is still due after the queued tasks.
    int roundsMayBeAdded = 0;
    std::vector<Task> addedRound;
    bool decisionDue = false;
    // The samples measured so far (every arm still measuring), each arm's concurrent workers
    // (samples per iteration; 1 when absent), and whether the verdict's analysis follows the run.
    double samplesDone = 0;
    std::vector<int> workers;
    bool finalAnalysis = true;
    // Adaptive stopping: rounds are added until a time cap; the high end is at least the time
    // left to it (< 0: not adaptive).
    double adaptiveCapLeftMs = -1;
};

// The cost of tasks, grouped as the runner runs them: consecutive concurrent tasks of the same
// kind and round cost their longest (or the measured concurrent set-up); the rest add up.
// known is false when a block, warmup or set-up has no measured cost to price it with (before
// an arm's first block its blocks are priced with the other arms' block pace, else its warmup's).
RemainingTime estimateRemaining(const RemainingInput& in, const ObservedCosts& costs);

// "4.2 s" below 10 s, "12 s", "1:05" (whole seconds, rounded).
std::string clockText(double ms);
// "about 45 s left", "about 45 s left (up to 1:40 if rounds are added)"; "" when not known.
std::string remainingText(const RemainingTime& r);

}  // namespace pitlane::session
