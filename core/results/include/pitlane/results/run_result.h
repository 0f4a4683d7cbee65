#pragma once
// A run's results as value types: what the orchestrator collected from each worker, and its
// conversion to the results JSON of CONTRACT.md, the CSV of samples and the text table.
// No Qt, no torch.
#include "pitlane/protocol/events.h"
#include "pitlane/protocol/protocol.h"
#include "pitlane/protocol/record.h"
#include "pitlane/results/compile_info.h"
#include "pitlane/results/sample_series.h"
#include "pitlane/results/serving_result.h"
#include "pitlane/spec/knob_table.h"
#include "pitlane/spec/preset.h"
#include "pitlane/stats/stats.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pitlane::results {

using json = nlohmann::json;

// CONTRACT.md statuses.
inline constexpr const char* kOk = "ok";
inline constexpr const char* kFailed = "failed";
inline constexpr const char* kCrashed = "crashed";
inline constexpr const char* kKilled = "killed";
inline constexpr const char* kTimeout = "timeout";
inline constexpr const char* kCancelled = "cancelled";
inline constexpr const char* kPending = "pending";

// One worker process of an arm: replicate r (the round) x worker k (the `workers` knob).
struct ProcessInfo {
    int replicate = 0;
    int worker = 0;
    long pid = 0;
    double load_ms = -1, first_forward_ms = -1;  // its own cold costs (-1: not reported)
    // The counters of the timed loops of its measured blocks (block_done; the list is
    // protocol/loop_counters.h), summed, and the iterations and wall time they cover (0: not
    // reported): cpu_ms / cpu_wall_ms = the cores it kept busy while measuring.
    std::int64_t fault_iters = 0;
    double cpu_wall_ms = 0;
#define PITLANE_PROCESS_COUNTER(T, name) T name = 0;
    PITLANE_LOOP_COUNTERS(PITLANE_PROCESS_COUNTER)
#undef PITLANE_PROCESS_COUNTER
    double minorFaultsPerIter() const { return fault_iters > 0 ? double(minor_faults) / double(fault_iters) : -1; }
    double majorFaultsPerIter() const { return fault_iters > 0 ? double(major_faults) / double(fault_iters) : -1; }
    // Adds a measured block's counters (a block_done of phase "measure").
    void addBlock(const protocol::BlockDone& e);
};
// Its one description (protocol/record.h): the results JSON's processes[] entry, the history's
// processes columns (the JSON names), their read-back and equality.
inline auto fieldsOf(const ProcessInfo*) {
    using protocol::record::field;
    using P = ProcessInfo;
    return std::tuple_cat(
        std::make_tuple(field("replicate", &P::replicate), field("worker", &P::worker),
                        field("pid", &P::pid), field("load_ms", &P::load_ms),
                        field("first_forward_ms", &P::first_forward_ms),
                        field("fault_iters", &P::fault_iters), field("cpu_wall_ms", &P::cpu_wall_ms)),
        protocol::loopCounterFields<P>());
}

// A process's measured figures at the arm's first batch size.
struct ProcessSummary {
    ProcessInfo info;
    std::size_t n = 0;
    double median_ns = 0;
};

