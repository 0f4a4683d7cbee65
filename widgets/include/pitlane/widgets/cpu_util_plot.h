#pragma once
// Utilization of every CPU core over time (MetricTick::core_util_pct, machine-wide, read by
// whichever workers are alive). Up to kPerCoreLimit cores get a line each; beyond that the mean
// and the busiest core are drawn so the plot stays readable on a 128-core host.
#include "pitlane/widgets/time_plot.h"

namespace pitlane::widgets {

class CpuUtilPlot : public TimePlot {
    Q_OBJECT
public:
    static constexpr int kPerCoreLimit = 16;
    explicit CpuUtilPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;

protected:
    void restyle() override;
    void fitView() override;

private:
    void ensureSeries(int cores);
    QColor coreColor(int k, int n) const;

    std::vector<QCPGraph*> series_;
    int cores_ = 0;
    std::vector<std::size_t> ticksShown_;
    std::vector<double> lastTickMs_;
    static constexpr double kMinWindowMs = 40;
};

}  // namespace pitlane::widgets
