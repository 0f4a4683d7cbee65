#pragma once
// Every live plot of a run, side by side, fed from one ExperimentRunner, or showing a finished
// run (one reopened from the history, a comparison of arms of two runs). Runner signals only set
// dirty flags; a timer of one frame (16 ms) refreshes and replots one plot that changed a tick
// (queued replots), so a stream of thousands of samples per second costs at most one plot's
// refresh and replot between two frames. Plots that recompute
// from all samples (distribution, throughput) refresh less often, and back off further when a
// refresh gets expensive, so the window stays responsive on huge runs.
// A serving run (issue 13) has no per-iteration samples: the latency timeline, distribution and
// throughput give way to latency vs offered rate, the queue length and the batch sizes; memory,
// CPU and GPU stay.
// Energy per inference (issue 46) shows once an arm of the shown run measured energy, in the
// upper row beside the distribution (the lower one has no room for it at 1366x768).
#include "pitlane/widgets/results/serving_snapshot.h"
#include "pitlane/widgets/plots/time_plot.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QGridLayout;
class QTabBar;

#include <array>
#include <memory>
#include <vector>

namespace pitlane::session {
class ExperimentRunner;
}

namespace pitlane::widgets {

class LatencyTimelinePlot;
class LatencyDistributionPlot;
class ThroughputPlot;
class MemoryPlot;
class CpuUtilPlot;
class GpuUtilPlot;
class ServingLatencyPlot;
class BatchSizePlot;
class QueueLengthPlot;
class EnergyPlot;

struct PreparedRun;  // plot_panel.cpp

class PlotPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr int kTickMs = 16;  // one frame; one plot refreshed a tick
    explicit PlotPanel(QWidget* parent = nullptr);

    // Follow this runner's signals (once; the runner outlives runs).
    void attach(const session::ExperimentRunner* runner);
    // A run was just started on the attached runner: the plots follow it again.
    void beginRun();
    // Show a finished run instead of the runner's: every plot is rebuilt from it, one plot a turn
    // of the event loop (flushInSteps; flushed() follows; flush() draws the rest at once). Which
    // arm was running when is not stored, so the time plots have no activity bands. Shared, not
    // copied: a stored run can hold millions of samples.
    // `prepared`: what the plots compute from every sample, computed beforehand by prepare().
    void showRun(std::shared_ptr<const results::RunResult> run, std::shared_ptr<PreparedRun> prepared = {});
    // What showRun() would compute from every sample of a finished run, computed on the calling
    // thread instead (the history's reader thread: a reopened run of millions of samples does not
    // hold the window): each arm's sorted latencies, summary, process medians and variance
    // shares (results::warmArmMemos, memoized in the run itself) and the timeline's series.
    // Thread-safe: reads the run, touches no widget.
    static std::shared_ptr<PreparedRun> prepare(const results::RunResult& run);
    // True while a finished run given to showRun() is shown (until the next beginRun()).
    bool showsStoredRun() const { return static_cast<bool>(shown_); }
    // Refresh every plot from the current result and repaint now (screenshots).
    void flush();
    // The same, one plot per event-loop turn (the end of a run): the window answers between two
    // plots instead of waiting for all of them. flushed() follows the last.
    void flushInSteps();
    // False once the workers report no CUDA device: the GPU plot is hidden (the CPU plot takes
    // its place) instead of an empty frame.
    void setGpuAvailable(bool available);
    // The serving figures computed off the UI thread (VerdictCalculator::servingReady): the
    // latency and batch-size plots redraw from them at once (a few points per arm).
    void setServingSnapshot(std::shared_ptr<const ServingSnapshot> snapshot);
    bool servingMode() const { return serving_; }

