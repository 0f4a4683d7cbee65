#pragma once
// A run planned from a time budget (run.budget_ms, `pitlane-cli run --time`; issue 43): how many
// iterations each fresh worker process measures, and how many processes fit, from what the run
// measured so far — a round's set-up (start, load, configure, warmup: every arm), an iteration of
// every arm — and how the variance splits between processes and iterations.
//
// Kalibera & Jones ("Rigorous benchmarking in reasonable time", ISMM 2013): with a cost c_p per
// process and c_i per iteration, and variance components T_p^2 between processes and T_i^2
// between iterations of one process, the variance of the estimate over P processes of n
// iterations is T_p^2 / P + T_i^2 / (P n), and for a given cost it is least at
//     n = sqrt( (c_p / c_i) * T_i^2 / T_p^2 ).
// P is then as many processes as the budget holds (at least kBudgetMinProcesses: the CI's process
// level needs them; at most run.max_processes, beyond which iterations take the rest).
// Pure functions: ExperimentRunner prices the rounds with estimateRemaining (remaining_time.h)
// and queues what designRounds returns; tests/session checks them against figures by hand.
#include "pitlane/session/remaining_time.h"
#include "pitlane/stats/stats.h"
#include "pitlane/spec/preset.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace pitlane::session {

// Before a run has measured three processes of an arm: T_i^2 / T_p^2 as the variance shares of
// the runs measured on this project's 2-core machines put it (log latency of one iteration within
// a process vs the process means: a CV of 5-10 % per iteration, 2-5 % between processes).
inline constexpr double kPriorIterToProcessVariance = 4.0;
// A process measures at least this many iterations (a median of fewer says little), at most
// kMaxItersPerProcess when the budget is long and the processes capped.
inline constexpr int kMinItersPerProcess = 3;
inline constexpr int kMaxItersPerProcess = 100000;
// A process measures at most this many blocks (each arm's): a fast model's thousands of
// iterations go in longer blocks, not in thousands of round trips and progress lines.
inline constexpr int kMaxBlocksPerProcess = 8;

// T_i^2 / T_p^2 from the blocks measured so far: T_i^2 the pooled within-process variance of log
// latency (one iteration), T_p^2 the variance of the processes' mean log latency less what their
// iterations explain (S_p^2 - T_i^2 / n, n their mean count). Pooled over the arms (the variance
// of a ratio adds theirs). < 0 when no arm has two processes with two iterations each; a process
// level indistinguishable from its iterations (T_p^2 <= 1 % of T_i^2 / n) reads as that 1 %, so
// the ratio stays finite.
struct VarianceSplit {
    double iterationVar = 0;  // T_i^2
    double processVar = 0;    // T_p^2
    double ratio = -1;        // T_i^2 / T_p^2
    int processes = 0;        // the fewest processes of an arm that entered it
};
VarianceSplit varianceSplit(const std::vector<stats::BlockedSamples>& arms);

struct RoundCosts {
    double setupMs = 0;  // a later round's set-up: its processes' start, load, configure, warmup
    double iterMs = 0;   // one iteration of every arm, as the blocks run them
    bool known = false;
};
// From the run's measured costs: a round like `round` (>= 1) priced with no blocks and with 100
// iterations per arm (remaining_time.h prices them as the runner runs them), its warmups of
// `warmupIters` (< 0: run.warmup_iters).
RoundCosts roundCosts(const spec::Preset& preset, const ObservedCosts& costs, int round, int warmupIters = -1);

// A budgeted run's later rounds warm up for as long as round 0's processes took to settle, not
// for the preset's warmup_iters (issue 43: ten warmups of a 0.5 s forward were most of a
// vit_b_16 process's cost; ten of resnet18's a third of the default preset's). An arm's warmup
// settled after s iterations when none from s on is slower than kWarmupSettledFactor x the median
// of its second half; the later rounds warm up max over arms of s + kWarmupMargin iterations, at
// least kMinLaterWarmupIters, never more than asked. An arm that cannot be judged keeps what
// was asked: fewer than kMinJudgedWarmup warmups, several workers per arm (their warmups
// interleave), or not settled within the first half (a slow iteration late in the warmup: load,
// or a model still warming).
inline constexpr double kWarmupSettledFactor = 1.25;
inline constexpr int kWarmupMargin = 2;
inline constexpr int kMinLaterWarmupIters = 3;
inline constexpr int kMinJudgedWarmup = 6;
struct LaterWarmup {
    int iters = 0;                 // the later rounds' warmup iterations
    std::vector<int> settledAfter; // per arm; -1 when the arm could not be judged
    std::string reason;            // why `iters`, in words
    nlohmann::json toJson(int asked) const;
};
// Each arm's round-0 warmup latencies (any unit), the warmup asked.
LaterWarmup laterWarmupIters(int asked, const std::vector<std::vector<double>>& warmups);

// Round 0's own warmup, before anything is measured: at most kRound0WarmupShare of the budget,
// priced by the arm's first forward (configure's, the slowest it will be), at least
// kMinJudgedWarmup iterations so that laterWarmupIters can judge it, never more than asked
// (issue 43: ten warmups of vit_b_16, 1.2-2.4 s a forward under load, were a 30 s budget's
// whole first round). firstForwardMs <= 0 (not reported): as asked.
inline constexpr double kRound0WarmupShare = 0.10;
int round0WarmupIters(int asked, double firstForwardMs, int budgetMs);

struct BudgetDesign {
    int itersPerProcess = 0;  // n, per arm (and worker)
    std::vector<int> blocks;  // n as blocks of run.block_iters, at most kMaxBlocksPerProcess
    int processes = 0;        // P planned in all (rounds), counting those already set up
    double roundMs = 0;       // one more round's predicted cost (set-up + n iterations)
    double predictedMs = 0;   // the run's predicted end, from its start
    double ratio = 0;         // T_i^2 / T_p^2 used
    std::string ratioSource;  // "prior" or "measured over N processes"
    bool overBudget = false;  // the least design (kBudgetMinProcesses) does not fit
    nlohmann::json toJson() const;
};
// The design for the rounds still to come. `elapsedMs`: the run so far; `roundsSetUp`: rounds
// whose processes are set up (their blocks may still be to queue: `pendingBlocksRound` is one
// whose blocks are not queued yet, -1 none); `leftOverMs`: what the tasks already queued cost.
struct BudgetInput {
    int budgetMs = 0;
    double elapsedMs = 0;
    double queuedMs = 0;        // tasks already queued, not yet run
    int roundsPlanned = 0;      // rounds queued or run so far (each with its blocks)
    bool firstRoundOpen = false;  // round 0 is set up and warmed, its blocks not queued yet
    int blockIters = 10;
    int maxProcesses = 20;
    double analysisMs = 0;      // the verdict's bootstraps at the end
    RoundCosts costs;
    double ratio = kPriorIterToProcessVariance;
    std::string ratioSource = "prior";
};
BudgetDesign designRounds(const BudgetInput& in);

// n iterations as blocks of at most `blockIters` (as even as possible: 25 in blocks of 10 is
// 9, 8, 8).
std::vector<int> blocksOf(int n, int blockIters);

// "budget 30 s: processes, blocks and iterations planned from the first forwards' times"
std::string budgetPlanText(int budgetMs);
// "planned: 9 processes x 2 blocks x 10 iterations per arm, about 28 s (budget 30 s)"
std::string designText(const BudgetDesign& d, int budgetMs);

}  // namespace pitlane::session
