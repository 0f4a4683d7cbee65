#include "pitlane/widgets/latency_distribution_plot.h"

#include "pitlane/stats/stats.h"
#include "pitlane/widgets/arm_palette.h"

#include <algorithm>
#include <cmath>

namespace pitlane::widgets {

namespace {
constexpr double kLogSpread = 4.0;
constexpr int kCdfPoints = 400;  // the CDF is drawn through this many quantiles at most

QCPItemStraightLine* markerLine(QCustomPlot* plot, const QColor& c, Qt::PenStyle style) {
    auto* line = new QCPItemStraightLine(plot);
    line->setPen(QPen(c, 1.5, style));
    line->setVisible(false);
    return line;
}
}  // namespace

LatencyDistributionPlot::LatencyDistributionPlot(QWidget* parent)
    : LivePlot(tr("Latency distribution"), parent) {
    xAxis->setLabel(tr("latency (ms) · solid: median, dashed: p99"));
    yAxis->setLabel(tr("samples per bin (%)"));
    yAxis2->setVisible(true);
    yAxis2->setLabel(tr("cumulative (%)"));
    yAxis2->setRange(0, 100);
    restyle();
}

void LatencyDistributionPlot::resetRun(const results::RunResult& run) {
    clearGraphs();
    for (auto& s : arms_) {
        removeItem(s.median);
        removeItem(s.p99);
    }
    arms_.assign(run.arms.size(), {});
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const QColor c = armColor(int(i));
        auto& s = arms_[i];
        s.histogram = addGraph(xAxis, yAxis);
        s.histogram->setLineStyle(QCPGraph::lsStepCenter);
        s.histogram->setPen(QPen(c, 1));
        QColor fill = c;
        fill.setAlpha(70);
        s.histogram->setBrush(fill);
        s.cdf = addGraph(xAxis, yAxis2);
        s.cdf->setPen(QPen(c, 2));
        s.median = markerLine(this, c, Qt::SolidLine);
        s.p99 = markerLine(this, c, Qt::DashLine);
    }
}

void LatencyDistributionPlot::refresh(const results::RunResult& run) {
    if (arms_.size() != run.arms.size()) resetRun(run);
    bool changed = false;
    for (std::size_t i = 0; i < run.arms.size(); ++i)
        changed |= run.arms[i].samples.size() != arms_[i].samplesSeen;
    if (!changed) return;

    // Sorted latencies (ms) per arm, and common bins: from the fastest sample to the largest p99.5
    // so one outlier cannot squeeze every histogram into a single bin.
    std::vector<std::vector<double>> sorted(run.arms.size());
    double lo = INFINITY, hi = -INFINITY;
    std::size_t total = 0;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        auto& v = sorted[i];
        for (double ns : run.arms[i].latencies()) v.push_back(toMs(ns));
        std::sort(v.begin(), v.end());
        arms_[i].samplesSeen = run.arms[i].samples.size();
        if (v.empty()) continue;
        total += v.size();
        lo = std::min(lo, v.front());
        hi = std::max(hi, stats::percentileSorted(v, 99.5));
    }
    if (total == 0) return;
    if (!(hi > lo)) hi = lo + std::max(lo * 0.01, 1e-6);
    const int bins = std::clamp(int(std::sqrt(double(total))), 10, 80);
    // Heavy tails (a few 10x spikes) would squeeze the bulk into one linear bin: beyond a 4x
    // spread the bins and the axis go logarithmic (base 2, so ticks read 8, 16, 32 ms).
    const bool logScale = lo > 0 && hi / lo > kLogSpread;
    setLogScale(logScale);
    const double a = logScale ? std::log2(lo) : lo, b = logScale ? std::log2(hi) : hi;
    const double width = (b - a) / bins;
    auto position = [&](double x) { return logScale ? std::log2(x) : x; };
    auto value = [&](double p) { return logScale ? std::exp2(p) : p; };

    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& v = sorted[i];
        auto& s = arms_[i];
        if (v.empty()) {
            s.histogram->data()->clear();
            s.cdf->data()->clear();
            s.median->setVisible(false);
            s.p99->setVisible(false);
            continue;
        }
        std::vector<double> counts(std::size_t(bins), 0.0);
        for (double x : v)
            counts[std::size_t(std::clamp(int((position(x) - a) / width), 0, bins - 1))] += 1;
        QVector<double> keys, values;
        for (int bin = 0; bin < bins; ++bin) {
            keys.push_back(value(a + (bin + 0.5) * width));
            values.push_back(100.0 * counts[std::size_t(bin)] / double(v.size()));
        }
        s.histogram->setData(keys, values, true);

        QVector<double> cx, cy;
        const int points = std::min<int>(int(v.size()), kCdfPoints);
        for (int p = 0; p < points; ++p) {
            const double q = points == 1 ? 100.0 : 100.0 * p / (points - 1);
            cx.push_back(stats::percentileSorted(v, q));
            cy.push_back(q);
        }
        s.cdf->setData(cx, cy, true);
        const double med = stats::percentileSorted(v, 50), p99 = stats::percentileSorted(v, 99);
        s.median->point1->setCoords(med, 0);
        s.median->point2->setCoords(med, 1);
        s.p99->point1->setCoords(p99, 0);
        s.p99->point2->setCoords(p99, 1);
        s.median->setVisible(true);
        s.p99->setVisible(true);
    }
    xView_ = QCPRange(value(a - width), value(b + width));
    fitView();
}

void LatencyDistributionPlot::setLogScale(bool on) {
    if (on == (xAxis->scaleType() == QCPAxis::stLogarithmic)) return;
    if (on) {
        auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
        ticker->setLogBase(2);
        ticker->setSubTickCount(1);
        xAxis->setTicker(ticker);
        xAxis->setScaleType(QCPAxis::stLogarithmic);
        xAxis->setLabel(tr("latency (ms, log scale) · solid: median, dashed: p99"));
    } else {
        xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        xAxis->setScaleType(QCPAxis::stLinear);
        xAxis->setLabel(tr("latency (ms) · solid: median, dashed: p99"));
    }
}

void LatencyDistributionPlot::fitView() {
    if (!followsData()) return;
    fitToData(true);
    if (xView_.size() > 0) xAxis->setRange(xView_);
    yAxis2->setRange(0, 102);
}

}  // namespace pitlane::widgets
