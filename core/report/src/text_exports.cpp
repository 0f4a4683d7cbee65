// The text exports (Markdown summary, CSV of samples, results JSON), atomic writes, the palette.
#include "pitlane/report/report.h"
#include "pitlane/results/advice.h"

#include "lesson_sections.h"
#include "energy_sections.h"
#include "html_builder.h"
#include "markdown_sections.h"
#include "serving_sections.h"

#include <QSaveFile>

#include <map>

namespace pitlane::report {

QColor armColor(int index) {
    // Okabe-Ito: distinguishable with the common colour-vision deficiencies and in grey print.
    static const QColor palette[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00),
                                     QColor(0x00, 0x9E, 0x73), QColor(0xD5, 0x5E, 0x00),
                                     QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9),
                                     QColor(0x5B, 0x4B, 0x8A), QColor(0x33, 0x33, 0x33)};
    const int n = int(sizeof palette / sizeof *palette);
    return palette[((index % n) + n) % n];
}

bool writeFileAtomic(const QString& path, const QByteArray& data, QString* error) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        *error = path + QStringLiteral(": ") + f.errorString();
        return false;
    }
    if (f.write(data) != data.size() || !f.commit()) {
        *error = path + QStringLiteral(": ") + f.errorString();
        return false;
    }
    return true;
}

namespace {

// Table cells must not break the Markdown table.
std::string md(const std::string& s) {
    return detail::markdownCell(s);
}

std::string fmt(double v, const char* f) {
    return detail::formatNumber(v, f);
}

// Minor page faults per measured iteration ("-": not reported).
std::string faults(double perIter) {
    return detail::perIterMarkdown(perIter, "-");
}

// Each arm's worker processes (run order) and how its variance splits.
std::string processesMarkdown(const results::RunResult& run) {
    std::string rows, shares;
    for (const auto& a : run.arms) {
        const auto procs = results::processSummaries(a);
        bool measured = false;
        for (const auto& p : procs) {
            measured |= p.n > 0;
            std::string replicate = std::to_string(p.info.replicate + 1);
            if (a.workers > 1) replicate += " (worker " + std::to_string(p.info.worker + 1) + ")";
            rows += "| " + md(a.name) + " | " + replicate + " | " +
                    (p.info.pid ? std::to_string(p.info.pid) : std::string("-")) + " | " +
                    std::to_string(p.n) + " | " +
                    (p.n ? results::formatDuration(p.median_ns) : std::string("-")) + " | " +
                    faults(p.info.minorFaultsPerIter()) + " | " +
                    (p.info.load_ms >= 0 ? fmt(p.info.load_ms, "%.1f ms") : std::string("-")) +
                    " |\n";
        }
        const auto v = results::varianceShares(a);
        if (measured && v.computed)
            shares += "- **" + md(a.name) + "**: " + fmt(100 * v.between_processes, "%.0f%%") +
                      " between processes, " + fmt(100 * v.between_blocks, "%.0f%%") +
                      " between blocks, " + fmt(100 * v.within_blocks, "%.0f%%") +
                      " within blocks (" + std::to_string(v.processes) + " processes, " +
                      std::to_string(v.blocks) + " blocks)\n";
    }
    if (rows.empty()) return {};
    std::string s = "\n| arm | replicate | pid | n | median | faults/iter | load |\n"
                    "|---|--:|--:|--:|--:|--:|--:|\n" +
                    rows;
    if (!shares.empty())
        s += "\nVariance of log latency:\n\n" + shares + "\n_" +
             md(stats::VarianceShares::kEstimator) + "_\n";
    return s;
}

// What every summary ends with: the profile, environment, settings, failures, warnings.
std::string tail(const results::RunResult& run) {
    std::string s;
    if (const auto p = results::profileRows(run, 20); !p.empty()) {
        s += "\n## Where the time goes\n\nSelf time per profiled iteration (ms; run after the measured "
             "blocks, never timed; the full trace is in the results JSON).\n\n| operator |";
        for (std::size_t i : p.arms) s += " " + md(run.arms[i].name) + " |";
        s += "\n|---|";
        for (std::size_t k = 0; k < p.arms.size(); ++k) s += "---:|";
        s += "\n";
        for (const auto& [name, v] : p.ops) {
            s += "| `" + name + "` |";
            for (double x : v) s += " " + fmt(x, "%.3f") + " |";
            s += "\n";
        }
        s += "| **total** |";
        for (double x : p.totals) s += " " + fmt(x, "%.3f") + " |";
        s += "\n";
    }
    if (const auto advice = results::advise(run); !advice.empty()) {
        s += "\n## Advice\n\nWhat to try next, per arm, ranked (docs/ADVISOR.md): per-iteration time first, then "
             "throughput, then start-up, each by the share it addresses.\n\n| arm | # | what to try | why | "
             "addresses | try as an arm |\n|---|---:|---|---|---:|---|\n";
        std::map<std::size_t, int> rank;
        for (const auto& a : advice)
            s += "| " + md(run.arms[a.arm].name) + " | " + std::to_string(++rank[a.arm]) + " | " + md(a.title) +
                 " | " + md(a.evidence) + " | " + fmt(100.0 * a.share, "%.0f") + " % " +
                 results::tierName(a.tier) + (a.measured ? " (measured)" : " (estimated)") + " | " +
                 (a.arm_knobs.is_null() ? md(a.action) : "`" + results::changeText(a.change) + "`") + " |\n";
    }
    s += detail::environmentMarkdown(run) + detail::settingsMarkdown(run);
    for (const auto& a : run.arms)
        if (a.error)
            s += "\n> **" + md(a.name) + " " + a.status + "**: [" + md(a.error->code) + "] " +
                 md(a.error->message) + "\n";
    const auto warnings = results::runWarnings(run);
    if (!warnings.empty()) {
        s += "\n<details><summary>" + std::to_string(warnings.size()) + " warning(s)</summary>\n\n";
        for (const auto& w : warnings) s += "- " + md(w) + "\n";
        s += "\n</details>\n";
    }
    return s;
}

QByteArray csvField(const std::string& s) {
    const bool quote = s.find_first_of(",\"\n\r") != std::string::npos;
    if (!quote) return QByteArray::fromStdString(s);
    QByteArray o = "\"";
    for (char c : s) o += c == '"' ? QByteArray("\"\"") : QByteArray(1, c);
    return o + "\"";
}

}  // namespace

