// The report's "Comparison table" section: latency statistics, throughput and cold costs, page
// faults and context switches, batch-size sweeps (table and curves) and concurrent workers, the
// A/B comparisons. In the PDF the widest tables are cut in two (gridTable) so that no column is
// squeezed.
#include "html_builder.h"
#include "serving_sections.h"

namespace pitlane::report::detail {

using results::RunResult;

QString unitText(const std::string& s) {
    QString t = QString::fromStdString(s);
    if (t.endsWith(QLatin1String(" us"))) t.replace(t.size() - 2, 2, QStringLiteral("µs"));
    return esc(t).replace(' ', QLatin1String("&nbsp;"));
}

QString duration(double ns) {
    return unitText(results::formatDuration(ns));
}

QString perIterText(double perIter, const QString& missing) {
    if (perIter < 0) return missing;
    return QString::number(perIter, 'f', perIter < 10 ? 2 : perIter < 100 ? 1 : 0);
}

std::string sweepPointStatus(const results::ArmResult& a, int batchSize, bool measured) {
    const auto f = a.sweep_failures.find(batchSize);
    if (f != a.sweep_failures.end())
        return "failed: [" + f->second.code + "] " + f->second.message;
    return measured ? std::string(results::kOk) : a.status;
}

QString pValue(double p) {
    return QString::fromStdString(stats::pValueText(p)).toHtmlEscaped().replace(QLatin1Char(' '), QStringLiteral("&nbsp;"));
}

namespace {

QString perSecond(double v) {
    return v > 0 ? QStringLiteral("%1&nbsp;/s").arg(v, 0, 'f', 1) : QStringLiteral("&mdash;");
}

// Latency per iteration: one row per arm with the summary statistics (two tables in the PDF).
QString latencyTable(const RunResult& run, Flavor flavor) {
    QStringList headers;
    for (const char* h : {"arm", "status", "n", "median", "mean", "sd", "CoV", "min", "p90", "p95",
                          "p99", "p99.9", "max"})
        headers << th(h);
    std::vector<GridRow> rows;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        const auto s = results::summarize(a);
        GridRow row{{}, {td(armLabel(run, i)), td(esc(a.status)), num(QString::number(s.n))}};
        for (double v : {s.median, s.mean, s.sd, -1.0, s.min, s.p90, s.p95, s.p99, s.p999, s.max})
            row.cells << num(s.n == 0 ? QStringLiteral("&mdash;")
                             : v < 0  ? QStringLiteral("%1%").arg(100 * s.cov, 0, 'f', 1)
                                      : duration(v));
        rows.push_back(std::move(row));
    }
    return QStringLiteral("<h3>Latency per iteration</h3>\n") +
           gridTable(QStringLiteral("grid"), headers, rows, flavor, 7) +
           QStringLiteral(
               "<p class=\"muted\">Percentiles: linear interpolation between closest ranks "
               "(Hyndman-Fan type 7, numpy's default); &mdash;: no measured samples.</p>\n");
}

// Throughput, peak RSS and cold-start costs: one row per arm. A serving run has no throughput
// per iteration (its achieved rates are in the serving table): the column is left out.
QString resourcesTable(const RunResult& run) {
    const bool serving = run.preset.serving.enabled;
    QStringList headers;
    for (const char* h : {"arm", "throughput (items/s)", "peak RSS", "model load",
                          "first forward", "warmup iterations"})
        if (!serving || std::string(h) != "throughput (items/s)") headers << th(h);
    std::vector<GridRow> rows;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        const auto s = results::summarize(a);
        auto ms = [&](const char* k) {
            return a.loaded.contains(k)
                       ? QStringLiteral("%1&nbsp;ms").arg(a.loaded.value(k, 0.0), 0, 'f', 1)
                       : QStringLiteral("&mdash;");
        };
        rows.push_back(
            {{},
             {td(armLabel(run, i)), num(s.n ? perSecond(results::armThroughput(a, s)) : QStringLiteral("&mdash;")),
              num(a.peak_rss_bytes ? unitText(results::formatBytes(double(a.peak_rss_bytes)))
                                   : QStringLiteral("&mdash;")),
              num(ms("load_ms")), num(ms("first_forward_ms")),
              num(QString::number(a.warmup_ns.size()))}});
        if (serving) rows.back().cells.removeAt(1);
    }
    if (serving)
        return QStringLiteral("<h3>Memory, cold start</h3>\n") +
               gridTable(QStringLiteral("grid"), headers, rows, Flavor::Browser) +
               QStringLiteral(
                   "<p class=\"muted\">Model load and first forward: the arm's first worker "
                   "process. Warmup iterations: batch size 1, before the first level.</p>\n");
    return QStringLiteral("<h3>Throughput, memory, cold start</h3>\n") +
           gridTable(QStringLiteral("grid"), headers, rows, Flavor::Browser) +
           QStringLiteral(
               "<p class=\"muted\">Throughput: items per second of the whole arm at its first "
               "batch size (concurrent workers summed). Model load and first forward: the arm's "
               "first worker process (every process's own are under Processes).</p>\n");
}

