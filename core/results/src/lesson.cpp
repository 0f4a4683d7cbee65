// Judging a lesson's checks on a run (lesson.h).
#include "pitlane/results/lesson.h"

#include "pitlane/spec/lesson.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace pitlane::results {

namespace {

std::string fmt(const char* f, double a) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, a);
    return buf;
}

std::string ratioText(double r) {
    return std::isinf(r) ? std::string("inf") : fmt("%.2f", r);
}

const ArmResult* findArm(const RunResult& run, const std::string& name) {
    for (const auto& a : run.arms)
        if (a.name == name) return &a;
    return nullptr;
}

// Why an arm cannot be judged ("" when it can).
std::string unusable(const ArmResult* a, const std::string& name) {
    if (!a) return "arm \"" + name + "\" is not in this run";
    if (a->status != kOk)
        return name + " " + a->status + (a->error ? ": " + a->error->code : std::string());
    return {};
}

// Ratio a/b for "how many times": 0/0 = 1, x/0 = inf.
double timesRatio(double a, double b) {
    if (b == 0) return a == 0 ? 1.0 : std::numeric_limits<double>::infinity();
    return a / b;
}

std::string metricText(const std::string& metric, double v) {
    if (metric.find("bytes") != std::string::npos) return formatBytes(v);
    if (metric == "median_latency_ns") return formatDuration(v);
    if (metric.size() > 3 && metric.substr(metric.size() - 3) == "_ms") return fmt("%.1f ms", v);
    if (metric == "throughput_per_s") return fmt("%.1f items/s", v);
    return fmt("%.3g", v);
}

json appliedField(const json& applied, const std::string& path) {
    const json* at = &applied;
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto dot = path.find('.', start);
        const auto key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!at->is_object() || !at->contains(key)) return json();
        at = &(*at)[key];
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return *at;
}

void checkFaster(const RunResult& run, const ArmResult& x, const ArmResult& y, LessonCheck& c) {
    const double m = c.spec.value("min_ratio", 1.0);
    const double within = c.spec.value("within", stats::kTightRatio);
    const bool similar = c.spec.value("kind", std::string()) == "similar";
    stats::CompareOptions options;
    options.paired = run.interleaved;
    const auto cmp = stats::compare(y.name, y.blocked(), x.name, x.blocked(), options);
    c.value = cmp.ratio;  // > 1: x is faster
    c.ci_low = cmp.ci_low;
    c.ci_high = cmp.ci_high;
    c.measured = x.name + " " + ratioText(cmp.ratio) + "x the speed of " + y.name + " (95% CI " +
                 ratioText(cmp.ci_low) + "-" + ratioText(cmp.ci_high) + ", " +
                 std::to_string(cmp.units) + " " + cmp.unit + ")";
    if (similar) {
        if (cmp.ci_low >= 1 / within && cmp.ci_high <= within) c.status = kReproduced;
        else if (cmp.ci_low > within || cmp.ci_high < 1 / within) c.status = kNotReproduced;
        else c.status = kInconclusive;
        return;
    }
    if (cmp.significant && cmp.ratio > 1 && cmp.ratio >= m) c.status = kReproduced;
    else if (cmp.ci_high < std::max(m, stats::kTightRatio)) c.status = kNotReproduced;
    else c.status = kInconclusive;
}

void checkMetric(const ArmResult& x, const ArmResult& y, LessonCheck& c) {
    const std::string metric = c.spec.value("metric", std::string());
    const bool lower = c.spec.value("kind", std::string()) == "lower";
    const double m = c.spec.value("min_ratio", 1.0);
    const double vx = lessonMetric(x, metric), vy = lessonMetric(y, metric);
    if (vx < 0 || vy < 0) {
        c.status = kNotRun;
        c.measured = metric + " was not reported";
        return;
    }
    c.value = lower ? timesRatio(vy, vx) : timesRatio(vx, vy);
    c.measured = metric + ": " + x.name + " " + metricText(metric, vx) + ", " + y.name + " " +
                 metricText(metric, vy) + " (" + ratioText(c.value) + "x)";
    c.status = c.value > 1 && c.value >= m ? kReproduced : kNotReproduced;
}

