#include "pitlane/results/run_result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

namespace pitlane::results {

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

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
    char buf[1024];
    std::snprintf(buf, sizeof buf, f, a, b, c, d);
    return buf;
}
}  // namespace

double minorFaultsPerIter(const ArmResult& arm) { return faultsPerIter(arm, false); }
double majorFaultsPerIter(const ArmResult& arm) { return faultsPerIter(arm, true); }

stats::VarianceShares varianceShares(const ArmResult& arm) { return stats::varianceShares(arm.blocked()); }

std::vector<std::string> processWarnings(const ArmResult& arm) {
    std::vector<std::string> out;
    const bool systemAllocator = arm.applied.value("allocator", std::string("system")) == "system";
    const std::string tryAllocator =
        systemAllocator
            ? "add an arm with the knob allocator \"jemalloc\" or \"tcmalloc\" and compare (an "
              "A/B, not a rule: the effect differs by model)"
            : "compare allocators as arms (the effect differs by model)";
    std::vector<ProcessSummary> measured;
    for (const auto& p : processSummaries(arm))
        if (p.n > 0 && p.median_ns > 0) measured.push_back(p);
    if (measured.size() >= 2) {
        auto [mn, mx] = std::minmax_element(
            measured.begin(), measured.end(),
            [](const ProcessSummary& a, const ProcessSummary& b) { return a.median_ns < b.median_ns; });
        const double spread = mx->median_ns / mn->median_ns;
        if (spread > kProcessSpreadWarn) {
            const auto shares = varianceShares(arm);
            std::string w = arm.name + ": its " + std::to_string(measured.size()) +
                            " worker processes disagree: process medians range from " +
                            formatDuration(mn->median_ns) + " to " + formatDuration(mx->median_ns) +
                            fmt(" (%.2fx apart", spread);
            if (shares.computed)
                w += fmt("; %.0f%% of the variance of log latency lies between processes",
                         100 * shares.between_processes);
            w += "). The CI counts processes as its units, so it stays wide while they disagree.";
            // Slow half against fast half (split at the geometric middle of the range).
            const double mid = std::sqrt(mn->median_ns * mx->median_ns);
            double slowF = 0, slowI = 0, fastF = 0, fastI = 0;
            for (const auto& p : measured) {
                if (p.info.fault_iters <= 0) continue;
                (p.median_ns > mid ? slowF : fastF) += double(p.info.minor_faults);
                (p.median_ns > mid ? slowI : fastI) += double(p.info.fault_iters);
            }
            if (slowI > 0 && fastI > 0) {
                const double slow = slowF / slowI, fast = fastF / fastI;
                if (slow >= kFaultsPerIterWarn && slow > 2 * fast + 1)
                    w += fmt(" Likely cause: the slow processes take %.0f minor page faults per "
                             "iteration against %.1f in the fast ones, so memory is handed back "
                             "to the OS and faulted in again every iteration (glibc malloc's "
                             "dynamic mmap threshold settles differently in each process). What "
                             "to do: ",
                             slow, fast) +
                         tryAllocator + ".";
                else
                    w += fmt(" Page faults do not explain it (%.1f vs %.1f per iteration in the "
                             "slow and fast processes). What to do: look for other load on the "
                             "machine, pin threads (knob affinity), raise run.processes.",
                             slow, fast);
            } else {
                w += " What to do: look for other load on the machine, pin threads (knob "
                     "affinity), raise run.processes.";
            }
            out.push_back(w);
        }
    }
    const double minor = minorFaultsPerIter(arm);
    if (minor >= kFaultsPerIterWarn)
        out.push_back(arm.name + fmt(": %.0f minor page faults per iteration: the allocator returns "
                                     "memory to the OS every iteration and faults it in again "
                                     "(kernel time inside the measurement). What to do: ",
                                     minor) +
                      tryAllocator + ".");
    return out;
}

bool RunResult::allOk() const {
    return !arms.empty() && std::all_of(arms.begin(), arms.end(),
                                        [](const ArmResult& a) { return a.status == kOk; });
}

stats::Summary summarize(const ArmResult& arm) {
    return stats::summarize(arm.latencies(), arm.batch_size);
}

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
        if (a.samples.empty() || base.samples.empty()) continue;
        stats::CompareOptions options;
        options.paired = run.interleaved;
        out.push_back(stats::compare(base.name, baseBlocks, a.name, a.blocked(), options));
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

