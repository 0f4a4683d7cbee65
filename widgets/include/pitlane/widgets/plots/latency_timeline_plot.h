#pragma once
// Latency of every iteration in measurement order, one series per arm. Warmup iterations sit at
// negative x in a shaded region; faint vertical lines mark the interleaving blocks (A B A B ...),
// so drift and block-to-block jumps are visible. The latency axis is linear or logarithmic (the
// "log" button or the context menu; remembered in QSettings "plots/latencyLogScale"), so a 0.4 ms
// arm is not flat at 0 beside a 350 ms one.
#include "pitlane/widgets/plots/live_plot.h"

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

namespace pitlane::widgets {

class LatencyTimelinePlot : public LivePlot {
    Q_OBJECT
public:
    explicit LatencyTimelinePlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;
    int blockBoundaries() const { return int(boundaries_.size()); }
    bool logScale() const { return yAxis->scaleType() == QCPAxis::stLogarithmic; }
    void setLogScale(bool on);
    QToolButton* logScaleButton() const { return logButton_; }

    // A finished run's measured series, built off the UI thread (a reopened long run has
    // millions of points): refresh() takes an arm's container as it is when it was prepared
    // from the samples the arm holds, instead of building it.
    struct Prepared {
        struct Arm {
            QSharedPointer<QCPGraphDataContainer> measured;
            std::vector<double> boundaries;  // x of each block change
            std::uint64_t stamp = 0;         // of the samples it was built from
            std::size_t shown = 0;
            int lastBlock = -1;
        };
        std::vector<Arm> arms;
    };
    // Thread-safe: reads the run, touches no widget.
    static std::shared_ptr<Prepared> prepare(const results::RunResult& run);
    void setPrepared(std::shared_ptr<Prepared> prepared) { prepared_ = std::move(prepared); }

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
        std::size_t measuredShown = 0, warmupShown = 0;
        int lastBlock = -1;
    };
    void addBoundary(double x);
    // The arm's measured samples it does not show yet (or its prepared series).
    void showMeasured(std::size_t arm, const results::ArmResult& samples);
    void fitWarmupLabel();

    std::vector<ArmSeries> arms_;
    QCPItemRect* warmupShade_ = nullptr;
    QCPItemText* warmupLabel_ = nullptr;
    std::set<int> boundaries_;
    std::vector<QCPItemStraightLine*> boundaryLines_;
    std::size_t maxWarmup_ = 0;
    std::shared_ptr<Prepared> prepared_;
    QToolButton* logButton_ = nullptr;
};

}  // namespace pitlane::widgets
