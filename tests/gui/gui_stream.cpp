// Issue 3: "A 20 000 samples/s stream must not freeze the window". The real window, offscreen,
// with two real workers on the tiny_probe test model (x * 2, a few microseconds per forward, so
// the stream is limited by the pipeline, not by the model). A 10 ms heartbeat timer measures the
// event loop: any refresh, parse or replot that blocks the UI thread shows up as a long gap.
// What is asserted is what the window controls, in its UI thread's own CPU time: how long it is
// busy at once, and how many samples per second of that time it handles. The rate the stream
// reached in wall-clock time is logged: it is the workers' and the machine's load as much as the
// window's (bench/gui_stream.sh measures it; docs/PERFORMANCE.md).
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/plots/latency_timeline_plot.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "stream_probe.h"

#include <time.h>

using namespace pitlane;
using json = nlohmann::json;

namespace {
// What the window itself may spend on the UI thread at once (its CPU time between two heartbeat
// ticks), during the stream and when the run ends. Wall-clock gaps are logged, not asserted: on
// a loaded 2-core CI machine they hold the OS running the workers and everyone else (bench/
// gui_stream.sh measures them; docs/PERFORMANCE.md). Before the history writer thread, the end of
// the run held the UI thread 0.7-1.0 s.
constexpr double kMaxBusyMs = 250;
constexpr double kRequiredRate = 20000;  // samples/s, the figure
constexpr int kWarmup = 100;             // per arm; the timeline shows warmup too

QString tinyProbe() {
    return QDir(qEnvironmentVariable("PITLANE_MODEL_DIR"))
        .filePath(QStringLiteral("tiny_probe.pt"));
}

json tinyPreset(int iters, int blockIters) {
    const json knobs = {{"mode", "eval"}, {"grad", "inference_mode"}, {"intra_op_threads", 1}};
    return {{"name", "fast stream"},
            {"model", tinyProbe().toStdString()},
            // Exactly three processes per arm: identical arms would otherwise add replicate
            // rounds (inconclusive A/A) and the sample count would not follow `iters`.
            {"run",
             {{"warmup_iters", kWarmup},
              {"iters", iters},
              {"block_iters", blockIters},
              {"processes", 3}}},
            {"arms", {{{"name", "A"}, {"knobs", knobs}}, {{"name", "B"}, {"knobs", knobs}}}}};
}

// CPU time of the calling (UI) thread, in seconds.
double uiThreadCpuSeconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

std::size_t samplesOf(const results::RunResult& r) {
    std::size_t n = 0;
    for (const auto& a : r.arms) n += a.samples.size();
    return n;
}
}  // namespace

class GuiStream : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        testing::failOnQtWarnings();
        if (!QFileInfo::exists(tinyProbe()))
            QFAIL(qPrintable(tinyProbe() + " is missing (build the test_models target)"));
    }

    void twentyThousandSamplesPerSecondDoNotFreezeTheWindow() {
        constexpr int kIters = 200000, kBlock = 50000;
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        // The real history too: every sample batch is written to SQLite on the way.
        QVERIFY(w.setDatabasePath(dir.filePath(QStringLiteral("history.sqlite"))));
        QVERIFY(w.openPreset(testing::writeJson(dir, "fast.json", tinyPreset(kIters, kBlock))));
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);

        // The heartbeat `pitlane --run` uses with PITLANE_STREAM_PROBE=1 (bench/gui_stream.sh).
        app::StreamProbe probe(&w);
        const double cpu0 = uiThreadCpuSeconds();
        QVERIFY(w.startRun());
        probe.start();
        QVERIFY(finished.wait(90000));
        probe.stop();
        const double uiCpu = uiThreadCpuSeconds() - cpu0;

        const auto& result = w.runner()->result();
        const std::size_t total = samplesOf(result);
        QCOMPARE(total, std::size_t(2 * kIters));
        QCOMPARE(probe.samples(), total);
        QVERIFY(probe.ticks() > 0);
        // Samples per second of the UI thread's CPU time over the whole run (its start, the
        // stream, the verdict and the end included): the rate the window could follow with one
        // core to itself. The wall-clock rate is logged only: it was 206-210 k samples/s at load
        // 1.9-2.9 on 2 cores and 38-115 k at load 4.2-4.9 (docs/PERFORMANCE.md); it falls with
        // the load and the workers' pace, which the window does not control.
        const double rate = probe.samplesPerSecond();
        const double uiRate = uiCpu > 0 ? double(total) / uiCpu : 0.0;
        qInfo("%s; %d plot refreshes; UI thread %.2f s of CPU: %.0f samples per CPU second",
              qPrintable(probe.summary()), w.plotPanel()->refreshCount(), uiCpu, uiRate);

        QVERIFY2(uiRate >= kRequiredRate,
                 qPrintable(QStringLiteral("the window handles %1 samples per second of its UI "
                                           "thread's CPU time only (the stream ran at %2/s)")
                                .arg(uiRate, 0, 'f', 0)
                                .arg(rate, 0, 'f', 0)));
        QVERIFY2(probe.maxBusyMs() < kMaxBusyMs,
                 qPrintable(QStringLiteral("the UI thread was busy %1 ms at once during the stream")
                                .arg(probe.maxBusyMs())));
        QVERIFY2(probe.finishBusyMs() < kMaxBusyMs,
                 qPrintable(QStringLiteral("finishing the run held the UI thread %1 ms")
                                .arg(probe.finishBusyMs())));
        // The views stay correct: the table reads every sample, the timeline holds them all.
        QCOMPARE(w.comparisonModel()->rowCount(), 2);
        QCOMPARE(w.plotPanel()->timeline()->dataPoints(), int(total) + 2 * kWarmup);
    }
};

PITLANE_GUI_TEST_MAIN(GuiStream)
#include "gui_stream.moc"
