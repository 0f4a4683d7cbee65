#include "pitlane/widgets/plots/memory_plot.h"

#include "pitlane/widgets/common/arm_palette.h"

namespace pitlane::widgets {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

MemoryPlot::MemoryPlot(QWidget* parent) : TimePlot(tr("Memory"), parent) {
    yAxis->setLabel(tr("MiB"));
    placeLegendInTitleRow();
    restyle();
}

void MemoryPlot::restyle() {
    TimePlot::restyle();
    if (rssKey_) rssKey_->setPen(QPen(textColor(), 2));
    if (tensorKey_) tensorKey_->setPen(QPen(textColor(), 1.5, Qt::DashLine));
}

void MemoryPlot::resetRun(const results::RunResult& run) {
    TimePlot::resetRun(run);
    // The legend explains line styles, not arms (the colours say which arm): two empty keys.
    rssKey_ = addGraph();
    rssKey_->setName(tr("RSS"));
    tensorKey_ = addGraph();
    tensorKey_->setName(tr("tensors"));
    for (auto* key : {rssKey_, tensorKey_}) key->setProperty("pitlaneDecoration", true);
    restyle();
    arms_.assign(run.arms.size(), {});
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const QColor c = armColor(int(i));
        const QString name = QString::fromStdString(run.arms[i].name);
        auto& s = arms_[i];
        s.rss = addGraph();
        s.rss->setPen(QPen(c, 2));
        s.rss->setName(tr("%1 RSS").arg(name));
        s.rss->removeFromLegend();
        s.tensors = addGraph();
        s.tensors->setPen(QPen(c, 1.5, Qt::DashLine));
        s.tensors->setName(tr("%1 tensors").arg(name));
        s.tensors->removeFromLegend();
    }
}

void MemoryPlot::refresh(const results::RunResult& run) {
    if (arms_.size() != run.arms.size()) resetRun(run);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& ticks = run.arms[i].metrics;
        auto& s = arms_[i];
        for (std::size_t k = s.ticksShown; k < ticks.size(); ++k) {
            const auto& t = ticks[k];
            s.rss->addData(t.t_ms / 1000.0, double(t.rss_bytes) / kMiB);
            if (t.tensor_bytes >= 0)
                s.tensors->addData(t.t_ms / 1000.0, double(t.tensor_bytes) / kMiB);
        }
        s.ticksShown = ticks.size();
    }
    fitView();
}

void MemoryPlot::fitView() {
    fitToData(true);
}

}  // namespace pitlane::widgets