struct MetricTick {
    double t_ms = 0;  // since the orchestrator started the run, when the session received it
    // When the worker read its counters, on the worker's own clock (ms since its sampler
    // started; protocol Metrics::t_ms): a process's CPU rate is taken between two of its own
    // readings (cpu_rates.h). -1: not reported (a run recorded before issue 41).
    double sampled_ms = -1;
    int worker = 0;
    int process = 0;  // replicate
    std::int64_t rss_bytes = 0, peak_rss_bytes = 0;
    std::int64_t tensor_bytes = -1, tensor_peak_bytes = -1;  // -1: not reported
    double cpu_s = 0;
    std::vector<double> core_util_pct;
    json raw;  // the metrics event (context switches, migrations, GPU fields, ...)
};
// Its one description: the results JSON's metrics[] entry (but `raw`: a few of its keys) and the
// history's metrics columns (named apart where they differ).
inline auto fieldsOf(const MetricTick*) {
    using protocol::record::field;
    using M = MetricTick;
    return std::make_tuple(
        field("t_ms", &M::t_ms), field("sampled_ms", &M::sampled_ms), field("worker", &M::worker),
        field("process", &M::process),
        field("rss_bytes", &M::rss_bytes, "rss"), field("peak_rss_bytes", &M::peak_rss_bytes, "peak_rss"),
        field("tensor_bytes", &M::tensor_bytes), field("tensor_peak_bytes", &M::tensor_peak_bytes),
        field("cpu_s", &M::cpu_s), field("core_util_pct", &M::core_util_pct, "core_util"),
        field("raw", &M::raw));
}
// The tick of a metrics event at t_ms.
MetricTick metricTick(const protocol::Metrics& e, double tMs, int worker, int process);

struct ArmResult {
    std::string name;
    // As requested: the arm's knobs (spec::Knobs, with its model format's defaults where it
    // wrote nothing) and which of them it wrote (the results JSON's arms[].knobs lists those
    // alone, as written: knobsJson).
    spec::Knobs knobs;
    spec::WrittenKnobs knobs_written;
    int batch_size = 1;
    std::string status = kPending;
    std::optional<protocol::Error> error;
    json environment = json::object();  // hello.environment
    std::string host;  // where its workers ran: "" this machine, else the ssh destination
    // The model file it measured (issue 26; CONTRACT.md arms[].model, model_sha256,
    // model_format): its path, the SHA-256 checked before any worker started ("" when the file
    // could not be read, or a run stored before), and "torchscript" or "aoti".
    std::string model;
    std::string model_sha256;
    std::string model_format;
    // An exported program Pitlane compiled into an AOTInductor package before measuring it
    // (knob compile "aoti", session/compile_step.h): model / model_format stay the program's.
    std::optional<CompileInfo> compile;
    protocol::Applied applied;          // the applied event of its first worker (typed read-back)
    json loaded = json::object();       // the loaded event, without v/type
    SampleSeries samples;                    // measured (compact: 8 bytes a sample)
    std::vector<std::int64_t> warmup_ns;     // warmup iterations
    std::vector<MetricTick> metrics;
    std::vector<std::string> warnings;
    // What did not run as asked, in the worker's or the session's words (issue 41): a worker
    // warning of a caveat code (isCaveatCode: a knob that could not apply, an incomplete
    // sandbox, ...) or a knob the session lowered. Each is in `warnings` too; armCaveats() adds
    // what the read-back shows and comparisonCaveats() puts them at the verdict.
    std::vector<std::string> caveats;
    std::int64_t peak_rss_bytes = 0;
    long pid = 0;
    std::vector<int> batch_sizes = {1};             // the sweep (one entry: no sweep)
    std::map<int, protocol::Error> sweep_failures;  // batch size -> why that point failed
    int workers = 1;                                // concurrent worker processes
    std::vector<protocol::Applied> worker_applied;  // applied event of each worker
    std::vector<long> worker_pids;
    std::vector<ProcessInfo> processes;             // every worker process, in start order
    // A serving run (preset.serving): every level each worker served, in the order measured.
    // `samples` stays empty: a request's latency depends on the load, so they are not pooled.
    std::vector<ServingLevel> serving;
    // The worker's profile event (run.profile_iters; first worker of the last round): iters,
    // batch_size, wall_ms, profiler, ops[] (name, calls, self_us, total_us, input_shapes), trace
    // (Chrome Trace Event Format). Null when none was taken.
    json profile;

    // Samples of one batch size (and one worker, or all when worker < 0).
    std::vector<double> latencies(int batchSize, int worker = -1) const;

