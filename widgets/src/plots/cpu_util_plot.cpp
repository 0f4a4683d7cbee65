#include "pitlane/widgets/plots/cpu_util_plot.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <algorithm>
#include <numeric>

namespace pitlane::widgets {

CpuUtilPlot::CpuUtilPlot(QWidget* parent) : TimePlot(tr("CPU per core"), parent) {
    // A process's dot can pass 100 (350 = three and a half cores busy): the legend's key says
    // so, and the tooltip (issue 27: an axis to 350 % with no word of why).
    yAxis->setLabel(tr("busy %"));
    setToolTip(toolTip() +
               tr("\nLines: each core of the machine (busy %). Dots: each arm's worker processes, "
                  "CPU time per wall time in % of one core, so a process on several cores goes "
                  "above 100 (idle processes not drawn)."));
    placeLegendInTitleRow();
    restyle();
}

int CpuUtilPlot::processPoints(int arm) const {
    return arm >= 0 && std::size_t(arm) < armCpu_.size() ? armCpu_[std::size_t(arm)]->dataCount()
                                                         : 0;
}

// Cores are not arms: neutral shades of the text colour keep the arm hues for the arms.
QColor CpuUtilPlot::coreColor(int k, int n) const {
    QColor c = textColor();
    c.setAlphaF(float(0.9 - 0.55 * (n > 1 ? double(k) / (n - 1) : 0.0)));
    return c;
}

void CpuUtilPlot::restyle() {
    TimePlot::restyle();
    if (coresKey_) coresKey_->setPen(QPen(coreColor(0, 1), 1.2));
    if (processesKey_)
        processesKey_->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssDisc, coreColor(0, 1), 4));
    for (std::size_t k = 0; k < series_.size(); ++k)
        series_[k]->setPen(QPen(coreColor(int(k), int(series_.size())),
                                k == 0 && cores_ > kPerCoreLimit ? 2 : 1.2));
}

void CpuUtilPlot::resetRun(const results::RunResult& run) {
    TimePlot::resetRun(run);
    series_.clear();
    cores_ = 0;
    ticksShown_.assign(run.arms.size(), 0);
    lastTickMs_.assign(run.arms.size(), {});
    cpuRates_.assign(run.arms.size(), {});
    // The legend names what the line styles mean; the colours say which arm.
    coresKey_ = addGraph();
    coresKey_->setName(tr("cores"));
    processesKey_ = addGraph();
    processesKey_->setName(tr("processes (100 = one core)"));
    processesKey_->setLineStyle(QCPGraph::lsNone);
    for (auto* key : {coresKey_, processesKey_}) key->setProperty("pitlaneDecoration", true);
    armCpu_.clear();
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        auto* g = addGraph();
        g->setName(tr("%1 process").arg(QString::fromStdString(run.arms[i].name)));
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, armColor(int(i)), 4));
        g->setPen(QPen(armColor(int(i)), 1));
        g->removeFromLegend();  // the colours say which arm, as in the other plots
        armCpu_.push_back(g);
    }
    restyle();
}

void CpuUtilPlot::addProcessCpu(std::size_t arm, const results::MetricTick& tick) {
    // cpu_s is cumulative per process: the rate between two ticks of the same process, over the
    // worker's own clock (results/cpu_rates.h).
    const auto rate = cpuRates_[arm].add(tick);
    if (rate && rate->pct >= 1.0) armCpu_[arm]->addData(rate->t_ms / 1000.0, rate->pct);  // idle processes wait
}

void CpuUtilPlot::ensureSeries(int cores) {
    if (cores == cores_ || cores <= 0) return;
    for (auto* g : series_) removeGraph(g);
    series_.clear();
    cores_ = cores;
    const int n = cores <= kPerCoreLimit ? cores : 2;
    // Short: the title shares its row with the legend, and a longer one was cut at 1366x768.
    setTitle(cores <= kPerCoreLimit ? (cores == 1 ? tr("CPU · 1 core") : tr("CPU · %1 cores").arg(cores))
                                    : tr("CPU · %1 cores: mean, busiest").arg(cores));
    for (int k = 0; k < n; ++k) {
        auto* g = addGraph();
        g->setName(cores <= kPerCoreLimit
                       ? tr("core %1").arg(k)
                       : (k == 0 ? tr("mean of %1 cores").arg(cores) : tr("busiest core")));
        g->removeFromLegend();
        g->setLayer(QStringLiteral("background"));  // under the arms' dots
        series_.push_back(g);
    }
    restyle();
}

void CpuUtilPlot::refresh(const results::RunResult& run) {
    if (ticksShown_.size() != run.arms.size() || armCpu_.size() != run.arms.size()) resetRun(run);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& ticks = run.arms[i].metrics;
        for (std::size_t k = ticksShown_[i]; k < ticks.size(); ++k) {
            addProcessCpu(i, ticks[k]);
            const auto& util = ticks[k].core_util_pct;
            // A tick right after another covers a window of a jiffy or two: its percentages are
            // 0 or 100 noise, not utilization.
            const double ms = ticks[k].sampled_ms >= 0 ? ticks[k].sampled_ms : ticks[k].t_ms;
            const auto [last, first] =
                lastTickMs_[i].try_emplace({ticks[k].worker, ticks[k].process}, ms);
            const bool shortWindow = !first && ms - last->second < kMinWindowMs;
            last->second = ms;
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
    // Busy cores top out at 100 %; a process with several threads can pass it (% of one core).
    double top = 100;
    for (auto* g : armCpu_) {
        bool ok = false;
        const QCPRange r = g->getValueRange(ok);
        if (ok) top = std::max(top, r.upper);
    }
    yAxis->setRange(0, top * 1.05);
}

}  // namespace pitlane::widgets
