#include "pitlane/widgets/plots/time_plot.h"

#include "pitlane/widgets/common/arm_palette.h"

namespace pitlane::widgets {

namespace {
// Run time ticks carry their unit ("5 s"): no axis label row under three small plots (the
// height the lower row needs on a 768-pixel screen).
class SecondsTicker : public QCPAxisTicker {
protected:
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                         int precision) override {
        return QCPAxisTicker::getTickLabel(tick, locale, formatChar, precision) +
               QStringLiteral(" s");
    }
};
}  // namespace

TimePlot::TimePlot(const QString& title, QWidget* parent) : LivePlot(title, parent) {
    auto seconds = QSharedPointer<SecondsTicker>::create();
    seconds->setTickCount(4);  // "5 s" is wider than "5": fewer labels, or they run together
    xAxis->setTicker(seconds);
    xAxis->setLabel(QString());
    setToolTip(toolTip() + tr("\nx: run time in seconds since the run started") +
               tr("\nShaded: which arm was warming up or measuring (arm colours)"));
    // The bands live on the hidden right axis, fixed at 0..1, so they span the full height
    // whatever the left axis shows.
    yAxis2->setVisible(false);
    yAxis2->setRange(0, 1);
}

void TimePlot::resetRun(const results::RunResult& run) {
    // Subclasses call this first, then add their own graphs.
    clearGraphs();
    bands_.clear();
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        auto* band = addGraph(xAxis, yAxis2);
        band->setLineStyle(QCPGraph::lsStepLeft);
        band->setPen(Qt::NoPen);
        band->setBrush(bandColor(int(i)));
        band->removeFromLegend();
        band->setProperty("pitlaneDecoration", true);
        band->setLayer(QStringLiteral("background"));
        bands_.push_back(band);
    }
}

// The arm's colour at 15 % over the background, opaque (bands of two arms never overlap: one
// arm runs at a time).
QColor TimePlot::bandColor(int arm) const {
    return overBase(armColor(arm), 38);
}

void TimePlot::restyle() {
    LivePlot::restyle();
    for (std::size_t i = 0; i < bands_.size(); ++i) bands_[i]->setBrush(bandColor(int(i)));
}

void TimePlot::setActivity(const std::vector<ArmActivity>& activity, double nowMs) {
    std::vector<QVector<double>> keys(bands_.size()), values(bands_.size());
    for (const auto& a : activity) {
        if (a.arm < 0 || std::size_t(a.arm) >= bands_.size()) continue;
        const double end = a.endMs < 0 ? nowMs : a.endMs;
        keys[a.arm] << a.startMs / 1000.0 << end / 1000.0;
        values[a.arm] << 1.0 << 0.0;
    }
    for (std::size_t i = 0; i < bands_.size(); ++i) bands_[i]->setData(keys[i], values[i], true);
}

bool TimePlot::timeRange(QCPRange* range) {
    bool any = false;
    for (int i = 0; i < graphCount(); ++i) {
        bool ok = false;
        const QCPRange r = graph(i)->getKeyRange(ok);
        if (!ok) continue;
        if (any)
            range->expand(r);
        else
            *range = r;
        any = true;
    }
    return any;
}

}  // namespace pitlane::widgets
