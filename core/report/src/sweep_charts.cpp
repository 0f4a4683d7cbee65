// The batch-size sweep curves of the report (charts.h): items per second and latency per call
// against the batch size, one curve per arm that swept, only the points it measured.
#include "charts.h"

#include "pitlane/report/report.h"
#include "svg_chart.h"

#include <algorithm>
#include <cmath>

namespace pitlane::report::detail {

namespace {

using results::RunResult;

struct SweepPoint {
    int batch;
    stats::Summary summary;
};

struct SweepCurve {
    int index;
    QString name;
    std::vector<SweepPoint> points;
};

// The measured points of every arm that swept (a failed or unmeasured size is left out).
std::vector<SweepCurve> sweepCurves(const RunResult& run) {
    std::vector<SweepCurve> out;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        if (a.batch_sizes.size() < 2) continue;
        SweepCurve c{int(i), QString::fromStdString(a.name), {}};
        for (int bs : a.batch_sizes) {
            const auto lat = a.latencies(bs);
            if (!lat.empty() && !a.sweep_failures.count(bs))
                c.points.push_back({bs, stats::summarize(lat, bs)});
        }
        if (!c.points.empty()) out.push_back(std::move(c));
    }
    return out;
}

// The chart with its x axis (batch size, log scale) and legend set; `top` is the y range's top.
SvgChart sweepCanvas(const std::vector<SweepCurve>& curves, const QString& title, double top,
                     const QString& yLabel) {
    int lo = curves.front().points.front().batch, hi = lo;
    for (const auto& c : curves)
        for (const auto& p : c.points) {
            lo = std::min(lo, p.batch);
            hi = std::max(hi, p.batch);
        }
    SvgChart chart(1000, 340, title);
    chart.setXLog(lo / 1.25, hi * 1.25, QStringLiteral("batch size (log scale)"));
    chart.setY(0, top * 1.15, yLabel);
    armLegend(chart, curves, armColor);
    return chart;
}

// One polyline (and a dot per point) of `value` for each curve.
void drawCurves(SvgChart& chart, const std::vector<SweepCurve>& curves,
                double (*value)(const stats::Summary&), double div, const QString& dash = {}) {
    for (const auto& c : curves) {
        std::vector<QPointF> pts;
        for (const auto& p : c.points) pts.emplace_back(p.batch, value(p.summary) / div);
        chart.polyline(pts, armColor(c.index), 2, dash);
        if (dash.isEmpty())
            for (const auto& pt : pts) chart.dot(pt.x(), pt.y(), armColor(c.index), 4);
    }
}

// Throughput (items/s) or latency per call (median and p99) against the batch size.
Chart sweepChart(const RunResult& run, Chart out, bool latency) {
    const auto curves = sweepCurves(run);
    if (curves.empty()) return out;
    double top = 0;
    for (const auto& c : curves)
        for (const auto& p : c.points)
            top = std::max(top, latency ? p.summary.p99 : p.summary.throughput_per_s);
    const Unit u = latency ? latencyUnit(top) : Unit{1, QString()};
    SvgChart chart = sweepCanvas(curves, out.title, top / u.div,
                                 latency ? QStringLiteral("latency per call (%1)").arg(u.name)
                                         : QStringLiteral("items per second"));
    if (latency) {
        drawCurves(chart, curves, [](const stats::Summary& s) { return s.median; }, u.div);
        drawCurves(chart, curves, [](const stats::Summary& s) { return s.p99; }, u.div,
                   QStringLiteral("5,4"));
        chart.caption(QStringLiteral("solid with dots: median; dashed: p99"));
    } else {
        drawCurves(chart, curves, [](const stats::Summary& s) { return s.throughput_per_s; }, 1);
        chart.caption(QStringLiteral("one dot per measured batch size; failed sizes are left out "
                                     "(see the table)"));
    }
    out.svg = chart.svg(false);
    return out;
}

}  // namespace

Chart sweepThroughputChart(const RunResult& run) {
    return sweepChart(run,
                      {QStringLiteral("sweep_throughput"), QStringLiteral("Throughput vs batch size"),
                       {},
                       QStringLiteral("Items per second at each batch size. A curve that keeps "
                                      "rising pays the fixed cost of a call once per batch; where "
                                      "it flattens, the kernels are busy and a larger batch only "
                                      "adds latency.")},
                      false);
}

Chart sweepLatencyChart(const RunResult& run) {
    return sweepChart(run,
                      {QStringLiteral("sweep_latency"), QStringLiteral("Latency vs batch size"), {},
                       QStringLiteral("Latency of one call (one whole batch) at each batch size: "
                                      "what a caller waits for. Read it beside the throughput: a "
                                      "batch that doubles items/s may also double the wait.")},
                      true);
}

}  // namespace pitlane::report::detail
