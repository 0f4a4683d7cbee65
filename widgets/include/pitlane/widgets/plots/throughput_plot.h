#pragma once
// Throughput per arm as bars (samples/s over the measured iterations). When an arm sweeps batch
// sizes the plot switches to throughput (solid, left axis) and median latency (dashed, right
// axis) against batch size, one line per arm.
#include "pitlane/widgets/plots/live_plot.h"

#include <vector>

namespace pitlane::widgets {

class ThroughputPlot : public LivePlot {
    Q_OBJECT
public:
    explicit ThroughputPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;
    bool sweepMode() const { return sweep_; }
    // The bar of an arm (items/s of its workers together; 0 without one).
    double barValue(int arm) const;

protected:
    void restyle() override;
    void fitView() override;

private:
    void refreshBars(const results::RunResult& run);
    void refreshSweep(const results::RunResult& run);

    bool sweep_ = false;
    std::vector<QCPBars*> bars_;
    QStringList armNames_;  // the bars' tick labels in full (elided to fit after each layout)
    std::vector<QCPItemText*> barLabels_;
    std::vector<QCPGraph*> throughputLines_, latencyLines_;
    std::vector<std::size_t> samplesSeen_;
    // Per arm, per worker: samples at the arm's batch size and their summed latency, kept up to
    // date with each refresh from the new samples only (the bar is the arm's aggregate
    // throughput, results::aggregateThroughput, without re-reading every sample).
    struct Totals {
        std::size_t upTo = 0;
        std::vector<std::pair<std::size_t, double>> perWorker;  // (n, sum of ns)
    };
    std::vector<Totals> totals_;
};

}  // namespace pitlane::widgets
