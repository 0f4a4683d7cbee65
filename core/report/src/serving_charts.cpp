// A serving run's charts (charts.h): end-to-end latency against the offered load, one curve per
// arm (the hockey stick), and the sizes of the batches each arm's dynamic batcher formed.
#include "charts.h"

#include "pitlane/report/report.h"
#include "svg_chart.h"

#include <algorithm>
#include <cmath>

namespace pitlane::report::detail {

namespace {

using results::RunResult;

struct ServingCurve {
    int index;
    QString name;
    std::vector<results::ServingPoint> points;
};

std::vector<ServingCurve> servingCurves(const RunResult& run) {
    std::vector<ServingCurve> out;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        auto points = results::servingPoints(run, i);
        points.erase(
            std::remove_if(points.begin(), points.end(),
                           [](const results::ServingPoint& p) { return p.pooled.served == 0; }),
            points.end());
        if (!points.empty())
            out.push_back({int(i), QString::fromStdString(run.arms[i].name), std::move(points)});
    }
    return out;
}

double loadOf(const results::ServingPoint& p) {
    return p.clients > 0 ? double(p.clients) : p.rate_per_s;
}

QString msText(double ms) {  // "12.1 ms", "1042 ms": no exponent
    return (ms >= 1000 ? QString::number(ms, 'f', 0) : QString::number(ms, 'g', 3)) +
           QStringLiteral(" ms");
}

}  // namespace

Chart servingLatencyChart(const RunResult& run) {
    Chart out{
        QStringLiteral("serving_latency"),
        QStringLiteral("Latency vs offered load"),
        {},
        QStringLiteral("End-to-end latency of a request (from its scheduled arrival: queueing "
                       "counts) at each offered load. A curve that bends up steeply is "
                       "nearing its capacity; a saturated point's latency only grows with "
                       "the level's duration.")};
    const auto curves = servingCurves(run);
    if (curves.empty()) return out;
    const bool closed = run.preset.serving.arrival == "closed";
    const double slo = run.preset.serving.slo_p99_ms;
    double loX = 0, hiX = 0, top = 0, topAll = 0;
    for (const auto& c : curves)
        for (const auto& p : c.points) {
            loX = loX > 0 ? std::min(loX, loadOf(p)) : loadOf(p);
            hiX = std::max(hiX, loadOf(p));
            topAll = std::max(topAll, p.pooled.p99_ms);
            if (!p.pooled.saturated) top = std::max(top, p.pooled.p99_ms);
        }
    // A saturated point's p99 (seconds) would flatten every other point: the scale follows the
    // points that kept up and the SLO; the rest are drawn on the top edge, labelled.
    if (top <= 0) top = topAll;
    top = std::max(top, slo * 1.2) * 1.15;
    if (top <= 0) top = 1;
    SvgChart chart(1000, 360, out.title);
    // Rates an order of magnitude apart (50 ... 3200 req/s) would crowd the low ones into the
    // corner of a linear axis: then the axis is logarithmic, like the batch-size sweeps'.
    const bool logX = hiX >= 10 * loX;
    const QString xLabel =
        closed ? QStringLiteral("concurrent clients") : QStringLiteral("offered rate (requests/s)");
    const double xLo = logX ? loX / 1.2 : 0, xHi = logX ? hiX * 1.2 : hiX * 1.08;
    if (logX)
        chart.setXLog(xLo, xHi, xLabel + QStringLiteral(", log scale"));
    else
        chart.setX(xLo, xHi, xLabel);
    chart.setY(0, top, QStringLiteral("end-to-end latency (ms)"));
    armLegend(chart, curves, armColor);
    if (slo > 0) {
        chart.polyline({QPointF(xLo, slo), QPointF(xHi, slo)}, QColor(0x99, 0x99, 0x99), 1.2,
                       QStringLiteral("3,3"));
        chart.text(chart.plotRight() - 6, chart.py(slo) - 5,
                   QStringLiteral("SLO: p99 %1").arg(msText(slo)), 11, QStringLiteral("end"),
                   QColor(0x66, 0x66, 0x66));
    }
    int cut = 0;
    for (const auto& c : curves) {
        const QColor col = armColor(c.index);
        std::vector<QPointF> p99, p50;
        for (const auto& p : c.points) {
            p99.emplace_back(loadOf(p), std::min(p.pooled.p99_ms, top));
            p50.emplace_back(loadOf(p), std::min(p.pooled.p50_ms, top));
        }
        chart.polyline(p99, col, 2);
        chart.polyline(p50, col, 1.5, QStringLiteral("5,4"));
        for (std::size_t k = 0; k < c.points.size(); ++k) {
            const auto& s = c.points[k].pooled;
            chart.dot(p99[k].x(), p99[k].y(), col, 4.5);
            if (!s.saturated && s.p99_ms <= top) continue;
            ++cut;
            QString label = s.saturated ? QStringLiteral("saturated") : QStringLiteral("off scale");
            if (s.p99_ms > top) label += QStringLiteral(", p99 ") + msText(s.p99_ms);
            chart.text(chart.px(p99[k].x()) - 6, chart.py(p99[k].y()) + (s.p99_ms > top ? 16 : -9),
                       label, 11, QStringLiteral("end"), col, true);
        }
    }
    QString caption = QStringLiteral("solid with dots: p99; dashed: p50; every process pooled");
    if (cut) caption += QStringLiteral("; a point above the scale is drawn on its top edge");
    chart.caption(caption);
    out.svg = chart.svg(false);
    return out;
}