void checkApplied(const ArmResult& x, LessonCheck& c) {
    const std::string field = c.spec.value("field", std::string());
    const json got = appliedField(protocol::appliedFields(x.applied), field);
    c.measured = x.name + " read back " + field + " = " + (got.is_null() ? "(absent)" : got.dump());
    c.status = got == c.spec["equals"] ? kReproduced : kNotReproduced;
}

void checkThroughputGrows(const ArmResult& x, LessonCheck& c) {
    const int from = c.spec.value("from", 1), to = c.spec.value("to", 1);
    const double m = c.spec.value("min_ratio", 1.0);
    const auto a = x.latencies(from), b = x.latencies(to);
    if (a.empty() || b.empty()) {
        c.status = kNotRun;
        c.measured = "batch size " + std::to_string(a.empty() ? from : to) + " was not measured";
        return;
    }
    const double ta = stats::summarize(a, from).throughput_per_s;
    const double tb = stats::summarize(b, to).throughput_per_s;
    c.value = timesRatio(tb, ta);
    c.measured = fmt("%.1f", tb) + " items/s at batch " + std::to_string(to) + " vs " + fmt("%.1f", ta) +
                 " at batch " + std::to_string(from) + " (" + ratioText(c.value) + "x)";
    c.status = c.value > 1 && c.value >= m ? kReproduced : kNotReproduced;
}

// saturated / keeps_up: the arm's serving point at the offered rate, judged per process.
void checkSaturation(const RunResult& run, std::size_t arm, LessonCheck& c) {
    const bool wantSaturated = c.spec.value("kind", std::string()) == "saturated";
    const double rate = c.spec.value("rate", 0.0);
    const auto points = servingPoints(run, arm);
    const auto p = std::find_if(points.begin(), points.end(),
                                [rate](const ServingPoint& x) { return x.clients == 0 && x.rate_per_s == rate; });
    if (p == points.end()) {
        c.status = kNotRun;
        c.measured = "no serving level at " + fmt("%g", rate) + " req/s was measured";
        return;
    }
    int saturated = 0;
    for (const auto& s : p->processes) saturated += s.saturated ? 1 : 0;
    const int n = int(p->processes.size());
    c.value = n ? double(saturated) / n : 0;
    c.measured = "saturated in " + std::to_string(saturated) + " of " + std::to_string(n) +
                 " processes: served " + fmt("%.0f", p->pooled.achieved_per_s) + " req/s, p99 " +
                 fmt(p->pooled.p99_ms >= 1000 ? "%.0f" : "%.3g", p->pooled.p99_ms) + " ms, mean batch " + fmt("%.2f", p->pooled.mean_batch);
    const bool all = saturated == n, none = saturated == 0;
    c.status = (wantSaturated ? all : none) ? kReproduced : (wantSaturated ? none : all) ? kNotReproduced : kInconclusive;
}

std::string expectedText(const json& s) {
    const std::string kind = s.value("kind", std::string()), arm = s.value("arm", std::string()),
                      than = s.value("than", std::string());
    const double m = s.value("min_ratio", 1.0);
    const std::string by = m > 1 ? " by at least " + ratioText(m) + "x" : std::string();
    if (kind == "faster") return arm + " is faster than " + than + by;
    if (kind == "similar")
        return arm + " and " + than + " are within " + ratioText(s.value("within", stats::kTightRatio)) +
               "x of each other";
    if (kind == "lower" || kind == "higher")
        return arm + " has " + (kind == "lower" ? "lower " : "higher ") + s.value("metric", std::string()) +
               " than " + than + by;
    if (kind == "applied") return arm + " reads back " + s.value("field", std::string()) + " = " + s["equals"].dump();
    if (kind == "saturated" || kind == "keeps_up")
        return arm + (kind == "saturated" ? " saturates" : " keeps up") + " at " +
               fmt("%g", s.value("rate", 0.0)) + " req/s";
    if (kind == "throughput_grows")
        return arm + ": items/s at batch " + std::to_string(s.value("to", 1)) + " exceed batch " +
               std::to_string(s.value("from", 1)) + by;
    return kind;
}