std::vector<std::string> runWarnings(const RunResult& run) {
    std::vector<std::string> w;
    if (run.stopping.value("stable", true) == false)
        w.push_back(run.stopping.value("message", std::string("not stable")));
    for (const auto& a : run.arms) {
        for (const auto& n : stats::noiseWarnings(a.blocked())) w.push_back(a.name + ": " + n);
        for (auto& p : processWarnings(a)) w.push_back(std::move(p));
        if (!a.warmup_ns.empty() && !a.samples.empty() && !steadyState(a).settled)
            w.push_back(a.name + ": warmup did not reach the steady state within " +
                        std::to_string(a.warmup_ns.size()) +
                        " iterations (its last iterations are more than 10% off the measured "
                        "median): raise run.warmup_iters");
        if (a.applied.value("blas", std::string()) == "reference")
            w.push_back(a.name + ": libtorch runs on the reference BLAS (install libopenblas0-openmp)");
    }
    // Environment drift: every manifest field but those that name the process.
    static const std::set<std::string> perProcess = {"pid", "hostname"};
    const ArmResult* first = nullptr;
    for (const auto& a : run.arms) {
        if (!a.environment.is_object()) continue;
        if (!first) {
            first = &a;
            continue;
        }
        std::set<std::string> keys;
        for (const auto& [key, v] : a.environment.items()) keys.insert(key);
        for (const auto& [key, v] : first->environment.items()) keys.insert(key);
        for (const auto& key : keys) {
            if (perProcess.count(key)) continue;
            const bool inFirst = first->environment.contains(key), inThis = a.environment.contains(key);
            if (inFirst && inThis && first->environment[key] == a.environment[key]) continue;
            w.push_back("environment differs between " + first->name + " and " + a.name +
                        " in \"" + key + "\" (not a knob): " +
                        (inFirst ? first->environment[key].dump() : std::string("absent")) + " vs " +
                        (inThis ? a.environment[key].dump() : std::string("absent")));
        }
    }
    return w;
}

namespace {

json summaryJson(const stats::Summary& s, std::int64_t peakRss) {
    return json{{"n", s.n},
            {"median_ns", s.median},
            {"mean_ns", s.mean},
            {"sd_ns", s.sd},
            {"cov", s.cov},
            {"min_ns", s.min},
            {"max_ns", s.max},
            {"p90_ns", s.p90},
            {"p95_ns", s.p95},
            {"p99_ns", s.p99},
            {"p999_ns", s.p999},
            {"percentile_estimator", "linear interpolation (Hyndman-Fan type 7, numpy default)"},
            {"throughput_per_s", s.throughput_per_s},
            {"peak_rss_bytes", peakRss}};
}

json stripEnvelope(json j) {
    if (j.is_object()) {
        j.erase("v");
        j.erase("type");
    }
    return j;
}

}  // namespace

