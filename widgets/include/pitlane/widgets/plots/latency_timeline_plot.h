#pragma once
// Latency of every iteration in measurement order, one series per arm. Warmup iterations sit at
// negative x in a shaded region; faint vertical lines mark the interleaving blocks (A B A B ...),
// so drift and block-to-block jumps are visible. The latency axis is linear or logarithmic (the
// "log" button or the context menu; remembered in QSettings "plots/latencyLogScale"), so a 0.4 ms
// arm is not flat at 0 beside a 350 ms one. Long series are drawn as their per-pixel-column
// envelope (see Envelope), computed off the UI thread: a run of millions of samples holds a few
// thousand points per arm in the plot, and a replot walks only those.
#include "pitlane/widgets/plots/live_plot.h"

#include <QElapsedTimer>

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

class QThreadPool;
class QTimer;

namespace pitlane::widgets {

class LatencyTimelinePlot : public LivePlot {
    Q_OBJECT
public:
    explicit LatencyTimelinePlot(QWidget* parent = nullptr);
    ~LatencyTimelinePlot() override;  // waits for its envelope job
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;
    int blockBoundaries() const { return int(boundaries_.size()); }
    bool logScale() const { return yAxis->scaleType() == QCPAxis::stLogarithmic; }
    void setLogScale(bool on);
    QToolButton* logScaleButton() const { return logButton_; }

    // What the plot draws of an arm's measured samples: at most a few points per pixel column
    // (M4 decimation: per column the first, lowest, highest and last sample, in iteration
    // order), so a line through them is the line through every sample at that width, every
    // column's extremes exact. A range of at most kRawPerColumn samples per column is drawn
    // sample by sample. Computed off the UI thread (a worker of the plot's own pool, or the
    // history's reader); the plot swaps it in whole.
    static constexpr int kRawPerColumn = 4;
    struct Envelope {
        QSharedPointer<QCPGraphDataContainer> points;  // (iteration, ms), sorted by iteration
        std::size_t samples = 0;  // samples the points stand for: those in [x0, x1]
        double x0 = 0, x1 = 0;    // the range, split in `columns` columns
        int columns = 0;
        bool raw = false;         // every sample in the range, none dropped
        std::uint64_t stamp = 0;  // of the samples it was computed from
        std::size_t size = 0;     // their count
    };
    // The column of iteration x among `columns` columns over [x0, x1] (0 .. columns - 1;
    // outside: the nearest). Non-decreasing in x.
    static int columnOf(double x, double x0, double x1, int columns);
    // Thread-safe: reads the series only. Samples outside [x0, x1] are left out but for the last
    // one before x0 and the first one after x1 (the line runs on to the axis edges).
    static Envelope envelope(const results::SampleSeries& samples, double x0, double x1, int columns);
    // Number of measured samples the arm's drawn points stand for, and the points drawn.
    std::size_t samplesShown(std::size_t arm) const;
    int pointsDrawn(std::size_t arm) const;
    int envelopeColumns(std::size_t arm) const { return arm < arms_.size() ? arms_[arm].shown.columns : 0; }
    int dataPoints() const override;  // warmup + measured samples shown (not points drawn)
    // True while a newer envelope than the one drawn is computed or waits for its turn.
    bool envelopePending() const { return jobRunning_ || jobQueued_; }
    // Draw an envelope of every sample now, computing it on this thread when the one drawn does
    // not cover them all (screenshots, PlotPanel::flush); replots when it changed anything. One
    // that covers them at another resolution (a stored run's prepared one) stays until the
    // envelope for the plot's width comes from the plot's thread.
    void settle();

    // A finished run's envelopes, computed off the UI thread (a reopened long run has millions
    // of samples) over every iteration at kPreparedColumns columns: refresh() draws them when
    // they were computed from the samples the arm holds, then refines to the plot's width.
    static constexpr int kPreparedColumns = 2048;
    struct Prepared {
        std::vector<Envelope> arms;
    };
    // Thread-safe: reads the run, touches no widget.
    static std::shared_ptr<Prepared> prepare(const results::RunResult& run);
    void setPrepared(std::shared_ptr<Prepared> prepared) { prepared_ = std::move(prepared); }

signals:
    // A new envelope is drawn (every arm's), after a computation off the UI thread or settle().
    void envelopeShown();

protected:
    void restyle() override;
    void fitView() override;
    void resizeEvent(QResizeEvent* event) override;
    void addMenuActions(QMenu* menu) override;
    int cornerInUse() const override;

private:
    struct ArmSeries {
        QCPGraph* measured = nullptr;
        QCPGraph* warmup = nullptr;
        std::size_t warmupShown = 0;
        std::size_t runsSeen = 0;  // runs of the series walked for block boundaries
        int lastBlock = -1;
        Envelope shown;  // what `measured` draws
    };
    // What an envelope is asked for now: the range in view (or every iteration while the plot
    // follows the data) at one column per pixel.
    struct Request {
        double x0 = 0, x1 = 0;
        int columns = 0;
    };
    Request request() const;
    // Every arm's envelope for the request is drawn (same samples, range and columns).
    bool upToDate(const Request& r) const;
    // Ask for the envelope of the current samples and view: computed here when it is small
    // (kRawPerColumn samples a column at most), else off the UI thread, one job at a time, and
    // spaced by several times the last job's cost.
    void requestEnvelope();
    void startJob(const Request& r);
    void showEnvelopes(std::vector<Envelope> envelopes);
    void addBoundaries(std::size_t arm, const results::SampleSeries& samples);
    void addBoundary(double x);
    void fitWarmupLabel();

    std::vector<ArmSeries> arms_;
    std::vector<results::SampleSeries> series_;  // the arms' samples as last refreshed (shared)
    QCPItemRect* warmupShade_ = nullptr;
    QCPItemText* warmupLabel_ = nullptr;
    std::set<int> boundaries_;
    std::vector<QCPItemStraightLine*> boundaryLines_;
    std::size_t maxWarmup_ = 0;
    std::shared_ptr<Prepared> prepared_;
    QToolButton* logButton_ = nullptr;
    QThreadPool* pool_ = nullptr;  // one thread: the envelope jobs, one at a time
    QTimer* jobTimer_ = nullptr;   // the next job's turn (cost backoff, view changes)
    QElapsedTimer clock_;
    qint64 nextJobMs_ = 0;
    bool jobRunning_ = false, jobQueued_ = false;
    std::uint64_t generation_ = 0;  // a new run drops the answers of jobs for the previous one
};

}  // namespace pitlane::widgets