    LatencyTimelinePlot* timeline() const { return timeline_; }
    LatencyDistributionPlot* distribution() const { return distribution_; }
    ThroughputPlot* throughput() const { return throughput_; }
    MemoryPlot* memory() const { return memory_; }
    CpuUtilPlot* cpu() const { return cpu_; }
    GpuUtilPlot* gpu() const { return gpu_; }
    ServingLatencyPlot* servingLatency() const { return servingLatency_; }
    BatchSizePlot* batchSizes() const { return batchSizes_; }
    QueueLengthPlot* queueLength() const { return queueLength_; }
    EnergyPlot* energy() const { return energy_; }
    // Every plot, shown or not (the serving plots are hidden unless the run serves).
    std::vector<LivePlot*> plots() const;
    int refreshCount() const { return refreshes_; }

    // Readable at any height (issue 44: with a dock open at 1366x768 the lower row was 60-120 px
    // high, its titles and ticks piled up). Below the height two rows of readable plots need, the
    // panel shows one row at a time, a tab bar above it to switch ("Latency" / "Throughput ·
    // memory · CPU"); its minimum is one row's. kReadablePlotHeight: a plot's least readable
    // height (title, axis labels, three ticks).
    static constexpr int kReadablePlotHeight = 140;
    bool paged() const { return paged_; }
    QTabBar* pageBar() const { return pages_; }
    // The row shown when paged (0: the latency plots, 1: the others); kept while not paged.
    void showPage(int page);
    QSize minimumSizeHint() const override;

signals:
    void flushed();

private:
    enum Plot {
        Timeline,
        Distribution,
        Throughput,
        Memory,
        Cpu,
        Gpu,
        ServingLatency,
        BatchSizes,
        QueueLength,
        Energy,
        PlotCount
    };
    void markDirty(std::initializer_list<Plot> plots);
    void flushStep(int plot);
    void onPhase(int arm, int phase);
    void onTick();
    void refreshPlot(Plot p, bool replotNow);
    void linkTimeAxes();
    void setServingMode(bool serving);
    void layOut();
    void syncEnergyShown();  // the energy plot shown exactly when it has a bar (layOut() if that changed)
    void updatePaging();
    int rowNeed(int row) const;  // the height a readable row takes (its plots' minimum, at least kReadablePlotHeight)
    void resizeEvent(QResizeEvent* event) override;
    void syncTimeAxes(bool replotNow);
    // The run the plots show: the one given to showRun(), else the runner's live one.
    const results::RunResult* source() const;

    QPointer<const session::ExperimentRunner> runner_;
    std::shared_ptr<const results::RunResult> shown_;
    LatencyTimelinePlot* timeline_;
    LatencyDistributionPlot* distribution_;
    ThroughputPlot* throughput_;
    MemoryPlot* memory_;
    CpuUtilPlot* cpu_;
    GpuUtilPlot* gpu_;
    ServingLatencyPlot* servingLatency_;
    BatchSizePlot* batchSizes_;
    QueueLengthPlot* queueLength_;
    EnergyPlot* energy_;
    QGridLayout* grid_ = nullptr;
    QTabBar* pages_ = nullptr;
    bool paged_ = false;
    int page_ = 0;
    std::array<std::vector<QWidget*>, 2> rows_;  // what layOut() put in each row
    bool serving_ = false;
    bool gpuAvailable_ = true;
    bool energyShown_ = false;
    std::array<LivePlot*, PlotCount> byId_{};
    std::array<bool, PlotCount> dirty_{};
    // Refreshed while hidden (out of the layout, or on the other page), not replotted: a replot
    // draws every layer into the plot's buffers, shown or not. Replotted once it is shown.
    std::array<bool, PlotCount> stale_{};
    void replotShownStale();
    std::array<qint64, PlotCount> nextAllowedMs_{};
    std::vector<ArmActivity> activity_;
    QTimer tick_;
    QElapsedTimer clock_;
    int refreshes_ = 0;
    int flushGeneration_ = 0;  // a newer flush or run drops the steps of an older one
};

}  // namespace pitlane::widgets
