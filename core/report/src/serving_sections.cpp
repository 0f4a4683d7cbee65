// The serving sections of the HTML / PDF report and of the Markdown summary (serving_sections.h).
#include "serving_sections.h"

#include "lesson_sections.h"
#include "markdown_sections.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pitlane::report::detail {

using results::RunResult;

namespace {

// Three significant digits, never an exponent ("0.414", "12.1", "905", "1042").
std::string num3(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, std::fabs(v) >= 1000 ? "%.0f" : "%.3g", v);
    return buf;
}

// A rate as pitlane-cli's table writes it: whole requests/s from 100 up ("967", "12500"), else
// four significant digits ("81.91").
std::string rate(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%.0f" : "%.4g", v);
    return buf;
}

std::string loadText(const results::ServingPoint& p) {
    return p.clients > 0 ? std::to_string(p.clients) : rate(p.rate_per_s);
}

// "yes (2 of 2 processes)", "no (0 of 2)", "" without an SLO.
std::string sloText(const results::ServingPoint& p) {
    if (p.pooled.slo_ms <= 0) return {};
    return std::string(p.meetsSlo() ? "yes" : "no") + " (" + std::to_string(p.meeting_slo) +
           " of " + std::to_string(p.processes.size()) + ")";
}

// The load in one sentence: "Poisson arrivals at 200, 800 requests/s, 1000 ms per level, ..."
std::string loadSentence(const RunResult& run) {
    const auto& sv = run.preset.serving;
    std::string s;
    if (sv.arrival == "closed") {
        s = "Closed loop: ";
        for (std::size_t i = 0; i < sv.clients.size(); ++i)
            s += (i ? ", " : "") + std::to_string(sv.clients[i]);
        s += " concurrent clients, each sending its next request when its last returns";
    } else {
        s = std::string(sv.arrival == "poisson" ? "Poisson" : "Evenly spaced") + " arrivals at ";
        for (std::size_t i = 0; i < sv.rates.size(); ++i) s += (i ? ", " : "") + rate(sv.rates[i]);
        s += " requests/s";
    }
    s += "; " + num3(sv.duration_ms) + " ms of arrivals per level";
    if (sv.slo_p99_ms > 0) s += "; SLO: p99 within " + num3(sv.slo_p99_ms) + " ms";
    if (sv.search()) s += ", searched by bisection (" + std::to_string(sv.search_steps) + " steps)";
    return s + ". Every request is timed from its scheduled arrival, so time spent queued counts.";
}

std::string batcherText(const results::ArmResult& a) {
    const int maxBatch = a.knobs.max_batch;
    const double wait = a.knobs.max_wait_ms;
    return "max_batch " + std::to_string(maxBatch) + ", max_wait " + num3(wait) + " ms";
}

QString q(const std::string& s) {
    return esc(s);
}

QString ms(double v) {
    return QStringLiteral("%1&nbsp;ms").arg(q(num3(v)));
}

std::vector<GridRow> pointRows(const RunResult& run) {
    std::vector<GridRow> rows;
    const QString dash = QStringLiteral("&mdash;");
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto points = results::servingPoints(run, i);
        if (points.empty()) {
            const auto& a = run.arms[i];
            QStringList cells{
                td(armLabel(run, i)),
                td(a.status == results::kOk ? QStringLiteral("no level measured") : esc(a.status))};
            for (int k = 0; k < 11; ++k) cells << td(dash, QStringLiteral("num"));
            rows.push_back({{}, cells});
            continue;
        }
        for (const auto& p : points) {
            const auto& s = p.pooled;
            const bool served = s.served > 0;
            QString load = q(loadText(p));
            if (p.search) load += QStringLiteral(" (search)");
            rows.push_back(
                {s.saturated ? QStringLiteral("drift") : QString(),
                 {td(armLabel(run, i)), td(load, QStringLiteral("num")),
                  td(q(rate(s.offered_per_s)), QStringLiteral("num")),
                  td(q(rate(s.achieved_per_s)), QStringLiteral("num")),
                  td(QString::number(s.served), QStringLiteral("num")),
                  td(served ? ms(s.p50_ms) : dash, QStringLiteral("num")),
                  td(served ? ms(s.p90_ms) : dash, QStringLiteral("num")),
                  td(served ? ms(s.p99_ms) : dash, QStringLiteral("num")),
                  td(served ? ms(s.p999_ms) : dash, QStringLiteral("num")),
                  td(served ? QString::number(s.mean_batch, 'f', 2) : dash, QStringLiteral("num")),
                  td(QString::number(s.max_queue), QStringLiteral("num")),
                  td(s.saturated ? QStringLiteral("<b class=\"bad\">yes</b>")
                                 : QStringLiteral("no")),
                  td(s.slo_ms > 0 ? q(sloText(p)) : dash)}});
        }
    }
    return rows;
}

