// The results JSON of CONTRACT.md (schema 1): writing a RunResult out, section by section
// (environment and cold costs, samples, processes, variance, sweep, workers, metrics,
// comparisons), and reading one back.
#include "pitlane/results/advice.h"
#include "pitlane/results/energy.h"
#include "pitlane/results/lesson.h"
#include "pitlane/results/run_result.h"

#include <stdexcept>

namespace pitlane::results {

namespace {

// ---- writing ----

json summaryJson(const stats::Summary& s, std::int64_t peakRss) {
    if (s.n == 0) {
        // Nothing measured (a serving arm, or one that failed first): null, never a 0 that reads
        // as a latency.
        json j = {{"n", 0}, {"peak_rss_bytes", peakRss}};
        for (const char* k : {"median_ns", "mean_ns", "sd_ns", "cov", "min_ns", "max_ns", "p90_ns",
                              "p95_ns", "p99_ns", "p999_ns", "throughput_per_s"})
            j[k] = nullptr;
        return j;
    }
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

// The worker's `detail` (torch's whole message, a traceback) is kept when there is one.
json errorJson(const protocol::Error& e) {
    json j = {{"code", e.code}, {"message", e.message}};
    if (!e.detail.is_null()) j["detail"] = e.detail;
    return j;
}

// One field of every measured sample, in sample order.
template <typename T>
std::vector<std::int64_t> sampleColumn(const SampleSeries& samples, T Sample::*field) {
    std::vector<std::int64_t> out;
    out.reserve(samples.size());
    for (const auto& s : samples) out.push_back(s.*field);
    return out;
}

// Cold costs (the loaded event), the warmup iterations and when they settled.
json coldJson(const ArmResult& a) {
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
    return cold;
}

json modelJson(const ArmResult& a) {
    json m = {{"parameters", a.loaded.value("parameters", 0)},
              {"file_size_bytes", a.loaded.value("file_size_bytes", 0)},
              {"input", a.loaded.value("input", json::array())},
              {"output", a.loaded.value("output", json::object())}};
    // An exported program's own example inputs (issue 40): the archive they came from, and the
    // shape, dtype, min, max and sum of each tensor the worker read from it.
    for (const char* key : {"example_inputs", "example_values"})
        if (a.loaded.contains(key)) m[key] = a.loaded[key];
    return m;
}

// The arm's summary at its first batch size, with page faults where the workers reported them.
json armSummaryJson(const ArmResult& a) {
    json summary = summaryJson(summarize(a), a.peak_rss_bytes);
    if (minorFaultsPerIter(a) >= 0) {
        summary["minor_faults_per_iter"] = minorFaultsPerIter(a);
        summary["major_faults_per_iter"] = majorFaultsPerIter(a);
    }
    return summary;
}

// The process's fields (ProcessInfo's table) but those it did not report: cold costs of -1, and
// the timed loops' counters of a process whose block_done events carried none.
json processJson(const ProcessSummary& p) {
    json pj = protocol::record::toJson(p.info);
    pj["n"] = p.n;
    pj["median_ns"] = p.median_ns;
    if (p.info.load_ms < 0) pj.erase("load_ms");
    if (p.info.first_forward_ms < 0) pj.erase("first_forward_ms");
    if (p.info.fault_iters > 0) {
        pj["minor_faults_per_iter"] = p.info.minorFaultsPerIter();
        pj["major_faults_per_iter"] = p.info.majorFaultsPerIter();
    } else {
        pj.erase("fault_iters");
        std::apply([&](const auto&... f) { ((void)pj.erase(f.name), ...); },
                   protocol::loopCounterFields<ProcessInfo>());
    }
    if (p.info.cpu_wall_ms <= 0) pj.erase("cpu_wall_ms");
    return pj;
}

json processesJson(const ArmResult& a) {
    json procs = json::array();
    for (const auto& p : processSummaries(a)) procs.push_back(processJson(p));
    return procs;
}

json varianceJson(const stats::VarianceShares& shares) {
    json variance = {{"estimator", stats::VarianceShares::kEstimator},
                     {"processes", shares.processes},
                     {"blocks", shares.blocks},
                     {"n", shares.n}};
    if (shares.computed) {
        variance["between_processes"] = shares.between_processes;
        variance["between_blocks"] = shares.between_blocks;
        variance["within_blocks"] = shares.within_blocks;
    }
    return variance;
}

// One point per batch size of a sweep: its status, summary and why it failed.
json sweepJson(const ArmResult& a) {
    json sweep = json::array();
    for (int bs : a.batch_sizes) {
        json point = {{"batch_size", bs}};
        const auto lat = a.latencies(bs);
        auto f = a.sweep_failures.find(bs);
        point["status"] = f != a.sweep_failures.end() ? kFailed
                          : lat.empty()                ? a.status
                                                       : std::string(kOk);
        point["summary"] = summaryJson(stats::summarize(lat, bs), a.peak_rss_bytes);
        if (f != a.sweep_failures.end()) point["error"] = errorJson(f->second);
        sweep.push_back(point);
    }
    return sweep;
}

// One entry per concurrent worker: its summary, applied settings and pid.
json workersJson(const ArmResult& a) {
    json workers = json::array();
    for (int w = 0; w < a.workers; ++w) {
        json wj = {{"worker", w},
                   {"summary", summaryJson(stats::summarize(a.latencies(a.batch_size, w), a.batch_size), 0)}};
        if (w < int(a.worker_applied.size())) wj["applied"] = stripEnvelope(protocol::appliedFields(a.worker_applied[w]));
        if (w < int(a.worker_pids.size())) wj["pid"] = a.worker_pids[w];
        workers.push_back(wj);
    }
    return workers;
}

json metricJson(const MetricTick& m) {
    json t = protocol::record::toJson(m);
    t.erase("raw");
    if (m.sampled_ms < 0) t.erase("sampled_ms");  // a run recorded before the worker's clock
    if (m.tensor_bytes < 0) t.erase("tensor_bytes");
    if (m.tensor_peak_bytes < 0) t.erase("tensor_peak_bytes");
    for (const char* key : {"ctx_voluntary", "ctx_involuntary", "migrations", "minor_faults",
                            "major_faults", "gpu", "gpu_status", "cuda_allocator"})
        if (m.raw.is_object() && m.raw.contains(key)) t[key] = m.raw[key];
    return t;
}

json metricsJson(const std::vector<MetricTick>& ticks) {
    json metrics = json::array();
    for (const auto& m : ticks) metrics.push_back(metricJson(m));
    return metrics;
}

json armJson(const ArmResult& a) {
    json arm;
    arm["name"] = a.name;
    arm["status"] = a.status;
    arm["knobs"] = knobsJson(a);
    arm["applied"] = stripEnvelope(protocol::appliedFields(a.applied));
    arm["environment"] = a.environment;
    if (!a.host.empty()) arm["host"] = a.host;  // remote arms only (additive)
    arm["cold"] = coldJson(a);
    // CONTRACT.md: the file measured, its SHA-256 and format; what the worker saw of the model
    // (parameters, file size, input, output) in model_info (runs stored before issue 26 carried
    // it under "model").
    arm["model"] = a.model;
    arm["model_sha256"] = a.model_sha256;
    arm["model_format"] = a.model_format;
    if (a.compile) arm["compile"] = compileJson(*a.compile);
    arm["model_info"] = modelJson(a);
    arm["batch_size"] = a.batch_size;
    arm["latency_ns"] = sampleColumn(a.samples, &Sample::latency_ns);
    arm["block"] = sampleColumn(a.samples, &Sample::block);
    arm["summary"] = armSummaryJson(a);
    arm["sample_process"] = sampleColumn(a.samples, &Sample::process);
    arm["processes"] = processesJson(a);
    arm["variance"] = varianceJson(varianceShares(a));
    if (a.batch_sizes.size() > 1) {
        arm["sample_batch_size"] = sampleColumn(a.samples, &Sample::batch_size);
        arm["sweep"] = sweepJson(a);
    }
    if (a.workers > 1) {
        arm["sample_worker"] = sampleColumn(a.samples, &Sample::worker);
        arm["workers"] = workersJson(a);
        arm["aggregate_throughput_per_s"] = aggregateThroughput(a);
    }
    if (a.error) arm["error"] = errorJson(*a.error);
    if (!a.profile.is_null()) arm["profile"] = a.profile;
    arm["warnings"] = a.warnings;
    arm["caveats"] = a.caveats;
    arm["metrics"] = metricsJson(a.metrics);
    arm["pid"] = a.pid;
    return arm;
}

json comparisonJson(const stats::Comparison& c) {
    return {{"baseline", c.baseline},
            {"arm", c.arm},
            {"ratio", c.ratio},
            {"ci95", {c.ci_low, c.ci_high}},
            {"p_value", c.p_value},
            {"significant", c.significant},
            {"units", c.units},
            {"unit", c.unit},
            {"method", c.method},
            {"verdict", c.verdict}};
}

// ---- reading ----

const json& need(const json& o, const char* key, const std::string& where) {
    if (!o.is_object() || !o.contains(key))
        throw std::runtime_error(where + ": missing field \"" + key + "\"");
    return o[key];
}

// A field of the wrong type is named too, not left to a bare JSON library message. The last
// argument only gives the type.
template <typename T>
T as(const json& v, const std::string& where, const char* key, T) {
    try {
        return v.get<T>();
    } catch (const json::exception& e) {
        throw std::runtime_error(where + ": field \"" + key + "\" has the wrong type (" +
                                 e.what() + ")");
    }
}

protocol::Error errorFromResults(const json& e) {
    return protocol::Error{e.value("code", ""), e.value("message", ""), e.value("detail", json())};
}

// The preset as run, and the fields the table and the reports read (not re-validated: its
// model file may be gone).
void readPreset(const json& j, RunResult& r) {
    r.preset_json = need(j, "preset", "results");
    try {
        r.preset.name = r.preset_json.value("name", std::string());
        r.preset.model = r.preset_json.value("model", std::string());
        if (r.preset_json.contains("input"))
            r.preset.input = spec::parseInputs(r.preset_json["input"], "results", "preset.input");
    } catch (const std::exception&) {
    }
    // The serving block decides how the arms' levels are summarized (the SLO): it must be read,
    // or the run would be re-read as a closed-loop one with no samples.
    if (r.preset_json.is_object() && r.preset_json.contains("serving")) {
        std::vector<spec::SpecError> errors;
        r.preset.serving = spec::parseServing(r.preset_json["serving"], "results", errors);
        if (!errors.empty())
            throw std::runtime_error("results: preset." + errors.front().field() + ": " + errors.front().reason());
    }
}

// The measured samples: latency_ns with its parallel block / batch size / worker / process lists.
void readSamples(const json& ja, const std::string& where, ArmResult& a) {
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
}

void readProcesses(const json& ja, const std::string& where, ArmResult& a) {
    if (ja.contains("processes") && !ja["processes"].is_array())
        throw std::runtime_error(where + ": field \"processes\" must be a list");
    for (const auto& pj : ja.value("processes", json::array())) {
        if (!pj.is_object())
            throw std::runtime_error(where + ": every entry of \"processes\" must be an object");
        ProcessInfo p = protocol::record::fromJson<ProcessInfo>(pj);
        a.processes.push_back(p);
    }
}

// The sweep's batch sizes and failed points (no sweep: the one batch size), and the workers.
void readSweepAndWorkers(const json& ja, ArmResult& a) {
    if (ja.contains("sweep")) {
        a.batch_sizes.clear();
        for (const auto& pt : ja["sweep"]) {
            a.batch_sizes.push_back(pt.value("batch_size", 1));
            if (pt.contains("error"))
                a.sweep_failures[pt.value("batch_size", 1)] = errorFromResults(pt["error"]);
        }
    } else {
        a.batch_sizes = {a.batch_size};
    }
    if (ja.contains("workers")) {
        a.workers = int(ja["workers"].size());
        for (const auto& w : ja["workers"]) a.worker_applied.push_back(protocol::appliedFromFields(w.value("applied", json::object())));
    }
}

MetricTick metricFromJson(const json& m) {
    MetricTick t = protocol::record::fromJson<MetricTick>(m);
    t.raw = m;
    return t;
}

ArmResult armFromJson(const json& ja, const std::string& where) {
    ArmResult a;
    a.name = as(need(ja, "name", where), where, "name", std::string());
    a.status = as(need(ja, "status", where), where, "status", std::string());
    a.applied = protocol::appliedFromFields(ja.value("applied", json::object()));
    a.environment = ja.value("environment", json::object());
    a.host = ja.value("host", std::string());
    a.batch_size = ja.value("batch_size", 1);
    const auto cold = ja.value("cold", json::object());
    a.loaded = cold;
    for (const char* key : {"model", "model_info"})
        if (ja.contains(key) && ja[key].is_object())
            for (const auto& [k, v] : ja[key].items()) a.loaded[k] = v;
    if (ja.contains("model") && ja["model"].is_string()) a.model = ja["model"].get<std::string>();
    a.model_sha256 = ja.value("model_sha256", std::string());
    a.model_format = ja.value("model_format", std::string());
    if (ja.contains("compile")) a.compile = compileFromJson(ja["compile"]);
    if (ja.contains("knobs") && !ja["knobs"].is_object())
        throw std::runtime_error(where + ": field \"knobs\" must be an object of knobs");
    setKnobsFromJson(a, ja.value("knobs", json::object()));
    a.warmup_ns = cold.value("warmup_ns", std::vector<std::int64_t>{});
    readSamples(ja, where, a);
    readProcesses(ja, where, a);
    readSweepAndWorkers(ja, a);
    if (ja.contains("error") && !ja["error"].is_object())
        throw std::runtime_error(where +
                                 ": field \"error\" must be an object with code and message");
    if (ja.contains("error")) a.error = errorFromResults(ja["error"]);
    a.warnings = ja.value("warnings", std::vector<std::string>{});
    a.caveats = ja.value("caveats", std::vector<std::string>{});
    if (ja.contains("profile")) {
        if (!ja["profile"].is_object() || !ja["profile"].value("ops", json()).is_array())
            throw std::runtime_error(where + ": field \"profile\" must be an object with a list \"ops\"");
        a.profile = ja["profile"];
    }
    a.peak_rss_bytes = ja.value("summary", json::object()).value("peak_rss_bytes", std::int64_t{0});
    for (const auto& m : ja.value("metrics", json::array())) a.metrics.push_back(metricFromJson(m));
    a.pid = ja.value("pid", 0L);
    return a;
}

}  // namespace

json toResultsJson(const RunResult& run) {
    json j;
    j["schema"] = 1;
    j["generator"] = "pitlane";
    j["preset"] = run.preset_json.is_null() ? spec::presetToJson(run.preset) : run.preset_json;
    if (!run.model_sha256.empty()) j["model_sha256"] = run.model_sha256;
    j["started_at"] = run.started_at;
    j["wall_s"] = run.wall_s;
    j["arms"] = json::array();
    for (const auto& a : run.arms) j["arms"].push_back(armJson(a));
    // Issue 46: arms[].energy, computed from processes[] and applied.energy (a re-read JSON
    // gives the same figures).
    for (std::size_t i = 0; i < run.arms.size(); ++i) j["arms"][i]["energy"] = energyJson(armEnergy(run, i));
    if (run.preset.serving.enabled) {
        for (std::size_t i = 0; i < run.arms.size(); ++i) j["arms"][i]["serving"] = servingArmJson(run, i);
        j["serving"] = {{"spec", spec::servingToJson(run.preset.serving)},
                        {"comparisons", servingComparisonsJson(run)},
                        {"verdict", servingVerdict(run)}};
    }
    if (!run.stopping.empty()) j["stopping"] = run.stopping;
    if (!run.replication.empty()) j["replication"] = run.replication;
    j["comparisons"] = json::array();
    for (const auto& c : compareArms(run)) {
        j["comparisons"].push_back(comparisonJson(c));
        j["comparisons"].back()["caveats"] = comparisonCaveats(run, c);
    }
    j["not_compared"] = json::array();
    for (std::size_t i = 1; i < run.arms.size(); ++i)
        if (const auto why = notComparedReason(run, i); !why.empty())
            j["not_compared"].push_back({{"arm", run.arms[i].name}, {"reason", why}});
    j["warnings"] = runWarnings(run);
    // The advisor's ranked advice (derived from the fields above; re-read results recompute it).
    j["advice"] = adviceToJson(run, advise(run));
    const auto lesson = checkLesson(run);
    if (!lesson.empty()) j["lesson"] = toJson(lesson);
    return j;
}

RunResult fromResultsJson(const json& j) {
    if (as(need(j, "schema", "results"), "results", "schema", 0) != 1)
        throw std::runtime_error("results: schema " + j["schema"].dump() +
                                 " is not supported (expected 1)");
    RunResult r;
    readPreset(j, r);
    if (j.contains("model_sha256"))
        r.model_sha256 = as(j["model_sha256"], "results", "model_sha256", std::string());
    r.started_at = j.value("started_at", std::string());
    r.wall_s = j.value("wall_s", 0.0);
    r.stopping = j.value("stopping", json::object());
    r.replication = j.value("replication", json::object());
    const auto& arms = need(j, "arms", "results");
    if (!arms.is_array()) throw std::runtime_error("results: field \"arms\" must be a list");
    for (std::size_t i = 0; i < arms.size(); ++i) {
        const std::string where = "results: arms[" + std::to_string(i) + "]";
        r.arms.push_back(armFromJson(arms[i], where));
        if (!arms[i].contains("serving")) continue;
        try {
            r.arms.back().serving = servingLevelsFromJson(arms[i]["serving"]);
        } catch (const std::exception& e) {
            throw std::runtime_error(where + ".serving: " + e.what());
        }
    }
    return r;
}

}  // namespace pitlane::results
