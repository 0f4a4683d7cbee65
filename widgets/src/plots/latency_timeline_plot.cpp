#include "pitlane/widgets/plots/latency_timeline_plot.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <QMenu>
#include <QSettings>
#include <QToolButton>

namespace pitlane::widgets {

namespace {
// Beyond this many points markers cost more than they tell.
constexpr int kMarkerLimit = 1500;
// Beyond this many blocks the boundary lines become a grey wall.
constexpr std::size_t kBoundaryLimit = 300;
const char* const kLogScaleKey = "plots/latencyLogScale";
}  // namespace

LatencyTimelinePlot::LatencyTimelinePlot(QWidget* parent)
    : LivePlot(tr("Latency per iteration"), parent) {
    xAxis->setLabel(tr("measured iteration (warmup < 0)"));
    yAxis->setLabel(tr("latency (ms)"));
    placeLegendInTitleRow();
    warmupShade_ = new QCPItemRect(this);
    warmupShade_->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    warmupShade_->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    warmupShade_->topLeft->setCoords(-1, 0);
    warmupShade_->bottomRight->setCoords(-0.5, 1);
    warmupShade_->setLayer(QStringLiteral("background"));
    warmupShade_->setVisible(false);
    warmupLabel_ = new QCPItemText(this);
    warmupLabel_->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    warmupLabel_->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
    warmupLabel_->setText(tr("warmup"));
    warmupLabel_->setClipToAxisRect(true);
    warmupLabel_->setVisible(false);
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this] { fitWarmupLabel(); });
    logButton_ = new QToolButton(this);
    logButton_->setObjectName(QStringLiteral("logScale"));
    logButton_->setText(tr("log"));
    logButton_->setCheckable(true);
    logButton_->setAutoRaise(true);
    logButton_->setToolTip(tr("Logarithmic latency axis: arms that differ 100x both stay "
                              "readable (remembered)"));
    connect(logButton_, &QToolButton::toggled, this, [this](bool on) {
        setLogScale(on);
        QSettings().setValue(QLatin1String(kLogScaleKey), on);
    });
    setLogScale(QSettings().value(QLatin1String(kLogScaleKey), false).toBool());
    restyle();
}

void LatencyTimelinePlot::setLogScale(bool on) {
    if (logButton_->isChecked() != on) logButton_->setChecked(on);  // re-enters once
    if (on == logScale()) return;
    yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (on)
        yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else
        yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    yAxis->setLabel(on ? tr("latency (ms, log)") : tr("latency (ms)"));
    fitView();
    replot(rpQueuedReplot);
}

void LatencyTimelinePlot::resizeEvent(QResizeEvent* event) {
    logButton_->adjustSize();
    logButton_->move(2, 2);
    LivePlot::resizeEvent(event);  // places the Auto range button right of it
}

int LatencyTimelinePlot::cornerInUse() const {
    return logButton_ ? logButton_->sizeHint().width() + 2 : 0;
}

void LatencyTimelinePlot::addMenuActions(QMenu* menu) {
    QAction* log = menu->addAction(tr("Logarithmic latency axis"));
    log->setCheckable(true);
    log->setChecked(logScale());
    connect(log, &QAction::toggled, logButton_, &QToolButton::setChecked);
}

void LatencyTimelinePlot::restyle() {
    LivePlot::restyle();
    QColor shade = faintColor();
    shade.setAlpha(90);
    if (warmupShade_) {
        warmupShade_->setBrush(shade);
        warmupShade_->setPen(Qt::NoPen);
    }
    if (warmupLabel_) warmupLabel_->setColor(textColor());
    for (auto* line : boundaryLines_) line->setPen(QPen(faintColor(), 1, Qt::DashLine));
}

void LatencyTimelinePlot::resetRun(const results::RunResult& run) {
    clearGraphs();
    for (auto* line : boundaryLines_) removeItem(line);
    boundaryLines_.clear();
    boundaries_.clear();
    arms_.assign(run.arms.size(), {});
    maxWarmup_ = 0;
    warmupShade_->setVisible(false);
    warmupLabel_->setVisible(false);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const QColor c = armColor(int(i));
        auto& s = arms_[i];
        s.warmup = addGraph();
        QColor faded = c;
        faded.setAlphaF(0.55f);
        s.warmup->setPen(QPen(faded, 1));
        s.warmup->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 3));
        s.warmup->removeFromLegend();
        s.measured = addGraph();
        s.measured->setName(QString::fromStdString(run.arms[i].name));
        s.measured->setPen(QPen(c, 1.5));
        s.measured->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 3));
    }
}

void LatencyTimelinePlot::addBoundary(double x) {
    if (boundaries_.size() >= kBoundaryLimit || !boundaries_.insert(int(x * 2)).second) return;
    auto* line = new QCPItemStraightLine(this);
    // y as a fraction of the axis rect: valid on a log axis too.
    line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
    line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(faintColor(), 1, Qt::DashLine));
    line->setLayer(QStringLiteral("background"));
    boundaryLines_.push_back(line);
}

