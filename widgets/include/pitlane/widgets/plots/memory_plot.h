#pragma once
// Memory of every arm's worker over time: resident set size (solid) and, when the worker's
// counting allocator reports it, live tensor bytes (dashed).
#include "pitlane/widgets/plots/time_plot.h"

namespace pitlane::widgets {

class MemoryPlot : public TimePlot {
    Q_OBJECT
public:
    explicit MemoryPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;

protected:
    void fitView() override;
    void restyle() override;

private:
    struct ArmSeries {
        QCPGraph* rss = nullptr;
        QCPGraph* tensors = nullptr;
        std::size_t ticksShown = 0;
    };
    std::vector<ArmSeries> arms_;
    QCPGraph* rssKey_ = nullptr;
    QCPGraph* tensorKey_ = nullptr;
};

}  // namespace pitlane::widgets