// Page faults (block_done, around the timed loops) and context switches (metric ticks, whole
// worker process) per measured iteration: one row per arm.
QString countersTable(const RunResult& run) {
    QStringList headers;
    for (const char* h : {"arm", "minor page faults / iter", "major page faults / iter",
                          "voluntary context switches / iter",
                          "involuntary context switches / iter"})
        headers << th(h);
    const QString missing = QStringLiteral("not measured");
    std::vector<GridRow> rows;
    bool anyMissing = false;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        for (double v : {results::minorFaultsPerIter(a), results::majorFaultsPerIter(a),
                         results::contextSwitchesPerIter(a, true),
                         results::contextSwitchesPerIter(a, false)})
            anyMissing = anyMissing || v < 0;
        rows.push_back({{},
                        {td(armLabel(run, i)),
                         num(perIterText(results::minorFaultsPerIter(a), missing)),
                         num(perIterText(results::majorFaultsPerIter(a), missing)),
                         num(perIterText(results::contextSwitchesPerIter(a, true), missing)),
                         num(perIterText(results::contextSwitchesPerIter(a, false), missing))}});
    }
    return QStringLiteral("<h3>Page faults and context switches</h3>\n") +
           gridTable(QStringLiteral("grid"), headers, rows, Flavor::Browser) +
           QStringLiteral(
               "<p class=\"muted\">Page faults: over the timed loops of every measured block, all "
               "processes of the arm (a major fault waited for the disk). Context switches: the "
               "growth of each worker process's counters (every thread) between its first and "
               "last metric tick, so they include the waits between blocks; divided by the "
               "measured iterations.") +
           (anyMissing ? QStringLiteral(" Not measured: the workers did not report them.")
                       : QString()) +
           QStringLiteral("</p>\n");
}

// One row per sweep point (batch size) or concurrent worker.
GridRow pointRow(const RunResult& run, std::size_t arm, const QString& point,
                 const QString& status, const std::vector<double>& lat, int batch,
                 double throughput) {
    const auto s = stats::summarize(lat, batch);
    const auto d = [&](double v) { return num(s.n ? duration(v) : QStringLiteral("&mdash;")); };
    return {{},
            {td(armLabel(run, arm)), td(point), td(status), num(QString::number(s.n)),
             d(s.median), d(s.p99), d(s.p999), num(s.n ? perSecond(throughput) : QStringLiteral("&mdash;"))}};
}

std::vector<GridRow> pointRows(const RunResult& run) {
    std::vector<GridRow> rows;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        if (a.batch_sizes.size() > 1)
            for (int bs : a.batch_sizes) {
                const auto lat = a.latencies(bs);
                rows.push_back(pointRow(run, i, QStringLiteral("batch size %1").arg(bs),
                                        esc(sweepPointStatus(a, bs, !lat.empty())), lat, bs,
                                        stats::summarize(lat, bs).throughput_per_s));
            }
        if (a.workers <= 1) continue;
        for (int w = 0; w < a.workers; ++w) {
            const auto lat = a.latencies(a.batch_size, w);
            rows.push_back(pointRow(run, i, QStringLiteral("worker %1").arg(w + 1), esc(a.status),
                                    lat, a.batch_size,
                                    stats::summarize(lat, a.batch_size).throughput_per_s));
        }
        rows.push_back(pointRow(run, i, QStringLiteral("all %1 workers together").arg(a.workers),
                                esc(a.status), a.latencies(a.batch_size), a.batch_size,
                                results::aggregateThroughput(a)));
    }
    return rows;
}

