// The plain-text comparison table of pitlane-cli.
#include "pitlane/results/lesson.h"
#include "pitlane/results/energy.h"
#include "pitlane/results/run_result.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace pitlane::results {

namespace {
// Characters as a terminal shows them: UTF-8 code points.
std::size_t textWidth(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
    return n;
}
std::string pad(const std::string& s, std::size_t w, bool right = true) {
    const std::size_t n = textWidth(s);
    if (n >= w) return s;
    return right ? std::string(w - n, ' ') + s : s + std::string(w - n, ' ');
}
std::string num(double v, const char* fmt) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}
// Minor page faults per measured iteration ("-": not reported).
std::string faults(double perIter) {
    if (perIter < 0) return "-";
    return num(perIter, perIter < 10 ? "%.2f" : perIter < 100 ? "%.1f" : "%.0f");
}

// Below the arm table: each arm's process medians in run order, how far apart they are and how
// the variance splits, so a verdict that counts processes as its units can be read.
void processBlock(std::ostringstream& os, const RunResult& run) {
    constexpr std::size_t kPerLine = 8;
    std::size_t nameW = 0, cellW = 0, most = 0;
    bool any = false;
    for (const auto& a : run.arms) {
        const auto ps = processSummaries(a);
        for (const auto& p : ps) {
            any |= p.n > 0;
            cellW = std::max(cellW, (p.n ? formatDuration(p.median_ns) : std::string("-")).size());
        }
        if (ps.empty()) continue;
        nameW = std::max(nameW, a.name.size());
        most = std::max(most, ps.size());
    }
    if (!any) return;
    const std::size_t perLine = std::min(most, kPerLine);
    os << "\n";
    for (const auto& a : run.arms) {
        const auto ps = processSummaries(a);
        if (ps.empty()) continue;
        const std::string indent(nameW + 2 + 10, ' ');
        os << pad(a.name, nameW, false) << "  processes:";
        double lo = 0, hi = 0;
        std::size_t measured = 0;
        for (std::size_t i = 0; i < ps.size(); ++i) {
            if (i && i % kPerLine == 0) os << "\n" << indent;
            const auto& p = ps[i];
            os << "  " << pad(p.n ? formatDuration(p.median_ns) : "-", cellW);
            if (!p.n || p.median_ns <= 0) continue;
            lo = measured ? std::min(lo, p.median_ns) : p.median_ns;
            hi = measured ? std::max(hi, p.median_ns) : p.median_ns;
            ++measured;
        }
        // Short rows are padded so the notes line up.
        const std::size_t last = ps.size() % kPerLine ? ps.size() % kPerLine : kPerLine;
        if (last < perLine) os << std::string((perLine - last) * (cellW + 2), ' ');
        std::vector<std::string> notes;
        if (measured >= 2) notes.push_back(num(hi / lo, "%.2fx apart"));
        const auto shares = varianceShares(a);
        if (shares.computed)
            notes.push_back("between processes " + num(100 * shares.between_processes, "%.0f%%") +
                            " / blocks " + num(100 * shares.between_blocks, "%.0f%%") +
                            " / within " + num(100 * shares.within_blocks, "%.0f%%"));
        if (!notes.empty()) {
            os << "  (" << notes[0];
            for (std::size_t i = 1; i < notes.size(); ++i) os << "; " << notes[i];
            os << ")";
        }
        os << "\n";
    }
    os << "(median of each worker process, in run order; shares of the variance of log latency "
          "between processes / between blocks / within blocks, by nested ANOVA)\n";
}
// A lesson preset says what it teaches and what to expect, next to what was measured.
void lessonHeader(std::ostream& os, const RunResult& run) {
    const json lesson = lessonOf(run);
    if (!lesson.is_object()) return;
    os << "Lesson: " << lesson.value("title", std::string()) << "\n";
    if (lesson.contains("text")) os << "  " << lesson.value("text", std::string()) << "\n";
    if (lesson.contains("claim")) os << "  Claim: " << lesson.value("claim", std::string()) << "\n";
    if (lesson.contains("expect")) os << "  Expect: " << lesson.value("expect", std::string()) << "\n";
    os << "\n";
}

// Each check of the lesson, judged on this run.
void lessonChecks(std::ostream& os, const RunResult& run) {
    const auto report = checkLesson(run);
    if (report.empty()) return;
    os << "\nlesson: " << statusText(report.status) << "\n";
    for (const auto& c : report.checks)
        os << "  [" << statusText(c.status) << "] " << c.expected << ": " << c.measured << "\n";
}

}  // namespace

// What every table ends with: the profile, the lesson's checks, each arm's error, the warnings.
static std::string endOfTable(std::ostringstream& os, const RunResult& run) {
    if (const auto prof = profileTable(run); !prof.empty()) os << "\n" << prof;
    lessonChecks(os, run);
    for (const auto& a : run.arms)
        if (a.error) os << "\n" << a.name << " " << a.status << ": [" << a.error->code << "] " << a.error->message << "\n";
    const auto warnings = runWarnings(run);
    if (!warnings.empty()) {
        os << "\nwarnings:\n";
        for (const auto& w : warnings) os << "  - " << w << "\n";
    }
    return os.str();
}

// A serving run: one row per arm and level, the verdict, then what every run ends with.
static std::string servingRunTable(std::ostringstream& os, const RunResult& run) {
    const auto& sv = run.preset.serving;
    os << "Serving: " << sv.arrival << " arrivals, " << sv.duration_ms << " ms per level"
       << (sv.slo_p99_ms > 0 ? ", SLO p99 <= " + num(sv.slo_p99_ms, "%g") + " ms" : std::string()) << "\n";
    for (const auto& a : run.arms)
        os << "  " << a.name << ": max_batch " << a.knobs.max_batch << ", max_wait_ms "
           << a.knobs.max_wait_ms << ", status " << a.status << "\n";
    os << "\n" << servingTable(run);
    return endOfTable(os, run);
}

