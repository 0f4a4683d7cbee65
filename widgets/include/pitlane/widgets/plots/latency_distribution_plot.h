#pragma once
// Latency distribution per arm: a histogram (share of the arm's samples per bin, common bins so
// arms compare) and the empirical CDF on the right axis, with each arm's median (solid) and p99
// (dashed) marked. Below it, on the same latency axis, a strip with one row per arm: a tick at the
// arm's median and one dot per worker process (its median, results::processSummaries), so
// processes that disagree show as dots apart, a bimodal arm as two clusters. Hovering a dot
// tells which process it is (pid, n, median, page faults). Recomputed from all samples, so the
// panel refreshes it at a lower rate.
// Reads nothing but the RunResult: a live run and one reopened from the history look the same.
#include "pitlane/widgets/plots/live_plot.h"

#include <QElapsedTimer>

#include <memory>
#include <vector>

namespace pitlane::widgets {

class LatencyDistributionPlot : public LivePlot {
    Q_OBJECT
public:
    explicit LatencyDistributionPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;

    bool logScale() const { return xAxis->scaleType() == QCPAxis::stLogarithmic; }

    // The per-process strip: shown once an arm has worker processes recorded and the run has
    // (or plans) more than one per arm.
    bool processStripShown() const { return stripShown_; }
    QCPAxisRect* processStrip() const { return strip_; }
    // Dots drawn for an arm (processes with samples at the arm's first batch size), their
    // medians in ns, where dot i is drawn (widget pixels, after a replot), and the tooltip at a
    // widget point ("" when no dot is within a few pixels).
    int processDots(int arm) const;
    std::vector<double> processMedians(int arm) const;
    QPointF processDotPosition(int arm, int i) const;
    QString processToolTip(const QPoint& pos) const;

    // The common bins of a refresh: `count` bins from `from` (log2 of ms, or ms) `width()` wide.
    struct Bins {
        double from = 0, to = 0;
        int count = 1;
        bool log = false;
        double width() const { return (to - from) / count; }
        // The bin of a latency (ns); below the first or beyond the last: that bin.
        int of(double ns) const;
    };
    // How many of the sorted latencies (ns) fall in each bin: the counts of `of` sample by
    // sample, found by bisection (of is non-decreasing): a few hundred logarithms, not one per
    // sample.
    static std::vector<std::size_t> binCounts(const std::vector<double>& sortedNs, const Bins& bins);

protected:
    void fitView() override;
    void restyle() override;
    bool event(QEvent* event) override;

private:
    void setLogScale(bool on);
    void setStripShown(bool on);
    void updateAxisLabels();
    void fitStrip();
    QCPRange xView_{0, 0};
    struct Dot {
        results::ProcessSummary process;
        double y = 0;  // row of the arm, nudged so that dots of close medians do not hide
    };
    struct ArmSeries {
        QCPGraph* histogram = nullptr;
        QCPGraph* cdf = nullptr;
        QCPItemStraightLine* median = nullptr;
        QCPItemStraightLine* p99 = nullptr;
        QCPGraph* dots = nullptr;  // in the strip
        QCPItemLine* stripMedian = nullptr;
        std::vector<Dot> dotInfo;
        std::string name;
        int replicates = 0, workers = 1;  // over every process of the arm, measured or not
        std::size_t samplesSeen = 0;
        // Latencies (ns) at the arm's batch size, sorted, from samples [0, sortedUpTo): each
        // refresh sorts only the new samples and merges them in (a full sort of 200 000
        // samples per arm held the UI thread ~30 ms per refresh). A stored run's come sorted
        // (results::memoizedSortedLatencies), shared with its summary.
        std::vector<double> sortedNs;
        std::size_t sortedUpTo = 0;
        std::shared_ptr<const std::vector<double>> sortedShared;
        std::int64_t faultItersSeen = -1;
        std::size_t processesSeen = 0;
    };
    const std::vector<double>& sortedLatencies(std::size_t arm, const results::ArmResult& a);
    void showProcessDots(const results::RunResult& run, double& dotLo, double& dotHi);
    // One arm's histogram, CDF and median / p99 marks from its sorted latencies (ns).
    void showArm(std::size_t arm, const std::vector<double>& sortedNs, const Bins& grid);
    std::vector<ArmSeries> arms_;
    QCPAxisRect* strip_ = nullptr;
    QCPMarginGroup* margins_ = nullptr;
    bool stripShown_ = false;
    bool plannedProcesses_ = false;  // the preset asks for more than one process per arm
    // The process dots: when they were computed, from how many samples, their latency span.
    QElapsedTimer dotsClock_;
    std::size_t dotsSamples_ = std::size_t(-1);
    double dotLo_ = 0, dotHi_ = 0;
};

}  // namespace pitlane::widgets