    std::vector<double> latencies() const;
    stats::BlockedSamples blocked() const;
    // summarize(arm)'s memo: a report asks for it a dozen times, each a sort of every sample.
    // Keyed by the samples' stamp and the batch size; read and written atomically.
    struct SummaryMemo {
        std::uint64_t stamp = 0;
        int batch_size = 0;
        stats::Summary summary;
    };
    mutable std::shared_ptr<const SummaryMemo> summary_memo;
    // processSummaries' memo: n and median per (replicate, worker), keyed the same way.
    struct ProcessMedians {
        std::uint64_t stamp = 0;
        int batch_size = 0;
        std::map<std::pair<int, int>, std::pair<std::size_t, double>> of;
    };
    mutable std::shared_ptr<const ProcessMedians> process_medians;
    // sortedLatencies(arm)'s memo (the arm's latencies at its batch size, ascending), kept only
    // once something asked for it (a run reopened in the window: its distribution and summary
    // share one sort, done off the UI thread); summarize reads it when it is current.
    struct SortedMemo {
        std::uint64_t stamp = 0;
        int batch_size = 0;
        std::shared_ptr<const std::vector<double>> sorted_ns;
    };
    mutable std::shared_ptr<const SortedMemo> sorted_memo;
    // varianceShares(arm)'s memo, keyed the same way (a log of every sample, twice).
    struct VarianceMemo {
        std::uint64_t stamp = 0;
        int batch_size = 0;
        stats::VarianceShares shares;
    };
    mutable std::shared_ptr<const VarianceMemo> variance_memo;
    bool finished() const { return status != kPending; }
};

struct RunResult {
    spec::Preset preset;
    json preset_json;         // the preset as run
    // SHA-256 (hex) of the model file measured, checked before any worker started
    // (spec::checkModelFile); "" when it could not be read or the run predates it.
    std::string model_sha256;
    std::string started_at;   // ISO 8601 UTC
    double wall_s = 0;
    std::vector<ArmResult> arms;
    json stopping = json::object();  // adaptive / timed stopping: rule, stable, per-arm CI width
    json replication = json::object();  // processes run, the rule, why rounds were added
    bool interleaved = true;  // false for arms gathered from different runs (no block pairing)
    // compareArms() memo: the bootstrap is the costly part of every view and export of a run, and
    // the table, JSON, HTML, Markdown and store would each redo it. Samples are append-only, so
    // the key (interleaving, each arm's name, status and sample count) tells when it is stale.
    struct ComparisonMemo {
        std::string key;
        std::vector<stats::Comparison> comparisons;
    };
    mutable std::optional<ComparisonMemo> comparison_memo;

    bool allOk() const;
};

// The arm's knobs as written (the results JSON's arms[].knobs, the history's arms.knobs, the
// reports' knob tables).
json knobsJson(const ArmResult& arm);
// Sets arm.knobs and arm.knobs_written from knobs as written (a results JSON, the history, a
// preset's arm): read leniently (spec::readWrittenKnobs), with the arm's model format's defaults.
void setKnobsFromJson(ArmResult& arm, const json& knobs);

// An arm's model as the table, the reports and the window show it: "resnet18.pt2 (aoti,
// sha256 1a2b3c4d)"; "" when the arm has no model recorded.
std::string modelSummary(const ArmResult& arm);
// Whether the arms measured different model files (by path or content).
bool armsDifferInModel(const RunResult& run);

