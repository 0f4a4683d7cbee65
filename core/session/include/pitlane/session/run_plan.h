#pragma once
// What a run will measure, said before it measures (issue 41: "60 asked" gave n = 120 and nothing
// said why). run.iters is measured per arm (and batch size, and worker) in run.processes rounds of
// fresh processes; replication may add rounds, up to run.max_processes, while a comparison is
// inconclusive, and adaptive stopping adds rounds until its target or time cap: the plan gives
// the least and the most that can be measured, the shape of a round, and the reason in words.
// Pure functions of the preset (no process): the CLI prints planText() before the first progress
// line, the window shows it in the run status panel, and the runner records it in the results'
// `replication` object with what was measured.
#include "pitlane/spec/preset.h"

#include <string>
#include <vector>

namespace pitlane::session {

struct MeasurementPlan {
    bool serving = false;   // a serving run counts levels, not iterations: no plan in iterations
    int asked = 0;          // run.iters
    int blockIters = 0;     // run.block_iters
    int processes = 1;      // rounds always run (plannedProcesses)
    int maxProcesses = 1;   // rounds at most (replication; == processes when it cannot add any)
    std::vector<int> blocks;       // every planned block's iterations (blockIterations)
    std::vector<int> roundIters;   // the iterations of each planned round (they sum to asked)
    std::vector<int> roundBlocks;  // ... and its blocks
    std::vector<int> addedRound;   // the blocks (their iterations) of a round added later
    int minIters = 0;       // measured at the least, per arm, batch size and worker
    int maxIters = 0;       // at the most; -1: open-ended until a time cap (adaptive stopping)
    bool adaptive = false;
    int capMs = 0;          // adaptive: the time cap
    bool capGiven = false;  // ... run.max_time_ms (else the default cap)
    double targetCiPct = 0; // adaptive: the CI target (0: none, timed only)
    int budgetMs = 0;       // planned from a time budget (budget_plan.h): the counts come later
    // Each arm runs its iterations per batch size of a sweep and per concurrent worker.
    bool perBatchSize = false, perWorker = false;
};

// The blocks of a round added after the planned ones (replication, adaptive stopping over fresh
// processes): the same as the first planned round, so every round measures alike and the "up to"
// is exact (issue 41: with iters 20 in 3 processes, rounds of 7 then added rounds of 10 made n 50).
std::vector<int> addedRoundBlocks(const spec::RunSettings& run);

MeasurementPlan measurementPlan(const spec::Preset& preset);

// In words, e.g. "60 asked -> 60-120 measured per arm: 3 processes of 2 blocks of 10 iterations,
// then up to 3 more processes of 2 blocks while a comparison is inconclusive (run.max_processes
// 6; give run.processes alone to measure exactly 60)"; "" for a serving run.
std::string planText(const MeasurementPlan& plan);

}  // namespace pitlane::session
