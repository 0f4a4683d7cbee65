#include "pitlane/widgets/plots/latency_distribution_plot.h"

#include "pitlane/stats/stats.h"
#include "pitlane/widgets/common/arm_palette.h"
#include "pitlane/widgets/results/comparison_rows.h"

#include <QHelpEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace pitlane::widgets {

namespace {
constexpr double kLogSpread = 4.0;
constexpr int kCdfPoints = 400;  // the CDF is drawn through this many quantiles at most
constexpr int kStripRowPx = 20;  // height of one arm's row of process dots
constexpr double kDotSize = 7;
constexpr double kDotHitPx = 9;     // a tooltip names the dot within this many pixels
constexpr double kRowSpread = 0.2;  // dots of one arm spread over +-this much of their row
constexpr qint64 kDotsEveryMs = 1000;  // process medians while samples stream

QCPItemStraightLine* markerLine(QCustomPlot* plot, const QColor& c, Qt::PenStyle style) {
    auto* line = new QCPItemStraightLine(plot);
    line->setPen(QPen(c, 1.5, style));
    line->setVisible(false);
    return line;
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QString shortName(const std::string& name) {
    const QString n = q(name);
    return n.size() <= 10 ? n : n.left(9) + QChar(0x2026);
}
}  // namespace

LatencyDistributionPlot::LatencyDistributionPlot(QWidget* parent)
    : LivePlot(tr("Latency distribution"), parent) {
    yAxis->setLabel(tr("%"));
    yAxis2->setVisible(true);
    yAxis2->setLabel(tr("CDF %"));
    yAxis2->setRange(0, 100);

    // The process strip: its own axis rect under the histogram, its latency axis kept equal to
    // the histogram's (range and scale), left and right margins aligned with it.
    margins_ = new QCPMarginGroup(this);
    axisRect()->setMarginGroup(QCP::msLeft | QCP::msRight, margins_);
    strip_ = new QCPAxisRect(this, true);
    strip_->setRangeDrag(Qt::Horizontal);
    strip_->setRangeZoom(Qt::Horizontal);
    strip_->setAutoMargins(QCP::msLeft | QCP::msRight | QCP::msBottom);
    strip_->setMinimumMargins(QMargins(15, 0, 15, 15));
    strip_->setMargins(QMargins(0, 2, 0, 0));
    QCPAxis* sx = strip_->axis(QCPAxis::atBottom);
    QCPAxis* sy = strip_->axis(QCPAxis::atLeft);
    sy->setRangeReversed(true);  // the first arm on top
    sy->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    sy->setSubTicks(false);
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), sx, [sx](const QCPRange& r) {
        if (sx->range() != r) sx->setRange(r);
    });
    connect(sx, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), xAxis,
            [this](const QCPRange& r) {
                if (xAxis->range() != r) xAxis->setRange(r);
            });
    strip_->setVisible(false);  // until a run has worker processes to show
    updateAxisLabels();
    restyle();
}

void LatencyDistributionPlot::restyle() {
    LivePlot::restyle();
    // Not in axisRects() while hidden (it is out of the layout then).
    if (!strip_) return;
    styleAxisRect(strip_);
    // Every arm's row line alike (the first row sits on y = 0, the grid's solid zero line).
    QCPGrid* rows = strip_->axis(QCPAxis::atLeft)->grid();
    rows->setZeroLinePen(rows->pen());
}

