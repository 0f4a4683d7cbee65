// The report page: title, machine, the verdict first, then the numbers, the charts and the
// reference sections. One file, no external resource: charts are inline SVG, styles inline.
#include "energy_sections.h"
#include "html_builder.h"
#include "pitlane/results/advice.h"
#include "lesson_sections.h"
#include "serving_sections.h"

#include <QDateTime>

#include <algorithm>
#include <map>
#include <cmath>

namespace pitlane::report::detail {

using results::RunResult;

namespace {

const char* kBrowserCss = R"(
body { font-family: "DejaVu Sans", Arial, sans-serif; color: #222; background: #fff;
       max-width: 1100px; margin: 24px auto; padding: 0 24px; line-height: 1.45; font-size: 15px; }
h1 { font-size: 28px; margin: 0 0 6px 0; }
h2 { font-size: 20px; margin: 34px 0 8px 0; padding-bottom: 4px; border-bottom: 2px solid #e2e2e2; }
h3 { font-size: 16px; margin: 18px 0 4px 0; }
p { margin: 6px 0; }
.sub, .muted { color: #666; }
code, pre { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
pre { white-space: pre-wrap; margin: 4px 0; }
table { border-collapse: collapse; margin: 8px 0 12px 0; }
th, td { border: 1px solid #d0d0d0; padding: 4px 9px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.key { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; white-space: nowrap; }
table.kv td { font-size: 13px; }
table.kv { max-width: 100%; }
table.kv td:not(.key) { overflow-wrap: anywhere; }
tr.diff td { background: #fff1b8; }
tr.drift td { background: #fde0dc; }
table.verdict { width: 100%; }
table.verdict td { border: 2px solid #b9c7d8; background: #f4f8fc; padding: 12px 16px; }
.headline { font-size: 21px; font-weight: bold; }
.good { color: #16703a; } .bad { color: #b42318; } .neutral { color: #444; }
.warn { color: #8a5a00; }
figure { margin: 18px 0 26px 0; }
figure svg { width: 100%; height: auto; border: 1px solid #e6e6e6; }
figcaption { color: #555; font-size: 13px; margin-top: 4px; }
details summary { cursor: pointer; }
footer { margin-top: 36px; color: #777; font-size: 12px; border-top: 1px solid #e2e2e2; padding-top: 8px; }
)";

// The subset QTextDocument understands (no max-width, no figure; class selectors work).
const char* kRichTextCss = R"(
body { font-family: "DejaVu Sans"; color: #222222; font-size: 9pt; }
table { border-collapse: collapse; border-color: #c8c8c8; }
th { text-align: left; }
h1 { font-size: 17pt; }
h2 { font-size: 12.5pt; color: #222222; }
h3 { font-size: 10.5pt; }
.sub, .muted { color: #666666; }
code, pre { font-family: "DejaVu Sans Mono"; font-size: 8pt; }
th { background-color: #f0f0f0; font-weight: bold; }
td.num { text-align: right; white-space: nowrap; }
td.key { font-family: "DejaVu Sans Mono"; font-size: 7.5pt; white-space: nowrap; }
table.grid td { font-size: 8pt; }
table.kv td { font-size: 8pt; }
tr.diff td { background-color: #fff1b8; }
tr.drift td { background-color: #fde0dc; }
table.verdict td { background-color: #f4f8fc; }
.headline { font-size: 13pt; font-weight: bold; }
.good { color: #16703a; } .bad { color: #b42318; } .neutral { color: #444444; }
.warn { color: #8a5a00; }
.figcaption { color: #555555; font-size: 8pt; }
.footer { color: #777777; font-size: 7.5pt; }
)";

QString dateText(const std::string& iso) {
    const QDateTime t = QDateTime::fromString(QString::fromStdString(iso), Qt::ISODate);
    if (!t.isValid()) return esc(iso);
    return t.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss 'UTC'"));
}

QString msText(double ms) {
    return ms < 0 ? QStringLiteral("&mdash;") : QStringLiteral("%1&nbsp;ms").arg(ms, 0, 'f', 1);
}

// Every warning the report lists, once each: the run's (caveats first), then what each arm's
// workers said that is not a caveat already listed (K workers and every process say it again).
QStringList reportWarnings(const RunResult& run) {
    QStringList items;
    for (const auto& w : results::runWarnings(run)) items << esc(w);
    for (const auto& a : run.arms)
        for (const auto& w : a.warnings) {
            if (std::find(a.caveats.begin(), a.caveats.end(), w) != a.caveats.end()) continue;
            items << esc(a.name + " (worker): " + w);
        }
    items.removeDuplicates();
    return items;
}

QString verdictSection(const RunResult& run, const ReportOptions& o) {
    const auto comps = results::compareArms(run);
    QString rows;
    for (const auto& c : comps) {
        const QString cls = !c.significant ? QStringLiteral("neutral")
                            : c.ratio >= 1 ? QStringLiteral("good")
                                           : QStringLiteral("bad");
        rows += QStringLiteral("<p class=\"headline %1\">%2</p>\n").arg(cls, esc(c.verdict));
        rows += QStringLiteral(
                    "<p class=\"muted\">%1 vs baseline %2: median ratio %3, 95% CI "
                    "%4&ndash;%5, Mann-Whitney p %6</p>\n")
                    .arg(esc(c.arm), esc(c.baseline))
                    .arg(c.ratio, 0, 'f', 3)
                    .arg(c.ci_low, 0, 'f', 3)
                    .arg(c.ci_high, 0, 'f', 3)
                    .arg(pValue(c.p_value));
        // What ran differs from what was asked: said with the verdict it touches.
        for (const auto& caveat : results::comparisonCaveats(run, c))
            rows += QStringLiteral("<p class=\"warn\">&#9888; %1</p>\n").arg(esc(caveat));
    }
    if (run.preset.serving.enabled) {
        rows += servingVerdictRows(run);  // no samples to compare: capacity and p99 per level
    } else if (comps.empty()) {
        if (run.arms.size() == 1 && !run.arms[0].samples.empty())
            rows += QStringLiteral(
                        "<p class=\"headline neutral\">One arm: median %1, nothing to "
                        "compare against.</p>\n")
                        .arg(duration(results::summarize(run.arms[0]).median));
        else
            rows += QStringLiteral(
                "<p class=\"headline bad\">No comparison: fewer than two arms "
                "have measured samples.</p>\n");
    }
    for (const auto& a : run.arms)
        if (a.status != results::kOk)
            rows += QStringLiteral("<p class=\"bad\"><b>%1 %2</b>%3</p>\n")
                        .arg(esc(a.name), esc(a.status),
                             a.error ? QStringLiteral(": [%1] %2")
                                           .arg(esc(a.error->code), esc(a.error->message))
                                     : QString());
    const auto warnings = reportWarnings(run);
    if (!warnings.empty())
        rows += QStringLiteral(
                    "<p class=\"warn\">&#9888; %1 warning(s) below: read them before "
                    "trusting the verdict.</p>\n")
                    .arg(warnings.size());
    for (const auto& n : o.notes) rows += QStringLiteral("<p class=\"warn\">%1</p>\n").arg(esc(n));
    return QStringLiteral(
               "<h2>Verdict</h2>\n<table class=\"verdict\" cellspacing=\"0\" "
               "cellpadding=\"10\" width=\"100%\"><tr><td>\n") +
           rows + QStringLiteral("</td></tr></table>\n");
}

}  // namespace

QString figureHtml(const Chart& c, Flavor flavor) {
    if (flavor == Flavor::Browser)
        return QStringLiteral("<figure id=\"%1\">\n%2\n<figcaption>%3</figcaption>\n</figure>\n")
            .arg(c.id, c.svg, esc(c.caption));
    return QStringLiteral(
               "<p><img src=\"chart:%1\" width=\"670\"></p>\n"
               "<p class=\"figcaption\">%2</p>\n")
        .arg(c.id, esc(c.caption));
}

namespace {

// Every arm ran in fresh worker processes (run.processes rounds x the workers knob): their
// medians side by side, how far apart they are, and how the variance splits between them.
QString processesSection(const RunResult& run, const Chart& strip, Flavor flavor) {
    bool any = false;
    for (const auto& a : run.arms)
        for (const auto& p : results::processSummaries(a)) any |= p.n > 0;
    if (!any) return {};
    QString h = QStringLiteral(
        "<h2>Processes</h2>\n<p>Each arm was measured in fresh worker processes, started "
        "in order-balanced rounds; a process keeps its own memory layout, allocator state and "
        "thread placement for its whole life. The comparison counts processes as its units, so "
        "processes that disagree widen the confidence interval.</p>\n");
    if (!strip.svg.isEmpty()) h += figureHtml(strip, flavor);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        const auto procs = results::processSummaries(a);
        if (procs.empty()) continue;
        h += QStringLiteral("<h3>%1</h3>\n").arg(armLabel(run, i));
        h += QStringLiteral(
            "<table class=\"grid\"><tr><th>replicate</th><th>pid</th><th>n</th>"
            "<th>median</th><th>minor page faults / iter</th><th>model load</th>"
            "<th>first forward</th></tr>\n");
        double lo = 0, hi = 0;
        int measured = 0;
        for (const auto& p : procs) {
            QString replicate = QString::number(p.info.replicate + 1);
            if (a.workers > 1) replicate += QStringLiteral(" (worker %1)").arg(p.info.worker + 1);
            h += QStringLiteral(
                     "<tr><td>%1</td><td class=\"num\">%2</td><td class=\"num\">%3</td>"
                     "<td class=\"num\">%4</td><td class=\"num\">%5</td>"
                     "<td class=\"num\">%6</td><td class=\"num\">%7</td></tr>\n")
                     .arg(replicate, p.info.pid ? QString::number(p.info.pid)
                                                : QStringLiteral("&mdash;"))
                     .arg(p.n)
                     .arg(p.n ? duration(p.median_ns) : QStringLiteral("&mdash;"),
                          perIterText(p.info.minorFaultsPerIter(), QStringLiteral("&mdash;")), msText(p.info.load_ms),
                          msText(p.info.first_forward_ms));
            if (p.n == 0 || p.median_ns <= 0) continue;
            lo = measured ? std::min(lo, p.median_ns) : p.median_ns;
            hi = measured ? std::max(hi, p.median_ns) : p.median_ns;
            ++measured;
        }
        h += QStringLiteral("</table>\n");
        QStringList notes;
        if (measured >= 2)
            notes << QStringLiteral("Process medians %1x apart (slowest / fastest).")
                         .arg(hi / lo, 0, 'f', 2);
        const auto shares = results::varianceShares(a);
        if (shares.computed)
            notes << QStringLiteral(
                         "Variance of log latency: <b>%1%</b> between processes, <b>%2%</b> "
                         "between blocks of a process, <b>%3%</b> within blocks (%4 processes, "
                         "%5 blocks, %6 iterations).")
                         .arg(100 * shares.between_processes, 0, 'f', 0)
                         .arg(100 * shares.between_blocks, 0, 'f', 0)
                         .arg(100 * shares.within_blocks, 0, 'f', 0)
                         .arg(shares.processes)
                         .arg(shares.blocks)
                         .arg(shares.n);
        else
            notes << QStringLiteral(
                "Variance shares not computed (fewer than two iterations, or no spread).");
        h += QStringLiteral("<p>%1</p>\n").arg(notes.join(QLatin1Char(' ')));
    }
    h += QStringLiteral("<p class=\"muted\">Variance shares: %1. Medians at each arm's first "
                        "batch size; page faults over the timed loops of the process's measured "
                        "blocks.</p>\n")
             .arg(esc(std::string(stats::VarianceShares::kEstimator)));
    return h;
}

// "Advice": the advisor's ranked advice per arm (results::advise), each with the evidence that
// triggered it and the change to try as an arm.
QString adviceSection(const RunResult& run, Flavor flavor) {
    const auto advice = results::advise(run);
    if (advice.empty()) return {};
    const QStringList headers = {th("arm"), th("#"), th("what to try, and why"), th("addresses"), th("try as an arm")};
    std::vector<GridRow> rows;
    std::map<std::size_t, int> rank;
    for (const auto& a : advice) {
        GridRow r;
        r.cells << td(armLabel(run, a.arm)) << num(QString::number(++rank[a.arm]))
                << td(QStringLiteral("<b>%1</b><br><span class=\"muted\">%2</span>")
                          .arg(esc(a.title), esc(a.evidence)))
                << td(QStringLiteral("%1&nbsp;% of %2<br><span class=\"muted\">%3</span>")
                          .arg(100.0 * a.share, 0, 'f', 0)
                          .arg(a.tier == results::AdviceTier::Latency      ? QStringLiteral("the time")
                               : a.tier == results::AdviceTier::Throughput ? QStringLiteral("the cores")
                                                                           : QStringLiteral("start-up"),
                               a.measured ? QStringLiteral("measured") : QStringLiteral("estimated")))
                << td(a.arm_knobs.is_null() ? esc(a.action)
                                            : QStringLiteral("<code>%1</code>").arg(esc(results::changeText(a.change))) +
                                                  (a.action.empty() ? QString() : QStringLiteral("<br>") + esc(a.action)));
        rows.push_back(r);
    }
    return QStringLiteral("<h2>Advice</h2>\n<p>What to try next, per arm, from what this run measured and read back "
                          "(docs/ADVISOR.md): advice on the time of one iteration first, then on throughput, then "
                          "on start-up, each ranked by the share it addresses (from the operator profile or the "
                          "metrics where they show it; an estimate otherwise). Add an arm with the change and "
                          "measure it: advice is a hypothesis until measured.</p>\n") +
           gridTable(QStringLiteral("grid"), headers, rows, flavor, 6, 1);
}

// "Where the time goes": the arms' profiles side by side (results::profileRows), when a run was
// profiled (run.profile_iters, pitlane-cli run --profile).
QString profileSection(const RunResult& run, Flavor flavor) {
    const results::ProfileRows p = results::profileRows(run, 20);
    if (p.empty()) return {};
    QStringList headers = {th("operator")};
    for (std::size_t i : p.arms) headers << QStringLiteral("<th>%1</th>").arg(armLabel(run, i));
    auto msCell = [](double v) { return num(QStringLiteral("%1&nbsp;ms").arg(v, 0, 'f', v >= 100 ? 0 : 3)); };
    std::vector<GridRow> rows;
    for (const auto& [name, v] : p.ops) {
        GridRow r;
        r.cells << td(QStringLiteral("<code>%1</code>").arg(esc(name)));
        for (double x : v) r.cells << msCell(x);
        rows.push_back(r);
    }
    GridRow total;
    total.cells << td(QStringLiteral("<b>total</b> (every operator's self time)"));
    for (double x : p.totals) total.cells << msCell(x);
    rows.push_back(total);
    const nlohmann::json& first = run.arms[p.arms.front()].profile;
    return QStringLiteral("<h2>Where the time goes</h2>\n<p>Self time per profiled iteration of each "
                          "operator (libtorch's profiler: %1; %2 iterations at batch %3, run after "
                          "the measured blocks and never timed)%4. The full trace of each arm is in "
                          "the results JSON (<code>arms[].profile.trace</code>, Chrome Trace Event "
                          "Format: Perfetto, chrome://tracing).</p>\n")
               .arg(esc(first.value("profiler", std::string("?"))))
               .arg(first.value("iters", 0))
               .arg(first.value("batch_size", 1))
               .arg(p.arms.size() > 1 ? QStringLiteral("; the operators whose time differs most from ") +
                                            esc(run.arms[p.arms.front()].name) + QStringLiteral("'s first")
                                      : QString()) +
           gridTable(QStringLiteral("grid"), headers, rows, flavor, 6, 1);
}

QString warningsSection(const RunResult& run) {
    const QStringList items = reportWarnings(run);
    QString h = QStringLiteral("<h2>Warnings</h2>\n");
    if (items.isEmpty())
        return h + QStringLiteral("<p class=\"good\">No noise, drift or worker warnings.</p>\n");
    h += QStringLiteral(
        "<p>Noise warnings (high variation, too few samples, drift between blocks, "
        "a slow first block), environment drift and what the workers reported:</p>\n<ul>\n");
    for (const auto& i : items) h += QStringLiteral("<li class=\"warn\">%1</li>\n").arg(i);
    return h + QStringLiteral("</ul>\n");
}

QString chartsSection(std::vector<Chart>& charts, Flavor flavor, bool serving) {
    QString h = QStringLiteral("<h2>Charts</h2>\n");
    if (serving && charts.empty()) return {};  // its charts are in the serving section
    if (serving)
        h += QStringLiteral(
            "<p class=\"muted\">Memory and CPU of the serving run; the serving charts are under "
            "Serving under load.</p>\n");
    if (charts.empty())
        return h + QStringLiteral(
                       "<p class=\"muted\">Nothing to draw: no arm has measured samples.</p>\n");
    bool metrics = false;
    for (const auto& c : charts) metrics |= c.id == QLatin1String("memory");
    for (const auto& c : charts) h += figureHtml(c, flavor);
    if (!metrics)
        h += QStringLiteral(
            "<p class=\"muted\">No memory or CPU chart: fewer than two metric "
            "ticks were recorded per arm (the run was shorter than the sampling "
            "period).</p>\n");
    return h;
}

// QTextDocument draws cell borders and padding only from the table's attributes. The charts
// and the reference tables start on a new page (the PDF keeps a heading with what follows it).
void richTextAttributes(QString& h) {
    h.replace(QLatin1String("<table class=\""),
              QLatin1String("<table border=\"1\" cellspacing=\"0\" cellpadding=\"3\" class=\""));
    for (const char* heading : {"<h2>Charts</h2>", "<h2>Knobs</h2>"})
        h.replace(QLatin1String(heading),
                  QString::fromLatin1(heading).replace(
                      QLatin1String("<h2>"),
                      QLatin1String("<h2 style=\"page-break-before: always\">")));
}

}  // namespace

HtmlDocument buildHtml(const RunResult& run, const ReportOptions& o, Flavor flavor) {
    HtmlDocument doc;
    doc.charts = runCharts(run);
    const QString title = !o.title.isEmpty()         ? o.title
                          : !run.preset.name.empty() ? QString::fromStdString(run.preset.name)
                                                     : QStringLiteral("Pitlane run");
    QString h = QStringLiteral(
                    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<title>%1</title>\n")
                    .arg(esc(title));
    if (flavor == Flavor::Browser)
        h += QStringLiteral("<style>%1</style>\n").arg(QString::fromUtf8(kBrowserCss));
    h += QStringLiteral("</head>\n<body>\n<h1>%1</h1>\n").arg(esc(title));
    QStringList sub;
    const auto models = headerModels(run);
    if (models.size() == 1 && models.front().first.empty()) {
        sub << QStringLiteral("model <b>%1</b>").arg(esc(models.front().second));
    } else if (!models.empty()) {  // each arm its own model
        QStringList each;
        for (const auto& [arm, model] : models)
            each << QStringLiteral("%1 <b>%2</b>").arg(esc(arm), esc(model));
        sub << QStringLiteral("models: %1").arg(each.join(QStringLiteral(", ")));
    }
    sub << QStringLiteral("%1 arm(s)").arg(run.arms.size());
    if (!o.runId.isEmpty()) sub << QStringLiteral("run #%1").arg(esc(o.runId));
    sub << QStringLiteral("started %1").arg(dateText(run.started_at));
    if (run.wall_s > 0) sub << QStringLiteral("%1 s wall time").arg(run.wall_s, 0, 'f', 1);
    h += QStringLiteral("<p class=\"sub\">%1</p>\n").arg(sub.join(QStringLiteral(" &middot; ")));
    h += QStringLiteral("<p class=\"sub\">Machine: %1</p>\n").arg(machineLine(run));
    if (!run.preset.description.empty())
        h += QStringLiteral("<p>%1</p>\n").arg(esc(run.preset.description));
    h += verdictSection(run, o) + lessonSection(run);
    std::vector<Chart> sweepImages;
    h += statsSection(run, flavor, &sweepImages);
    const Chart strip = processChart(run);
    h += processesSection(run, strip, flavor);
    h += energySectionHtml(run);  // issue 46
    h += chartsSection(doc.charts, flavor, run.preset.serving.enabled);
    if (!strip.svg.isEmpty()) doc.charts.push_back(strip);  // the PDF's image resources
    doc.charts.insert(doc.charts.end(), sweepImages.begin(), sweepImages.end());
    h += knobsSection(run, flavor);
    h += appliedSection(run, flavor);
    h += environmentSection(run, flavor);
    h += profileSection(run, flavor);
    h += adviceSection(run, flavor);
    h += warningsSection(run);
    h += rawDataSection(run, flavor);
    const QString footer =
        QStringLiteral(
            "Generated by pitlane on %1 from %2. Arms ran in separate worker processes, "
            "measured in interleaved %3.")
            .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'")),
                 o.runId.isEmpty() ? QStringLiteral("a results file")
                                   : QStringLiteral("run #%1 of the history").arg(esc(o.runId)),
                 run.preset.serving.enabled ? QStringLiteral("serving levels")
                                            : QStringLiteral("blocks"));
    h += flavor == Flavor::Browser ? QStringLiteral("<footer>%1</footer>\n").arg(footer)
                                   : QStringLiteral("<p class=\"footer\">%1</p>\n").arg(footer);
    h += QStringLiteral("</body>\n</html>\n");
    if (flavor == Flavor::RichText) richTextAttributes(h);
    doc.html = h;
    return doc;
}

QString richTextCss() {
    return QString::fromUtf8(kRichTextCss);
}

}  // namespace pitlane::report::detail

namespace pitlane::report {

QString htmlReport(const results::RunResult& run, const ReportOptions& options) {
    return detail::buildHtml(run, options, detail::Flavor::Browser).html;
}

bool writeHtml(const QString& path, const results::RunResult& run, const ReportOptions& options,
               QString* error) {
    return writeFileAtomic(path, htmlReport(run, options).toUtf8(), error);
}

}  // namespace pitlane::report