Chart servingBatchChart(const RunResult& run) {
    Chart out{QStringLiteral("serving_batches"),
              QStringLiteral("Batch sizes formed"),
              {},
              QStringLiteral("How many requests the dynamic batcher put in each batch, every level "
                             "of the arm pooled (per level: the mean batch column of the table). "
                             "An arm with max_batch 1 only ever runs batches of one.")};
    const auto curves = servingCurves(run);
    std::vector<std::vector<double>> shares;
    std::size_t largest = 1;
    double top = 0;
    for (const auto& c : curves) {
        std::vector<double> count;
        double batches = 0;
        for (const auto& p : c.points)
            for (std::size_t k = 0; k < p.pooled.batch_histogram.size(); ++k) {
                if (count.size() <= k) count.resize(k + 1, 0);
                count[k] += double(p.pooled.batch_histogram[k]);
                batches += double(p.pooled.batch_histogram[k]);
            }
        for (auto& v : count) v = batches > 0 ? 100 * v / batches : 0;
        for (std::size_t k = 1; k < count.size(); ++k)
            if (count[k] > 0) largest = std::max(largest, k);
        for (double v : count) top = std::max(top, v);
        shares.push_back(std::move(count));
    }
    if (curves.empty() || top <= 0) return out;
    SvgChart chart(1000, 320, out.title);
    chart.setX(0.5, double(largest) + 0.5, QStringLiteral("batch size (requests)"), [](double v) {
        return std::fabs(v - std::round(v)) < 1e-9 ? tickText(v) : QString();
    });
    chart.setY(0, top * 1.1, QStringLiteral("share of batches (%)"));
    armLegend(chart, curves, armColor);
    const double groupWidth = 0.8, barWidth = groupWidth / double(curves.size());
    for (std::size_t a = 0; a < curves.size(); ++a)
        for (std::size_t k = 1; k < shares[a].size() && k <= largest; ++k) {
            if (shares[a][k] <= 0) continue;
            const double x0 = double(k) - groupWidth / 2 + barWidth * double(a);
            chart.rect(x0, 0, x0 + barWidth * 0.92, shares[a][k], armColor(curves[a].index));
        }
    chart.caption(
        QStringLiteral("one bar per arm and batch size: the share of that arm's batches"));
    out.svg = chart.svg(false);
    return out;
}

}  // namespace pitlane::report::detail
