// Energy per inference in the window (issue 46, docs/ENERGY.md "In the window"): the energy plot
// of the real MainWindow (offscreen) on real two-arm runs of the bundled mlp. A run on this
// machine as it is (no NVML, no readable powercap: the workers say why) shows no energy plot.
// A run whose workers read Pitlane's fake NVML (PITLANE_NVML_LIBRARY; its counter scripted by
// PITLANE_FAKE_NVML_SCRIPT: 40 W idle, 150 W per busy core, exact) shows it while it runs and at
// its end, each arm's bars equal to results::armEnergy of the run (gross and net of idle, the
// 95 % CI as whiskers), their medians equal to what the script draws over each process's window
// (computed here from the processes' windows and CPU time), the window readable at 1366x768 and
// 1920x1080; the run reopened from the history shows the same bars, the run without counters
// none.
#include "gui_layout.h"
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/results/energy.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/plots/cpu_util_plot.h"
#include "pitlane/widgets/plots/energy_plot.h"
#include "pitlane/widgets/plots/gpu_util_plot.h"
#include "pitlane/widgets/plots/latency_distribution_plot.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "pitlane/widgets/plots/throughput_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

using namespace pitlane;
using json = nlohmann::json;
using widgets::EnergyPlot;

namespace {

constexpr double kIdleW = 40, kBusyW = 150;

// Two arms of the mlp at batch 64 and 32 on one thread, 3 processes of `blocks` blocks each.
json energyPreset(int blockIters, int blocks) {
    return {{"name", "energy in the window"},
            {"model", "mlp"},
            {"run",
             {{"warmup_iters", 5},
              {"iters", blockIters * blocks * 3},
              {"block_iters", blockIters},
              {"processes", 3},
              {"energy_idle_ms", 500},
              {"energy_cooldown_ms", 100}}},
            {"arms",
             {{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}, {"batch_size", 64}}}},
              {{"name", "B"}, {"knobs", {{"intra_op_threads", 1}, {"batch_size", 32}}}}}}};
}

bool close(double a, double b, double rel = 1e-9) {
    return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + 1e-15;
}

// Where the plot's bars differ from results::armEnergy of `run` (empty: they agree).
QStringList barProblems(const EnergyPlot* plot, const results::RunResult& run) {
    QStringList out;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto e = results::armEnergy(run, i);
        const auto* s = e.primary();
        const auto g = plot->gross(int(i)), n = plot->net(int(i));
        const QString arm = QString::fromStdString(run.arms[i].name);
        if (!s) {
            if (g.shown || n.shown) out << arm + QStringLiteral(": a bar, but no energy measured");
            continue;
        }
        if (!g.shown || !close(g.value, s->j_per_inference) || !close(g.low, s->ci_low) ||
            !close(g.high, s->ci_high))
            out << QStringLiteral("%1 gross: drawn %2 (%3-%4), armEnergy %5 (%6-%7)")
                       .arg(arm)
                       .arg(g.value, 0, 'g', 12)
                       .arg(g.low, 0, 'g', 12)
                       .arg(g.high, 0, 'g', 12)
                       .arg(s->j_per_inference, 0, 'g', 12)
                       .arg(s->ci_low, 0, 'g', 12)
                       .arg(s->ci_high, 0, 'g', 12);
        if (s->idle_w < 0) {
            if (n.shown) out << arm + QStringLiteral(": a net bar without an idle draw");
        } else if (!n.shown || !close(n.value, s->net_j_per_inference) ||
                   !close(n.low, s->net_ci_low) || !close(n.high, s->net_ci_high)) {
            out << QStringLiteral("%1 net: drawn %2 (%3-%4), armEnergy %5 (%6-%7)")
                       .arg(arm)
                       .arg(n.value, 0, 'g', 12)
                       .arg(n.low, 0, 'g', 12)
                       .arg(n.high, 0, 'g', 12)
                       .arg(s->net_j_per_inference, 0, 'g', 12)
                       .arg(s->net_ci_low, 0, 'g', 12)
                       .arg(s->net_ci_high, 0, 'g', 12);
        }
        // Every whisker in view, the bars from zero.
        const QCPRange y = const_cast<EnergyPlot*>(plot)->yAxis->range();
        if (y.upper < std::max(g.high, n.high) * plot->unitScale() || y.lower > 0)
            out << QStringLiteral("%1: the y axis %2-%3 %4 cuts a whisker")
                       .arg(arm)
                       .arg(y.lower)
                       .arg(y.upper)
                       .arg(plot->unit());
    }
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