stats::Summary summarize(const ArmResult& arm);
// The arm's latencies (ns) at its batch size, sorted ascending: memoized on the arm (see
// ArmResult::sorted_memo), shared, never copied.
std::shared_ptr<const std::vector<double>> sortedLatencies(const ArmResult& arm);
// The same when it is memoized and current, else null (computes nothing).
std::shared_ptr<const std::vector<double>> memoizedSortedLatencies(const ArmResult& arm);
// Computes, on the calling thread, what the views of a finished run ask of each arm (its sorted
// latencies, summary, per-process medians and variance shares), so that the window's thread
// finds them memoized. Arms in parallel, one thread each but the first.
void warmArmMemos(const RunResult& run);
// Each block of blocked(), in its order: how many samples and the sum of their latencies (summed
// in the order measured), without holding the arm's samples as doubles.
std::vector<std::pair<std::size_t, double>> blockTotals(const ArmResult& arm);
// The arm's settings and state without its growing vectors (samples, warmup, metrics, warnings,
// processes): kilobytes to copy to another thread, whatever the length of the run.
ArmResult armSettings(const ArmResult& arm);
// Per worker process: its median and n at the arm's first batch size (processes list order).
std::vector<ProcessSummary> processSummaries(const ArmResult& arm);
// Page faults per measured iteration over every process of the arm (-1: not reported).
double minorFaultsPerIter(const ArmResult& arm);
double majorFaultsPerIter(const ArmResult& arm);
// Context switches (voluntary or involuntary) per measured iteration: each worker process's
// cumulative count (metric ticks, whole process) grows over its ticks; the sum over the arm's
// processes divided by the arm's measured iterations (-1: no tick carried the count).
double contextSwitchesPerIter(const ArmResult& arm, bool voluntary);
// The same for any cumulative per-process count a metrics tick carries (e.g. "migrations": the
// CPU migrations of every thread, which can shrink when threads end; each process counts from its
// lowest to its highest value).
double metricGrowthPerIter(const ArmResult& arm, const char* key);
// How the arm's variance splits between processes, blocks and samples (first batch size).
stats::VarianceShares varianceShares(const ArmResult& arm);
// Warnings about the process level of one arm: processes that disagree (naming the likely cause
// when the page faults point at it, and what to do) and page faults every iteration.
std::vector<std::string> processWarnings(const ArmResult& arm);
// Thresholds of those warnings.
inline constexpr double kProcessSpreadWarn = 1.25;    // slowest / fastest process median
inline constexpr double kFaultsPerIterWarn = 8.0;     // minor page faults per iteration
// When warmup really ended (stats::detectSteadyState on the warmup against the measured median).
stats::SteadyState steadyState(const ArmResult& arm);
// Sum over concurrent workers of each worker's throughput (items/s) at the arm's first size.
double aggregateThroughput(const ArmResult& arm);
// The arm's throughput, one definition for the CLI table, the window and the reports: items/s of
// the whole arm at its first batch size (items measured / the sum of their latencies, as
// stats::summarize; summed over concurrent workers when it has more than one). `summary` is
// summarize(arm).
double armThroughput(const ArmResult& arm, const stats::Summary& summary);
// Every arm against the first arm (the baseline); arms without samples are skipped, and so is an
// arm that failed, crashed, was killed or timed out (or every arm, when the baseline did): its
// processes ended early, so a speed verdict on what it left would mislead. An arm cancelled by
// Stop is compared on what it measured.
std::vector<stats::Comparison> compareArms(const RunResult& run);
// What ran differs from what was asked (issue 41 "caveats at the verdict"): the arm's caveats
// (ArmResult::caveats) and every knob whose read-back (applied) differs from the knob asked,
// among them an AOTInductor package's compiled-in OpenMP thread count. Each starts with the arm's
// name: "B ran 2 OpenMP threads in its package's own kernels where 1 was asked (...)".
std::vector<std::string> armCaveats(const ArmResult& arm);
// The caveats a comparison must be read with (results JSON comparisons[].caveats, the verdict
// line, history show, the reports): its two arms' armCaveats, each as "the comparison is of what
// ran: B ran ...". Empty when both ran as asked.
std::vector<std::string> comparisonCaveats(const RunResult& run, const stats::Comparison& c);
// Every comparison's caveats, once each (a caveat of the baseline touches every comparison).
std::vector<std::string> runCaveats(const RunResult& run);
// Whether a worker warning of this code says that something did not run as asked (a caveat):
// knob_not_applicable, cuda_only_knob, workload_not_applied, flush_denormal_partial /
// _unsupported, sandbox_incomplete.
bool isCaveatCode(const std::string& code);
// The prefix every comparison caveat starts with.
inline constexpr const char* kCaveatPrefix = "the comparison is of what ran: ";
// The key compareArms' memo is kept under: interleaving, each arm's name, status, sample count
// and batch size (samples are append-only, so a run with the same key has the same samples).
std::string comparisonKey(const RunResult& run);
// compareArms(run) as JSON with its key, every field of each comparison (the history stores it
// when the run finishes: schema v10 experiments.comparisons).
json comparisonsToJson(const RunResult& run);
// Gives `run` the comparisons of comparisonsToJson's JSON as compareArms' memo when the key is
// the run's (the same samples); false, and nothing changed, otherwise.
bool restoreComparisons(const RunResult& run, const json& stored);
// Why `arm` is not compared with the baseline ("" when it is): "B was killed after 40 samples:
// not compared".
std::string notComparedReason(const RunResult& run, std::size_t arm);
// How many worker processes each arm ran in and why, in one sentence ("" for a run without
// replication data): e.g. "6 worker processes per arm: 3, then 3 more while B vs A was
// inconclusive (run.max_processes 6 reached)".
std::string replicationSummary(const RunResult& run);
// Warnings across arms: noise, environment manifests that differ in anything but knobs.
std::vector<std::string> runWarnings(const RunResult& run);
// One field of the environment manifest that differs between two arms (the drift guard of
// runWarnings; pitlane-cli compare): each value as JSON text, "absent" where an arm lacks it.
struct EnvironmentDifference {
    std::string key, first, other;
};
// Every manifest field that differs, in key order, but those that name the process (pid; the
// hostname unless the arms ran on different hosts). None when an arm has no manifest.
std::vector<EnvironmentDifference> environmentDifferences(const ArmResult& first,
                                                          const ArmResult& other);

