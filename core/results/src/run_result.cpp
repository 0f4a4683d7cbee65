// A run's results as value types: an arm's samples by batch size, worker, block and process,
// its summaries (steady state, throughput, processes, page faults, variance shares), the
// comparisons of every arm against the baseline and the replication in one sentence. The results
// JSON is in results_json.cpp, warnings in run_warnings.cpp, the CSV and the formatting helpers
// in text_format.cpp.
#include "pitlane/results/run_result.h"

#include <cmath>
#include <cstring>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <map>
#include <optional>

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
    t.sampled_ms = e.t_ms;
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
    std::size_t n = 0;
    for (const auto& r : samples.runs())
        if (r.batch_size == batchSize && (worker < 0 || r.worker == worker)) n += r.count;
    v.reserve(n);
    samples.forEachSpan([&](const SampleSeries::Run& r, std::size_t, const std::int64_t* ns,
                            std::size_t count) {
        if (r.batch_size != batchSize || (worker >= 0 && r.worker != worker)) return;
        for (std::size_t k = 0; k < count; ++k) v.push_back(static_cast<double>(ns[k]));
    });
    return v;
}

namespace {

// Calls f(process, latencies) for each block of the arm's first batch size, in block order, its
// latencies in the order measured and its process the last sample's: what blocked() holds, one
// block at a time.
template <class F>
void forEachBlock(const ArmResult& arm, F&& f) {
    const auto& runs = arm.samples.runs();
    std::map<int, std::vector<std::size_t>> runsOf;  // block -> its runs, in order
    for (std::size_t r = 0; r < runs.size(); ++r)
        if (runs[r].batch_size == arm.batch_size) runsOf[runs[r].block].push_back(r);
    for (const auto& [block, list] : runsOf) {
        std::size_t total = 0;
        for (std::size_t r : list) total += runs[r].count;
        std::vector<double> v;
        v.reserve(total);
        for (std::size_t r : list)
            for (std::size_t i = runs[r].start; i < runs[r].start + runs[r].count; ++i)
                v.push_back(double(arm.samples.latency(i)));
        f(runs[list.back()].process, std::move(v));
    }
}

}  // namespace

