#pragma once
// Latency of every iteration in measurement order, one series per arm. Warmup iterations sit at
// negative x in a shaded region; faint vertical lines mark the interleaving blocks (A B A B ...),
// so drift and block-to-block jumps are visible.
#include "pitlane/widgets/live_plot.h"

#include <set>
#include <vector>

namespace pitlane::widgets {

class LatencyTimelinePlot : public LivePlot {
    Q_OBJECT
public:
    explicit LatencyTimelinePlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;
    int blockBoundaries() const { return int(boundaries_.size()); }

protected:
    void restyle() override;
    void fitView() override;

private:
    struct ArmSeries {
        QCPGraph* measured = nullptr;
        QCPGraph* warmup = nullptr;
        std::size_t measuredShown = 0, warmupShown = 0;
        int lastBlock = -1;
    };
    void addBoundary(double x);
    void fitWarmupLabel();

    std::vector<ArmSeries> arms_;
    QCPItemRect* warmupShade_ = nullptr;
    QCPItemText* warmupLabel_ = nullptr;
    std::set<int> boundaries_;
    std::vector<QCPItemStraightLine*> boundaryLines_;
    std::size_t maxWarmup_ = 0;
};

}  // namespace pitlane::widgets