json toResultsJson(const RunResult& run) {
    json j;
    j["schema"] = 1;
    j["generator"] = "pitlane";
    j["preset"] = run.preset_json.is_null() ? spec::presetToJson(run.preset) : run.preset_json;
    j["started_at"] = run.started_at;
    j["wall_s"] = run.wall_s;
    j["arms"] = json::array();
    for (const auto& a : run.arms) {
        json arm;
        arm["name"] = a.name;
        arm["status"] = a.status;
        arm["knobs"] = a.knobs;
        arm["applied"] = stripEnvelope(a.applied);
        arm["environment"] = a.environment;
        json cold = json::object();
        for (const char* k : {"load_ms", "freeze_ms", "optimize_ms", "first_forward_ms"})
            if (a.loaded.contains(k)) cold[k] = a.loaded[k];
        if (a.loaded.contains("first_forward_ms")) cold["first_iter_ms"] = a.loaded["first_forward_ms"];
        cold["warmup_ns"] = a.warmup_ns;
        if (!a.warmup_ns.empty() && !a.samples.empty()) {
            const auto st = steadyState(a);
            cold["warmup_settled"] = st.settled;
            cold["warmup_settled_after_iters"] = st.index;
            cold["steady_state_rule"] = st.rule;
        }
        arm["cold"] = cold;
        arm["model"] = {{"parameters", a.loaded.value("parameters", 0)},
                        {"file_size_bytes", a.loaded.value("file_size_bytes", 0)},
                        {"input", a.loaded.value("input", json::array())},
                        {"output", a.loaded.value("output", json::object())}};
        arm["batch_size"] = a.batch_size;
        std::vector<std::int64_t> lat, blocks;
        for (const auto& s : a.samples) {
            lat.push_back(s.latency_ns);
            blocks.push_back(s.block);
        }
        arm["latency_ns"] = lat;
        arm["block"] = blocks;
        arm["summary"] = summaryJson(summarize(a), a.peak_rss_bytes);
        if (minorFaultsPerIter(a) >= 0) {
            arm["summary"]["minor_faults_per_iter"] = minorFaultsPerIter(a);
            arm["summary"]["major_faults_per_iter"] = majorFaultsPerIter(a);
        }
        std::vector<std::int64_t> sampleProcess;
        for (const auto& s : a.samples) sampleProcess.push_back(s.process);
        arm["sample_process"] = sampleProcess;
        json procs = json::array();
        for (const auto& p : processSummaries(a)) {
            json pj = {{"pid", p.info.pid},
                       {"replicate", p.info.replicate},
                       {"worker", p.info.worker},
                       {"n", p.n},
                       {"median_ns", p.median_ns}};
            if (p.info.load_ms >= 0) pj["load_ms"] = p.info.load_ms;
            if (p.info.first_forward_ms >= 0) pj["first_forward_ms"] = p.info.first_forward_ms;
            if (p.info.fault_iters > 0) {
                pj["minor_faults"] = p.info.minor_faults;
                pj["major_faults"] = p.info.major_faults;
                pj["fault_iters"] = p.info.fault_iters;
                pj["minor_faults_per_iter"] = p.info.minorFaultsPerIter();
                pj["major_faults_per_iter"] = p.info.majorFaultsPerIter();
            }
            procs.push_back(pj);
        }
        arm["processes"] = procs;
        const auto shares = varianceShares(a);
        json variance = {{"estimator", stats::VarianceShares::kEstimator},
                         {"processes", shares.processes},
                         {"blocks", shares.blocks},
                         {"n", shares.n}};
        if (shares.computed) {
            variance["between_processes"] = shares.between_processes;
            variance["between_blocks"] = shares.between_blocks;
            variance["within_blocks"] = shares.within_blocks;
        }
        arm["variance"] = variance;
        std::vector<std::int64_t> sampleBatch, sampleWorker;
        for (const auto& s : a.samples) {
            sampleBatch.push_back(s.batch_size);
            sampleWorker.push_back(s.worker);
        }
        if (a.batch_sizes.size() > 1) {
            arm["sample_batch_size"] = sampleBatch;
            json sweep = json::array();
            for (int bs : a.batch_sizes) {
                json point = {{"batch_size", bs}};
                const auto lat = a.latencies(bs);
                auto f = a.sweep_failures.find(bs);
                point["status"] = f != a.sweep_failures.end() ? kFailed
                                  : lat.empty()                ? a.status
                                                               : std::string(kOk);
                point["summary"] = summaryJson(stats::summarize(lat, bs), a.peak_rss_bytes);
                if (f != a.sweep_failures.end())
                    point["error"] = {{"code", f->second.code}, {"message", f->second.message}};
                sweep.push_back(point);
            }
            arm["sweep"] = sweep;
        }
        if (a.workers > 1) {
            arm["sample_worker"] = sampleWorker;
            json workers = json::array();
            for (int w = 0; w < a.workers; ++w) {
                json wj = {{"worker", w},
                           {"summary", summaryJson(stats::summarize(a.latencies(a.batch_size, w), a.batch_size), 0)}};
                if (w < int(a.worker_applied.size())) wj["applied"] = stripEnvelope(a.worker_applied[w]);
                if (w < int(a.worker_pids.size())) wj["pid"] = a.worker_pids[w];
                workers.push_back(wj);
            }
            arm["workers"] = workers;
            arm["aggregate_throughput_per_s"] = aggregateThroughput(a);
        }
        if (a.error) arm["error"] = {{"code", a.error->code}, {"message", a.error->message}};
        arm["warnings"] = a.warnings;
        json metrics = json::array();
        for (const auto& m : a.metrics) {
            json t = {{"t_ms", m.t_ms}, {"worker", m.worker}, {"process", m.process},
                      {"rss_bytes", m.rss_bytes}, {"cpu_s", m.cpu_s},
                      {"core_util_pct", m.core_util_pct}};
            if (m.tensor_bytes >= 0) t["tensor_bytes"] = m.tensor_bytes;
            if (m.tensor_peak_bytes >= 0) t["tensor_peak_bytes"] = m.tensor_peak_bytes;
            for (const char* key : {"ctx_voluntary", "ctx_involuntary", "migrations", "minor_faults",
                                    "major_faults", "gpu", "gpu_status", "cuda_allocator"})
                if (m.raw.is_object() && m.raw.contains(key)) t[key] = m.raw[key];
            metrics.push_back(t);
        }
        arm["metrics"] = metrics;
        arm["pid"] = a.pid;
        j["arms"].push_back(arm);
    }
    if (!run.stopping.empty()) j["stopping"] = run.stopping;
    if (!run.replication.empty()) j["replication"] = run.replication;
    j["comparisons"] = json::array();
    for (const auto& c : compareArms(run))
        j["comparisons"].push_back({{"baseline", c.baseline},
                                    {"arm", c.arm},
                                    {"ratio", c.ratio},
                                    {"ci95", {c.ci_low, c.ci_high}},
                                    {"p_value", c.p_value},
                                    {"significant", c.significant},
                                    {"units", c.units},
                                    {"unit", c.unit},
                                    {"method", c.method},
                                    {"verdict", c.verdict}});
    j["warnings"] = runWarnings(run);
    return j;
}

