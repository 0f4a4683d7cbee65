#pragma once
// A serving run's queue (issue 13): requests arrived and not yet dispatched, over the time of the
// level each arm is serving (or served last), from that level's start, every arm on the same
// time axis (serving::queueLengthSeries; an arm's workers summed). While a level runs, its tail
// grows as its batches arrive (serve_batches every 50 ms): requests still queued and not in any
// batch yet are not known. A stable queue stays near max_batch; a saturated one climbs.
#include "pitlane/widgets/plots/live_plot.h"

#include <vector>

namespace pitlane::widgets {

class QueueLengthPlot : public LivePlot {
    Q_OBJECT
public:
    explicit QueueLengthPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;
    QCPGraph* graph(int arm) const;

protected:
    void restyle() override;
    void fitView() override;

private:
    struct Seen {
        std::size_t level = std::size_t(-1);  // index in ArmResult::serving of the level shown
        std::size_t batches = 0, arrivals = 0;
    };
    std::vector<QCPGraph*> graphs_;
    std::vector<Seen> seen_;
    QCPItemText* empty_ = nullptr;
};

}  // namespace pitlane::widgets
