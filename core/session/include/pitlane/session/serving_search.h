#pragma once
// A serving preset's levels (issue 13) as pure functions: what each worker is asked to serve at a
// level or a step of the SLO search, the `serve` command that asks it, the search's next rate,
// and what a level's serve_batches and block_done events do to it. serving_tasks.cpp (part of
// ExperimentRunner) sends and receives; tests/session checks these without any process.
#include "pitlane/protocol/events.h"
#include "pitlane/results/run_result.h"
#include "pitlane/session/round_plan.h"

#include <cstdint>

namespace pitlane::session {

// The seed of a worker's arrivals at a level of a round: both arms get the same sequence
// (common random numbers: the comparison is not blurred by different luck in the arrivals);
// rounds and workers differ. Never 0.
std::uint64_t levelSeed(std::uint64_t runSeed, int round, int level, int worker);

// What worker `worker` of the arm's `workers` serves for `t` (a level, or a search step at
// t.rate) in round `round`: each serves 1/K of the load (its own arrivals: a Poisson process
// split at random is K Poisson processes of rate/K; the closed loop's clients are shared out).
results::ServingLevel servingLevelFor(const spec::Preset& preset, const Task& t, int round, int worker,
                                      int workers);

// The `serve` command that asks a worker to serve `level` as block `block`.
nlohmann::json serveCommand(const spec::ServingSpec& sv, const results::ServingLevel& level, int block);

// A search step's rate for the arm, from everything it measured so far; 0 when the search has
// converged (no next rate, or one already measured: it would only repeat a level, and its point
// would pool two levels of one process as if they ran side by side).
double searchStepRate(const results::RunResult& run, std::size_t arm);

// A level's batches as they complete (serve_batches). Throws std::runtime_error when the event
// is out of step with the batches received (a gap, a repeat, arrays of different lengths).
void appendServeBatches(results::ServingLevel& level, const protocol::ServeBatches& e);

// The level's block_done (e.serving set): what the loop reports that the batches do not; the
// level is complete unless the worker was stopped.
void closeServingLevel(results::ServingLevel& level, const protocol::BlockDone& e);

}  // namespace pitlane::session
