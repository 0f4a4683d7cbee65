#pragma once
// Latency distribution per arm: a histogram (share of the arm's samples per bin, common bins so
// arms compare) and the empirical CDF on the right axis, with each arm's median (solid) and p99
// (dashed) marked. Below it, on the same latency axis, a strip with one row per arm: a tick at the
// arm's median and one dot per worker process (its median, results::processSummaries), so
// processes that disagree show as dots apart, a bimodal arm as two clusters. Hovering a dot
// tells which process it is (pid, n, median, page faults). Recomputed from all samples: the
// panel refreshes it at a lower rate, and the computation (sorting the new samples into those
// sorted so far, the bins, the CDF, the process medians) runs off the UI thread, one at a time;
// the UI thread only swaps in the few hundred points it gives.
// Reads nothing but the RunResult: a live run and one reopened from the history look the same.
#include "pitlane/widgets/plots/live_plot.h"

#include <QElapsedTimer>

#include <cstdint>
#include <memory>
#include <vector>

class QThreadPool;

namespace pitlane::widgets {

class LatencyDistributionPlot : public LivePlot {
    Q_OBJECT
public:
    explicit LatencyDistributionPlot(QWidget* parent = nullptr);
    ~LatencyDistributionPlot() override;  // waits for its computation
    void resetRun(const results::RunResult& run) override;
    // Asks for the distribution of the samples the run holds now: computed off the UI thread,
    // drawn (and replotted) when it comes; computed() then.
    void refresh(const results::RunResult& run) override;
    // True while a computation newer than the one drawn runs or waits for its turn.
    bool computePending() const { return jobRunning_ || jobQueued_; }
    // Draw now what the last refresh asked for, computing it on this thread when it is not drawn
    // yet (screenshots, PlotPanel::flush); replots when it changed anything.
    void settle();

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

    struct Dot {
        results::ProcessSummary process;
        double y = 0;  // row of the arm, nudged so that dots of close medians do not hide
    };
    // What one computation reads: per arm a copy of its name, batch size, samples (sharing the
    // chunks), processes and memos; and whether the process medians are due.
    struct Input {
        std::vector<results::ArmResult> arms;
        bool dots = false;
    };
    // Kept from one computation to the next, by one computation at a time: per arm the
    // latencies (ns) at its batch size, sorted, from samples [0, upTo) (each computation sorts
    // only the new samples and merges them in: a full sort of 200 000 samples per arm took
    // ~30 ms), or a stored run's, sorted with its summary (results::memoizedSortedLatencies).
    struct Sorted {
        struct Arm {
            std::vector<double> ns;
            std::size_t upTo = 0;
            std::shared_ptr<const std::vector<double>> shared;
        };
        std::vector<Arm> arms;
    };
    // What the plot draws, from every sample of the input: per arm the histogram over common
    // bins, the CDF, median and p99; the process dots when they were due.
    struct Model {
        struct Arm {
            QVector<double> binKeys, binValues, cdfKeys, cdfValues;
            double medianMs = 0, p99Ms = 0;
            bool any = false;
        };
        std::vector<Arm> arms;
        bool any = false;  // some arm has samples
        bool logScale = false;
        QCPRange view;     // the bins' span and a bin either side
        bool dots = false;  // the fields below were computed
        struct ArmDots {
            std::vector<Dot> dots;
            int replicates = 0, workers = 1;  // over every process of the arm, measured or not
        };
        std::vector<ArmDots> armDots;
        bool anyProcess = false, manyProcesses = false;
        double dotLo = 0, dotHi = 0;  // the medians' span (lo > hi: none)
    };
    // Thread-safe (reads the input, writes `sorted`): the same figures on any thread.
    static Model compute(const Input& in, Sorted& sorted);

signals:
    // A computation's answer is drawn (after refresh() or settle()).
    void computed();

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
        std::size_t samplesSeen = 0;  // asked for (refresh)
        std::int64_t faultItersSeen = -1;
        std::size_t processesSeen = 0;
    };
    void startJob();
    void show(Model m);
    // One arm's histogram, CDF and median / p99 marks.
    void showArm(std::size_t arm, const Model::Arm& m);
    std::vector<ArmSeries> arms_;
    QCPAxisRect* strip_ = nullptr;
    QCPMarginGroup* margins_ = nullptr;
    bool stripShown_ = false;
    bool plannedProcesses_ = false;  // the preset asks for more than one process per arm
    bool reserveStrip_ = false;      // ...and the run is under way: the strip shows from its start
    // The process dots: when they were computed, from how many samples, their latency span.
    QElapsedTimer dotsClock_;
    std::size_t dotsSamples_ = std::size_t(-1);
    double dotLo_ = 0, dotHi_ = 0;
    // The computations: one thread, one at a time; the newest input waits for its turn.
    QThreadPool* pool_ = nullptr;
    std::shared_ptr<Sorted> sorted_;  // touched by the running computation only (or settle())
    Input next_;     // the newest input not handed to a computation yet
    Input current_;  // the running computation's
    bool jobRunning_ = false, jobQueued_ = false;
    std::uint64_t ticket_ = 0;        // answers of other tickets (a new run, settle) are dropped
};

}  // namespace pitlane::widgets