QString capacityTable(const RunResult& run) {
    const auto& sv = run.preset.serving;
    if (sv.slo_p99_ms <= 0 || sv.arrival == "closed") return {};
    QString h =
        QStringLiteral("<h3>Capacity within the SLO (p99 &le; %1)</h3>\n").arg(ms(sv.slo_p99_ms));
    h += QStringLiteral(
        "<table class=\"grid\"><tr><th>arm</th><th>batcher</th><th>highest rate meeting "
        "it</th><th>lowest rate missing it</th></tr>\n");
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto c = results::sloCapacity(results::servingPoints(run, i));
        const QString met =
            !c.measured()           ? QStringLiteral("not measured")
            : c.max_rate_per_s <= 0 ? QStringLiteral("none measured")
            : c.first_failing_per_s <= 0
                ? QStringLiteral("at least %1&nbsp;/s").arg(q(rate(c.max_rate_per_s)))
                : QStringLiteral("%1&nbsp;/s").arg(q(rate(c.max_rate_per_s)));
        const QString missed =
            c.first_failing_per_s > 0
                ? QStringLiteral("%1&nbsp;/s").arg(q(rate(c.first_failing_per_s)))
                : QStringLiteral("&mdash; (met at every rate measured)");
        h += QStringLiteral(
                 "<tr><td>%1</td><td>%2</td><td class=\"num\">%3</td>"
                 "<td class=\"num\">%4</td></tr>\n")
                 .arg(armLabel(run, i), q(batcherText(run.arms[i])), met, missed);
    }
    return h + QStringLiteral(
                   "</table>\n<p class=\"muted\">A rate meets the SLO when the p99 of every "
                   "request of every process pooled is within it and no process saturated; the "
                   "highest rate counts only when every lower rate measured met it too.</p>\n");
}

QString comparisonsTable(const RunResult& run) {
    const auto comps = results::compareServing(run);
    if (comps.empty()) return {};
    QString h = QStringLiteral(
        "<h3>p99 and p50 against the baseline</h3>\n<table class=\"grid\"><tr><th>arm vs "
        "baseline</th><th>offered</th><th>p99 ratio (95% CI)</th><th>p50 ratio (95% CI)</th>"
        "<th>significant (p99)</th><th>verdict</th></tr>\n");
    for (const auto& c : comps) {
        const bool sat = c.arm_saturated || c.baseline_saturated;
        auto ratio = [&](double r, double lo, double hi) {
            return sat ? QStringLiteral("&mdash; (saturated)")
                       : QStringLiteral("%1 (%2&ndash;%3)")
                             .arg(r, 0, 'f', 3)
                             .arg(lo, 0, 'f', 3)
                             .arg(hi, 0, 'f', 3);
        };
        h +=
            QStringLiteral(
                "<tr><td>%1 vs %2</td><td class=\"num\">%3</td><td class=\"num\">%4</td>"
                "<td class=\"num\">%5</td><td>%6</td><td>%7</td></tr>\n")
                .arg(q(run.arms[c.arm].name), q(run.arms[c.baseline].name),
                     c.clients > 0 ? QStringLiteral("%1 clients").arg(c.clients)
                                   : QStringLiteral("%1&nbsp;/s").arg(q(rate(c.rate_per_s))),
                     ratio(c.p99_ratio, c.p99_lo, c.p99_hi), ratio(c.p50_ratio, c.p50_lo, c.p50_hi),
                     c.significant ? QStringLiteral("yes") : QStringLiteral("no"), q(c.text));
    }
    return h + QStringLiteral(
                   "</table>\n<p class=\"muted\">Ratio = the arm's percentile / the baseline's "
                   "(&lt; 1: the arm's requests return sooner). CI: bootstrap resampling the "
                   "processes, then blocks of consecutive requests within each (requests queued "
                   "behind each other are correlated).</p>\n");
}