QString markdownSummary(const results::RunResult& run, const ReportOptions& o) {
    std::string s;
    const std::string title = !o.title.isEmpty() ? o.title.toStdString() : run.preset.name;
    // One title (#), then every section at the same level (##): Markdown viewers and tables of
    // contents read the structure from the levels.
    s += "# " + md(title.empty() ? "Pitlane run" : title) + "\n\n";
    std::vector<std::string> head;
    const auto models = detail::headerModels(run);
    if (models.size() == 1 && models.front().first.empty()) {
        head.push_back("model `" + detail::markdownCode(models.front().second) + "`");
    } else if (!models.empty()) {  // each arm its own model
        std::string each;
        for (const auto& [arm, model] : models)
            each += (each.empty() ? "" : ", ") + md(arm) + " `" + detail::markdownCode(model) + "`";
        head.push_back("models: " + each);
    }
    if (!o.runId.isEmpty()) head.push_back("run #" + o.runId.toStdString());
    head.push_back(run.started_at);
    for (std::size_t i = 0; i < head.size(); ++i) s += (i ? " · " : "") + head[i];
    s += "\n\n";
    const auto comps = results::compareArms(run);
    for (const auto& c : comps) {
        s += "**" + md(c.verdict) + "**  \n";
        // What ran differs from what was asked: said with the verdict it touches.
        for (const auto& caveat : results::comparisonCaveats(run, c)) s += "⚠ _" + md(caveat) + "_  \n";
    }
    const auto servingLines = results::servingVerdict(run);
    for (const auto& line : servingLines) s += "**" + md(line) + "**  \n";
    for (const auto& n : o.notes) s += "_" + md(n.toStdString()) + "_  \n";
    if (!comps.empty() || !servingLines.empty() || !o.notes.isEmpty()) s += "\n";
    s += detail::lessonMarkdown(run);
    if (run.preset.serving.enabled) {
        // No samples: the levels instead of the per-iteration tables.
        s += detail::servingMarkdown(run);
        return QString::fromStdString(s + tail(run));
    }
    s += "| arm | status | n | median | p90 | p99 | p99.9 | CoV | items/s | peak RSS | "
         "faults/iter |\n";
    s += "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
    for (const auto& a : run.arms) {
        const auto st = results::summarize(a);
        auto d = [&](double v) { return st.n ? results::formatDuration(v) : std::string("-"); };
        s += "| " + md(a.name) + " | " + a.status + " | " + std::to_string(st.n) + " | " +
             d(st.median) + " | " + d(st.p90) + " | " + d(st.p99) + " | " + d(st.p999) + " | " +
             (st.n ? fmt(100 * st.cov, "%.1f%%") : "-") + " | " +
             (st.n ? fmt(results::armThroughput(a, st), "%.1f") : "-") + " | " +
             (a.peak_rss_bytes ? results::formatBytes(double(a.peak_rss_bytes)) : "-") + " | " +
             faults(results::minorFaultsPerIter(a)) + " |\n";
    }
    s += detail::countersMarkdown(run) + detail::energyMarkdown(run) + detail::sweepMarkdown(run);
    if (!comps.empty()) {
        s += "\n| comparison | ratio | 95% CI | p-value |\n|---|--:|--:|--:|\n";
        for (const auto& c : comps)
            s += "| " + md(c.arm) + " vs " + md(c.baseline) + " | " + fmt(c.ratio, "%.3f") + " | " +
                 fmt(c.ci_low, "%.3f") + "–" + fmt(c.ci_high, "%.3f") + " | " +
                 md(stats::pValueText(c.p_value)) + " |\n";
        s += "\n_ratio = baseline median / arm median; > 1 means the arm is faster_\n";
        const auto rep = results::replicationSummary(run);
        if (!rep.empty()) s += "\n_" + md(rep) + "_\n";
    }
    s += processesMarkdown(run);
    return QString::fromStdString(s + tail(run));
}

