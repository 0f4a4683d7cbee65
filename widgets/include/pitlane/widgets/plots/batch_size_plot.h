#pragma once
// A serving run's batch sizes (issue 13): for one level, the share of each arm's batches that had
// 1, 2, … max_batch requests (every process pooled), bars side by side per size. The level is
// the highest one every arm has completed (live: it moves up as levels complete), or the one
// chosen in the right-click menu. Drawn from the ServingSnapshot; refresh() computes nothing.
#include "pitlane/widgets/plots/live_plot.h"
#include "pitlane/widgets/results/serving_snapshot.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace pitlane::widgets {

class BatchSizePlot : public LivePlot {
    Q_OBJECT
public:
    explicit BatchSizePlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;
    void setSnapshot(std::shared_ptr<const ServingSnapshot> snapshot);

    // A level by its (clients, rate); none: the highest level every arm completed.
    using LevelKey = std::pair<int, double>;
    void selectLevel(std::optional<LevelKey> level);
    std::optional<LevelKey> shownLevel() const { return shown_; }
    QCPBars* bars(int arm) const;

protected:
    void restyle() override;
    void fitView() override;
    void addMenuActions(QMenu* menu) override;

private:
    void draw();

    std::shared_ptr<const ServingSnapshot> snapshot_, drawn_;
    std::vector<QCPBars*> bars_;
    std::optional<LevelKey> selected_, shown_;
    QCPItemText* empty_ = nullptr;
    int maxSize_ = 1;
    QString hint_;  // LivePlot's tooltip (drag, wheel, double-click)
};

}  // namespace pitlane::widgets
