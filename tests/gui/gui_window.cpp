// The real window, offscreen, with real worker processes on the bundled mlp model: it opens,
// a preset round-trips through the arm editor, a short run fills every plot and both tables,
// Stop leaves no worker behind, and a worker killed mid-run shows "killed" on its arm.
#include "gui_test_support.h"

#include "main_window.h"
#include "stream_probe.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/results/applied_settings_model.h"
#include "pitlane/widgets/setup/arm_editor.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/plots/cpu_util_plot.h"
#include "pitlane/widgets/plots/gpu_util_plot.h"
#include "pitlane/widgets/plots/latency_distribution_plot.h"
#include "pitlane/widgets/plots/latency_timeline_plot.h"
#include "pitlane/widgets/live/log_pane.h"
#include "pitlane/widgets/plots/memory_plot.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "pitlane/widgets/live/run_status_panel.h"
#include "pitlane/widgets/setup/setup_panel.h"
#include "pitlane/widgets/plots/throughput_plot.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

#include <cerrno>
#include <csignal>

using namespace pitlane;
using json = nlohmann::json;

namespace {
QString modelFile(const char* name) {
    return QDir(qEnvironmentVariable("PITLANE_MODEL_DIR"))
        .filePath(QString::fromLatin1(name) + ".pt");
}

bool processGone(long pid) {
    return pid > 0 && ::kill(pid_t(pid), 0) == -1 && errno == ESRCH;
}

// Parse both files like pitlane-cli would and compare what they mean.
json meaning(const QString& path) {
    auto p = spec::loadPresetFile(path.toStdString(),
                                  qEnvironmentVariable("PITLANE_MODEL_DIR").toStdString());
    json j = spec::presetToJson(p);
    j["model"] = p.model_path;  // relative or absolute, the same file
    for (std::size_t i = 0; i < p.arms.size(); ++i)
        j["arms"][i]["knobs"] = spec::knobsToJson(p.arms[i].knobs);
    return j;
}
}  // namespace

class GuiWindow : public QObject {
    Q_OBJECT
private slots:
    void init() {
        testing::failOnQtWarnings();
        QSettings().clear();  // every test starts like a first start
    }