class GuiEnergy : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;     // the history of both runs, the script
    double msPerIter_ = 0;  // the slower arm's median iteration in the run without counters
    qint64 plainRunId_ = 0, energyRunId_ = 0;
    std::vector<EnergyPlot::Bar> finalGross_, finalNet_;

    QString history() const { return dir_.filePath(QStringLiteral("history.sqlite")); }

private slots:
    void init() {
        testing::failOnQtWarnings();
        QSettings().clear();
    }

    // This machine as it is: no NVML, no readable powercap. The workers say why; the window adds
    // no plot (the Log and the verdict say it), and the CPU plot keeps its two columns.
    void noCountersNoEnergyPlot() {
        qunsetenv("PITLANE_NVML_LIBRARY");
        qunsetenv("PITLANE_FAKE_NVML_SCRIPT");
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(history()));
        QVERIFY(w.openPreset(
            testing::writeJson(dir_, QStringLiteral("plain.json"), energyPreset(100, 1))));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.first().first().toBool(), true);
        // runFinished waits for the plots' last refresh.
        const auto& result = w.runner()->result();
        // What the next test needs first: this machine's speed, the stored run.
        for (const auto& arm : result.arms) {
            std::vector<double> ms;
            for (const auto& s : arm.samples) ms.push_back(double(s.latency_ns) / 1e6);
            QVERIFY(!ms.empty());
            msPerIter_ = std::max(msPerIter_, median(ms));
        }
        QTRY_VERIFY_WITH_TIMEOUT(w.shownRunId() > 0, 10000);
        plainRunId_ = w.shownRunId();
        bool anyMeasured = false;
        for (std::size_t i = 0; i < result.arms.size(); ++i) {
            const auto e = results::armEnergy(result, i);
            anyMeasured |= e.measured;
            // The worker said why (e.g. "no NVML (libnvidia-ml.so.1 not found ...)").
            QVERIFY2(result.arms[i].applied.extraField("energy").is_object() && !e.reason.empty(),
                     result.arms[i].applied.extraField("energy").dump().c_str());
        }
        if (anyMeasured)
            QSKIP("this machine has energy counters: the no-counter case needs one without");
        auto* energy = w.plotPanel()->energy();
        QVERIFY(!energy->measured());
        QVERIFY(!energy->isVisible());
        for (int arm = 0; arm < 2; ++arm)
            QVERIFY(!energy->gross(arm).shown && !energy->net(arm).shown);
        if (!w.plotPanel()->gpu()->isVisible())  // no CUDA: the CPU plot spans the GPU's column too
            QVERIFY(w.plotPanel()->cpu()->width() > w.plotPanel()->throughput()->width() * 3 / 2);
    }

    // The fake NVML: energy per arm appears while the run goes, then equals armEnergy and the
    // script's joules at its end; the window stays readable with it.
    void fakeNvmlRunShowsEachArmsEnergy() {
        QVERIFY2(msPerIter_ > 0, "the run without counters sized this one");
        const QString script = dir_.filePath(QStringLiteral("nvml.script"));
        std::ofstream(script.toStdString())
            << "# gui_energy: an exact counter\ndevice Pitlane Fake GPU\nidle_w " << kIdleW
            << "\nbusy_w " << kBusyW << "\ngranularity_ms 0\n";
        qputenv("PITLANE_NVML_LIBRARY", PITLANE_FAKE_NVML);
        qputenv("PITLANE_FAKE_NVML_SCRIPT", script.toLocal8Bit());
        // Blocks of about 0.7 s, two a process: 1.4 s merged, where NVML's 100 ms resolution
        // leaves +/-4 % (at most 10 % counts), so the figures hold at half this machine's speed
        // or twice it.
        const int blockIters = std::max(20, int(700 / msPerIter_));
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(history()));
        QVERIFY(w.openPreset(
            testing::writeJson(dir_, QStringLiteral("energy.json"), energyPreset(blockIters, 2))));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        auto* panel = w.plotPanel();
        auto* energy = panel->energy();
        QVERIFY(!energy->isVisible());
        // Live: the first round's processes measured both arms before the last round ends.
        QTRY_VERIFY_WITH_TIMEOUT(energy->measured() || !w.isRunning(), 120000);
        QVERIFY2(w.isRunning(), "the energy plot appeared only after the run");
        QVERIFY(energy->isVisible());
        {
            // A block may have arrived since the tick that drew the bars: redraw from the live
            // result as it is now (the same refresh), then compare.
            panel->flush();
            const QStringList live = barProblems(energy, w.runner()->result());
            QVERIFY2(live.isEmpty(), qPrintable(live.join(QStringLiteral("; "))));
        }
        QVERIFY(finished.wait(180000));
        QCOMPARE(finished.first().first().toBool(), true);
        qunsetenv("PITLANE_NVML_LIBRARY");
        qunsetenv("PITLANE_FAKE_NVML_SCRIPT");

        const auto& result = w.runner()->result();
        const QStringList problems = barProblems(energy, result);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
        QCOMPARE(energy->counter(), QStringLiteral("GPU 0 (fake) (nvml)"));
        QVERIFY2(
            energy->xAxis->property("pitlaneFullLabel").toString().startsWith(energy->counter()) ||
                energy->xAxis->label().startsWith(energy->counter()),
            qPrintable(energy->xAxis->label()));
        QCOMPARE(energy->unit(),
                 QStringLiteral("mJ"));  // the mlp's inference: millijoules at these watts
        const QString tip = energy->toolTip();
        for (std::size_t i = 0; i < result.arms.size(); ++i) {
            const auto e = results::armEnergy(result, i);
            QVERIFY2(e.measured, e.reason.c_str());
            const auto* s = e.primary();
            QCOMPARE(QString::fromStdString(s->device), QStringLiteral("gpu 0 (fake)"));
            QVERIFY2(s->idle_w >= 0, "the run measured an idle draw");
            // The tooltip has each arm's inferences per joule and power.
            const QString ipj = QString::asprintf("%.3g inferences/J", s->inferences_per_j);
            QVERIFY2(tip.contains(QString::fromStdString(result.arms[i].name) +
                                  QStringLiteral(": GPU")) ||
                         tip.contains(QString::fromStdString(result.arms[i].name) +
                                      QStringLiteral(": gpu 0 (fake)")),
                     qPrintable(tip));
            QVERIFY2(tip.contains(ipj), qPrintable(ipj + QStringLiteral(" not in ") + tip));
            // Independently: the script draws idle_w over each process's window and busy_w per
            // CPU millisecond; the bar is the median of the processes whose merged window the
            // counter resolves to 10 % (docs/ENERGY.md).
            std::vector<double> gross, net;
            for (const auto& p : result.arms[i].processes) {
                if (p.energy_blocks <= 0 || p.energy_inferences <= 0 || p.energy_stalls > 0)
                    continue;
                if (100.0 * std::sqrt(double(p.energy_blocks) / 6.0) / p.energy_window_ms >
                    results::kEnergyMaxResolutionError)
                    continue;
                const double mj = kIdleW * p.energy_window_ms + kBusyW * p.cpu_ms;
                gross.push_back(mj / 1e3 / double(p.energy_inferences));
                net.push_back((mj - s->idle_w * p.energy_window_ms) / 1e3 /
                              double(p.energy_inferences));
            }
            QVERIFY2(gross.size() == s->used && !gross.empty(),
                     qPrintable(QStringLiteral("%1 processes resolved, armEnergy used %2")
                                    .arg(gross.size())
                                    .arg(s->used)));
            const auto g = energy->gross(int(i)), n = energy->net(int(i));
            QVERIFY2(
                close(g.value, median(gross), 0.01),
                qPrintable(
                    QStringLiteral("drawn %1 J, the script %2 J").arg(g.value).arg(median(gross))));
            QVERIFY2(close(n.value, median(net), 0.02),
                     qPrintable(QStringLiteral("net drawn %1 J, the script %2 J")
                                    .arg(n.value)
                                    .arg(median(net))));
            QVERIFY(g.low <= g.value && g.value <= g.high && n.low <= n.value && n.value <= n.high);
            finalGross_.push_back(g);
            finalNet_.push_back(n);
        }
        // Batch 64 costs more per batch than batch 32 but not twice as much per inference:
        // the bars differ (the figures are each arm's own).
        QVERIFY(!close(finalGross_[0].value, finalGross_[1].value, 1e-6));

        // In the upper row, right of the distribution, and readable.
        auto* distribution = panel->distribution();
        QVERIFY(energy->isVisible() && distribution->isVisible());
        QCOMPARE(energy->mapTo(panel, QPoint(0, 0)).y(),
                 distribution->mapTo(panel, QPoint(0, 0)).y());
        QVERIFY(energy->mapTo(panel, QPoint(0, 0)).x() >
                distribution->mapTo(panel, QPoint(0, 0)).x());
        // Readable at both sizes; where the panel shows one row at a time (the history open at
        // 1366x768), on each page asked (the energy plot is on the first).
        auto readable = [&](const QString& what, std::initializer_list<int> pages) -> QStringList {
            QStringList out;
            for (const QSize size : {QSize(1366, 708), QSize(1920, 1020)}) {
                panel->showPage(0);
                QStringList layout = testing::layoutProblems(w, size);
                if (!energy->isVisible()) layout << QStringLiteral("the energy plot is hidden");
                for (int page : pages)
                    if (panel->paged() && page > 0) {
                        panel->showPage(page);
                        layout << testing::layoutProblems(w, size);
                        panel->showPage(0);
                    }
                if (!layout.isEmpty())
                    out << QStringLiteral("%1, %2x%3: %4")
                               .arg(what)
                               .arg(size.width())
                               .arg(size.height())
                               .arg(layout.join(QStringLiteral("; ")));
                if (size == QSize(1366, 708) && what == QLatin1String("no GPU plot"))
                    testing::saveScreenshot(w, QStringLiteral("window-energy-1366x768"));
            }
            panel->showPage(0);
            return out;
        };
        QStringList layout = readable(QStringLiteral("no GPU plot"), {0, 1});
        // With a GPU plot too (a CUDA machine's): the lower row's four plots stay as they were.
        const bool hadGpu = panel->gpu()->isVisible();
        panel->setGpuAvailable(true);
        layout << readable(QStringLiteral("with the GPU plot"), {0});
        panel->setGpuAvailable(hadGpu);
        QVERIFY2(layout.isEmpty(), qPrintable(layout.join(QStringLiteral("\n"))));
        QTRY_VERIFY_WITH_TIMEOUT(w.shownRunId() > 0, 10000);
        energyRunId_ = w.shownRunId();
    }

    // Both runs reopened from the history: the same bars as at the run's end, and none for the
    // run without counters (the plot goes again).
    void reopenedRunsShowTheirEnergy() {
        QVERIFY(energyRunId_ > 0 && plainRunId_ > 0);
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(history()));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.showStoredRun(energyRunId_));
        auto* energy = w.plotPanel()->energy();
        QTRY_VERIFY_WITH_TIMEOUT(energy->measured(), 10000);
        QVERIFY(energy->isVisible());
        store::RunStore store;
        QVERIFY(store.open(history()));
        const auto stored = store.loadRun(energyRunId_);
        QVERIFY(stored);
        const QStringList problems = barProblems(energy, *stored);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
        for (int arm = 0; arm < 2; ++arm) {
            QVERIFY(close(energy->gross(arm).value, finalGross_[std::size_t(arm)].value));
            QVERIFY(close(energy->gross(arm).high, finalGross_[std::size_t(arm)].high));
            QVERIFY(close(energy->net(arm).value, finalNet_[std::size_t(arm)].value));
        }
        QVERIFY(w.showStoredRun(plainRunId_));
        QTRY_VERIFY_WITH_TIMEOUT(!energy->measured(), 10000);
        QVERIFY(!energy->isVisible());
    }
};

PITLANE_GUI_TEST_MAIN(GuiEnergy)
#include "gui_energy.moc"