void LatencyDistributionPlot::resetRun(const results::RunResult& run) {
    clearGraphs();
    for (auto& s : arms_) {
        removeItem(s.median);
        removeItem(s.p99);
        removeItem(s.stripMedian);
    }
    arms_.assign(run.arms.size(), {});
    dotsSamples_ = std::size_t(-1);
    dotsClock_.invalidate();
    QCPAxis* sx = strip_->axis(QCPAxis::atBottom);
    QCPAxis* sy = strip_->axis(QCPAxis::atLeft);
    auto rows = QSharedPointer<QCPAxisTickerText>::create();
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const QColor c = armColor(int(i));
        auto& s = arms_[i];
        s.name = run.arms[i].name;
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
        // The arm's pooled median across its row of the strip: the dots scatter around it.
        s.stripMedian = new QCPItemLine(this);
        s.stripMedian->setClipAxisRect(strip_);
        for (auto* end : {s.stripMedian->start, s.stripMedian->end}) end->setAxes(sx, sy);
        s.stripMedian->setPen(QPen(c, 1.5));
        s.stripMedian->setVisible(false);
        s.dots = addGraph(sx, sy);
        s.dots->setLineStyle(QCPGraph::lsNone);
        QColor dotFill = c;
        dotFill.setAlpha(200);
        s.dots->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(c.darker(140), 1), dotFill, kDotSize));
        rows->addTick(double(i), shortName(run.arms[i].name));
    }
    sy->setTicker(rows);
    plannedProcesses_ = run.preset.run.processes > 1;
    setStripShown(false);
    fitStrip();
}

void LatencyDistributionPlot::refresh(const results::RunResult& run) {
    if (arms_.size() != run.arms.size()) resetRun(run);
    // New samples, a new round's processes or their page-fault counts (reported at block end).
    bool samplesChanged = false, processesChanged = false;
    std::size_t total = 0;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        std::int64_t faultIters = 0;
        for (const auto& p : a.processes) faultIters += p.fault_iters;
        samplesChanged |= a.samples.size() != arms_[i].samplesSeen;
        processesChanged |= a.processes.size() != arms_[i].processesSeen ||
                            faultIters != arms_[i].faultItersSeen;
        arms_[i].processesSeen = a.processes.size();
        arms_[i].faultItersSeen = faultIters;
        total += a.samples.size();
    }
    const bool dotsStale = total != dotsSamples_;
    if (!samplesChanged && !processesChanged && !dotsStale) return;

    // The process medians select over every sample of each process (~5 ms for 400 000 on the
    // UI thread): while samples stream they are redone at most once a second, and whenever the
    // processes change; a refresh without new samples (the end of the run, a stored run) brings
    // them up to date.
    if (processesChanged || !samplesChanged || !dotsClock_.isValid() ||
        dotsClock_.elapsed() >= kDotsEveryMs) {
        dotLo_ = INFINITY;
        dotHi_ = -INFINITY;
        showProcessDots(run, dotLo_, dotHi_);
        dotsClock_.start();
        dotsSamples_ = total;
    }
    const double dotLo = dotLo_, dotHi = dotHi_;

    // Sorted latencies (ns) per arm, and common bins: from the fastest sample to the largest p99.5
    // so one outlier cannot squeeze every histogram into a single bin.
    std::vector<const std::vector<double>*> sorted(run.arms.size());
    double lo = INFINITY, hi = -INFINITY;
    total = 0;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& v = *(sorted[i] = &sortedLatencies(i, run.arms[i]));
        arms_[i].samplesSeen = run.arms[i].samples.size();
        if (v.empty()) continue;
        total += v.size();
        lo = std::min(lo, toMs(v.front()));
        hi = std::max(hi, toMs(stats::percentileSorted(v, 99.5)));
    }
    if (total == 0) return;
    if (!(hi > lo)) hi = lo + std::max(lo * 0.01, 1e-6);
    const int bins = std::clamp(int(std::sqrt(double(total))), 10, 80);
    // Heavy tails (a few 10x spikes) would squeeze the bulk into one linear bin: beyond a 4x
    // spread the bins and the axis go logarithmic (base 2, so ticks read 8, 16, 32 ms).
    const bool logScale = lo > 0 && hi / lo > kLogSpread;
    setLogScale(logScale);
    const Bins grid{logScale ? std::log2(lo) : lo, logScale ? std::log2(hi) : hi, bins, logScale};
    for (std::size_t i = 0; i < run.arms.size(); ++i) showArm(i, *sorted[i], grid);
    auto value = [&](double p) { return logScale ? std::exp2(p) : p; };
    xView_ = QCPRange(value(grid.from - grid.width()), value(grid.to + grid.width()));
    // A process of slow outliers can have its median beyond the bins: keep its dot in view.
    if (stripShown_ && dotLo <= dotHi) {
        xView_.lower = std::min(xView_.lower, dotLo * 0.97);
        xView_.upper = std::max(xView_.upper, dotHi * 1.03);
    }
    fitView();
}

