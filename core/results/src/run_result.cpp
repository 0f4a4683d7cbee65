// A run's results as value types: an arm's samples by batch size, worker, block and process,
// its summaries (steady state, throughput, processes, page faults, variance shares), the
// comparisons of every arm against the baseline and the replication in one sentence. The results
// JSON is in results_json.cpp, warnings in run_warnings.cpp, the CSV and the formatting helpers
// in text_format.cpp.
#include "pitlane/results/run_result.h"

#include <cstring>

#include <algorithm>
#include <map>

namespace pitlane::results {

void ProcessInfo::addBlock(const protocol::BlockDone& e) {
    // A worker that predates the counters reports none: its process stays "not reported".
    if (e.phase != "measure" || !e.minor_faults) return;
    fault_iters += e.iters;
    if (e.cpu_ms) cpu_wall_ms += e.wall_ms;
#define PITLANE_ADD_COUNTER(T, name) name += e.name.value_or(T{});
    PITLANE_LOOP_COUNTERS(PITLANE_ADD_COUNTER)
#undef PITLANE_ADD_COUNTER
}

MetricTick metricTick(const protocol::Metrics& e, double tMs, int worker, int process) {
    MetricTick t;
    t.t_ms = tMs;
    t.worker = worker;
    t.process = process;
    t.rss_bytes = e.rss_bytes;
    t.peak_rss_bytes = e.peak_rss_bytes;
    t.tensor_bytes = e.tensor_bytes;
    t.tensor_peak_bytes = e.tensor_peak_bytes;
    t.cpu_s = e.cpu_user_s + e.cpu_sys_s;
    t.core_util_pct = e.core_util_pct;
    t.raw = e.raw;
    return t;
}

std::vector<double> ArmResult::latencies() const { return latencies(batch_size); }

std::vector<double> ArmResult::latencies(int batchSize, int worker) const {
    std::vector<double> v;
    v.reserve(samples.size());
    for (const auto& s : samples)
        if (s.batch_size == batchSize && (worker < 0 || s.worker == worker))
            v.push_back(static_cast<double>(s.latency_ns));
    return v;
}

stats::SteadyState steadyState(const ArmResult& arm) {
    std::vector<double> warm(arm.warmup_ns.begin(), arm.warmup_ns.end());
    return stats::detectSteadyState(warm, stats::median(arm.latencies()));
}

double aggregateThroughput(const ArmResult& arm) {
    double total = 0;
    for (int w = 0; w < arm.workers; ++w)
        total += stats::summarize(arm.latencies(arm.batch_size, w), arm.batch_size).throughput_per_s;
    return total;
}

double armThroughput(const ArmResult& arm, const stats::Summary& summary) {
    return arm.workers > 1 ? aggregateThroughput(arm) : summary.throughput_per_s;
}

stats::BlockedSamples ArmResult::blocked() const {
    std::map<int, std::pair<int, std::vector<double>>> byBlock;  // block -> (process, samples)
    for (const auto& s : samples)
        if (s.batch_size == batch_size) {
            auto& entry = byBlock[s.block];
            entry.first = s.process;
            entry.second.push_back(double(s.latency_ns));
        }
    stats::BlockedSamples b;
    for (auto& [block, v] : byBlock) {
        b.process.push_back(v.first);
        b.blocks.push_back(std::move(v.second));
    }
    return b;
}

std::vector<ProcessSummary> processSummaries(const ArmResult& arm) {
    std::vector<ProcessSummary> out;
    std::map<std::pair<int, int>, std::vector<double>> byProcess;  // (replicate, worker)
    for (const auto& s : arm.samples)
        if (s.batch_size == arm.batch_size)
            byProcess[{s.process, s.worker}].push_back(double(s.latency_ns));
    for (const auto& info : arm.processes) {
        ProcessSummary ps;
        ps.info = info;
        auto it = byProcess.find({info.replicate, info.worker});
        if (it != byProcess.end()) {
            ps.n = it->second.size();
            ps.median_ns = stats::median(it->second);
        }
        out.push_back(ps);
    }
    return out;
}

namespace {
double faultsPerIter(const ArmResult& arm, bool major) {
    std::int64_t faults = 0, iters = 0;
    for (const auto& p : arm.processes) {
        faults += major ? p.major_faults : p.minor_faults;
        iters += p.fault_iters;
    }
    return iters > 0 ? double(faults) / double(iters) : -1;
}
}  // namespace

double minorFaultsPerIter(const ArmResult& arm) { return faultsPerIter(arm, false); }
double majorFaultsPerIter(const ArmResult& arm) { return faultsPerIter(arm, true); }

double metricGrowthPerIter(const ArmResult& arm, const char* key) {
    // Per process (replicate x worker): the growth of its cumulative count over its ticks.
    std::map<std::pair<int, int>, std::pair<std::int64_t, std::int64_t>> span;
    for (const auto& t : arm.metrics) {
        if (!t.raw.is_object() || !t.raw.contains(key) || !t.raw[key].is_number()) continue;
        const auto v = t.raw[key].get<std::int64_t>();
        auto [it, fresh] = span.try_emplace({t.process, t.worker}, v, v);
        if (!fresh) it->second = {std::min(it->second.first, v), std::max(it->second.second, v)};
    }
    if (span.empty() || arm.samples.empty()) return -1;
    double total = 0;
    for (const auto& [key, s] : span) total += double(s.second - s.first);
    return total / double(arm.samples.size());
}

double contextSwitchesPerIter(const ArmResult& arm, bool voluntary) {
    return metricGrowthPerIter(arm, voluntary ? "ctx_voluntary" : "ctx_involuntary");
}

stats::VarianceShares varianceShares(const ArmResult& arm) { return stats::varianceShares(arm.blocked()); }

bool RunResult::allOk() const {
    return !arms.empty() && std::all_of(arms.begin(), arms.end(),
                                        [](const ArmResult& a) { return a.status == kOk; });
}

ArmResult armSettings(const ArmResult& a) {
    ArmResult r;
    r.name = a.name;
    r.knobs = a.knobs;
    r.batch_size = a.batch_size;
    r.status = a.status;
    r.error = a.error;
    r.environment = a.environment;
    r.applied = a.applied;
    r.loaded = a.loaded;
    r.peak_rss_bytes = a.peak_rss_bytes;
    r.pid = a.pid;
    r.batch_sizes = a.batch_sizes;
    r.sweep_failures = a.sweep_failures;
    r.workers = a.workers;
    r.worker_applied = a.worker_applied;
    r.worker_pids = a.worker_pids;
    r.host = a.host;
    r.model = a.model;
    r.model_sha256 = a.model_sha256;
    r.model_format = a.model_format;
    return r;
}

std::string modelSummary(const ArmResult& a) {
    if (a.model.empty()) return {};
    std::string s = spec::modelLabel(a.model);
    std::string extra = a.model_format;
    if (!a.model_sha256.empty()) extra += (extra.empty() ? "" : ", ") + std::string("sha256 ") + a.model_sha256.substr(0, 8);
    return extra.empty() ? s : s + " (" + extra + ")";
}

bool armsDifferInModel(const RunResult& run) {
    for (const auto& a : run.arms)
        if (a.model != run.arms.front().model ||
            (!a.model_sha256.empty() && !run.arms.front().model_sha256.empty() && a.model_sha256 != run.arms.front().model_sha256))
            return true;
    return false;
}

stats::Summary summarize(const ArmResult& arm) {
    return stats::summarize(arm.latencies(), arm.batch_size);
}

namespace {
bool endedEarly(const ArmResult& a) {
    return a.status == kFailed || a.status == kCrashed || a.status == kKilled || a.status == kTimeout;
}
}  // namespace

std::string notComparedReason(const RunResult& run, std::size_t arm) {
    if (arm == 0 || arm >= run.arms.size()) return {};
    const ArmResult& base = run.arms.front();
    const ArmResult& a = run.arms[arm];
    const ArmResult* early = endedEarly(a) ? &a : endedEarly(base) ? &base : nullptr;
    if (!early) return {};
    const std::string status = early->status == kTimeout ? std::string("timed out") : early->status;
    return early->name + " " + (early->status == kFailed ? "failed" : "was " + status) + " after " +
           std::to_string(early->samples.size()) + " samples: " + a.name + " vs " + base.name +
           " not compared";
}

namespace {

std::string modelShownAs(const ArmResult& a, const ArmResult& other) {
    std::string label = spec::modelLabel(a.model);
    // Two files of one name (v1/model.pt, v2/model.pt) are told apart by their SHA-256.
    if (label == spec::modelLabel(other.model) && !a.model_sha256.empty()) label += ", sha256 " + a.model_sha256.substr(0, 8);
    return label;
}

// "B (model_v2.pt) is 1.31x faster than A (model_v1.pt) (95% CI …)": the verdict of arms that
// measured different model files names them.
std::string verdictNamingModels(const std::string& verdict, const ArmResult& base, const ArmResult& arm) {
    const std::string A = base.name + " (" + modelShownAs(base, arm) + ")";
    const std::string B = arm.name + " (" + modelShownAs(arm, base) + ")";
    std::string v = verdict;
    const std::string armIs = arm.name + " is ";
    if (v.compare(0, armIs.size(), armIs) == 0) {
        v = B + " is " + v.substr(armIs.size());
        for (const char* word : {"x faster", "x slower"})
            if (const auto at = v.find(word); at != std::string::npos) {
                v.insert(at + std::strlen(word), " than " + A);
                break;
            }
        return v;
    }
    const std::string between = "between " + base.name + " and " + arm.name + " ";
    if (const auto at = v.find(between); at != std::string::npos)
        v.replace(at, between.size(), "between " + A + " and " + B + " ");
    return v;
}

}  // namespace

std::vector<stats::Comparison> compareArms(const RunResult& run) {
    std::string key = run.interleaved ? "i" : "u";
    for (const auto& a : run.arms)
        key += "|" + a.name + "/" + a.status + "/" + std::to_string(a.samples.size()) + "/" +
               std::to_string(a.batch_size);
    if (run.comparison_memo && run.comparison_memo->key == key)
        return run.comparison_memo->comparisons;
    std::vector<stats::Comparison> out;
    if (run.arms.size() < 2) return out;
    const auto& base = run.arms.front();
    const auto baseBlocks = base.blocked();
    for (std::size_t i = 1; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        if (a.samples.empty() || base.samples.empty() || !notComparedReason(run, i).empty()) continue;
        // Arms not interleaved (of different runs) share no blocks: the unpaired bootstrap.
        out.push_back(run.interleaved
                          ? stats::compare(base.name, baseBlocks, a.name, a.blocked())
                          : stats::compareUnpaired(base.name, baseBlocks, a.name, a.blocked()));
        if (!a.model.empty() && !base.model.empty() &&
            (a.model != base.model || (!a.model_sha256.empty() && a.model_sha256 != base.model_sha256)))
            out.back().verdict = verdictNamingModels(out.back().verdict, base, a);
    }
    run.comparison_memo = RunResult::ComparisonMemo{key, out};
    return out;
}

std::string replicationSummary(const RunResult& run) {
    const json& r = run.replication;
    if (!r.is_object() || !r.contains("processes")) return {};
    const int n = r.value("processes", 0), min = r.value("processes_min", n),
              max = r.value("processes_max", n);
    std::string s = std::to_string(n) + " worker process" + (n == 1 ? "" : "es") + " per arm";
    const auto ext = r.value("extensions", json::array());
    if (n > min && !ext.empty()) {
        s += ": " + std::to_string(min) + ", then " + std::to_string(n - min) + " more " +
             (r.contains("stopped") ? "while a comparison was inconclusive (the cap, "
                                      "run.max_processes)"
                                    : std::string("until every comparison was conclusive"));
    } else if (max > min) {
        s += " (every comparison conclusive at the minimum; up to " + std::to_string(max) +
             " if not)";
    }
    return s;
}

}  // namespace pitlane::results
