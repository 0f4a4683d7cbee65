#include "pitlane/widgets/plots/plot_panel.h"

#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/plots/batch_size_plot.h"
#include "pitlane/widgets/plots/cpu_util_plot.h"
#include "pitlane/widgets/plots/energy_plot.h"
#include "pitlane/widgets/plots/gpu_util_plot.h"
#include "pitlane/widgets/plots/latency_distribution_plot.h"
#include "pitlane/widgets/plots/latency_timeline_plot.h"
#include "pitlane/widgets/plots/memory_plot.h"
#include "pitlane/widgets/plots/queue_length_plot.h"
#include "pitlane/widgets/plots/serving_latency_plot.h"
#include "pitlane/widgets/plots/throughput_plot.h"

#include <QGridLayout>
#include <QResizeEvent>
#include <QTabBar>
#include <QVBoxLayout>

namespace pitlane::widgets {

using session::ArmPhase;

namespace {
// Plots that recompute from every sample refresh at most this often...
constexpr qint64 kFullRecomputeMs = 250;
// ...and wait this many times their last refresh cost before the next one (<= ~11 % of the UI
// thread even when a refresh gets slow on a million samples).
constexpr qint64 kCostBackoff = 8;
// The plots over wall-clock time refresh at most this often.
constexpr qint64 kTimePlotMs = 100;
// layOut()'s columns are twelfths of the width: four plots a row take three each, three plots
// 5 + 4 + 3.
constexpr int kGridColumns = 12;
}  // namespace

PlotPanel::PlotPanel(QWidget* parent)
    : QWidget(parent),
      timeline_(new LatencyTimelinePlot(this)),
      distribution_(new LatencyDistributionPlot(this)),
      throughput_(new ThroughputPlot(this)),
      memory_(new MemoryPlot(this)),
      cpu_(new CpuUtilPlot(this)),
      gpu_(new GpuUtilPlot(this)),
      servingLatency_(new ServingLatencyPlot(this)),
      batchSizes_(new BatchSizePlot(this)),
      queueLength_(new QueueLengthPlot(this)),
      energy_(new EnergyPlot(this)) {
    byId_ = {timeline_, distribution_,   throughput_, memory_,      cpu_,
             gpu_,      servingLatency_, batchSizes_, queueLength_, energy_};
    const char* names[] = {"latencyPlot",        "distributionPlot", "throughputPlot",
                           "memoryPlot",         "cpuPlot",          "gpuPlot",
                           "servingLatencyPlot", "batchSizePlot",    "queueLengthPlot",
                           "energyPlot"};
    for (int p = 0; p < PlotCount; ++p) byId_[std::size_t(p)]->setObjectName(names[p]);

    // Neither layout forces its minimum on the panel: minimumSizeHint() is one row's, and
    // updatePaging() shows one row when two do not fit.
    auto* outer = new QVBoxLayout(this);
    outer->setSizeConstraint(QLayout::SetNoConstraint);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(0);
    pages_ = new QTabBar(this);
    pages_->setObjectName(QStringLiteral("plotPages"));
    pages_->setDocumentMode(true);
    pages_->setExpanding(false);
    pages_->setDrawBase(false);
    pages_->addTab(QString());
    pages_->addTab(QString());
    pages_->hide();
    connect(pages_, &QTabBar::currentChanged, this, [this](int page) {
        if (page >= 0 && page != page_) showPage(page);
    });
    outer->addWidget(pages_);
    auto* host = new QWidget(this);
    outer->addWidget(host, 1);
    auto* grid = new QGridLayout(host);
    grid->setSizeConstraint(QLayout::SetNoConstraint);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(4);
    grid_ = grid;
    layOut();
    for (int c = 0; c < kGridColumns; ++c) grid->setColumnStretch(c, 1);

    tick_.setInterval(kTickMs);
    connect(&tick_, &QTimer::timeout, this, &PlotPanel::onTick);
    clock_.start();
    linkTimeAxes();
}

void PlotPanel::setServingMode(bool serving) {
    serving_ = serving;
    layOut();
}

void PlotPanel::setServingSnapshot(std::shared_ptr<const ServingSnapshot> snapshot) {
    servingLatency_->setSnapshot(snapshot);
    batchSizes_->setSnapshot(snapshot);
    refreshPlot(ServingLatency, false);
    refreshPlot(BatchSizes, false);
}

void PlotPanel::setGpuAvailable(bool available) {
    if (available == gpuAvailable_) return;  // every worker process says it (a re-layout each)
    gpuAvailable_ = available;
    layOut();
}

// Per-iteration runs: timeline and distribution on top; throughput, memory, CPU, GPU below.
// Serving runs: latency vs rate and the queue on top; the batch sizes, memory, CPU, GPU below.
// On a machine whose workers report no CUDA device the GPU plot would be an empty frame: it
// goes, and the CPU plot takes its column (a serving run gives it to the batch sizes, whose
// labels need the room more than the CPU's). The energy plot, once an arm measured energy, takes
// the right quarter of the upper row: in the lower one, beside the GPU plot five plots would be
// too narrow at 1366x768, and in the GPU plot's place the CPU plot lost half its title to its
// legend. A serving run measures no energy (its levels are not read).
void PlotPanel::layOut() {
    for (auto* w : byId_) {
        grid_->removeWidget(w);
        w->hide();
    }
    rows_ = {};
    auto put = [this](QWidget* w, int row, int column, int span) {
        rows_[std::size_t(row)].push_back(w);
        // Paged: the shown row takes row 0 of the grid, the other row's plots stay hidden.
        if (paged_ && row != page_) return;
        grid_->addWidget(w, paged_ ? 0 : row, column, 1, span);
        w->show();
    };
    const bool energy = energyShown_ && !serving_;
    put(serving_ ? static_cast<QWidget*>(servingLatency_) : timeline_, 0, 0, energy ? 5 : 6);
    put(serving_ ? static_cast<QWidget*>(queueLength_) : distribution_, 0, energy ? 5 : 6, energy ? 4 : 6);
    if (energy) put(energy_, 0, 9, 3);
    if (gpuAvailable_) {
        put(serving_ ? static_cast<QWidget*>(batchSizes_) : throughput_, 1, 0, 3);
        put(memory_, 1, 3, 3);
        put(cpu_, 1, 6, 3);
        put(gpu_, 1, 9, 3);
    } else if (serving_) {
        put(batchSizes_, 1, 0, 6);
        put(memory_, 1, 6, 3);
        put(cpu_, 1, 9, 3);
    } else {
        put(throughput_, 1, 0, 3);
        put(memory_, 1, 3, 3);
        put(cpu_, 1, 6, 6);
    }
    grid_->setRowStretch(0, paged_ ? 1 : 3);
    grid_->setRowStretch(1, paged_ ? 0 : 2);
    pages_->setTabText(0, serving_ ? tr("Latency vs rate · queue") : energy ? tr("Latency · energy") : tr("Latency"));
    pages_->setTabText(1, serving_ ? tr("Batch sizes · memory · CPU%1").arg(gpuAvailable_ ? tr(" · GPU") : QString())
                                   : tr("Throughput · memory · CPU%1").arg(gpuAvailable_ ? tr(" · GPU") : QString()));
    pages_->setVisible(paged_);
    updateGeometry();
    replotShownStale();
}

void PlotPanel::replotShownStale() {
    for (int p = 0; p < PlotCount; ++p)
        if (stale_[std::size_t(p)] && !byId_[std::size_t(p)]->isHidden()) {
            stale_[std::size_t(p)] = false;
            byId_[std::size_t(p)]->replot(QCustomPlot::rpQueuedReplot);
        }
}

void PlotPanel::syncEnergyShown() {
    if (energy_->measured() == energyShown_) return;
    energyShown_ = energy_->measured();
    layOut();
}

int PlotPanel::rowNeed(int row) const {
    int need = kReadablePlotHeight;
    for (QWidget* w : rows_[std::size_t(row)]) need = std::max(need, w->minimumSizeHint().height());
    return need;
}

// One row at a time when two readable rows do not fit: the rows share the height 3:2, so the
// lower one is readable from 2.5 times its need. Switching back needs the tab bar's height more
// than switching over, so a height in between does not flip the layout at every resize.
void PlotPanel::updatePaging() {
    const int spacing = grid_->verticalSpacing();
    const int twoRows = std::max(rowNeed(0) * 5 / 3, rowNeed(1) * 5 / 2) + spacing;
    const int bar = pages_->sizeHint().height();
    const bool paged = paged_ ? height() < twoRows + bar : height() < twoRows;
    if (paged == paged_) return;
    paged_ = paged;
    layOut();
    for (QWidget* w : rows_[std::size_t(paged_ ? page_ : 0)])
        if (auto* plot = qobject_cast<LivePlot*>(w)) plot->replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::showPage(int page) {
    page_ = std::clamp(page, 0, 1);
    if (pages_->currentIndex() != page_) pages_->setCurrentIndex(page_);
    if (!paged_) return;
    layOut();
    for (QWidget* w : rows_[std::size_t(page_)])
        if (auto* plot = qobject_cast<LivePlot*>(w)) plot->replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    updatePaging();
}

// One readable row and the tab bar: the window may give the panel that little (a dock open on
// a short screen); two rows show once it has the room. A row's width is its plots' minimum
// widths as the grid applies them (a plot's set minimum, not QCustomPlot's hint, which grows
// with its tick labels: the first samples widened the panel and relaid the window out).
QSize PlotPanel::minimumSizeHint() const {
    int width = 0;
    for (const auto& row : rows_) {
        int w = 0;
        for (QWidget* p : row)
            w += (p->minimumWidth() > 0 ? p->minimumWidth() : p->minimumSizeHint().width()) +
                 grid_->horizontalSpacing();
        width = std::max(width, w);
    }
    return {width, std::max(rowNeed(0), rowNeed(1)) + pages_->sizeHint().height()};
}

std::vector<LivePlot*> PlotPanel::plots() const {
    return {byId_.begin(), byId_.end()};
}

void PlotPanel::linkTimeAxes() {
    // Memory, CPU and GPU share the run's clock: panning one pans all three.
    const std::vector<LivePlot*> timePlots = {memory_, cpu_, gpu_};
    for (auto* from : timePlots)
        for (auto* to : timePlots)
            if (from != to)
                connect(from->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), to,
                        [from, to](const QCPRange& r) {
                            // The user's pan or zoom; while the plots follow the data,
                            // syncTimeAxes() gives them one range (one replot each).
                            if (from->followsData() || to->xAxis->range() == r) return;
                            to->xAxis->setRange(r);
                            to->replot(QCustomPlot::rpQueuedReplot);
                        });
}

void PlotPanel::attach(const session::ExperimentRunner* runner) {
    runner_ = runner;
    using R = session::ExperimentRunner;
    connect(runner, &R::samplesAppended, this, [this](int, int, int) {
        markDirty({Timeline, Distribution, Throughput});
    });
    connect(runner, &R::warmupAppended, this, [this](int) { markDirty({Timeline}); });
    connect(runner, &R::metricsAppended, this, [this](int) { markDirty({Memory, Cpu, Gpu}); });
    // A serving level's batches (every ~50 ms) and its end: the queue of the level being served.
    // Energy arrives with the measured blocks (each block_done's counters).
    connect(runner, &R::armEvent, this, [this](int, const protocol::Event& event) {
        const bool block = std::holds_alternative<protocol::BlockDone>(event);
        if (block) markDirty({Energy});
        if (serving_ && (std::holds_alternative<protocol::ServeBatches>(event) || block))
            markDirty({QueueLength});
    });
    connect(runner, &R::armPhaseChanged, this,
            [this](int arm, ArmPhase phase) { onPhase(arm, int(phase)); });
}

const results::RunResult* PlotPanel::source() const {
    if (shown_) return shown_.get();
    return runner_ ? &runner_->result() : nullptr;
}

void PlotPanel::beginRun() {
    ++flushGeneration_;
    shown_.reset();
    timeline_->setPrepared(nullptr);
    throughput_->setPrepared(nullptr);
    if (!runner_) return;
    activity_.clear();
    dirty_.fill(false);
    nextAllowedMs_.fill(0);
    setServingMode(runner_->result().preset.serving.enabled);
    for (auto* plot : byId_) {
        plot->resetRun(runner_->result());
        plot->followData();  // a view the user zoomed belonged to the previous run
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
    syncEnergyShown();  // the previous run's energy plot goes until this run measures energy
    tick_.start();
}

struct PreparedRun {
    std::shared_ptr<LatencyTimelinePlot::Prepared> timeline;
    std::shared_ptr<ThroughputPlot::Prepared> throughput;
};

std::shared_ptr<PreparedRun> PlotPanel::prepare(const results::RunResult& run) {
    auto out = std::make_shared<PreparedRun>();
    results::warmArmMemos(run);
    out->timeline = LatencyTimelinePlot::prepare(run);
    out->throughput = ThroughputPlot::prepare(run);
    return out;
}

void PlotPanel::showRun(std::shared_ptr<const results::RunResult> run, std::shared_ptr<PreparedRun> prepared) {
    if (!run) return;
    ++flushGeneration_;
    tick_.stop();
    timeline_->setPrepared(prepared ? prepared->timeline : nullptr);
    throughput_->setPrepared(prepared ? prepared->throughput : nullptr);
    shown_ = std::move(run);
    activity_.clear();
    dirty_.fill(false);
    nextAllowedMs_.fill(0);
    setServingMode(shown_->preset.serving.enabled);
    for (auto* plot : byId_) {
        plot->resetRun(*shown_);
        plot->followData();
    }
    // One plot a turn of the event loop (issue 44: every plot's first replot at once held the
    // window 150-300 ms after reopening 10 M samples); flushed() follows the last. Screenshots
    // and tests that need every plot drawn now call flush() after this.
    flushInSteps();
}

void PlotPanel::markDirty(std::initializer_list<Plot> plots) {
    for (Plot p : plots) dirty_[std::size_t(p)] = true;
}

void PlotPanel::onPhase(int arm, int phase) {
    if (!runner_ || shown_) return;
    const double now = runner_->elapsedMs();
    const auto p = ArmPhase(phase);
    const bool running = p == ArmPhase::WarmingUp || p == ArmPhase::Measuring;
    ArmActivity* open = nullptr;
    for (auto& a : activity_) {
        if (a.endMs >= 0) continue;
        if (a.arm == arm) open = &a;
        // Arms run one at a time (interleaved): one starting means the previous one stopped,
        // even if its phase still says "warming up" until its next block.
        else if (running)
            a.endMs = now;
    }
    if (running && !open) activity_.push_back({arm, now, -1});
    if (!running && open) open->endMs = now;
    markDirty({Memory, Cpu, Gpu});
}

void PlotPanel::refreshPlot(Plot p, bool replotNow) {
    const results::RunResult* run = source();
    if (!run) return;
    QElapsedTimer cost;
    cost.start();
    LivePlot* plot = byId_[std::size_t(p)];
    if (auto* tp = qobject_cast<TimePlot*>(plot))
        tp->setActivity(activity_, runner_ && !shown_ ? runner_->elapsedMs() : 0.0);
    plot->refresh(*run);
    if (p == Energy) syncEnergyShown();
    // The distribution and the timeline's envelope are computed off the UI thread: their
    // answers replot them (settle() at once). A hidden plot is replotted when it is shown.
    if ((p != Distribution && p != Timeline) || replotNow) {
        stale_[std::size_t(p)] = plot->isHidden();
        if (!stale_[std::size_t(p)])
            plot->replot(replotNow ? QCustomPlot::rpImmediateRefresh : QCustomPlot::rpQueuedReplot);
    }
    dirty_[std::size_t(p)] = false;
    const bool fullRecompute = p == Distribution || p == Throughput || p == QueueLength || p == Energy;
    // Memory, CPU and GPU change with every metrics tick of every worker: ten frames a second
    // are plenty for them, and leave the frames between to the other plots.
    const bool timePlot = p == Memory || p == Cpu || p == Gpu;
    // The queued replot happens later: its cost is the one measured by the previous replot.
    const qint64 spent = cost.elapsed() + qint64(plot->replotTime());
    nextAllowedMs_[std::size_t(p)] =
        clock_.elapsed() +
        (fullRecompute ? std::max(kFullRecomputeMs, kCostBackoff * spent)
                       : std::max(timePlot ? kTimePlotMs : 0, kCostBackoff * spent));
    ++refreshes_;
}

void PlotPanel::syncTimeAxes(bool replotNow) {
    // Memory, CPU and GPU show one clock: while all three follow the data they show the union
    // of their time ranges (once the user zooms one, the axis links carry the zoom instead).
    const std::vector<TimePlot*> timePlots = {memory_, cpu_, gpu_};
    QCPRange range;
    bool any = false;
    for (auto* p : timePlots) {
        if (!p->followsData()) return;
        QCPRange r;
        if (!p->timeRange(&r)) continue;
        if (any)
            range.expand(r);
        else
            range = r;
        any = true;
    }
    if (!any || range.size() <= 0) return;
    for (auto* p : timePlots) {
        if (replotNow) {
            p->xAxis->setRange(range);
            if (p->isHidden())
                stale_[std::size_t(p == memory_ ? Memory : p == cpu_ ? Cpu : Gpu)] = true;
            else
                p->replot(QCustomPlot::rpImmediateRefresh);
            continue;
        }
        // Live: one replot a turn. The plot just refreshed replots anyway (queued); each takes
        // the range quietly (no replot through the axis links), the others show it at their
        // own next refresh (their metrics come together).
        if (p->xAxis->range() == range) continue;
        const QSignalBlocker quiet(p->xAxis);
        p->xAxis->setRange(range);
    }
}

void PlotPanel::onTick() {
    // One plot a turn (a tick is one frame): its refresh and replot are all the UI thread does
    // for the plots before the next frame, so a burst of new samples never stacks the replots
    // of six plots into one long stall. The most overdue dirty plot goes first.
    const qint64 now = clock_.elapsed();
    int next = -1;
    for (int p = 0; p < PlotCount; ++p)
        if (dirty_[std::size_t(p)] && now >= nextAllowedMs_[std::size_t(p)] &&
            (next < 0 || nextAllowedMs_[std::size_t(p)] < nextAllowedMs_[std::size_t(next)]))
            next = p;
    if (next >= 0) {
        refreshPlot(Plot(next), false);  // sets the plot's own range (fitView)
        if (next == Memory || next == Cpu || next == Gpu) syncTimeAxes(false);
    }
    if (runner_ && !runner_->isRunning() &&
        std::none_of(dirty_.begin(), dirty_.end(), [](bool d) { return d; }))
        tick_.stop();
}

void PlotPanel::flush() {
    ++flushGeneration_;
    for (int p = 0; p < PlotCount; ++p) refreshPlot(Plot(p), true);
    // What the two plots computed off the UI thread would draw, now (screenshots, a shown run).
    timeline_->settle();
    distribution_->settle();
    syncTimeAxes(true);
}

void PlotPanel::flushInSteps() {
    const int generation = ++flushGeneration_;
    QTimer::singleShot(0, this, [this, generation] {
        if (generation == flushGeneration_) flushStep(0);
    });
}

void PlotPanel::flushStep(int plot) {
    if (plot < PlotCount) {
        refreshPlot(Plot(plot), true);
        const int generation = flushGeneration_;
        QTimer::singleShot(0, this, [this, generation, plot] {
            if (generation == flushGeneration_) flushStep(plot + 1);
        });
        return;
    }
    syncTimeAxes(true);
    // The timeline's envelope and the distribution of every sample come from their own threads:
    // flushed() waits for them.
    const int generation = flushGeneration_;
    const auto again = [this, generation] {
        if (generation == flushGeneration_) flushStep(PlotCount);
    };
    if (timeline_->envelopePending()) {
        connect(timeline_, &LatencyTimelinePlot::envelopeShown, this, again, Qt::SingleShotConnection);
        return;
    }
    if (distribution_->computePending()) {
        connect(distribution_, &LatencyDistributionPlot::computed, this, again, Qt::SingleShotConnection);
        return;
    }
    emit flushed();
}

}  // namespace pitlane::widgets