// One dot per process that has measured samples: its median (processSummaries, the same figures
// as the results JSON and the process warnings); [dotLo, dotHi] widened to the medians shown.
void LatencyDistributionPlot::showProcessDots(const results::RunResult& run, double& dotLo, double& dotHi) {
    bool anyProcess = false, manyProcesses = false;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        auto& s = arms_[i];
        s.replicates = 0;
        s.workers = 1;
        for (const auto& p : a.processes) {
            s.replicates = std::max(s.replicates, p.replicate + 1);
            s.workers = std::max(s.workers, p.worker + 1);
        }
        anyProcess |= !a.processes.empty();
        manyProcesses |= a.processes.size() > 1;
        s.dotInfo.clear();
        if (!a.processes.empty())
            for (auto& p : results::processSummaries(a))
                if (p.n > 0 && p.median_ns > 0) s.dotInfo.push_back({std::move(p), double(i)});
        const std::size_t k = s.dotInfo.size();
        QVector<double> keys, values;
        for (std::size_t d = 0; d < k; ++d) {
            // Start order top to bottom within the arm's row: close medians stay apart.
            auto& dot = s.dotInfo[d];
            if (k > 1) dot.y += -kRowSpread + 2 * kRowSpread * double(d) / double(k - 1);
            const double ms = toMs(dot.process.median_ns);
            keys.push_back(ms);
            values.push_back(dot.y);
            dotLo = std::min(dotLo, ms);
            dotHi = std::max(dotHi, ms);
        }
        s.dots->setData(keys, values);
    }
    setStripShown(anyProcess && (plannedProcesses_ || manyProcesses));

}

int LatencyDistributionPlot::Bins::of(double ns) const {
    const double ms = toMs(ns);
    return std::clamp(int(((log ? std::log2(ms) : ms) - from) / width()), 0, count - 1);
}

std::vector<std::size_t> LatencyDistributionPlot::binCounts(const std::vector<double>& v, const Bins& bins) {
    std::vector<std::size_t> counts(std::size_t(std::max(bins.count, 0)), 0);
    auto binStart = v.begin();
    for (int bin = 0; bin < bins.count; ++bin) {
        const auto binEnd =
            std::partition_point(binStart, v.end(), [&](double x) { return bins.of(x) <= bin; });
        counts[std::size_t(bin)] = std::size_t(binEnd - binStart);
        binStart = binEnd;
    }
    return counts;
}

void LatencyDistributionPlot::showArm(std::size_t i, const std::vector<double>& v, const Bins& grid) {
    auto& s = arms_[i];
    if (v.empty()) {
        s.histogram->data()->clear();
        s.cdf->data()->clear();
        s.median->setVisible(false);
        s.p99->setVisible(false);
        s.stripMedian->setVisible(false);
        return;
    }
    QVector<double> keys, values;
    const auto counts = binCounts(v, grid);
    for (int bin = 0; bin < grid.count; ++bin) {
        const double centre = grid.from + (bin + 0.5) * grid.width();
        keys.push_back(grid.log ? std::exp2(centre) : centre);
        values.push_back(100.0 * double(counts[std::size_t(bin)]) / double(v.size()));
    }
    s.histogram->setData(keys, values, true);

    QVector<double> cx, cy;
    const int points = std::min<int>(int(v.size()), kCdfPoints);
    for (int p = 0; p < points; ++p) {
        const double q = points == 1 ? 100.0 : 100.0 * p / (points - 1);
        cx.push_back(toMs(stats::percentileSorted(v, q)));
        cy.push_back(q);
    }
    s.cdf->setData(cx, cy, true);
    const double med = toMs(stats::percentileSorted(v, 50)), p99 = toMs(stats::percentileSorted(v, 99));
    s.median->point1->setCoords(med, 0);
    s.median->point2->setCoords(med, 1);
    s.p99->point1->setCoords(p99, 0);
    s.p99->point2->setCoords(p99, 1);
    s.median->setVisible(true);
    s.p99->setVisible(true);
    s.stripMedian->start->setCoords(med, double(i) - 0.4);
    s.stripMedian->end->setCoords(med, double(i) + 0.4);
    s.stripMedian->setVisible(true);
}

