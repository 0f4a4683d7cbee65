// Issue 3: "A 20 000 samples/s stream must not freeze the window". The real window, offscreen,
// with two real workers on the tiny_probe test model (x * 2, a few microseconds per forward, so
// the stream is limited by the pipeline, not by the model). A 10 ms heartbeat timer measures the
// event loop: any refresh, parse or replot that blocks the UI thread shows up as a long gap.
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/plots/latency_timeline_plot.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "stream_probe.h"

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
        QVERIFY(w.startRun());
        probe.start();
        QVERIFY(finished.wait(90000));
        probe.stop();

        const auto& result = w.runner()->result();
        const std::size_t total = samplesOf(result);
        QCOMPARE(total, std::size_t(2 * kIters));
        QCOMPARE(probe.samples(), total);
        QVERIFY(probe.ticks() > 0);
        const double rate = probe.samplesPerSecond();
        qInfo("%s; %d plot refreshes", qPrintable(probe.summary()), w.plotPanel()->refreshCount());

        QVERIFY2(rate >= kRequiredRate,
                 qPrintable(QStringLiteral("the stream ran at %1 samples/s only").arg(rate)));
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