void judge(const RunResult& run, const json& lesson, LessonCheck& c) {
    const std::string kind = c.spec.value("kind", std::string());
    const std::string armName = c.spec.value("arm", std::string()), thanName = c.spec.value("than", std::string());
    const ArmResult* x = findArm(run, armName);
    const ArmResult* y = c.spec.contains("than") ? findArm(run, thanName) : nullptr;
    std::string why = unusable(x, armName);
    if (why.empty() && c.spec.contains("than")) why = unusable(y, thanName);
    if (!why.empty()) {
        c.status = kNotRun;
        const bool cuda = lesson.value("needs", std::string()) == "cuda";
        c.measured = cuda ? "needs a CUDA device (" + why + ")" : why;
        return;
    }
    if (kind == "faster" || kind == "similar") checkFaster(run, *x, *y, c);
    else if (kind == "lower" || kind == "higher") checkMetric(*x, *y, c);
    else if (kind == "applied") checkApplied(*x, c);
    else if (kind == "throughput_grows") checkThroughputGrows(*x, c);
    else if (kind == "saturated" || kind == "keeps_up") checkSaturation(run, std::size_t(x - run.arms.data()), c);
}

}  // namespace

json lessonOf(const RunResult& run) {
    if (run.preset.lesson.is_object()) return run.preset.lesson;
    if (run.preset_json.is_object() && run.preset_json.value("lesson", json()).is_object())
        return run.preset_json["lesson"];
    return json();
}

LessonReport checkLesson(const RunResult& run) {
    LessonReport r;
    const json lesson = lessonOf(run);
    if (!lesson.is_object() || !lesson.value("checks", json()).is_array()) return r;
    r.title = lesson.value("title", std::string());
    int reproduced = 0, notReproduced = 0, notRun = 0;
    for (const auto& spec : lesson["checks"]) {
        LessonCheck c;
        c.spec = spec;
        c.expected = expectedText(spec);
        judge(run, lesson, c);
        reproduced += c.status == kReproduced;
        notReproduced += c.status == kNotReproduced;
        notRun += c.status == kNotRun;
        r.checks.push_back(std::move(c));
    }
    const int n = int(r.checks.size());
    r.status = notReproduced ? kNotReproduced : notRun ? kNotRun : reproduced == n ? kReproduced : kInconclusive;
    return r;
}

json toJson(const LessonReport& report) {
    json checks = json::array();
    for (const auto& c : report.checks) {
        json j = c.spec;
        j["expected"] = c.expected;
        j["status"] = c.status;
        j["measured"] = c.measured;
        if (c.value != 0 && std::isfinite(c.value)) j["value"] = c.value;
        if (c.ci_high > 0) {
            j["ci_low"] = c.ci_low;
            j["ci_high"] = c.ci_high;
        }
        checks.push_back(std::move(j));
    }
    return {{"title", report.title}, {"status", report.status}, {"checks", checks}};
}

std::string statusText(const std::string& status) {
    if (status == kNotReproduced) return "not reproduced";
    if (status == kNotRun) return "not run";
    return status;
}

double lessonMetric(const ArmResult& arm, const std::string& metric) {
    if (metric == "median_latency_ns") return arm.samples.empty() ? -1 : summarize(arm).median;
    if (metric == "throughput_per_s") return arm.samples.empty() ? -1 : aggregateThroughput(arm);
    if (metric == "peak_rss_bytes") return arm.peak_rss_bytes > 0 ? double(arm.peak_rss_bytes) : -1;
    if (metric == "tensor_peak_bytes") {
        std::int64_t peak = -1;
        for (const auto& t : arm.metrics) peak = std::max(peak, t.tensor_peak_bytes);
        return double(peak);
    }
    if (metric == "minor_faults_per_iter") return minorFaultsPerIter(arm);
    if (metric == "involuntary_switches_per_iter") return contextSwitchesPerIter(arm, false);
    if (metric == "load_ms" || metric == "first_forward_ms") {
        std::vector<double> v;
        for (const auto& p : arm.processes) {
            const double x = metric == "load_ms" ? p.load_ms : p.first_forward_ms;
            if (x >= 0) v.push_back(x);
        }
        if (v.empty()) return -1;
        std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
        return v[v.size() / 2];
    }
    if (metric == "process_spread") {
        double lo = 0, hi = 0;
        for (const auto& p : processSummaries(arm)) {
            if (p.n == 0) continue;
            lo = lo == 0 ? p.median_ns : std::min(lo, p.median_ns);
            hi = std::max(hi, p.median_ns);
        }
        return lo > 0 ? hi / lo : -1;
    }
    return -1;
}

}  // namespace pitlane::results
