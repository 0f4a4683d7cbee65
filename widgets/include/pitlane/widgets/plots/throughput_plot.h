#pragma once
// Throughput per arm as bars (samples/s over the measured iterations). When an arm sweeps batch
// sizes the plot switches to throughput (solid, left axis) and median latency (dashed, right
// axis) against batch size, one line per arm.
#include "pitlane/widgets/plots/live_plot.h"

#include <cstdint>
#include <memory>
#include <vector>

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

    // Per arm, per worker: samples at the arm's batch size and their summed latency, kept up to
    // date with each refresh from the new samples only (the bar is the arm's aggregate
    // throughput, results::aggregateThroughput, without re-reading every sample).
    struct Totals {
        std::size_t upTo = 0;
        std::uint64_t stamp = 0;  // of the samples [0, upTo) were summed from
        std::vector<std::pair<std::size_t, double>> perWorker;  // (n, sum of ns)
    };
    // A stored run's totals, summed off the UI thread (the history's reader: 10 M samples take
    // tens of ms); refresh() takes an arm's when they were summed from the samples it holds.
    // Thread-safe: reads the run only.
    using Prepared = std::vector<Totals>;
    static std::shared_ptr<Prepared> prepare(const results::RunResult& run);
    void setPrepared(std::shared_ptr<Prepared> prepared) { prepared_ = std::move(prepared); }

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
    // Adds the arm's samples from t.upTo on.
    static void accumulate(const results::ArmResult& arm, Totals& t);
    std::vector<Totals> totals_;
    std::shared_ptr<Prepared> prepared_;
};

}  // namespace pitlane::widgets