const std::vector<double>& LatencyDistributionPlot::sortedLatencies(std::size_t arm,
                                                                   const results::ArmResult& a) {
    auto& s = arms_[arm];
    // A run reopened from the history was sorted with its summary, off the UI thread.
    if (auto memo = results::memoizedSortedLatencies(a)) {
        s.sortedNs = {};
        s.sortedUpTo = 0;
        s.sortedShared = std::move(memo);
        return *s.sortedShared;
    }
    s.sortedShared.reset();
    if (a.samples.size() < s.sortedUpTo) {  // not the samples sorted so far: start again
        s.sortedNs.clear();
        s.sortedUpTo = 0;
    }
    const auto middle = std::ptrdiff_t(s.sortedNs.size());
    a.samples.forEachSpan(
        [&](const results::SampleSeries::Run& r, std::size_t, const std::int64_t* ns, std::size_t n) {
            if (r.batch_size != a.batch_size) return;
            for (std::size_t k = 0; k < n; ++k) s.sortedNs.push_back(double(ns[k]));
        },
        s.sortedUpTo);
    s.sortedUpTo = a.samples.size();
    std::sort(s.sortedNs.begin() + middle, s.sortedNs.end());
    std::inplace_merge(s.sortedNs.begin(), s.sortedNs.begin() + middle, s.sortedNs.end());
    return s.sortedNs;
}

void LatencyDistributionPlot::setLogScale(bool on) {
    if (on == (xAxis->scaleType() == QCPAxis::stLogarithmic)) return;
    for (QCPAxis* axis : {xAxis, strip_->axis(QCPAxis::atBottom)}) {
        if (on) {
            auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
            ticker->setLogBase(2);
            ticker->setSubTickCount(1);
            axis->setTicker(ticker);
            axis->setScaleType(QCPAxis::stLogarithmic);
        } else {
            axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
            axis->setScaleType(QCPAxis::stLinear);
        }
    }
    updateAxisLabels();
}

void LatencyDistributionPlot::updateAxisLabels() {
    // The latency axis is labelled once, at the bottom: under the strip when it is shown.
    QString label = logScale() ? tr("latency (ms, log scale) · solid: median, dashed: p99")
                               : tr("latency (ms) · solid: median, dashed: p99");
    QCPAxis* sx = strip_->axis(QCPAxis::atBottom);
    if (stripShown_) {
        label += tr(" · dots: process medians");
        xAxis->setTickLabels(false);
        xAxis->setLabel(QString());
        sx->setTickLabels(true);
        sx->setLabel(label);
    } else {
        xAxis->setTickLabels(true);
        xAxis->setLabel(label);
        sx->setLabel(QString());
    }
}

void LatencyDistributionPlot::setStripShown(bool on) {
    if (on == stripShown_) return;
    stripShown_ = on;
    if (on) {
        plotLayout()->addElement(plotLayout()->rowCount(), 0, strip_);
        strip_->setMarginGroup(QCP::msLeft | QCP::msRight, margins_);
        const int h = kStripRowPx * std::max<int>(1, int(arms_.size())) + 4;
        strip_->setMinimumSize(0, h);
        strip_->setMaximumSize(QWIDGETSIZE_MAX, h);
        // The strip's rows come on top of the histogram's own minimum (LivePlot's 120 px), with its axis: taken
        // out of it, a run of two arms left the title 10 px of its 14 at 1366x768.
        setMinimumHeight(120 + h + 24);
        strip_->setVisible(true);
        restyle();
    } else {
        strip_->setVisible(false);
        setMinimumHeight(120);
        strip_->setMarginGroup(QCP::msLeft | QCP::msRight, nullptr);
        if (plotLayout()->take(strip_)) plotLayout()->simplify();
    }
    updateAxisLabels();
}