json toResultsJson(const RunResult& run);
// Re-import a results JSON (schema 1). Throws std::runtime_error naming the field on bad input.
RunResult fromResultsJson(const json& j);

// CSV: arm,block,iteration,batch_size,latency_ns,process (one row per measured sample).
std::string samplesCsv(const RunResult& run);
// "Where the time goes" (profile_text.cpp): the arms' profiled operators side by side, self time
// per iteration, the operators whose time differs most from the baseline's first ("" when no arm
// was profiled). At most `rows` operators.
std::string profileTable(const RunResult& run, std::size_t rows = 12);
// The same rows for the reports: the profiled arms (indices), each operator's self ms per
// iteration in those arms, in the table's order, and each arm's total.
struct ProfileRows {
    std::vector<std::size_t> arms;
    std::vector<std::pair<std::string, std::vector<double>>> ops;
    std::vector<double> totals;
    bool empty() const { return arms.empty(); }
};
ProfileRows profileRows(const RunResult& run, std::size_t rows = 12);
// The arm's profile as a Chrome trace (Trace Event Format, JSON object form) that Perfetto
// (ui.perfetto.dev) and chrome://tracing open: the worker's complete ("X") events in order of
// start, longest first at equal starts, named by metadata events (process_name = the arm's name,
// process_labels, thread_name for each thread), displayTimeUnit "ms", and the profile's settings
// in otherData. "" when the arm has no profile (profile_text.cpp).
std::string profileTraceJson(const ArmResult& arm);
// The comparison table printed by pitlane-cli.
std::string comparisonTable(const RunResult& run);

// Formatting helpers shared by the table, the window and the reports.
std::string formatDuration(double ns);   // "37.76 ms", "812.4 us"
std::string formatBytes(double bytes);   // "178.6 MiB"
std::string isoNowUtc();
// RFC 4180: a field quoted when it holds a comma, a quote or a line break.
std::string csvField(const std::string& s);

}  // namespace pitlane::results
