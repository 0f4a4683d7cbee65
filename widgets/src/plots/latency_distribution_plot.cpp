#include "pitlane/widgets/plots/latency_distribution_plot.h"

#include "pitlane/stats/stats.h"
#include "pitlane/widgets/common/arm_palette.h"
#include "pitlane/widgets/results/comparison_rows.h"

#include <QHelpEvent>
#include <QThreadPool>
#include <QToolTip>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace pitlane::widgets {

namespace {
constexpr int kStripRowPx = 20;  // height of one arm's row of process dots
constexpr double kDotSize = 7;
constexpr double kDotHitPx = 9;     // a tooltip names the dot within this many pixels
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
    pool_ = new QThreadPool(this);
    pool_->setMaxThreadCount(1);
    sorted_ = std::make_shared<Sorted>();
}

LatencyDistributionPlot::~LatencyDistributionPlot() {
    // The answer is posted to this object: wait for the computation here, and QObject's
    // destructor drops the posted answer.
    pool_->waitForDone();
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
    ++ticket_;  // a computation for the previous run is not drawn
    jobRunning_ = jobQueued_ = false;
    next_ = current_ = {};
    sorted_ = std::make_shared<Sorted>();
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
    // A run under way that plans several processes per arm has the strip's room from its start:
    // its first dots would otherwise relay the whole plot panel out (every plot resized and
    // replotted) while the samples stream.
    bool going = false;
    for (const auto& a : run.arms) going |= !a.finished();
    reserveStrip_ = plannedProcesses_ && going;
    setStripShown(reserveStrip_);
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
        arms_[i].samplesSeen = a.samples.size();
        total += a.samples.size();
    }
    const bool dotsStale = total != dotsSamples_;
    if (!samplesChanged && !processesChanged && !dotsStale) return;

    // The process medians select over every sample of each process (~5 ms for 400 000): while
    // samples stream they are redone at most once a second, and whenever the processes change;
    // a refresh without new samples (the end of the run, a stored run) brings them up to date.
    const bool dots = processesChanged || !samplesChanged || !dotsClock_.isValid() ||
                      dotsClock_.elapsed() >= kDotsEveryMs;
    if (dots) {
        dotsClock_.start();
        dotsSamples_ = total;
    }
    // The newest input replaces one that waits (a computation reads every sample anyway). Only
    // what compute() reads is copied: results::armSettings would copy each arm's environment
    // and read-backs too, four times a second.
    next_.dots |= dots;
    next_.arms.clear();
    for (const auto& a : run.arms) {
        results::ArmResult copy;
        copy.name = a.name;
        copy.batch_size = a.batch_size;
        copy.samples = a.samples;  // shares the chunks
        copy.processes = a.processes;
        copy.sorted_memo = std::atomic_load(&a.sorted_memo);
        copy.process_medians = std::atomic_load(&a.process_medians);
        next_.arms.push_back(std::move(copy));
    }
    jobQueued_ = true;
    if (!jobRunning_) startJob();
}

void LatencyDistributionPlot::startJob() {
    jobQueued_ = false;
    jobRunning_ = true;
    current_ = std::move(next_);
    next_ = {};
    const std::uint64_t ticket = ++ticket_;
    pool_->start([this, in = current_, sorted = sorted_, ticket]() mutable {
        // Below the UI thread and the workers, as the timeline's envelopes.
        ::setpriority(PRIO_PROCESS, pid_t(::syscall(SYS_gettid)), 10);
        Model m = compute(in, *sorted);
        in = {};  // the samples' chunks released on this thread
        QMetaObject::invokeMethod(
            this,
            [this, m = std::move(m), ticket]() mutable {
                if (ticket != ticket_) return;  // a new run, or settle() drew a newer one
                jobRunning_ = false;
                current_ = {};
                show(std::move(m));
                if (jobQueued_) {
                    startJob();
                    return;
                }
                emit computed();
            },
            Qt::QueuedConnection);
    });
}

void LatencyDistributionPlot::settle() {
    pool_->waitForDone();  // the running computation's sorted state is whole
    ++ticket_;             // its answer, if any, is dropped: the newest is drawn here instead
    if (!jobRunning_ && !jobQueued_) return;  // what was asked is drawn
    Input in = jobQueued_ ? std::move(next_) : std::move(current_);
    in.dots |= current_.dots;  // the dropped answer's process medians are redone
    next_ = current_ = {};
    jobRunning_ = jobQueued_ = false;
    show(compute(in, *sorted_));
    replot(rpImmediateRefresh);
    emit computed();
}

void LatencyDistributionPlot::show(Model m) {
    if (m.dots) {
        dotLo_ = m.dotLo;
        dotHi_ = m.dotHi;
        for (std::size_t i = 0; i < arms_.size() && i < m.armDots.size(); ++i) {
            auto& s = arms_[i];
            s.replicates = m.armDots[i].replicates;
            s.workers = m.armDots[i].workers;
            s.dotInfo = std::move(m.armDots[i].dots);
            QVector<double> keys, values;
            for (const auto& d : s.dotInfo) {
                keys.push_back(toMs(d.process.median_ns));
                values.push_back(d.y);
            }
            s.dots->setData(keys, values);
        }
        setStripShown(reserveStrip_ || (m.anyProcess && (plannedProcesses_ || m.manyProcesses)));
    }
    if (m.any) {
        setLogScale(m.logScale);
        for (std::size_t i = 0; i < arms_.size() && i < m.arms.size(); ++i) showArm(i, m.arms[i]);
        xView_ = m.view;
        // A process of slow outliers can have its median beyond the bins: keep its dot in view.
        if (stripShown_ && dotLo_ <= dotHi_) {
            xView_.lower = std::min(xView_.lower, dotLo_ * 0.97);
            xView_.upper = std::max(xView_.upper, dotHi_ * 1.03);
        }
        fitView();
    }
    replot(rpQueuedReplot);
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

void LatencyDistributionPlot::showArm(std::size_t i, const Model::Arm& m) {
    auto& s = arms_[i];
    if (!m.any) {
        s.histogram->data()->clear();
        s.cdf->data()->clear();
        s.median->setVisible(false);
        s.p99->setVisible(false);
        s.stripMedian->setVisible(false);
        return;
    }
    s.histogram->setData(m.binKeys, m.binValues, true);
    s.cdf->setData(m.cdfKeys, m.cdfValues, true);
    s.median->point1->setCoords(m.medianMs, 0);
    s.median->point2->setCoords(m.medianMs, 1);
    s.p99->point1->setCoords(m.p99Ms, 0);
    s.p99->point2->setCoords(m.p99Ms, 1);
    s.median->setVisible(true);
    s.p99->setVisible(true);
    s.stripMedian->start->setCoords(m.medianMs, double(i) - 0.4);
    s.stripMedian->end->setCoords(m.medianMs, double(i) + 0.4);
    s.stripMedian->setVisible(true);
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