QString figure(const Chart& c, Flavor flavor, std::vector<Chart>* images) {
    if (c.svg.isEmpty()) return {};
    if (flavor == Flavor::RichText) images->push_back(c);
    return figureHtml(c, flavor);
}

}  // namespace

QString servingVerdictRows(const RunResult& run) {
    if (!run.preset.serving.enabled) return {};
    QString rows;
    const auto lines = results::servingVerdict(run);
    const auto comps = results::compareServing(run);
    // The capacity lines are the headline; each level's p99 comparison follows in plain text,
    // coloured when it is significant (green: the arm's p99 is lower).
    for (const auto& line : lines) {
        const auto c =
            std::find_if(comps.begin(), comps.end(),
                         [&](const results::ServingComparison& x) { return x.text == line; });
        if (c == comps.end()) {
            rows += QStringLiteral("<p class=\"headline neutral\">%1</p>\n").arg(q(line));
            continue;
        }
        const bool better =
            c->arm_saturated != c->baseline_saturated ? c->baseline_saturated : c->p99_ratio < 1;
        rows += QStringLiteral("<p class=\"%1\">%2</p>\n")
                    .arg(!c->significant ? QStringLiteral("neutral")
                         : better        ? QStringLiteral("good")
                                         : QStringLiteral("bad"),
                         q(line));
    }
    if (lines.empty()) {
        bool any = false;
        for (std::size_t i = 0; i < run.arms.size(); ++i)
            any |= !results::servingPoints(run, i).empty();
        rows +=
            any ? QStringLiteral(
                      "<p class=\"headline neutral\">Serving run: the levels each "
                      "arm served are under Serving under load; nothing to "
                      "compare against.</p>\n")
                : QStringLiteral("<p class=\"headline bad\">No serving level was measured.</p>\n");
    }
    return rows;
}

QString servingSection(const RunResult& run, Flavor flavor, std::vector<Chart>* images) {
    if (!run.preset.serving.enabled) return {};
    const bool closed = run.preset.serving.arrival == "closed";
    QString h =
        QStringLiteral("<h2>Serving under load</h2>\n<p>%1</p>\n").arg(q(loadSentence(run)));
    QStringList batchers;
    for (std::size_t i = 0; i < run.arms.size(); ++i)
        batchers << QStringLiteral("%1: %2").arg(armLabel(run, i), q(batcherText(run.arms[i])));
    h += QStringLiteral("<p>Dynamic batcher per arm: %1.</p>\n")
             .arg(batchers.join(QStringLiteral("; ")));
    QStringList headers;
    headers << th("arm") << (closed ? th("clients") : th("rate /s")) << th("offered /s")
            << th("achieved /s") << th("served") << th("p50") << th("p90") << th("p99")
            << th("p99.9") << th("mean batch") << th("max queue") << th("saturated")
            << th("SLO met (processes)");
    h += QStringLiteral("<h3>Latency and throughput per offered load</h3>\n") +
         gridTable(QStringLiteral("grid"), headers, pointRows(run), flavor, 8, 2);
    h += QStringLiteral(
        "<p class=\"muted\">One row per arm and offered load, every process pooled. Rate: the "
        "rate asked for; offered: the requests that arrived per second (Poisson arrivals vary "
        "around the rate); achieved: requests served per second of the level. Latency: end to "
        "end, from the request's scheduled arrival to the end of its batch; percentiles "
        "Hyndman-Fan type 7. Max queue: the "
        "longest queue seen when a batch was formed. Saturated (red rows): the queue grew without "
        "bound (the level stopped early, or too many requests were still waiting when the "
        "arrivals ended). SLO met: the pooled p99 within the SLO, and in how many processes on "
        "their own. Search: a rate measured by the SLO search.</p>\n");
    h += capacityTable(run) + comparisonsTable(run);
    h += figure(servingLatencyChart(run), flavor, images);
    h += figure(servingBatchChart(run), flavor, images);
    return h;
}