stats::SteadyState steadyState(const ArmResult& arm) {
    std::vector<double> warm(arm.warmup_ns.begin(), arm.warmup_ns.end());
    // summarize's median is stats::median of the same samples (one formula, the same bits).
    return stats::detectSteadyState(warm, summarize(arm).median);
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

std::vector<std::pair<std::size_t, double>> blockTotals(const ArmResult& arm) {
    std::vector<std::pair<std::size_t, double>> out;
    forEachBlock(arm, [&](int, std::vector<double> v) {
        double sum = 0;
        for (double x : v) sum += x;
        out.emplace_back(v.size(), sum);
    });
    return out;
}

stats::BlockedSamples ArmResult::blocked() const {
    stats::BlockedSamples b;
    forEachBlock(*this, [&](int process, std::vector<double> v) {
        b.process.push_back(process);
        b.blocks.push_back(std::move(v));
    });
    return b;
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

bool RunResult::allOk() const {
    return !arms.empty() && std::all_of(arms.begin(), arms.end(),
                                        [](const ArmResult& a) { return a.status == kOk; });
}

json knobsJson(const ArmResult& a) { return spec::writtenKnobsJson(a.knobs, a.knobs_written); }

void setKnobsFromJson(ArmResult& a, const json& knobs) {
    a.knobs = spec::readWrittenKnobs(knobs, &a.knobs_written);
    spec::applyFormatDefaults(a.knobs, knobs, a.model_format);
}

ArmResult armSettings(const ArmResult& a) {
    ArmResult r;
    r.name = a.name;
    r.knobs = a.knobs;
    r.knobs_written = a.knobs_written;
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
    r.compile = a.compile;
    r.caveats = a.caveats;
    // What was computed from the samples: a copy that is given the same samples (the same stamp)
    // finds it; one given other samples ignores it.
    r.summary_memo = std::atomic_load(&a.summary_memo);
    r.process_medians = std::atomic_load(&a.process_medians);
    r.sorted_memo = std::atomic_load(&a.sorted_memo);
    r.variance_memo = std::atomic_load(&a.variance_memo);
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
    // A run reopened from a history whose samples of this arm fail their check (store's code
    // "damaged"): the arm ran; what is missing is what the history kept of it.
    if (early->error && early->error->code == "damaged")
        return early->name + " is damaged in the history (its samples fail their check): " + a.name + " vs " +
               base.name + " not compared";
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

std::string comparisonKey(const RunResult& run) {
    std::string key = run.interleaved ? "i" : "u";
    for (const auto& a : run.arms)
        key += "|" + a.name + "/" + a.status + "/" + std::to_string(a.samples.size()) + "/" +
               std::to_string(a.batch_size);
    return key;
}

json comparisonsToJson(const RunResult& run) {
    json list = json::array();
    for (const auto& c : compareArms(run)) {
        // A ratio or bound that JSON cannot hold (infinite: a median of zero) is not stored:
        // the run's comparisons are computed again when it is read.
        for (double v : {c.ratio, c.ci_low, c.ci_high, c.p_value})
            if (!std::isfinite(v)) return json::object();
        list.push_back({{"baseline", c.baseline}, {"arm", c.arm}, {"ratio", c.ratio},
                        {"ci_low", c.ci_low}, {"ci_high", c.ci_high}, {"p_value", c.p_value},
                        {"significant", c.significant}, {"method", c.method},
                        {"verdict", c.verdict}, {"units", c.units}, {"unit", c.unit}});
    }
    return {{"key", comparisonKey(run)}, {"comparisons", list}};
}

bool restoreComparisons(const RunResult& run, const json& stored) {
    if (!stored.is_object() || !stored.contains("key") || !stored.contains("comparisons"))
        return false;
    try {
        if (stored.at("key").get<std::string>() != comparisonKey(run)) return false;
        std::vector<stats::Comparison> out;
        for (const auto& j : stored.at("comparisons")) {
            stats::Comparison c;
            c.baseline = j.at("baseline").get<std::string>();
            c.arm = j.at("arm").get<std::string>();
            c.ratio = j.at("ratio").get<double>();
            c.ci_low = j.at("ci_low").get<double>();
            c.ci_high = j.at("ci_high").get<double>();
            c.p_value = j.at("p_value").get<double>();
            c.significant = j.at("significant").get<bool>();
            c.method = j.at("method").get<std::string>();
            c.verdict = j.at("verdict").get<std::string>();
            c.units = j.at("units").get<std::size_t>();
            c.unit = j.at("unit").get<std::string>();
            out.push_back(std::move(c));
        }
        run.comparison_memo = RunResult::ComparisonMemo{comparisonKey(run), std::move(out)};
        return true;
    } catch (const json::exception&) {
        return false;
    }
}

std::vector<stats::Comparison> compareArms(const RunResult& run) {
    const std::string key = comparisonKey(run);
    if (run.comparison_memo && run.comparison_memo->key == key)
        return run.comparison_memo->comparisons;
    std::vector<stats::Comparison> out;
    if (run.arms.size() < 2) return out;
    const auto& base = run.arms.front();
    // Each arm prepared one block at a time: a long run's arm is never held as doubles twice.
    auto prepare = [](const ArmResult& a) {
        stats::PreparedArm p;
        std::size_t n = 0;  // exactly: no doubling of the arm's largest copy
        for (const auto& r : a.samples.runs()) n += r.batch_size == a.batch_size ? r.count : 0;
        p.sorted.reserve(n);
        forEachBlock(a, [&](int process, std::vector<double> v) { p.addBlock(std::move(v), process); });
        p.finish();
        return p;
    };
    std::optional<stats::PreparedArm> baseArm;
    for (std::size_t i = 1; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        if (a.samples.empty() || base.samples.empty() || !notComparedReason(run, i).empty()) continue;
        if (!baseArm) baseArm = prepare(base);
        // Arms not interleaved (of different runs) share no blocks: the unpaired bootstrap.
        stats::CompareOptions options;
        options.paired = run.interleaved;
        out.push_back(stats::compare(base.name, *baseArm, a.name, prepare(a), options));
        if (!a.model.empty() && !base.model.empty() &&
            (a.model != base.model || (!a.model_sha256.empty() && a.model_sha256 != base.model_sha256)))
            out.back().verdict = verdictNamingModels(out.back().verdict, base, a);
    }
    run.comparison_memo = RunResult::ComparisonMemo{key, out};
    return out;
}

namespace {
// "measured 120 iterations per arm where 60 were asked (run.iters)" when what was measured is not
// what was asked (replication's added rounds, adaptive stopping, an arm that ended early); ""
// when it is, or for a run recorded before the runner kept both (issue 41).
std::string measuredVsAsked(const RunResult& run) {
    const json& r = run.replication;
    const auto measured = r.find("measured_iters");
    if (!r.contains("asked_iters") || measured == r.end() || !measured->is_object() || measured->empty())
        return {};
    const int asked = r.value("asked_iters", 0);
    bool same = true, asAsked = true;
    const int first = measured->begin()->is_number_integer() ? measured->begin()->get<int>() : -1;
    std::string each;
    for (auto it = measured->begin(); it != measured->end(); ++it) {
        const int n = it->is_number_integer() ? it->get<int>() : -1;
        same = same && n == first;
        asAsked = asAsked && n == asked;
        each += (each.empty() ? "" : ", ") + it.key() + " " + std::to_string(n);
    }
    if (asAsked) return {};
    bool workers = false;
    for (const auto& a : run.arms) workers = workers || a.workers > 1;
    const std::string per = workers ? " per arm and worker" : " per arm";
    return "measured " + (same ? std::to_string(first) + " iterations" + per : "iterations" + per + ": " + each) +
           " where " + std::to_string(asked) + " were asked (run.iters)";
}
}  // namespace

static std::string processesSummary(const json& r) {
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

// A run planned from its time budget (session/budget_plan.h): "15 worker processes per arm of
// 9 iterations, planned to fit a 20 s budget (Kalibera & Jones, variance ratio 4 (prior))".
static std::string budgetSummary(const json& r) {
    const int n = r.value("processes", 0);
    const json design = r.value("design", json::object());
    const json first = design.value("first", json::object());
    const auto added = design.value("added", json::array());
    char budget[32];
    std::snprintf(budget, sizeof budget, "%.3g s", r.value("budget_ms", 0) / 1000.0);
    std::string s = std::to_string(n) + " worker process" + (n == 1 ? "" : "es") + " per arm, planned to fit a " +
                    budget + " budget";
    if (first.is_object() && first.contains("iters_per_process")) {
        char why[200];
        std::snprintf(why, sizeof why, " (%d iterations each%s; Kalibera & Jones with a variance ratio of %.2g, %s)",
                      first.value("iters_per_process", 0),
                      added.empty() ? "" : (", then " + std::to_string(added.size()) + " more while it held").c_str(),
                      first.value("variance_ratio", 0.0),
                      first.value("variance_ratio_source", std::string("prior")).c_str());
        s += why;
        if (first.value("over_budget", false)) s += "; the budget held fewer than 3 processes: it ran over";
    }
    // The warmups (budget_plan.h: round0WarmupIters, laterWarmupIters): said when fewer than asked.
    const json warm = r.value("warmup", json::object());
    if (warm.is_object() && warm.contains("later_rounds")) {
        const int asked = warm.value("asked", 0), later = warm.value("later_rounds", 0);
        int lo = asked, hi = 0;
        for (const auto& n : warm.value("round0", json::array()))
            if (n.is_number_integer()) lo = std::min(lo, n.get<int>()), hi = std::max(hi, n.get<int>());
        hi = std::max(hi, lo);
        const std::string round0 = lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
        if (later < asked || lo < asked)
            s += "; warmup " + round0 + " iterations in the first process, " + std::to_string(later) +
                 " in later ones (" + std::to_string(asked) + " asked; they had settled)";
    }
    return s;
}

std::string replicationSummary(const RunResult& run) {
    const json& r = run.replication;
    if (!r.is_object()) return {};
    if (r.contains("budget_ms") && r.contains("processes")) return budgetSummary(r);
    const std::string n = measuredVsAsked(run);
    if (!r.contains("processes")) return n;
    std::string s = processesSummary(r);
    return n.empty() ? s : s + "; " + n;
}

}  // namespace pitlane::results
