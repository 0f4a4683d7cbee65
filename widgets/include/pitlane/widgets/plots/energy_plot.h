#pragma once
// Energy per inference per arm (issue 46, docs/ENERGY.md) as bars: the joules per inference of
// each arm's headline counter (results::armEnergy's primary(): the GPU where NVML has an energy
// counter, else the CPU packages), gross and, where the run measured an idle draw, net of idle
// beside it (hatched), each with its 95 % CI across processes as error bars. The counter is named
// on the x axis ("GPU 0 (nvml)", "CPU package (rapl)"); the tooltip has every arm's figures
// (inferences per joule, average power, idle draw). Energy arrives with the measured blocks, so
// the bars grow as processes finish theirs. measured() says whether any arm has a figure: the
// PlotPanel shows the plot only then (no empty frame on a machine without counters, and nothing
// extra when the workers said why they could not measure: the log and the verdict say it).
#include "pitlane/widgets/plots/live_plot.h"

#include <vector>

namespace pitlane::widgets {

class EnergyPlot : public LivePlot {
    Q_OBJECT
public:
    explicit EnergyPlot(QWidget* parent = nullptr);
    void resetRun(const results::RunResult& run) override;
    void refresh(const results::RunResult& run) override;

    // Some arm's counter measured energy: the plot has a bar to show.
    bool measured() const { return measured_; }
    // What the plot draws for an arm, read back from its bar and error bars, in joules per
    // inference (the drawn unit, mJ or µJ, divided out). shown: false when the arm has no bar.
    struct Bar {
        bool shown = false;
        double value = 0, low = 0, high = 0;
    };
    Bar gross(int arm) const;
    Bar net(int arm) const;
    // The counter the bars read, as the x axis names it ("GPU 0 (nvml)"); "" when the arms'
    // counters differ (each tick label names its own then).
    QString counter() const { return counter_; }
    // The drawn unit ("mJ"): J per inference times unitScale().
    QString unit() const { return unit_; }
    double unitScale() const { return scale_; }

protected:
    void restyle() override;
    void fitView() override;

private:
    void rebuild(const results::RunResult& run);
    Bar barOf(int arm, const std::vector<QCPBars*>& bars,
              const std::vector<QCPErrorBars*>& ci) const;

    std::vector<QCPBars*> gross_, net_;
    std::vector<QCPErrorBars*> grossCi_, netCi_;
    QStringList tickNames_;  // the bars' tick labels in full (elided to fit after each layout)
    QString counter_, unit_ = QStringLiteral("J");
    double scale_ = 1;
    bool measured_ = false;
    QString hint_;  // LivePlot's pan / zoom tooltip, after the figures
    // What the figures were last computed from, per arm: its processes, their measured blocks
    // with energy, whether its worker described its counters; and whether the run has an idle
    // draw. Unchanged: nothing to recompute (a bootstrap per arm).
    std::vector<double> seen_;
};

}  // namespace pitlane::widgets
