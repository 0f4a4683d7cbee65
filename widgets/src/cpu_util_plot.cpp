#include "pitlane/widgets/cpu_util_plot.h"

#include <algorithm>
#include <numeric>

namespace pitlane::widgets {

CpuUtilPlot::CpuUtilPlot(QWidget* parent) : TimePlot(tr("CPU utilization per core"), parent) {
    yAxis->setLabel(tr("busy (%)"));
    restyle();
}

// Cores are not arms: neutral shades of the text colour keep the arm hues for the arms.
QColor CpuUtilPlot::coreColor(int k, int n) const {
    QColor c = textColor();
    c.setAlphaF(float(0.9 - 0.55 * (n > 1 ? double(k) / (n - 1) : 0.0)));
    return c;
}

void CpuUtilPlot::restyle() {
    TimePlot::restyle();
    for (std::size_t k = 0; k < series_.size(); ++k)
        series_[k]->setPen(QPen(coreColor(int(k), int(series_.size())),
                                k == 0 && cores_ > kPerCoreLimit ? 2 : 1.2));
}

void CpuUtilPlot::resetRun(const results::RunResult& run) {
    TimePlot::resetRun(run);
    series_.clear();
    cores_ = 0;
    ticksShown_.assign(run.arms.size(), 0);
    lastTickMs_.assign(run.arms.size(), -1e9);
}

void CpuUtilPlot::ensureSeries(int cores) {
    if (cores == cores_ || cores <= 0) return;
    for (auto* g : series_) removeGraph(g);
    series_.clear();
    cores_ = cores;
    const int n = cores <= kPerCoreLimit ? cores : 2;
    setTitle(cores <= kPerCoreLimit
                 ? tr("CPU utilization · %n core(s)", nullptr, cores)
                 : tr("CPU · mean of %1 cores (thick), busiest (thin)").arg(cores));
    for (int k = 0; k < n; ++k) {
        auto* g = addGraph();
        g->setName(cores <= kPerCoreLimit
                       ? tr("core %1").arg(k)
                       : (k == 0 ? tr("mean of %1 cores").arg(cores) : tr("busiest core")));
        series_.push_back(g);
    }
    restyle();
}

void CpuUtilPlot::refresh(const results::RunResult& run) {
    if (ticksShown_.size() != run.arms.size() || lastTickMs_.size() != run.arms.size())
        resetRun(run);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& ticks = run.arms[i].metrics;
        for (std::size_t k = ticksShown_[i]; k < ticks.size(); ++k) {
            const auto& util = ticks[k].core_util_pct;
            // A tick right after another covers a window of a jiffy or two: its percentages are
            // 0 or 100 noise, not utilization.
            const bool shortWindow = ticks[k].t_ms - lastTickMs_[i] < kMinWindowMs;
            lastTickMs_[i] = ticks[k].t_ms;
            if (util.empty() || shortWindow) continue;
            ensureSeries(int(util.size()));
            if (int(util.size()) != cores_) continue;
            const double t = ticks[k].t_ms / 1000.0;
            if (cores_ <= kPerCoreLimit) {
                for (int c = 0; c < cores_; ++c)
                    series_[std::size_t(c)]->addData(t, util[std::size_t(c)]);
            } else {
                series_[0]->addData(t, std::accumulate(util.begin(), util.end(), 0.0) / cores_);
                series_[1]->addData(t, *std::max_element(util.begin(), util.end()));
            }
        }
        ticksShown_[i] = ticks.size();
    }
    fitView();
}

void CpuUtilPlot::fitView() {
    if (!followsData()) return;
    fitToData();
    yAxis->setRange(0, 105);
}

}  // namespace pitlane::widgets
