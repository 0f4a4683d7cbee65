#pragma once
// The plan of a run in rounds of fresh worker processes (DESIGN.md "Measurement"): how the
// measured iterations become blocks, which blocks each round measures, and the tasks of a round
// in order-balanced order. Pure functions of the preset: ExperimentRunner queues what they
// return; tests/session checks them without any process.
#include "pitlane/spec/preset.h"

#include <vector>

namespace pitlane::session {

// One step the runner sends to an arm's workers.
struct Task {
    enum Kind { StartRound, Configure, Warmup, Block, Serve, Profile } kind;
    int arm;  // -1 for StartRound (every arm)
    int block = -1;
    int iters = 0;
    int batchSize = 1;
    int round = 0;
    // Runs together with the neighbouring tasks of the same kind and round (configure and
    // warmup of later replicates on CPU: nothing of theirs is reported as a cold cost).
    bool concurrent = false;
    bool finished = false;
    // Serve: the level (index in serving.rates / clients; -1: a step of the SLO search, whose
    // rate is chosen when it is due) and the arm's offered rate or clients.
    int level = 0;
    double rate = 0;
    int clients = 0;
};

// The processes a fixed plan uses per arm: run.processes, at most one per iteration.
int plannedProcesses(const spec::RunSettings& run);
// The measured iterations of each sweep point, as blocks: ceil(iters / block_iters) blocks, or
// one block per process when there are more processes than that (the iterations then shared out
// evenly). Sums to run.iters.
std::vector<int> blockIterations(const spec::RunSettings& run);
// Round r of `processes` measures a contiguous share of the blocks: [first, first + size).
struct RoundShare {
    int first = 0;
    std::vector<int> iters;
};
RoundShare roundShare(const std::vector<int>& blockIters, int processes, int round);

// Arms in round order: reversed in odd rounds, so no arm is always first after a start or
// always last (order balance).
std::vector<int> roundOrder(int arms, int round);
// Later rounds on CPU configure and warm up all arms at once; on CUDA one at a time
// (cudnn.benchmark times algorithms during the first forwards), and the first round always.
bool setUpConcurrently(const spec::Preset& preset, int round);

// The tasks of round `round`: StartRound, every arm's Configure, then per sweep point (only the
// first unless allSweepPoints) the warmups and the blocks `firstBlock + b` interleaved in round
// order; block ids of sweep point s are offset by s * blocksPerPoint. `warmupIters` >= 0 replaces
// run.warmup_iters (a budgeted run's later rounds: laterWarmupIters, budget_plan.h).
std::vector<Task> planRound(const spec::Preset& preset, int round, int firstBlock,
                            const std::vector<int>& blockIters, bool allSweepPoints,
                            int blocksPerPoint, int warmupIters = -1);

}  // namespace pitlane::session
