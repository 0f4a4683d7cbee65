#pragma once
// Base of the plots over wall-clock time (memory, CPU, GPU): x is seconds since the run started
// (the orchestrator's clock, MetricTick::t_ms), and each arm's warmup/measuring intervals are
// shaded in its colour so a spike can be attributed to the arm that was running.
#include "pitlane/widgets/plots/live_plot.h"

#include <vector>

namespace pitlane::widgets {

// An interval during which one arm was warming up or measuring (ms since run start; end < 0
// while still open).
struct ArmActivity {
    int arm = 0;
    double startMs = 0;
    double endMs = -1;
};

class TimePlot : public LivePlot {
    Q_OBJECT
public:
    TimePlot(const QString& title, QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    // `nowMs` closes open intervals for drawing.
    void setActivity(const std::vector<ArmActivity>& activity, double nowMs);
    // Seconds covered by data or activity; false when there is none.
    bool timeRange(QCPRange* range);

protected:
    void restyle() override;

private:
    QColor bandColor(int arm) const;
    std::vector<QCPGraph*> bands_;
};

}  // namespace pitlane::widgets
