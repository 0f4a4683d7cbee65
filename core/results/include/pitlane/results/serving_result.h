#pragma once
// A serving run's results (issue 13): every level each worker process served (its raw batches
// and arrivals, so everything below is recomputed from them), the summaries per offered rate,
// the highest rate within the SLO, and the comparisons against the baseline arm.
// No Qt, no torch.
#include "pitlane/protocol/record.h"
#include "pitlane/serving/serve_loop.h"
#include "pitlane/serving/serve_summary.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace pitlane::serving {
// A load as JSON (arrival, rate_per_s, clients, duration_ms, seed, max_batch, max_wait_ms,
// saturation_ms, idle_wait), and back: a missing field, or one of the wrong type, keeps its
// default (a damaged history row must not make the run unreadable). nlohmann's ADL hooks.
void to_json(nlohmann::json& j, const LoadSpec& l);
void from_json(const nlohmann::json& j, LoadSpec& l);
}  // namespace pitlane::serving

namespace pitlane::results {

struct RunResult;

// One level as one worker process served it.
struct ServingLevel {
    int level = 0;           // index in serving.rates / clients; -1: a step of the SLO search
    int process = 0;         // replicate (round)
    int worker = 0;          // which of the arm's workers (each served 1/K of the load)
    double rate_per_s = 0;   // the arm's offered rate at this level (all its workers together)
    int clients = 0;         // closed loop: the arm's clients (all its workers together)
    serving::LoadSpec load;  // what this worker was asked: its share of the rate, seed, batcher
    serving::LevelRecord record;
    bool complete = false;   // its block_done came (else it was cut short: failure, Stop)
};

// Its one description (protocol/record.h) but its record's arrays: the results JSON's
// serving.levels[] entry (which adds arrival_ns and batches), the history's serving_levels
// columns, and the copies that leave the arrays behind (the recorder's rows, the live verdict's
// mirror).
inline auto fieldsOf(const ServingLevel*) {
    using protocol::record::field;
    using L = ServingLevel;
    using Rec = serving::LevelRecord;
    return std::make_tuple(field("level", &L::level), field("process", &L::process),
                           field("worker", &L::worker), field("rate_per_s", &L::rate_per_s),
                           field("clients", &L::clients), field("complete", &L::complete),
                           field("load", &L::load), field("scheduled", &L::record, &Rec::scheduled),
                           field("max_queue", &L::record, &Rec::max_queue),
                           field("stopped_early", &L::record, &Rec::saturated));
}
// The level without its record's arrays (nothing of them copied).
ServingLevel withoutArrays(const ServingLevel& l);

// One offered rate (or client count) of one arm, every process of it.
struct ServingPoint {
    double rate_per_s = 0;
    int clients = 0;
    bool search = false;  // measured by the SLO search only
    serving::LevelSummary pooled;                   // every request of every process
    std::vector<serving::LevelSummary> processes;   // per replicate (its workers pooled)
    int meeting_slo = 0;                            // processes whose own p99 met the SLO
    // Pooled p99 within the SLO and no process saturated.
    bool meetsSlo() const;
};

// The arm's points in increasing rate (or clients); only complete levels count.
std::vector<ServingPoint> servingPoints(const RunResult& run, std::size_t arm);

// The highest offered rate that met the SLO with every lower rate measured meeting it too, and
// the lowest that missed it (0: none). resolution: their gap relative to max_rate.
struct SloCapacity {
    double max_rate_per_s = 0;
    double first_failing_per_s = 0;
    bool measured() const { return max_rate_per_s > 0 || first_failing_per_s > 0; }
};
SloCapacity sloCapacity(const std::vector<ServingPoint>& points);

// The SLO search (bisection) for one arm: the next rate to measure, from what was measured.
// Bracketed by the highest rate meeting the SLO and the lowest missing it; above every listed
// rate it doubles, below them it halves. 0 when the bracket is already within 2 %.
double nextSearchRate(const std::vector<ServingPoint>& points);

// An arm against the baseline at one listed level: the ratio of p99 (and p50) with a 95 % CI
// from a bootstrap that resamples the processes, then blocks of consecutive requests within
// each (requests queued behind each other are correlated; DESIGN.md "Measurement").
struct ServingComparison {
    std::size_t arm = 0, baseline = 0;
    double rate_per_s = 0;
    int clients = 0;
    double p99_ratio = 0, p99_lo = 0, p99_hi = 0;
    double p50_ratio = 0, p50_lo = 0, p50_hi = 0;
    bool arm_saturated = false, baseline_saturated = false;
    bool significant = false;  // the p99 CI excludes 1, or exactly one of them saturated
    std::string text;          // one sentence
};
std::vector<ServingComparison> compareServing(const RunResult& run);
// The bootstrap on its own (tests): ratio of the q-th percentile of b over a. Each entry of a
// and b is one process: its workers' end-to-end latencies (ms), each in arrival order.
struct RatioCi {
    double ratio = 0, lo = 0, hi = 0;
};
RatioCi percentileRatioCi(const std::vector<std::vector<std::vector<double>>>& a,
                          const std::vector<std::vector<std::vector<double>>>& b, double q,
                          int resamples, std::uint64_t seed);

// The verdict of a serving run in a few lines: the capacity within the SLO per arm, then the
// comparison at each level. Empty for a run without serving.
std::vector<std::string> servingVerdict(const RunResult& run);

// The results JSON's parts: an arm's "serving" object (points, capacity, raw levels), and back.
nlohmann::json servingArmJson(const RunResult& run, std::size_t arm);
std::vector<ServingLevel> servingLevelsFromJson(const nlohmann::json& j);
nlohmann::json servingComparisonsJson(const RunResult& run);

// The CLI's table: one row per arm and level.
std::string servingTable(const RunResult& run);
// One row per served request: arm,process,worker,rate_per_s,clients,request,arrival_ns,
// batch_size,queue_wait_ns,formation_wait_ns,inference_ns,end_to_end_ns.
std::string servingRequestsCsv(const RunResult& run);

}  // namespace pitlane::results
