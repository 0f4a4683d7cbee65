#include "pitlane/widgets/plots/serving_latency_plot.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <algorithm>
#include <set>

namespace pitlane::widgets {

namespace {
QColor sloColor(bool dark) {
    return dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xb3, 0x26, 0x1e);
}
}  // namespace

ServingLatencyPlot::ServingLatencyPlot(QWidget* parent)
    : LivePlot(tr("End-to-end latency · p99 solid, p50 dashed"), parent) {
    yAxis->setScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
    ticker->setLogBase(10);
    ticker->setSubTickCount(8);
    yAxis->setTicker(ticker);
    yAxis->setNumberFormat(QStringLiteral("gb"));
    yAxis->setLabel(tr("latency (ms)"));
    setToolTip(tr("End-to-end latency of every request (from its scheduled arrival to its batch's "
                  "end), every process pooled, at each offered rate: p99 solid, p50 dashed. "
                  "A cross marks a saturated level (its queue grew without bound); the dashed red "
                  "line is the SLO.") +
               QStringLiteral("\n\n") + toolTip());
    placeLegendInTitleRow();
    connect(this, &QCustomPlot::afterLayout, this, [this] { thinRateTicks(); });
    restyle();
}

void ServingLatencyPlot::restyle() {
    LivePlot::restyle();
    const bool dark = isDarkPalette(palette());
    if (sloLine_) sloLine_->setPen(QPen(sloColor(dark), 1.5, Qt::DashDotLine));
    if (sloLabel_) {
        sloLabel_->setColor(sloColor(dark));
        QColor backdrop = baseColor();
        backdrop.setAlpha(210);
        sloLabel_->setBrush(backdrop);
    }
    if (saturated_) {
        saturated_->setPen(QPen(textColor(), 2));
        saturated_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, textColor(), 13));
    }
    if (empty_) empty_->setColor(faintColor().darker(dark ? 60 : 140));
}

void ServingLatencyPlot::resetRun(const results::RunResult& run) {
    clearPlottables();
    clearItems();
    p99_.clear();
    p50_.clear();
    snapshot_.reset();
    drawn_.reset();
    slo_ = run.preset.serving.slo_p99_ms;
    const bool closed = run.preset.serving.arrival == "closed";
    xAxis->setLabel(closed ? tr("clients (closed loop)") : tr("offered rate (requests/s)"));
    xAxis->setScaleType(QCPAxis::stLinear);
    xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    xTicks_.clear();
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const QColor c = armColor(int(i));
        auto* p99 = addGraph();
        p99->setPen(QPen(c, 2));
        p99->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
        p99->setName(QString::fromStdString(run.arms[i].name));
        auto* p50 = addGraph();
        p50->setPen(QPen(c, 1.5, Qt::DashLine));
        p50->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
        p50->setName(QString::fromStdString(run.arms[i].name) + QStringLiteral(" p50"));
        p50->removeFromLegend();
        p99_.push_back(p99);
        p50_.push_back(p50);
    }
    // One series for every arm's saturated points, drawn over them: the cross means "the queue
    // grew without bound at this level", whatever the arm.
    saturated_ = addGraph();
    saturated_->setLineStyle(QCPGraph::lsNone);
    saturated_->setName(tr("saturated"));
    saturated_->setProperty("pitlaneDecoration", true);
    if (slo_ > 0) {
        sloLine_ = new QCPItemStraightLine(this);
        sloLine_->point1->setCoords(0, slo_);
        sloLine_->point2->setCoords(1, slo_);
        sloLabel_ = new QCPItemText(this);
        sloLabel_->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
        sloLabel_->position->setTypeY(QCPItemPosition::ptPlotCoords);
        // Above the line at the right: low rates (left) sit near or below the SLO, and what is
        // above it on the right is far above (saturated levels); a backdrop keeps it readable.
        sloLabel_->position->setCoords(0.99, slo_);
        sloLabel_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        sloLabel_->setPadding(QMargins(3, 0, 3, 1));
        sloLabel_->setText(tr("SLO: p99 ≤ %1 ms").arg(slo_, 0, 'g', 4));
    } else {
        sloLine_ = nullptr;
        sloLabel_ = nullptr;
    }
    empty_ = new QCPItemText(this);
    empty_->setPositionAlignment(Qt::AlignCenter);
    empty_->position->setType(QCPItemPosition::ptAxisRectRatio);
    empty_->position->setCoords(0.5, 0.5);
    empty_->setText(
        QString::fromStdString(servingEmptyText(run, "waiting for the first serving level to complete")));
    restyle();
}

void ServingLatencyPlot::setSnapshot(std::shared_ptr<const ServingSnapshot> snapshot) {
    snapshot_ = std::move(snapshot);
}

