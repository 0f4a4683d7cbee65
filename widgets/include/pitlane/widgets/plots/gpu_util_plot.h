#pragma once
// GPU utilization over time when workers report it (NVML fields "gpu_util_pct" and
// "gpu_mem_used_bytes" in their metrics ticks). Without them the plot says so in words rather
// than drawing zeros that would read as "the GPU was idle".
#include "pitlane/widgets/plots/time_plot.h"

namespace pitlane::widgets {

class GpuUtilPlot : public TimePlot {
    Q_OBJECT
public:
    explicit GpuUtilPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;
    bool hasGpuData() const { return hasData_; }
    QString placeholderText() const { return placeholder_->text(); }

protected:
    void restyle() override;
    void fitView() override;

private:
    std::vector<QCPGraph*> arms_;
    std::vector<std::size_t> ticksShown_;
    QCPItemText* placeholder_ = nullptr;
    bool hasData_ = false;
};

}  // namespace pitlane::widgets
