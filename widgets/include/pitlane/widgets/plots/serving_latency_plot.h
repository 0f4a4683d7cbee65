#pragma once
// A serving run's hockey stick (issue 13): end-to-end latency p99 (solid) and p50 (dashed) against
// the offered rate (or the clients of a closed loop), one colour per arm, on a log latency axis
// (a saturated level's queueing delay is orders of magnitude above the rest). The SLO is a
// horizontal line; saturated points carry a cross. Drawn from the ServingSnapshot the verdict's
// thread computes: refresh() itself computes nothing.
#include "pitlane/widgets/plots/live_plot.h"
#include "pitlane/widgets/results/serving_snapshot.h"

#include <memory>
#include <set>
#include <vector>

namespace pitlane::widgets {

class ServingLatencyPlot : public LivePlot {
    Q_OBJECT
public:
    explicit ServingLatencyPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;
    void setSnapshot(std::shared_ptr<const ServingSnapshot> snapshot);

    QCPGraph* p99Graph(int arm) const;
    QCPGraph* p50Graph(int arm) const;
    QCPGraph* saturatedGraph() const { return saturated_; }
    QCPItemStraightLine* sloLine() const { return sloLine_; }

protected:
    void restyle() override;
    void fitView() override;

private:
    // The rates labelled on the log rate axis: those measured, less any whose label would run
    // into the one before it at this width (the SLO search's 3200 beside 4800 at 1366 px).
    void thinRateTicks();
    std::shared_ptr<const ServingSnapshot> snapshot_, drawn_;
    std::vector<QCPGraph*> p99_, p50_;
    QCPGraph* saturated_ = nullptr;
    QCPItemStraightLine* sloLine_ = nullptr;
    QCPItemText* sloLabel_ = nullptr;
    QCPItemText* empty_ = nullptr;  // "no level complete yet"
    double slo_ = 0;
    std::set<double> xTicks_;  // the log rate axis's labels: the rates measured
};

}  // namespace pitlane::widgets
