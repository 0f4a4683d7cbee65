#pragma once
// Utilization of every CPU core over time (MetricTick::core_util_pct, machine-wide, read by
// whichever workers are alive). Up to kPerCoreLimit cores get a line each; beyond that the mean
// and the busiest core are drawn so the plot stays readable on a 128-core host. The cores are
// drawn in neutral shades; each arm's own worker processes (their CPU time per wall time, in % of
// one core, from MetricTick::cpu_s over the worker's own clock: results/cpu_rates.h) are dots in
// the arm's colour, as in the other plots.
#include "pitlane/results/cpu_rates.h"
#include "pitlane/widgets/plots/time_plot.h"

#include <map>

namespace pitlane::widgets {

class CpuUtilPlot : public TimePlot {
    Q_OBJECT
public:
    static constexpr int kPerCoreLimit = 16;
    explicit CpuUtilPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;
    // Points of arm `arm`'s process-CPU series (tests).
    int processPoints(int arm) const;

protected:
    void restyle() override;
    void fitView() override;

private:
    void ensureSeries(int cores);
    QColor coreColor(int k, int n) const;
    void addProcessCpu(std::size_t arm, const results::MetricTick& tick);

    std::vector<QCPGraph*> series_;
    int cores_ = 0;
    std::vector<std::size_t> ticksShown_;
    // Per arm: each process's (worker, process) last tick, on the worker's clock where it sent it:
    // the worker's core percentages cover the time since its own previous reading.
    std::vector<std::map<std::pair<int, int>, double>> lastTickMs_;
    // Per arm: its process-CPU dots, and its processes' CPU rates (each process's window).
    std::vector<QCPGraph*> armCpu_;
    std::vector<results::CpuRateSeries> cpuRates_;
    QCPGraph *coresKey_ = nullptr, *processesKey_ = nullptr;  // legend keys, no data
    static constexpr double kMinWindowMs = 40;
};

}  // namespace pitlane::widgets