QByteArray samplesCsv(const results::RunResult& run, const ReportOptions& o) {
    const std::string id = !o.runId.isEmpty() ? o.runId.toStdString() : run.started_at;
    const QByteArray runField = csvField(id);
    if (run.preset.serving.enabled) {
        // A serving run: one row per served request (results::servingRequestsCsv), each with
        // the run column first like the samples'.
        const QByteArray requests = QByteArray::fromStdString(results::servingRequestsCsv(run));
        QByteArray out;
        out.reserve(requests.size() + (requests.count('\n') + 1) * (runField.size() + 1));
        qsizetype at = 0;
        for (bool header = true; at < requests.size(); header = false) {
            qsizetype end = requests.indexOf('\n', at);
            if (end < 0) end = requests.size();
            out +=
                (header ? QByteArray("run") : runField) + ',' + requests.mid(at, end - at) + '\n';
            at = end + 1;
        }
        return out;
    }
    QByteArray out = "run,arm,block,iteration,batch_size,latency_ns,process\n";
    for (const auto& a : run.arms) {
        const QByteArray arm = csvField(a.name);
        for (const auto& s : a.samples) {
            out += runField + ',' + arm + ',' + QByteArray::number(s.block) + ',' +
                   QByteArray::number(s.iter) + ',' + QByteArray::number(s.batch_size) + ',' +
                   QByteArray::number(qint64(s.latency_ns)) + ',' +
                   QByteArray::number(s.process) + '\n';
        }
    }
    return out;
}

QByteArray resultsJson(const results::RunResult& run, const ReportOptions& o) {
    auto j = results::toResultsJson(run);
    if (!o.runId.isEmpty()) j["history_id"] = o.runId.toStdString();
    return QByteArray::fromStdString(j.dump(2) + "\n");
}

bool writeMarkdown(const QString& path, const results::RunResult& run, const ReportOptions& o,
                   QString* error) {
    return writeFileAtomic(path, markdownSummary(run, o).toUtf8(), error);
}

bool writeCsv(const QString& path, const results::RunResult& run, const ReportOptions& o,
              QString* error) {
    return writeFileAtomic(path, samplesCsv(run, o), error);
}

bool writeJson(const QString& path, const results::RunResult& run, const ReportOptions& o,
               QString* error) {
    return writeFileAtomic(path, resultsJson(run, o), error);
}

}  // namespace pitlane::report