std::string comparisonTable(const RunResult& run) {
    std::ostringstream os;
    if (armsDifferInModel(run)) {
        os << "Pitlane: " << run.preset.name << " (each arm its own model)\n";
        for (const auto& a : run.arms) os << "  " << a.name << ": " << modelSummary(a) << "\n";
        os << "\n";
    } else {
        const std::string format = run.arms.empty() ? std::string() : run.arms.front().model_format;
        os << "Pitlane: " << run.preset.name << " (model " << run.preset.model
           << (format == spec::kFormatAoti ? ", AOTInductor package" : "") << ")\n\n";
    }
    // A lesson preset says what it teaches and what to expect, next to what was measured.
    lessonHeader(os, run);
    if (run.preset.serving.enabled) return servingRunTable(os, run);
    // The arm and status columns as wide as their longest cell: a long arm name shifts nothing.
    std::size_t armW = 12, statusW = 10;
    for (const auto& a : run.arms) {
        armW = std::max(armW, textWidth(a.name));
        statusW = std::max(statusW, textWidth(a.status));
    }
    const std::vector<std::pair<std::string, std::size_t>> cols = {
        {"arm", armW}, {"status", statusW}, {"n", 6}, {"median", 11}, {"p90", 11}, {"p99", 11},
        {"p99.9", 11}, {"CoV", 7}, {"throughput/s", 13}, {"peak RSS", 11}, {"faults/iter", 11}};
    for (std::size_t i = 0; i < cols.size(); ++i)
        os << pad(cols[i].first, cols[i].second, i > 1) << (i + 1 < cols.size() ? "  " : "\n");
    for (const auto& a : run.arms) {
        const auto s = summarize(a);
        std::vector<std::string> cells = {a.name, a.status, std::to_string(s.n),
                                          s.n ? formatDuration(s.median) : "-",
                                          s.n ? formatDuration(s.p90) : "-",
                                          s.n ? formatDuration(s.p99) : "-",
                                          s.n ? formatDuration(s.p999) : "-",
                                          s.n ? num(100 * s.cov, "%.1f%%") : "-",
                                          s.n ? num(armThroughput(a, s), "%.1f") : "-",
                                          a.peak_rss_bytes ? formatBytes(double(a.peak_rss_bytes)) : "-",
                                          faults(minorFaultsPerIter(a))};
        for (std::size_t i = 0; i < cols.size(); ++i)
            os << pad(cells[i], cols[i].second, i > 1) << (i + 1 < cols.size() ? "  " : "\n");
    }
    processBlock(os, run);
    os << energySection(run);  // issue 46
    bool compiled = false;
    for (const auto& a : run.arms)
        if (a.compile) {
            os << (compiled ? "" : "\n") << a.name << ": " << compileLine(*a.compile) << "\n";
            compiled = true;
        }
    for (const auto& a : run.arms) {
        if (a.batch_sizes.size() < 2) continue;
        os << "\n" << a.name << ": batch-size sweep\n"
           << pad("batch", 7) << "  " << pad("n", 6) << "  " << pad("median", 11) << "  "
           << pad("p99", 11) << "  " << pad("items/s", 11) << "  status\n";
        for (int bs : a.batch_sizes) {
            const auto s = stats::summarize(a.latencies(bs), bs);
            const auto f = a.sweep_failures.find(bs);
            os << pad(std::to_string(bs), 7) << "  " << pad(std::to_string(s.n), 6) << "  "
               << pad(s.n ? formatDuration(s.median) : "-", 11) << "  "
               << pad(s.n ? formatDuration(s.p99) : "-", 11) << "  "
               << pad(s.n ? num(s.throughput_per_s, "%.1f") : "-", 11) << "  "
               << (f != a.sweep_failures.end() ? "failed: " + f->second.message : std::string("ok"))
               << "\n";
        }
    }
    for (const auto& a : run.arms)
        if (a.workers > 1)
            os << "\n" << a.name << ": " << a.workers
               << " concurrent workers; throughput is the sum of each worker's items/s\n";
    const auto comps = compareArms(run);
    if (!comps.empty()) {
        std::size_t cmpW = 16;
        for (const auto& c : comps) cmpW = std::max(cmpW, textWidth(c.arm + " vs " + c.baseline) + 2);
        os << "\n"
           << pad("comparison", cmpW, false) << pad("ratio", 8) << "  " << pad("95% CI", 15) << "  "
           << pad("p-value", 9) << "  verdict\n";
        for (const auto& c : comps) {
            os << pad(c.arm + " vs " + c.baseline, cmpW, false) << pad(num(c.ratio, "%.3f"), 8)
               << "  " << pad(num(c.ci_low, "%.3f") + "-" + num(c.ci_high, "%.3f"), 15) << "  "
               << pad(stats::pValueText(c.p_value), 9) << "  " << c.verdict
               << "\n";
            // What ran differs from what was asked: said with the verdict it touches.
            for (const auto& caveat : comparisonCaveats(run, c)) os << "  caveat: " << caveat << "\n";
        }
        os << "(ratio = baseline median / arm median; > 1 means the arm is faster)\n";
        const auto rep = replicationSummary(run);
        if (!rep.empty()) os << "replication: " << rep << "\n";
    }
    for (std::size_t i = 1; i < run.arms.size(); ++i)
        if (const auto why = notComparedReason(run, i); !why.empty()) os << "\n" << why << "\n";
    return endOfTable(os, run);
}

}  // namespace pitlane::results