void LatencyDistributionPlot::fitStrip() {
    strip_->axis(QCPAxis::atLeft)->setRange(-0.5, std::max<double>(1, double(arms_.size())) - 0.5);
    strip_->axis(QCPAxis::atBottom)->setRange(xAxis->range());
}

void LatencyDistributionPlot::fitView() {
    if (!followsData()) return;
    fitToData(true);
    if (xView_.size() > 0) xAxis->setRange(xView_);
    yAxis2->setRange(0, 102);
    fitStrip();
}

int LatencyDistributionPlot::processDots(int arm) const {
    if (arm < 0 || arm >= int(arms_.size()) || !arms_[std::size_t(arm)].dots) return 0;
    return arms_[std::size_t(arm)].dots->dataCount();
}

std::vector<double> LatencyDistributionPlot::processMedians(int arm) const {
    std::vector<double> out;
    if (arm < 0 || arm >= int(arms_.size())) return out;
    for (const auto& d : arms_[std::size_t(arm)].dotInfo) out.push_back(d.process.median_ns);
    return out;
}

QPointF LatencyDistributionPlot::processDotPosition(int arm, int i) const {
    if (arm < 0 || arm >= int(arms_.size())) return {};
    const auto& dots = arms_[std::size_t(arm)].dotInfo;
    if (i < 0 || i >= int(dots.size())) return {};
    const auto& d = dots[std::size_t(i)];
    return {strip_->axis(QCPAxis::atBottom)->coordToPixel(toMs(d.process.median_ns)),
            strip_->axis(QCPAxis::atLeft)->coordToPixel(d.y)};
}

QString LatencyDistributionPlot::processToolTip(const QPoint& pos) const {
    if (!stripShown_) return {};
    double best = kDotHitPx;
    const Dot* hit = nullptr;
    const ArmSeries* hitArm = nullptr;
    for (std::size_t a = 0; a < arms_.size(); ++a)
        for (std::size_t i = 0; i < arms_[a].dotInfo.size(); ++i) {
            const QPointF d = processDotPosition(int(a), int(i)) - QPointF(pos);
            const double dist = std::hypot(d.x(), d.y());
            if (dist <= best) {
                best = dist;
                hit = &arms_[a].dotInfo[i];
                hitArm = &arms_[a];
            }
        }
    if (!hit) return {};
    const auto& p = hit->process;
    QString which = tr("process %1 of %2")
                        .arg(p.info.replicate + 1)
                        .arg(std::max(hitArm->replicates, p.info.replicate + 1));
    if (hitArm->workers > 1)
        which += tr(", worker %1 of %2").arg(p.info.worker + 1).arg(hitArm->workers);
    QStringList lines;
    lines << tr("%1 · %2 (pid %3)").arg(q(hitArm->name), which).arg(p.info.pid);
    lines << tr("median %1 over n = %2 iterations")
                 .arg(q(results::formatDuration(p.median_ns)))
                 .arg(qulonglong(p.n));
    const double minor = p.info.minorFaultsPerIter();
    if (minor >= 0)
        lines << tr("minor page faults per iteration: %1 (major: %2)")
                     .arg(q(formatPerIter(minor)), q(formatPerIter(p.info.majorFaultsPerIter())));
    else
        lines << tr("page faults: not reported (yet)");
    if (p.info.load_ms >= 0 && p.info.first_forward_ms >= 0)
        lines << tr("model load %1 ms, first forward %2 ms")
                     .arg(p.info.load_ms, 0, 'f', 1)
                     .arg(p.info.first_forward_ms, 0, 'f', 1);
    else if (p.info.load_ms >= 0)
        lines << tr("model load %1 ms").arg(p.info.load_ms, 0, 'f', 1);
    return lines.join(QLatin1Char('\n'));
}

bool LatencyDistributionPlot::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = processToolTip(help->pos());
        if (!text.isEmpty()) {
            QToolTip::showText(help->globalPos(), text, this);
            return true;
        }
    }
    return LivePlot::event(event);
}

}  // namespace pitlane::widgets