    void windowOpensOnTheDefaultPreset() {
        app::MainWindow w;
        w.setInteractive(false);
        w.openStartupSetup();
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // 3 of them for serving runs, 1 (energy) once a run measured energy
        QCOMPARE(w.plotPanel()->plots().size(), std::size_t(10));
        QVERIFY(QFile::exists(QStringLiteral(":/icons/pitlane.svg")));
        QVERIFY(!w.windowIcon().pixmap(32, 32).isNull());
        QVERIFY(w.setupPanel()->isValid());
        QVERIFY(w.runAction()->isEnabled());
        QVERIFY(!w.stopAction()->isEnabled());
        QCOMPARE(w.runAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_R));
        QCOMPARE(w.stopAction()->shortcut(), QKeySequence(Qt::Key_Escape));
        QCOMPARE(w.setupPanel()->armEditor()->armCount(), 2);
        QCOMPARE(QString::fromStdString(w.setupPanel()->presetJson()["model"].get<std::string>()),
                 QStringLiteral("resnet18"));
        // No worker has said anything about CUDA yet: CUDA-only knobs are off, and say why.
        auto* note =
            w.setupPanel()->armEditor()->form(0)->findChild<QLabel*>(QStringLiteral("cudaNote"));
        QVERIFY(note && note->text().contains(QStringLiteral("reports no CUDA")));
        int disabledWithReason = 0;
        for (auto* c : w.setupPanel()->armEditor()->form(0)->findChildren<QComboBox*>())
            if (!c->isEnabled() && c->toolTip().contains(QStringLiteral("reports no CUDA")))
                ++disabledWithReason;
        QCOMPARE(disabledWithReason,
                 4);  // cudnn_enabled, cudnn_benchmark, cudnn_deterministic, allow_tf32
    }

    void presetRoundTripsThroughTheEditor() {
        QTemporaryDir dir;
        const json original = {
            {"name", "every knob"},
            {"description", "carried through untouched"},
            {"model", "mlp"},
            {"run", {{"warmup_iters", 2}, {"iters", 30}, {"block_iters", 5}, {"seed", 7}}},
            {"arms",
             {{{"name", "base"}, {"knobs", {{"mode", "train"}, {"grad", "enabled"}}}},
              {{"name", "tuned"},
               {"knobs",
                {{"mode", "eval"},
                 {"grad", "inference_mode"},
                 {"jit", "freeze_optimize"},
                 {"batch_size", {1, 4, 16}},
                 {"intra_op_threads", 2},
                 {"inter_op_threads", 2},
                 {"affinity", {0, 1}},
                 {"memory_format", "channels_last"},
                 {"workers", 2},
                 {"host_sync_each_iter", true},
                 {"cudnn_benchmark", true},
                 {"fuser", false},
                 {"precision", "autocast_bf16"}}}},
              {{"name", "defaults spelled out"}, {"knobs", {{"device", "cpu"}, {"workers", 1}}}}}}};
        const QString in = testing::writeJson(dir, "in.json", original);
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.openPreset(in));
        auto* arms = w.setupPanel()->armEditor();
        QCOMPARE(arms->armCount(), 3);
        QCOMPARE(arms->form(1)->armName(), QStringLiteral("tuned"));
        // The editor writes back exactly the knobs the preset named.
        for (int i = 0; i < 3; ++i)
            QCOMPARE(arms->form(i)->knobsJson(), original["arms"][i]["knobs"]);
        QCOMPARE(arms->form(1)->findChild<QLineEdit*>(QStringLiteral("batch_size"))->text(),
                 QStringLiteral("1, 4, 16"));

        const QString out = dir.filePath("out.json");
        QString error;
        QVERIFY2(w.savePreset(out, &error), qPrintable(error));
        QCOMPARE(meaning(out), meaning(in));
        QCOMPARE(testing::readJson(out)["description"], original["description"]);

        // Also the shipped default preset.
        const QString def =
            QDir(qEnvironmentVariable("PITLANE_SOURCE_DIR")).filePath("presets/default.json");
        QVERIFY(w.openPreset(def));
        QVERIFY(w.savePreset(dir.filePath("default.json"), &error));
        QCOMPARE(meaning(dir.filePath("default.json")), meaning(def));
        QVERIFY(QSettings()
                    .value("files/recent")
                    .toStringList()
                    .contains(QFileInfo(def).absoluteFilePath()));
    }

    void invalidEditsNameTheField() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.openPreset(testing::writeJson(dir, "p.json", testing::mlpPreset(20, 10))));
        auto* batch = w.setupPanel()->armEditor()->form(1)->findChild<QLineEdit*>(
            QStringLiteral("batch_size"));
        batch->setText(QStringLiteral("1, x"));
        auto* label = w.setupPanel()->findChild<QLabel*>(QStringLiteral("validationLabel"));
        QTRY_VERIFY(label->text().contains(QStringLiteral("arms[1].knobs.batch_size[1]")));
        QVERIFY(!w.runAction()->isEnabled());
        QVERIFY(!w.startRun());
        QString error;
        QVERIFY(!w.savePreset(dir.filePath("bad.json"), &error));
        QVERIFY(error.contains(QStringLiteral("batch_size")));
        batch->setText(QStringLiteral("1, 4"));
        QTRY_VERIFY(w.runAction()->isEnabled());
        QCOMPARE(w.setupPanel()->presetJson()["arms"][1]["knobs"]["batch_size"], json({1, 4}));
    }

    void lastSetupAndGeometryPersist() {
        QTemporaryDir dir;
        json p = testing::mlpPreset(20, 10);
        p["name"] = "remembered";
        {
            app::MainWindow w;
            w.setInteractive(false);
            QVERIFY(w.openPreset(testing::writeJson(dir, "p.json", p)));
            w.setupPanel()->armEditor()->addArm();  // an unsaved edit is remembered too
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            w.resize(1111, 777);
            w.close();
        }
        app::MainWindow again;
        again.openStartupSetup();
        QCOMPARE(again.setupPanel()->presetJson()["name"], json("remembered"));
        QCOMPARE(again.setupPanel()->armEditor()->armCount(), 3);
        QCOMPARE(again.size(), QSize(1111, 777));
        QCOMPARE(QSettings().value("files/lastFolder").toString(),
                 QFileInfo(dir.path()).absoluteFilePath());
    }

    void dropAModelOntoTheWindow() {
        app::MainWindow w;
        w.setInteractive(false);
        w.openStartupSetup();
        auto* mime = new QMimeData;
        mime->setUrls({QUrl::fromLocalFile(modelFile("mlp"))});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &drop);
        QCOMPARE(QString::fromStdString(w.setupPanel()->presetJson()["model"].get<std::string>()),
                 modelFile("mlp"));
        QCOMPARE(w.setupPanel()->armEditor()->armCount(), 2);  // the arms stay
        QVERIFY(w.setupPanel()->build().preset.has_value());   // mlp brings its input signature
        delete mime;
    }

    void shortRunFillsEveryPlotAndTable() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QAbstractItemModelTester t1(w.comparisonModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(w.appliedModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(w.openPreset(testing::writeJson(dir, "p.json", testing::mlpPreset(40, 10))));
        w.show();
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        // The Remaining cell as the samples come (issue 41: the whole run's time left, once
        // every arm has a measured warmup or block).
        QStringList remaining;
        QTest::keyClick(&w, Qt::Key_R, Qt::ControlModifier);  // Run (Ctrl+R)
        QVERIFY(w.isRunning());
        connect(w.runner(), &session::ExperimentRunner::samplesAppended, this,
                [&] { remaining << w.statusPanel()->remainingText(0); });
        // What will be measured, said before it is: exactly what the preset asks (processes given).
        QCOMPARE(w.statusPanel()->planText(),
                 QStringLiteral("40 iterations measured per arm, as asked: 3 processes of 1-2 blocks of 10 iterations"));
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY2(!remaining.isEmpty() && remaining.last().endsWith(QStringLiteral(" s")),
                 qPrintable(remaining.join(QStringLiteral(" | "))));

        auto* plots = w.plotPanel();
        QVERIFY(plots->refreshCount() > 0);
        QCOMPARE(plots->timeline()->dataPoints(), 2 * (40 + 3));  // measured + warmup, both arms
        QVERIFY(plots->timeline()->blockBoundaries() >= 3);
        QVERIFY(plots->distribution()->dataPoints() > 0);
        QVERIFY(plots->throughput()->dataPoints() == 2);
        for (int arm = 0; arm < 2; ++arm) {  // summed as it streamed = computed from the whole arm
            const double whole = results::aggregateThroughput(w.runner()->result().arms[std::size_t(arm)]);
            QVERIFY2(std::abs(plots->throughput()->barValue(arm) - whole) <= 1e-9 * whole,
                     qPrintable(QStringLiteral("%1 vs %2").arg(plots->throughput()->barValue(arm)).arg(whole)));
        }
        QVERIFY(plots->memory()->dataPoints() > 0);
        QVERIFY(plots->cpu()->dataPoints() > 0);
        QVERIFY(!plots->gpu()->hasGpuData());  // no NVML here: said in words, no zeros
        QCOMPARE(plots->gpu()->placeholderText(), QStringLiteral("no GPU data (no NVML)"));

        using C = widgets::ComparisonTableModel;
        auto* table = w.comparisonModel();
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->index(0, C::Status).data().toString(), QStringLiteral("ok"));
        QCOMPARE(table->index(1, C::Samples).data().toString(), QStringLiteral("40"));
        QVERIFY(table->index(1, C::Ratio).data().toString().endsWith(QStringLiteral("×")));
        QVERIFY(table->index(1, C::Ci).data().toString().contains(QStringLiteral("–")));
        QVERIFY(!table->index(1, C::Verdict).data().toString().isEmpty());
        QVERIFY(table->index(0, C::PeakRss).data().toString().contains(QStringLiteral("MiB")));

        auto* applied = w.appliedModel();
        QStringList differing;
        for (int r = 0; r < applied->rowCount(); ++r)
            if (applied->rowDiffers(r)) differing << applied->settingName(r);
        QVERIFY2(differing.contains("mode") && differing.contains("grad"),
                 qPrintable(differing.join(',')));
        QVERIFY(!differing.contains("intra_op_threads"));

        // What the worker reported about the model.
        auto* size = w.findChild<QLabel*>(QStringLiteral("modelSize"));
        auto* params = w.findChild<QLabel*>(QStringLiteral("modelParameters"));
        auto* load = w.findChild<QLabel*>(QStringLiteral("modelLoadTime"));
        QVERIFY(size->text().contains(QStringLiteral("MiB")));
        QCOMPARE(
            params->text().remove(QChar(0x202f)),
            QString::number(w.runner()->result().arms[0].loaded["parameters"].get<long long>()));
        QVERIFY(load->text().contains(QStringLiteral("A")) &&
                load->text().contains(QStringLiteral("B")));
        for (int arm = 0; arm < 2; ++arm)
            QCOMPARE(w.statusPanel()->statusText(arm), QStringLiteral("ok"));
        QVERIFY2(w.logPane()->plainText().contains(QStringLiteral("run started")),
                 qPrintable(w.logPane()->plainText()));

        const QString shot = dir.filePath("shot.png");
        QVERIFY(w.saveScreenshot(shot));
        QVERIFY(QImage(shot).width() > 200);
    }

    void batchSweepShowsThroughputVsBatchSize() {
        QTemporaryDir dir;
        json p = testing::mlpPreset(10, 10, 1);
        p["arms"][1]["knobs"]["batch_size"] = {1, 4};
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.openPreset(testing::writeJson(dir, "p.json", p)));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        QVERIFY(finished.wait(60000));
        QVERIFY(w.plotPanel()->throughput()->sweepMode());
        // A: one batch size (throughput + latency points); B: two.
        QCOMPARE(w.plotPanel()->throughput()->dataPoints(), 2 * 1 + 2 * 2);
    }

    void stopEndsEveryWorkerAndKeepsTheSamples() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(
            w.openPreset(testing::writeJson(dir, "p.json", testing::mlpPreset(1000000, 2000, 0))));
        w.show();
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        const auto& result = w.runner()->result();
        QTRY_VERIFY_WITH_TIMEOUT(result.arms[1].samples.size() > 0, 30000);
        std::vector<long> pids;
        for (const auto& a : result.arms) pids.push_back(a.pid);
        QElapsedTimer clock;
        clock.start();
        QTest::keyClick(&w, Qt::Key_Escape);  // Stop (Esc)
        QTRY_VERIFY_WITH_TIMEOUT(!w.runner()->isRunning(), 2000);
        const qint64 stopMs = clock.elapsed();
        for (long pid : pids)
            QVERIFY2(processGone(pid), qPrintable(QString("worker %1 still exists").arg(pid)));
        QVERIFY2(stopMs <= 2000, qPrintable(QString::number(stopMs)));
        QVERIFY(finished.wait(10000));
        QCOMPARE(finished.first().first().toBool(), false);
        for (int arm = 0; arm < 2; ++arm) {
            QCOMPARE(w.statusPanel()->statusText(arm), QStringLiteral("cancelled"));
            QVERIFY(!result.arms[std::size_t(arm)].samples.empty());  // kept
        }
        QVERIFY(w.plotPanel()->timeline()->dataPoints() > 0);
        QCOMPARE(w.comparisonModel()->rowCount(), 2);
    }

    // Stop while the last block of B runs, A having measured everything planned for it: A is
    // done (ok), B cancelled (its phase too, not "failed"), and the window says the run was
    // stopped, not that arms failed.
    void stopAfterAnArmFinishedKeepsItOk() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        auto preset = testing::mlpPreset(40000, 20000, 0);  // ~1 s per block
        preset["run"]["processes"] = 1;  // one round: A1 B1 A2 B2
        for (auto& arm : preset["arms"]) arm["knobs"] = {{"intra_op_threads", 1}};
        QVERIFY(w.openPreset(testing::writeJson(dir, "p.json", preset)));
        w.show();
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        const auto& result = w.runner()->result();
        QTRY_VERIFY_WITH_TIMEOUT(result.arms[0].samples.size() == 40000, 90000);
        if (result.arms[1].samples.size() >= 40000 || !w.runner()->isRunning())
            QSKIP("B finished its last block before the test could stop it (machine too fast)");
        QTest::keyClick(&w, Qt::Key_Escape);  // Stop (Esc)
        QVERIFY(finished.wait(15000));
        QCOMPARE(result.arms[0].status, std::string("ok"));
        QCOMPARE(result.arms[1].status, std::string("cancelled"));
        QCOMPARE(w.statusPanel()->phaseText(0), QStringLiteral("done"));
        QCOMPARE(w.statusPanel()->phaseText(1), QStringLiteral("cancelled"));
        const QString bar = w.statusBar()->currentMessage();
        QVERIFY2(bar.contains(QStringLiteral("stopped")) && !bar.contains(QStringLiteral("failed")),
                 qPrintable(bar));
    }

    // Every sample of a fast stream reaches the plots, and the UI thread is never held long: the
    // timer-batched refresh backs off when replots get expensive. (Before the fast-polyline
    // hint, 2 x 15 000 samples stalled it for 300-500 ms at a time on this 2-core machine.)
    void uiStaysResponsiveDuringAFastStream() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(
            w.openPreset(testing::writeJson(dir, "p.json", testing::mlpPreset(10000, 1000, 0))));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        app::StreamProbe probe(&w, 5);
        QVERIFY(w.startRun());
        probe.start();
        QVERIFY(finished.wait(120000));
        probe.stop();
        qInfo("%s; %d refreshes", qPrintable(probe.summary()), w.plotPanel()->refreshCount());
        QCOMPARE(w.plotPanel()->timeline()->dataPoints(), 20000);
        // What the window itself spends on the UI thread between two ticks (its CPU time): the
        // wall-clock gaps also hold the OS running the workers and everyone else on a loaded
        // 2-core machine (they are logged above; docs/PERFORMANCE.md has the bench).
        QVERIFY2(probe.maxBusyMs() < 250,
                 qPrintable(QStringLiteral("the UI thread was busy %1 ms at once").arg(probe.maxBusyMs())));
        QVERIFY2(probe.finishBusyMs() < 250,
                 qPrintable(QStringLiteral("finishing the run held the UI thread %1 ms")
                                .arg(probe.finishBusyMs())));
    }

    void killedWorkerShowsKilledOnItsArm() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.openPreset(testing::writeJson(dir, "p.json", testing::mlpPreset(3000, 100, 0))));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        const auto& result = w.runner()->result();
        QTRY_VERIFY_WITH_TIMEOUT(result.arms[1].samples.size() > 0, 30000);
        QCOMPARE(::kill(pid_t(result.arms[1].pid), SIGKILL), 0);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), false);
        QCOMPARE(w.statusPanel()->statusText(1), QStringLiteral("killed"));
        QCOMPARE(w.statusPanel()->phaseText(1), QStringLiteral("failed"));
        // The rest of the run went on.
        QCOMPARE(w.statusPanel()->statusText(0), QStringLiteral("ok"));
        QCOMPARE(result.arms[0].samples.size(), std::size_t(3000));
        QCOMPARE(
            w.comparisonModel()->index(1, widgets::ComparisonTableModel::Status).data().toString(),
            QStringLiteral("killed"));
        const QString verdict =
            w.comparisonModel()->index(1, widgets::ComparisonTableModel::Verdict).data().toString();
        QVERIFY2(verdict.endsWith(QStringLiteral("not compared")) && verdict.contains(QStringLiteral("killed")),
                 qPrintable(verdict));
        QVERIFY(w.logPane()->errors() >= 1);
    }
};

PITLANE_GUI_TEST_MAIN(GuiWindow)
#include "gui_window.moc"