std::string servingMarkdown(const RunResult& run) {
    const bool closed = run.preset.serving.arrival == "closed";
    std::string s = "\n" + markdownCell(loadSentence(run)) + "\n\n";
    s += std::string("| arm | ") + (closed ? "clients" : "rate/s") +
         " | offered/s | achieved/s | served | p50 | p90 | p99 | p99.9 | mean batch | max queue | "
         "saturated | SLO met |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n";
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        const auto points = results::servingPoints(run, i);
        if (points.empty())
            s += "| " + markdownCell(a.name) + " | " +
                 (a.status == results::kOk ? "no level measured" : a.status) +
                 " | - | - | - | - | - | - | - | - | - | - | - |\n";
        for (const auto& p : points) {
            const auto& v = p.pooled;
            auto d = [&](double x) { return v.served ? num3(x) + " ms" : std::string("-"); };
            s += "| " + markdownCell(a.name) + " | " + loadText(p) + (p.search ? " (search)" : "") +
                 " | " + rate(v.offered_per_s) + " | " + rate(v.achieved_per_s) + " | " +
                 std::to_string(v.served) + " | " + d(v.p50_ms) + " | " + d(v.p90_ms) + " | " +
                 d(v.p99_ms) + " | " + d(v.p999_ms) + " | " +
                 (v.served ? formatNumber(v.mean_batch, "%.2f") : "-") + " | " +
                 std::to_string(v.max_queue) + " | " + (v.saturated ? "**yes**" : "no") + " | " +
                 (v.slo_ms > 0 ? sloText(p) : "-") + " |\n";
        }
    }
    s += "\n_end-to-end latency from each request's scheduled arrival; every process pooled_\n";
    s += "\nBatchers: ";
    for (std::size_t i = 0; i < run.arms.size(); ++i)
        s += (i ? "; " : "") + markdownCell(run.arms[i].name) + " " + batcherText(run.arms[i]);
    s += "\n";
    const auto comps = results::compareServing(run);
    if (!comps.empty()) {
        s += "\n| comparison | offered | p99 ratio | 95% CI | p50 ratio |\n|---|--:|--:|--:|--:|\n";
        for (const auto& c : comps) {
            const bool sat = c.arm_saturated || c.baseline_saturated;
            s += "| " + markdownCell(run.arms[c.arm].name) + " vs " +
                 markdownCell(run.arms[c.baseline].name) + " | " +
                 (c.clients > 0 ? std::to_string(c.clients) + " clients"
                                : rate(c.rate_per_s) + "/s") +
                 " | " + (sat ? "- (saturated)" : formatNumber(c.p99_ratio, "%.3f")) + " | " +
                 (sat ? "-"
                      : formatNumber(c.p99_lo, "%.3f") + "–" + formatNumber(c.p99_hi, "%.3f")) +
                 " | " + (sat ? "-" : formatNumber(c.p50_ratio, "%.3f")) + " |\n";
        }
        s += "\n_ratio = arm percentile / baseline percentile; < 1 means the arm's requests return "
             "sooner_\n";
    }
    return s;
}

}  // namespace pitlane::report::detail