namespace {
// Samples [from, size()) of an arm as points (iteration, ms), and the x of each block change
// (`lastBlock`: the block of the sample before `from`, -1 for none).
template <class Point>
void collectMeasured(const results::ArmResult& arm, std::size_t from, int& lastBlock,
                     std::vector<double>& boundaries, Point&& point) {
    arm.samples.forEachSpan(
        [&](const results::SampleSeries::Run& r, std::size_t offset, const std::int64_t* ns, std::size_t n) {
            const int first = r.first_iter + int(offset);
            if (lastBlock >= 0 && r.block != lastBlock) boundaries.push_back(first - 0.5);
            lastBlock = r.block;
            for (std::size_t k = 0; k < n; ++k) point(double(first + int(k)), toMs(double(ns[k])));
        },
        from);
}
}  // namespace

std::shared_ptr<LatencyTimelinePlot::Prepared> LatencyTimelinePlot::prepare(const results::RunResult& run) {
    auto out = std::make_shared<Prepared>();
    for (const auto& arm : run.arms) {
        Prepared::Arm a;
        QVector<QCPGraphData> points;
        points.reserve(int(arm.samples.size()));
        collectMeasured(arm, 0, a.lastBlock, a.boundaries,
                        [&](double x, double y) { points.append(QCPGraphData(x, y)); });
        a.measured = QSharedPointer<QCPGraphDataContainer>::create();
        a.measured->set(points, true);
        a.stamp = arm.samples.stamp();
        a.shown = arm.samples.size();
        out->arms.push_back(std::move(a));
    }
    return out;
}

void LatencyTimelinePlot::showMeasured(std::size_t i, const results::ArmResult& arm) {
    auto& s = arms_[i];
    std::vector<double> boundaries;
    Prepared::Arm* ready = prepared_ && i < prepared_->arms.size() ? &prepared_->arms[i] : nullptr;
    if (ready && ready->measured && s.measuredShown == 0 && ready->stamp == arm.samples.stamp()) {
        s.measured->setData(ready->measured);  // shared, not copied
        ready->measured.reset();
        boundaries.swap(ready->boundaries);
        s.lastBlock = ready->lastBlock;
    } else {
        QVector<double> keys, values;
        keys.reserve(int(arm.samples.size() - s.measuredShown));
        values.reserve(keys.capacity());
        collectMeasured(arm, s.measuredShown, s.lastBlock, boundaries, [&](double x, double y) {
            keys.push_back(x);
            values.push_back(y);
        });
        s.measured->addData(keys, values, true);
    }
    for (double x : boundaries) addBoundary(x);
    s.measuredShown = arm.samples.size();
    if (s.measured->dataCount() > kMarkerLimit)
        s.measured->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
}

void LatencyTimelinePlot::refresh(const results::RunResult& run) {
    if (arms_.size() != run.arms.size()) resetRun(run);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& arm = run.arms[i];
        auto& s = arms_[i];
        if (arm.warmup_ns.size() != s.warmupShown) {
            // Warmup can grow later (one warmup per batch size of a sweep): x shifts, so rebuild.
            const double w = double(arm.warmup_ns.size());
            QVector<double> keys, values;
            for (std::size_t k = 0; k < arm.warmup_ns.size(); ++k) {
                keys.push_back(double(k) - w);
                values.push_back(toMs(double(arm.warmup_ns[k])));
            }
            s.warmup->setData(keys, values, true);
            s.warmupShown = arm.warmup_ns.size();
            maxWarmup_ = std::max(maxWarmup_, s.warmupShown);
        }
        if (arm.samples.size() > s.measuredShown) showMeasured(i, arm);
    }
    if (maxWarmup_ > 0) {
        warmupShade_->topLeft->setCoords(-double(maxWarmup_) - 0.5, 0);
        warmupShade_->setVisible(true);
        warmupLabel_->position->setCoords(-double(maxWarmup_) / 2.0 - 0.5, 0.02);
        warmupLabel_->setVisible(true);
    }
    fitView();
}

void LatencyTimelinePlot::fitView() {
    fitToData();
    fitWarmupLabel();
    // The first warmup iterations can be 100x slower than steady state; fitting them would flatten
    // the measured series into a line, so y follows the measured samples once there are some.
    if (!followsData()) return;
    bool any = false;
    QCPRange range;
    for (const auto& s : arms_) {
        bool ok = false;
        const QCPRange r = s.measured->getValueRange(ok);
        if (!ok) continue;
        if (any)
            range.expand(r);
        else
            range = r;
        any = true;
    }
    if (!any) return;
    if (logScale() && range.lower > 0) {
        yAxis->setRange(range.lower / 1.25, range.upper * 1.25);  // a constant gap in decades
        return;
    }
    const double pad = std::max(range.size() * 0.08, range.upper * 0.02);
    yAxis->setRange(std::max(0.0, range.lower - pad), range.upper + pad);
}

void LatencyTimelinePlot::fitWarmupLabel() {
    if (maxWarmup_ == 0) return;
    // Only label the shaded region when the word fits in it.
    const double left = xAxis->coordToPixel(-double(maxWarmup_) - 0.5);
    const double right = xAxis->coordToPixel(-0.5);
    warmupLabel_->setVisible(
        right - left >
        QFontMetrics(warmupLabel_->font()).horizontalAdvance(warmupLabel_->text()) + 4);
}

}  // namespace pitlane::widgets