void ServingLatencyPlot::refresh(const results::RunResult& run) {
    if (p99_.size() != run.arms.size()) resetRun(run);
    if (!snapshot_ || snapshot_ == drawn_) return;
    drawn_ = snapshot_;
    QVector<double> satX, satY;
    int points = 0;
    for (std::size_t i = 0; i < p99_.size() && i < snapshot_->arms.size(); ++i) {
        QVector<double> x, p99, p50;
        for (const auto& p : snapshot_->arms[i].points) {
            if (p.pooled.served == 0) continue;
            const double at = p.clients > 0 ? double(p.clients) : p.rate_per_s;
            x.push_back(at);
            p99.push_back(p.pooled.p99_ms);
            p50.push_back(p.pooled.p50_ms);
            if (p.pooled.saturated) {
                satX.push_back(at);
                satY.push_back(p.pooled.p99_ms);
            }
        }
        points += int(x.size());
        p99_[i]->setData(x, p99, true);
        p50_[i]->setData(x, p50, true);
    }
    saturated_->setData(satX, satY);
    if (satX.isEmpty())
        saturated_->removeFromLegend();
    else if (!legend->hasItemWithPlottable(saturated_))
        saturated_->addToLegend();
    if (empty_) empty_->setVisible(points == 0);
    fitView();
}

QCPGraph* ServingLatencyPlot::p99Graph(int arm) const {
    return arm >= 0 && arm < int(p99_.size()) ? p99_[std::size_t(arm)] : nullptr;
}
QCPGraph* ServingLatencyPlot::p50Graph(int arm) const {
    return arm >= 0 && arm < int(p50_.size()) ? p50_[std::size_t(arm)] : nullptr;
}

void ServingLatencyPlot::fitView() {
    if (!followsData()) return;
    double xLo = 0, xHi = 0, yLo = 0, yHi = 0;
    bool any = false;
    for (std::size_t i = 0; i < p99_.size(); ++i)
        for (auto* graph : {p99_[i], p50_[i]})
            for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
                if (!(it->value > 0)) continue;
                xLo = any ? std::min(xLo, it->key) : it->key;
                xHi = any ? std::max(xHi, it->key) : it->key;
                yLo = any ? std::min(yLo, it->value) : it->value;
                yHi = any ? std::max(yHi, it->value) : it->value;
                any = true;
            }
    if (slo_ > 0) {
        yLo = any ? std::min(yLo, slo_) : slo_;
        yHi = any ? std::max(yHi, slo_ * 1.8) : slo_ * 1.8;  // room for its label
    }
    if (!any && slo_ <= 0) return;
    // Room around the points: a factor on the log axes; the linear rate axis starts at 0.
    yAxis->setRange(yLo / 1.5, yHi * 1.5);
    if (!any) return;
    // Rates spread over more than a decade (the SLO search doubles them) get a log axis, labelled
    // at the rates measured (QCustomPlot's log ticker labels only powers of ten, and falls back
    // to linear ticks below 1.6 decades).
    const bool logX = xLo > 0 && xHi / xLo > 10;
    std::set<double> measured;
    for (auto* graph : p99_)
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
            measured.insert(it->key);
    if (logX != (xAxis->scaleType() == QCPAxis::stLogarithmic) || (logX && measured != xTicks_)) {
        xAxis->setScaleType(logX ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        if (logX && measured.size() <= 12) {
            auto ticker = QSharedPointer<QCPAxisTickerText>::create();
            for (double x : measured) ticker->addTick(x, QString::number(x, 'g', 4));
            xAxis->setTicker(ticker);
        } else if (logX) {
            auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
            ticker->setLogBase(10);
            xAxis->setTicker(ticker);
        } else {
            xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        }
        xTicks_ = logX ? measured : std::set<double>();
    }
    if (logX)
        xAxis->setRange(xLo / 1.4, xHi * 1.4);
    else
        xAxis->setRange(0, xHi * 1.08 + (xHi > 0 ? 0 : 1));
}

void ServingLatencyPlot::thinRateTicks() {
    auto text = qSharedPointerDynamicCast<QCPAxisTickerText>(xAxis->ticker());
    if (!text || xTicks_.empty() || axisRect()->width() <= 0) return;
    const QFontMetrics fm(xAxis->tickLabelFont());
    QMap<double, QString> keep;
    double prevRight = -1e9;
    for (double x : xTicks_) {
        const QString label = QString::number(x, 'g', 4);
        const double px = xAxis->coordToPixel(x);
        const double half = fm.horizontalAdvance(label) / 2.0;
        if (px - half < prevRight + 6) continue;
        keep.insert(x, label);
        prevRight = px + half;
    }
    if (keep == text->ticks()) return;
    text->setTicks(keep);
    replot(rpQueuedReplot);
}

}  // namespace pitlane::widgets