QString figure(const Chart& c, Flavor flavor, std::vector<Chart>* images) {
    if (c.svg.isEmpty()) return {};
    if (flavor == Flavor::RichText) images->push_back(c);
    return figureHtml(c, flavor);
}

// Sweep points and concurrent workers: the summary tables use the first batch size and pool
// the workers, so these get their own rows, and a sweep its curves.
QString sweepSection(const RunResult& run, Flavor flavor, std::vector<Chart>* images) {
    bool any = false;
    for (const auto& a : run.arms) any |= a.batch_sizes.size() > 1 || a.workers > 1;
    if (!any) return {};
    QStringList headers;
    for (const char* h : {"arm", "point", "status", "n", "median", "p99", "p99.9", "throughput"})
        headers << th(h);
    return QStringLiteral(
               "<h3>Batch-size sweeps and concurrent workers</h3>\n<p class=\"muted\">The tables "
               "above, the verdict and the distribution charts use each arm's first batch size, "
               "all workers pooled. Throughput: items per second (batch size x iterations / "
               "measured time).</p>\n") +
           gridTable(QStringLiteral("grid"), headers, pointRows(run), flavor) +
           QStringLiteral(
               "<p class=\"muted\">Workers run concurrently, so together they move the sum of "
               "their throughputs.</p>\n") +
           figure(sweepThroughputChart(run), flavor, images) +
           figure(sweepLatencyChart(run), flavor, images);
}

// Every arm against the baseline (nothing without a comparison), the method and the replication.
QString comparisonsTable(const RunResult& run) {
    const auto comps = results::compareArms(run);
    if (comps.empty()) return {};
    QString h = QStringLiteral(
        "<h3>A/B comparisons</h3>\n<table class=\"grid\"><tr><th>arm vs "
        "baseline</th><th>ratio</th><th>95% CI</th><th>p-value</th>"
        "<th>significant</th><th>verdict</th></tr>\n");
    for (const auto& c : comps)
        h += QStringLiteral(
                 "<tr><td>%1 vs %2</td><td class=\"num\">%3</td><td class=\"num\">"
                 "%4&ndash;%5</td><td class=\"num\">%6</td><td>%7</td><td>%8</td></tr>\n")
                 .arg(esc(c.arm), esc(c.baseline))
                 .arg(c.ratio, 0, 'f', 3)
                 .arg(c.ci_low, 0, 'f', 3)
                 .arg(c.ci_high, 0, 'f', 3)
                 .arg(pValue(c.p_value),
                      c.significant ? QStringLiteral("yes") : QStringLiteral("no"),
                      esc(c.verdict));
    h += QStringLiteral(
             "</table>\n<p class=\"muted\">Ratio = baseline median / arm median "
             "(&gt; 1: the arm is faster). Method: %1</p>\n")
             .arg(esc(comps.front().method));
    const auto rep = results::replicationSummary(run);
    if (!rep.empty())
        h += QStringLiteral("<p class=\"muted\">Replication: %1.</p>\n").arg(esc(rep));
    return h;
}

}  // namespace

QString statsSection(const RunResult& run, Flavor flavor, std::vector<Chart>* images) {
    // A serving run's arms have no samples: per-iteration latency, page faults per iteration and
    // sample comparisons have nothing to show, and would show zeros.
    if (run.preset.serving.enabled)
        return servingSection(run, flavor, images) + resourcesTable(run);
    return QStringLiteral("<h2>Comparison table</h2>\n") + latencyTable(run, flavor) +
           resourcesTable(run) + countersTable(run) + sweepSection(run, flavor, images) +
           comparisonsTable(run);
}

}  // namespace pitlane::report::detail