RunResult fromResultsJson(const json& j) {
    auto need = [](const json& o, const char* key, const std::string& where) -> const json& {
        if (!o.is_object() || !o.contains(key))
            throw std::runtime_error(where + ": missing field \"" + key + "\"");
        return o[key];
    };
    // A field of the wrong type is named too, not left to a bare JSON library message.
    auto as = [](const json& v, const std::string& where, const char* key, auto def) {
        try {
            return v.get<decltype(def)>();
        } catch (const json::exception& e) {
            throw std::runtime_error(where + ": field \"" + key + "\" has the wrong type (" +
                                     e.what() + ")");
        }
    };
    if (as(need(j, "schema", "results"), "results", "schema", 0) != 1)
        throw std::runtime_error("results: schema " + j["schema"].dump() +
                                 " is not supported (expected 1)");
    RunResult r;
    r.preset_json = need(j, "preset", "results");
    try {
        r.preset.name = r.preset_json.value("name", std::string());
        r.preset.model = r.preset_json.value("model", std::string());
        if (r.preset_json.contains("input"))
            r.preset.input = spec::parseInputs(r.preset_json["input"], "results", "preset.input");
    } catch (const std::exception&) {
    }
    r.started_at = j.value("started_at", std::string());
    r.wall_s = j.value("wall_s", 0.0);
    r.stopping = j.value("stopping", json::object());
    r.replication = j.value("replication", json::object());
    const auto& arms = need(j, "arms", "results");
    if (!arms.is_array()) throw std::runtime_error("results: field \"arms\" must be a list");
    for (std::size_t i = 0; i < arms.size(); ++i) {
        const auto where = "results: arms[" + std::to_string(i) + "]";
        const auto& ja = arms[i];
        ArmResult a;
        a.name = as(need(ja, "name", where), where, "name", std::string());
        a.status = as(need(ja, "status", where), where, "status", std::string());
        a.knobs = ja.value("knobs", json::object());
        a.applied = ja.value("applied", json::object());
        a.environment = ja.value("environment", json::object());
        a.batch_size = ja.value("batch_size", 1);
        const auto cold = ja.value("cold", json::object());
        a.loaded = cold;
        if (ja.contains("model"))
            for (const auto& [k, v] : ja["model"].items()) a.loaded[k] = v;
        a.warmup_ns = cold.value("warmup_ns", std::vector<std::int64_t>{});
        const auto lat =
            as(need(ja, "latency_ns", where), where, "latency_ns", std::vector<std::int64_t>());
        const auto blocks = ja.value("block", std::vector<std::int64_t>(lat.size(), 0));
        if (blocks.size() != lat.size())
            throw std::runtime_error(where + ": \"block\" has " + std::to_string(blocks.size()) +
                                     " entries but \"latency_ns\" has " + std::to_string(lat.size()));
        const auto sb = ja.value("sample_batch_size", std::vector<std::int64_t>(lat.size(), a.batch_size));
        const auto sw = ja.value("sample_worker", std::vector<std::int64_t>(lat.size(), 0));
        const auto sp = ja.value("sample_process", std::vector<std::int64_t>(lat.size(), 0));
        if (sb.size() != lat.size() || sw.size() != lat.size() || sp.size() != lat.size())
            throw std::runtime_error(where + ": \"sample_batch_size\" / \"sample_worker\" / \"sample_process\" length differs from \"latency_ns\"");
        for (std::size_t k = 0; k < lat.size(); ++k)
            a.samples.push_back({int(blocks[k]), int(k), int(sb[k]), int(sw[k]), lat[k], int(sp[k])});
        if (ja.contains("processes") && !ja["processes"].is_array())
            throw std::runtime_error(where + ": field \"processes\" must be a list");
        for (const auto& pj : ja.value("processes", json::array())) {
            if (!pj.is_object())
                throw std::runtime_error(where + ": every entry of \"processes\" must be an object");
            ProcessInfo p;
            p.replicate = pj.value("replicate", 0);
            p.worker = pj.value("worker", 0);
            p.pid = pj.value("pid", 0L);
            p.load_ms = pj.value("load_ms", -1.0);
            p.first_forward_ms = pj.value("first_forward_ms", -1.0);
            p.minor_faults = pj.value("minor_faults", std::int64_t{0});
            p.major_faults = pj.value("major_faults", std::int64_t{0});
            p.fault_iters = pj.value("fault_iters", std::int64_t{0});
            a.processes.push_back(p);
        }
        if (ja.contains("sweep")) {
            a.batch_sizes.clear();
            for (const auto& pt : ja["sweep"]) {
                a.batch_sizes.push_back(pt.value("batch_size", 1));
                if (pt.contains("error"))
                    a.sweep_failures[pt.value("batch_size", 1)] =
                        protocol::Error{pt["error"].value("code", ""), pt["error"].value("message", ""), {}};
            }
        } else {
            a.batch_sizes = {a.batch_size};
        }
        if (ja.contains("workers")) {
            a.workers = int(ja["workers"].size());
            for (const auto& w : ja["workers"]) a.worker_applied.push_back(w.value("applied", json::object()));
        }
        if (ja.contains("error") && !ja["error"].is_object())
            throw std::runtime_error(where +
                                     ": field \"error\" must be an object with code and message");
        if (ja.contains("error"))
            a.error = protocol::Error{ja["error"].value("code", ""), ja["error"].value("message", ""), {}};
        a.warnings = ja.value("warnings", std::vector<std::string>{});
        a.peak_rss_bytes = ja.value("summary", json::object()).value("peak_rss_bytes", std::int64_t{0});
        for (const auto& m : ja.value("metrics", json::array())) {
            MetricTick t;
            t.t_ms = m.value("t_ms", 0.0);
            t.worker = m.value("worker", 0);
            t.process = m.value("process", 0);
            t.rss_bytes = m.value("rss_bytes", std::int64_t{0});
            t.tensor_bytes = m.value("tensor_bytes", std::int64_t{-1});
            t.tensor_peak_bytes = m.value("tensor_peak_bytes", std::int64_t{-1});
            t.raw = m;
            t.cpu_s = m.value("cpu_s", 0.0);
            t.core_util_pct = m.value("core_util_pct", std::vector<double>{});
            a.metrics.push_back(std::move(t));
        }
        a.pid = ja.value("pid", 0L);
        r.arms.push_back(std::move(a));
    }
    return r;
}

namespace {
// RFC 4180: quote a field that holds a comma, a quote or a line break.
std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}
}  // namespace

std::string samplesCsv(const RunResult& run) {
    std::ostringstream os;
    os << "arm,block,iteration,batch_size,latency_ns,process\n";
    for (const auto& a : run.arms)
        for (const auto& s : a.samples)
            os << csvField(a.name) << ',' << s.block << ',' << s.iter << ',' << s.batch_size << ','
               << s.latency_ns << ',' << s.process << '\n';
    return os.str();
}

std::string formatDuration(double ns) {
    char buf[64];
    const double a = std::fabs(ns);
    if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
    else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
    else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
    else std::snprintf(buf, sizeof buf, "%.0f ns", ns);
    return buf;
}

std::string formatBytes(double bytes) {
    char buf[64];
    if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    else if (bytes >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
    else if (bytes >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
    else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
    return buf;
}

std::string isoNowUtc() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace pitlane::results
