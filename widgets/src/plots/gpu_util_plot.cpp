#include "pitlane/widgets/plots/gpu_util_plot.h"

#include "pitlane/widgets/common/arm_palette.h"

namespace pitlane::widgets {

namespace {
// A metrics tick carries "gpu": [{"index", "util_pct", ...}, ...] (one entry per GPU, from NVML)
// or "gpu_status" when there is no NVML; the plot shows the busiest GPU.
bool gpuUtil(const nlohmann::json& raw, double* pct) {
    const auto it = raw.find("gpu");
    if (it == raw.end() || !it->is_array() || it->empty()) return false;
    bool any = false;
    double best = 0;
    for (const auto& g : *it) {
        if (!g.is_object() || !g.contains("util_pct") || !g["util_pct"].is_number()) continue;
        best = std::max(best, g["util_pct"].get<double>());
        any = true;
    }
    *pct = best;
    return any;
}
}  // namespace

GpuUtilPlot::GpuUtilPlot(QWidget* parent) : TimePlot(tr("GPU utilization"), parent) {
    yAxis->setLabel(tr("busy %"));
    yAxis->setRange(0, 105);
    placeholder_ = new QCPItemText(this);
    placeholder_->position->setType(QCPItemPosition::ptAxisRectRatio);
    placeholder_->position->setCoords(0.5, 0.5);
    placeholder_->setText(tr("no GPU data (no NVML)"));
    placeholder_->setClipToAxisRect(false);
    restyle();
}

void GpuUtilPlot::restyle() {
    TimePlot::restyle();
    if (placeholder_) placeholder_->setColor(textColor());
}

void GpuUtilPlot::resetRun(const results::RunResult& run) {
    TimePlot::resetRun(run);
    arms_.clear();
    ticksShown_.assign(run.arms.size(), 0);
    hasData_ = false;
    placeholder_->setVisible(true);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        auto* g = addGraph();
        g->setPen(QPen(armColor(int(i)), 2));
        g->setName(QString::fromStdString(run.arms[i].name));
        arms_.push_back(g);
    }
}

void GpuUtilPlot::refresh(const results::RunResult& run) {
    if (ticksShown_.size() != run.arms.size()) resetRun(run);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& ticks = run.arms[i].metrics;
        for (std::size_t k = ticksShown_[i]; k < ticks.size(); ++k) {
            double pct = 0;
            if (!gpuUtil(ticks[k].raw, &pct)) continue;
            arms_[i]->addData(ticks[k].t_ms / 1000.0, pct);
            hasData_ = true;
        }
        ticksShown_[i] = ticks.size();
    }
    placeholder_->setVisible(!hasData_);
    fitView();
}

void GpuUtilPlot::fitView() {
    if (!followsData()) return;
    fitToData();
    yAxis->setRange(0, 105);
}

}  // namespace pitlane::widgets
