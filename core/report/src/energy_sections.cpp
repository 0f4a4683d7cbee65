// The reports' energy section (issue 46): one row per arm and measured counter.
#include "energy_sections.h"

#include "html_builder.h"

#include "pitlane/results/energy.h"

#include <cstdio>

namespace pitlane::report::detail {

namespace {

std::string g(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

struct Row {
    std::string arm, counter, gross, net, perJoule, watts, idle, processes;
};

// The rows, the notes, and the reason when nothing was measured ("" when something was, or
// when no worker reported energy at all: then `reported` is false).
std::vector<Row> energyRows(const results::RunResult& run, std::vector<std::string>& notes,
                            std::string& reason, bool& reported) {
    std::vector<Row> rows;
    reported = false;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        if (!a.applied.extraField("energy").is_object()) continue;
        reported = true;
        const auto e = results::armEnergy(run, i);
        if (!e.measured && reason.empty()) reason = e.reason;
        for (const auto& s : e.sources) {
            if (!s.measured) continue;
            Row r;
            r.arm = a.name;
            r.counter = s.device + " (" + s.source + ")";
            r.gross = g(s.j_per_inference) + " (" + g(s.ci_low) + "-" + g(s.ci_high) + ")";
            r.net = s.idle_w >= 0 ? g(s.net_j_per_inference) + " (" + g(s.net_ci_low) + "-" + g(s.net_ci_high) + ")"
                                  : std::string("not measured");
            r.perJoule = g(s.inferences_per_j);
            r.watts = g(s.average_w);
            r.idle = s.idle_w >= 0 ? g(s.idle_w) : std::string("not measured");
            r.processes = std::to_string(s.used) + " (" + g(s.window_s) + " s)";
            rows.push_back(r);
            for (const auto& n : s.notes) notes.push_back(a.name + ": " + n);
        }
    }
    return rows;
}

const char* kHow =
    "Energy counters are read just before and just after each measured block's timed loop; a "
    "process's blocks are summed into one window. Gross: everything the counter counted; net: "
    "less the idle draw one process measured before the run. Each figure is the median across "
    "processes, its 95% CI the same bootstrap as latency's.";

}  // namespace

QString energySectionHtml(const results::RunResult& run) {
    std::vector<std::string> notes;
    std::string reason;
    bool reported = false;
    const auto rows = energyRows(run, notes, reason, reported);
    if (!reported) return {};
    QString h = QStringLiteral("<h2>Energy per inference</h2>\n");
    if (rows.empty()) return h + QStringLiteral("<p>Not measured: %1.</p>\n").arg(esc(reason));
    h += QStringLiteral("<p>%1</p>\n").arg(esc(std::string(kHow)));
    h += QStringLiteral(
        "<table>\n<tr><th>arm</th><th>counter</th><th>J/inference (95% CI)</th><th>net of idle "
        "J/inference (95% CI)</th><th>inferences/J</th><th>average W</th><th>idle W</th>"
        "<th>processes</th></tr>\n");
    for (const auto& r : rows)
        h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td><td>%7</td><td>%8</td></tr>\n")
                 .arg(esc(r.arm), esc(r.counter), esc(r.gross), esc(r.net), esc(r.perJoule), esc(r.watts),
                      esc(r.idle), esc(r.processes));
    h += QStringLiteral("</table>\n");
    for (const auto& n : notes) h += QStringLiteral("<p>%1</p>\n").arg(esc(n));
    return h;
}

std::string energyMarkdown(const results::RunResult& run) {
    std::vector<std::string> notes;
    std::string reason;
    bool reported = false;
    const auto rows = energyRows(run, notes, reason, reported);
    if (!reported) return {};
    std::string s = "\n## Energy per inference\n\n";
    if (rows.empty()) return s + "Not measured: " + reason + ".\n";
    s += std::string(kHow) + "\n\n";
    s += "| arm | counter | J/inference (95% CI) | net of idle J/inference (95% CI) | inferences/J | average W | idle W | processes |\n";
    s += "|---|---|--:|--:|--:|--:|--:|--:|\n";
    for (const auto& r : rows)
        s += "| " + r.arm + " | " + r.counter + " | " + r.gross + " | " + r.net + " | " + r.perJoule + " | " +
             r.watts + " | " + r.idle + " | " + r.processes + " |\n";
    for (const auto& n : notes) s += "\n_" + n + "_\n";
    return s;
}

}  // namespace pitlane::report::detail
