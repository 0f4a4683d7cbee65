#pragma once
// Latency distribution per arm: a histogram (share of the arm's samples per bin, common bins so
// arms compare) and the empirical CDF on the right axis, with each arm's median (solid) and p99
// (dashed) marked. Recomputed from all samples, so the panel refreshes it at a lower rate.
#include "pitlane/widgets/live_plot.h"

#include <vector>

namespace pitlane::widgets {

class LatencyDistributionPlot : public LivePlot {
    Q_OBJECT
public:
    explicit LatencyDistributionPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;

    bool logScale() const { return xAxis->scaleType() == QCPAxis::stLogarithmic; }

protected:
    void fitView() override;

private:
    void setLogScale(bool on);
    QCPRange xView_{0, 0};
    struct ArmSeries {
        QCPGraph* histogram = nullptr;
        QCPGraph* cdf = nullptr;
        QCPItemStraightLine* median = nullptr;
        QCPItemStraightLine* p99 = nullptr;
        std::size_t samplesSeen = 0;
    };
    std::vector<ArmSeries> arms_;
};

}  // namespace pitlane::widgets
