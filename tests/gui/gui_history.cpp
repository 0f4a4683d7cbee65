// The window and the run history: real runs of the bundled mlp model recorded into a temporary
// SQLite file (never the user's: --db names it), the History panel's model, reopening a stored
// run into the plots and tables, rename / baseline / delete, comparing arms of two runs, and
// File ▸ Export in every format, and a run damaged in the history reopened as damaged (issue 42).
// (A SIGKILL mid-run is tested in tests/store.)
#include "gui_test_support.h"

#include "history_controller.h"
#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/results/applied_settings_model.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/history/cross_run_dialog.h"
#include "pitlane/widgets/setup/setup_panel.h"
#include "pitlane/widgets/history/history_model.h"
#include "pitlane/widgets/history/history_panel.h"
#include "pitlane/widgets/plots/latency_distribution_plot.h"
#include "pitlane/widgets/plots/latency_timeline_plot.h"
#include "pitlane/widgets/live/log_pane.h"
#include "pitlane/widgets/plots/memory_plot.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "pitlane/widgets/live/run_status_panel.h"
#include "pitlane/widgets/plots/throughput_plot.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSqlDatabase>
#include <QSqlQuery>

#include <random>

using namespace pitlane;
using json = nlohmann::json;
using C = widgets::ComparisonTableModel;
using H = widgets::HistoryModel;

namespace {
// A finished two-arm run with fixed numbers (B about 2x faster), to import into a store.
results::RunResult fixtureRun(const std::string& name, const std::string& model) {
    results::RunResult run;
    run.preset.name = name;
    run.preset.model = model;
    run.preset_json = {{"name", name}, {"model", model}};
    run.started_at = "2024-03-01T10:00:00Z";
    run.wall_s = 1.5;
    for (int a = 0; a < 2; ++a) {
        results::ArmResult arm;
        arm.name = a == 0 ? "A" : "B";
        arm.status = results::kOk;
        for (int i = 0; i < 30; ++i)
            arm.samples.push_back(
                {i / 10, i, 1, 0,
                 std::int64_t((a == 0 ? 2'000'000 : 1'000'000) + (i % 5) * 7'000)});
        run.arms.push_back(arm);
    }
    return run;
}

QString verdictText(app::MainWindow& w) {
    return w.findChild<QLabel*>(QStringLiteral("verdictLine"))->text();
}

// Damages arm B's largest sample chunk in the history file `path` in place, through SQLite: 16
// bytes of random value bits with their continuation bits kept (`decodes`: the chunk still
// decodes to its n latencies, wrong ones) or 8 bytes of 0xFF (it does not decode). Returns the
// chunk as the readers name it ("sample chunk 3 of 4 (block 1, iterations 300-599)"), "" when
// there is none to damage.
QString damageChunkOfArmB(const QString& path, bool decodes) {
    const QString name = QStringLiteral("damage-%1").arg(decodes);
    QString named;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        if (!db.open()) return {};
        QSqlQuery q(db);
        if (!q.exec(QStringLiteral("SELECT c.rowid, c.latency_ns, c.n, c.block, c.first_iter FROM sample_chunks c "
                                   "JOIN arms a ON c.arm = a.id WHERE a.name = 'B' ORDER BY c.rowid")))
            return {};
        int ordinal = 0, total = 0;
        qint64 rowid = 0, n = 0, block = 0, first = 0;
        QByteArray blob;
        while (q.next()) {
            ++total;
            if (q.value(3).toInt() >= 0 && q.value(2).toLongLong() > n) {
                rowid = q.value(0).toLongLong();
                blob = q.value(1).toByteArray();
                n = q.value(2).toLongLong();
                block = q.value(3).toInt();
                first = q.value(4).toLongLong();
                ordinal = total;
            }
        }
        q.finish();
        const qsizetype k = blob.size() / 2;
        if (n < 100 || k + 16 >= blob.size()) return {};
        if (decodes) {
            std::mt19937 random(42);
            for (int i = 0; i < 16; ++i) {
                const uchar keep = uchar(blob[k + i]) & 0x80;
                uchar b;
                do b = uchar(keep | (random() & 0x7F));
                while (b == uchar(blob[k + i]));
                blob[k + i] = char(b);
            }
        } else {
            blob.replace(k, 8, QByteArray(8, char(0xFF)));
        }
        QSqlQuery u(db);
        u.prepare(QStringLiteral("UPDATE sample_chunks SET latency_ns = ? WHERE rowid = ?"));
        u.addBindValue(blob);
        u.addBindValue(rowid);
        if (!u.exec()) return {};
        named = QStringLiteral("sample chunk %1 of %2 (block %3, iterations %4-%5)")
                    .arg(ordinal).arg(total).arg(block).arg(first).arg(first + n - 1);
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return named;
}

int lineCount(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return -1;
    return int(f.readAll().count('\n'));
}
}  // namespace

class GuiHistory : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString db_;
    qint64 first_ = 0, second_ = 0;
    int firstTimelinePoints_ = 0;
    std::size_t firstSamplesA_ = 0;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        db_ = dir_.filePath(QStringLiteral("history.sqlite"));
        // pitlane_add_test sets PITLANE_DB=none: a window given no --db stores nothing.
        QCOMPARE(qEnvironmentVariable("PITLANE_DB"), QStringLiteral("none"));
    }

    void init() {
        testing::failOnQtWarnings();
        QSettings().clear();
    }

    // Two real runs in the window: each one is in the history (and in the panel) once it ends.
    void everyRunIsRecorded() {
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db_));
        QCOMPARE(w.databasePath(), db_);
        auto* model = w.historyPanel()->model();
        QAbstractItemModelTester tester(model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model->rowCount(), 0);
        QVERIFY(w.openPreset(testing::writeJson(dir_, "p.json", testing::mlpPreset(40, 10))));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.historyDock()->isVisible());
        QSignalSpy finished(&w, &app::MainWindow::runFinished);

        QVERIFY(w.startRun());
        // The row exists while the run goes (recorded as events arrive) and cannot be deleted
        // or replaced in the views meanwhile.
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 1, 10000);
        QVERIFY(!model->info(0)->complete());
        w.historyPanel()->selectRun(model->runId(0));
        QVERIFY(!w.historyPanel()->deleteAction()->isEnabled());
        QVERIFY(!w.historyPanel()->openAction()->isEnabled());
        QVERIFY(!w.showStoredRun(model->runId(0)));
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);

        first_ = w.shownRunId();
        QVERIFY(first_ > 0);
        QCOMPARE(model->rowCount(), 1);
        const auto* info = model->info(0);
        QCOMPARE(info->id, first_);
        QVERIFY(info->complete());
        QCOMPARE(info->source, QStringLiteral("gui"));
        // The model by file name, as pitlane-cli's history lists it (issue 44; the preset said "mlp").
        QCOMPARE(model->index(0, H::Model).data().toString(), QStringLiteral("mlp.pt"));
        QCOMPARE(model->index(0, H::Preset).data().toString(), QStringLiteral("gui test"));
        QCOMPARE(model->index(0, H::Arms).data().toString(), QStringLiteral("A, B"));
        QVERIFY(!model->index(0, H::Date).data().toString().isEmpty());
        // The verdict in the list is the one the window shows.
        const QString verdict = model->index(0, H::Verdict).data().toString();
        QVERIFY2(!verdict.isEmpty() && verdictText(w).contains(verdict.toHtmlEscaped()),
                 qPrintable(verdict + " | " + verdictText(w)));
        QCOMPARE(w.historyPanel()->currentRun(), first_);  // the new run is selected
        QVERIFY(w.historyPanel()->openAction()->isEnabled());
        QCOMPARE(w.history()->sampleCount(first_), qint64(80));
        firstTimelinePoints_ = w.plotPanel()->timeline()->dataPoints();
        firstSamplesA_ = w.runner()->result().arms[0].samples.size();
        QVERIFY2(w.logPane()->plainText().contains(QStringLiteral("recording run #%1").arg(first_)),
                 qPrintable(w.logPane()->plainText()));

        // A second run with other knobs: the list refreshes, newest first.
        json p = testing::mlpPreset(30, 10);
        p["name"] = "second";
        p["arms"][1]["knobs"]["jit"] = "freeze";
        QVERIFY(w.openPreset(testing::writeJson(dir_, "p2.json", p)));
        finished.clear();
        QVERIFY(w.startRun());
        QVERIFY(finished.wait(60000));
        second_ = w.shownRunId();
        QVERIFY(second_ > first_);
        QCOMPARE(model->rowCount(), 2);
        QCOMPARE(model->runId(0), second_);
        QCOMPARE(model->runId(1), first_);
        QCOMPARE(model->index(0, H::Preset).data().toString(), QStringLiteral("second"));
    }

    // The stored run comes back into the same plots, tables and status rows as it was live.
    void reopenShowsTheStoredRun() {
        QVERIFY(first_ && second_);
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db_));
        QCOMPARE(w.historyPanel()->model()->rowCount(), 2);
        QAbstractItemModelTester t1(w.comparisonModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(w.appliedModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.comparisonModel()->rowCount(), 0);

        // As a user would: select the older run, then Open.
        QSignalSpy plotsDrawn(w.plotPanel(), &widgets::PlotPanel::flushed);
        w.historyPanel()->selectRun(first_);
        QVERIFY(w.historyPanel()->openAction()->isEnabled());
        w.historyPanel()->openAction()->trigger();
        // Read on the history's reader thread: the views change when it is read, the plots one a
        // turn of the event loop, then flushed().
        QTRY_VERIFY_WITH_TIMEOUT(w.showsStoredRun(), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(plotsDrawn.count() >= 1, 10000);
        QCOMPARE(w.shownRunId(), first_);
        const auto stored = w.history()->loadRun(first_);
        QVERIFY(stored);

        auto* plots = w.plotPanel();
        QVERIFY(plots->showsStoredRun());
        QCOMPARE(plots->timeline()->dataPoints(), firstTimelinePoints_);  // as it was live
        QCOMPARE(plots->timeline()->dataPoints(), 2 * (40 + 3));
        QVERIFY(plots->distribution()->dataPoints() > 0);
        QCOMPARE(plots->throughput()->dataPoints(), 2);
        QVERIFY(plots->memory()->dataPoints() > 0);

        auto* table = w.comparisonModel();
        QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 2, 10000);
        QCOMPARE(table->index(0, C::Samples).data().toString(),
                 QString::number(qulonglong(firstSamplesA_)));
        QCOMPARE(table->index(1, C::Status).data().toString(), QStringLiteral("ok"));
        QCOMPARE(table->index(1, C::Median).data().toString(),
                 QString::fromStdString(
                     results::formatDuration(results::summarize(stored->arms[1]).median)));
        QVERIFY(!table->index(1, C::Verdict).data().toString().isEmpty());
        QVERIFY(w.appliedModel()->rowCount() > 0);
        QCOMPARE(w.appliedModel()->columnCount(), 3);  // setting, A, B
        QCOMPARE(w.statusPanel()->statusText(0), QStringLiteral("ok"));
        QCOMPARE(w.statusPanel()->statusText(1), QStringLiteral("ok"));
        QVERIFY(verdictText(w).contains(QStringLiteral("Stored run #%1").arg(first_)));

        // Another stored run replaces it; a new live run takes the views back.
        QVERIFY(w.showStoredRun(second_));
        QTRY_VERIFY_WITH_TIMEOUT(verdictText(w).contains(QStringLiteral("second")), 10000);
        QCOMPARE(plots->timeline()->dataPoints(), 2 * (30 + 3));
        QVERIFY(!w.showStoredRun(999999));  // reported, nothing changes
        QCOMPARE(w.shownRunId(), second_);
        QTRY_VERIFY_WITH_TIMEOUT(!verdictText(w).contains(QStringLiteral("computing")), 10000);
        QCOMPARE(w.statusPanel()->rows(), 2);
        QCOMPARE(w.statusPanel()->phaseText(1), QStringLiteral("done"));
        const QString shot = dir_.filePath(QStringLiteral("reopened.png"));
        QVERIFY(w.saveScreenshot(shot));
        if (!qEnvironmentVariableIsEmpty("PITLANE_SHOT_DIR"))  // to look at by hand
            QFile::copy(shot,
                        QDir(qEnvironmentVariable("PITLANE_SHOT_DIR")).filePath("reopened.png"));
    }

    // Reopening a run leaves the setup alone; History ▸ Load setup puts the run's own preset
    // there (what Run then measures), read from the history file, without its samples.
    void loadSetupPutsTheRunsPresetInTheSetup() {
        QVERIFY(first_ && second_);
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db_));
        json other = testing::mlpPreset(25, 5);
        other["name"] = "the user's own setup";
        QVERIFY(w.openPreset(testing::writeJson(dir_, "other.json", other)));
        QVERIFY(!w.isWindowModified());

        w.historyPanel()->selectRun(second_);
        QVERIFY(w.showStoredRun(second_));
        QCOMPARE(w.setupPanel()->presetJson().value("name", std::string()), std::string("the user's own setup"));

        QVERIFY(w.historyPanel()->loadSetupAction()->isEnabled());
        w.historyPanel()->loadSetupAction()->trigger();
        json setup = w.setupPanel()->presetJson();
        QCOMPARE(setup.value("name", std::string()), std::string("second"));
        QCOMPARE(setup["run"].value("iters", 0), 30);
        QCOMPARE(setup["arms"][1]["knobs"].value("jit", std::string()), std::string("freeze"));
        QVERIFY(setup["arms"][0]["knobs"].value("jit", std::string("none")) == "none");
        QVERIFY2(w.setupPanel()->isValid(), qPrintable(w.setupPanel()->validationMessage()));
        QVERIFY(w.isWindowModified());  // a preset no file holds yet

        QVERIFY(w.loadSetupOfRun(first_));
        setup = w.setupPanel()->presetJson();
        QCOMPARE(setup.value("name", std::string()), std::string("gui test"));
        QCOMPARE(setup["run"].value("iters", 0), 40);
        QVERIFY(!setup["arms"][1]["knobs"].contains("jit"));

        QVERIFY(!w.loadSetupOfRun(999999));  // reported; the setup stays
        QCOMPARE(w.setupPanel()->presetJson().value("name", std::string()), std::string("gui test"));
        QVERIFY2(w.logPane()->plainText().contains(QStringLiteral("no such run")), qPrintable(w.logPane()->plainText()));
    }

    // Issue 44: `pitlane --open-run ID` showed the run beside another run's setup, which a
    // newcomer read as the run's. It puts the run's own setup there (as History ▸ Load setup
    // does); a setup that is not the shown run's (a file named on the command line, a run opened
    // from the list, a comparison of two runs) says so above it, with a link that loads the run's.
    void openRunShowsItsOwnSetupOrSaysItIsNot() {
        QVERIFY(first_ && second_);
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db_));
        w.resize(1366, 708);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        json mine = testing::mlpPreset(25, 5);
        mine["name"] = "the user's own setup";
        const QString minePath = testing::writeJson(dir_, "mine.json", mine);
        QVERIFY(w.openPreset(minePath));
        auto* history = w.findChild<app::HistoryController*>();
        QVERIFY(history);
        auto* setup = w.setupPanel();
        auto* note = setup->findChild<QLabel*>(QStringLiteral("setupOriginNote"));
        QVERIFY(note && !note->isVisible());
        const auto name = [&] { return setup->presetJson().value("name", std::string()); };

        // --open-run with no file named: the run and its own setup, nothing to say.
        QVERIFY(history->openRunWithItsSetup(second_, false));
        QCOMPARE(w.shownRunId(), second_);
        QCOMPARE(name(), std::string("second"));
        QCOMPARE(setup->presetJson()["run"].value("iters", 0), 30);
        QVERIFY2(!note->isVisible(), qPrintable(note->text()));
        QVERIFY(setup->originNote().isEmpty());

        // Another run opened from the list: the setup stays, and says it is not that run's.
        QVERIFY(w.showStoredRun(first_));
        QCOMPARE(name(), std::string("second"));
        QVERIFY(note->isVisible());
        QVERIFY2(note->text().contains(QStringLiteral("not run #%1's").arg(first_)), qPrintable(note->text()));
        // Its link loads that run's setup, and the note goes.
        emit note->linkActivated(QStringLiteral("load"));
        QCOMPARE(name(), std::string("gui test"));
        QCOMPARE(setup->presetJson()["run"].value("iters", 0), 40);
        QVERIFY2(!note->isVisible(), qPrintable(note->text()));
        // A new name measures the same thing; another iteration count does not.
        auto* presetName = setup->findChild<QLineEdit*>(QStringLiteral("presetName"));
        presetName->setText(QStringLiteral("renamed"));
        QTRY_COMPARE(name(), std::string("renamed"));
        QTest::qWait(300);  // the validation that follows an edit
        QVERIFY2(!note->isVisible(), qPrintable(note->text()));
        setup->findChild<QSpinBox*>(QStringLiteral("iters"))->setValue(41);
        QTRY_VERIFY(note->isVisible());

        // A file named on the command line stays the setup: said.
        QVERIFY(w.openPreset(minePath));
        QVERIFY(history->openRunWithItsSetup(first_, true));
        QCOMPARE(name(), std::string("the user's own setup"));
        QVERIFY(note->isVisible());
        QVERIFY(note->text().contains(QStringLiteral("not run #%1's").arg(first_)));

        // Arms of two runs: no run's setup at all.
        QVERIFY(w.showRunComparison({first_, 0, second_, 1}));
        QVERIFY2(note->isVisible() && note->text().contains(QStringLiteral("comparison")), qPrintable(note->text()));
    }

    void renameBaselineAndDeleteUpdateTheDatabase() {
        QVERIFY(first_ && second_);
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db_));
        auto* panel = w.historyPanel();
        auto* model = panel->model();
        QAbstractItemModelTester tester(model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto* store = w.history();

        QVERIFY(panel->renameRun(first_, QStringLiteral("  before the upgrade ")));
        QCOMPARE(store->runInfo(first_)->label, QStringLiteral("before the upgrade"));
        QCOMPARE(model->index(model->rowOf(first_), H::Label).data().toString(),
                 QStringLiteral("before the upgrade"));

        // Baseline through the action, as the button does: one per model.
        panel->selectRun(first_);
        QVERIFY(!panel->baselineAction()->isChecked());
        panel->baselineAction()->trigger();
        QCOMPARE(store->baselineRun(QStringLiteral("mlp")), std::optional<qint64>(first_));
        QCOMPARE(model->index(model->rowOf(first_), H::Baseline).data().toString(),
                 QStringLiteral("★"));
        QVERIFY(panel->baselineAction()->isChecked());
        QVERIFY(panel->setBaseline(second_, true));
        QCOMPARE(store->baselineRun(QStringLiteral("mlp")), std::optional<qint64>(second_));
        QVERIFY(!store->runInfo(first_)->baseline);
        QVERIFY(model->index(model->rowOf(first_), H::Baseline).data().toString().isEmpty());
        QVERIFY(panel->setBaseline(second_, false));
        QVERIFY(!store->baselineRun(QStringLiteral("mlp")));

        // Delete (the action asks first; the edit itself is this call): an imported run, so the
        // recorded ones stay for the other tests.
        const auto imported = store->importRun(fixtureRun("imported", "mlp"), "import");
        QVERIFY(imported);
        panel->refresh();
        QCOMPARE(model->rowCount(), 3);
        QVERIFY(panel->deleteRun(*imported));
        QVERIFY(!store->runInfo(*imported));
        QCOMPARE(store->sampleCount(*imported), qint64(0));
        QCOMPARE(model->rowCount(), 2);
        QCOMPARE(model->rowOf(*imported), -1);
        QSignalSpy errors(panel, &widgets::HistoryPanel::storeError);
        QVERIFY(!panel->deleteRun(*imported));  // gone: the store says so, the panel reports it
        QCOMPARE(errors.count(), 1);
    }

    void compareArmsOfTwoRuns() {
        QVERIFY(first_ && second_);
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db_));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));

        // The dialog: two run pickers, two arm pickers; the same arm twice is refused.
        widgets::CrossRunDialog dialog(w.historyPanel()->model()->runs(), first_, second_);
        QCOMPARE(dialog.choice().runX, first_);
        QCOMPARE(dialog.choice().runY, second_);
        dialog.select(true, first_, 0);
        dialog.select(false, second_, 1);
        const auto choice = dialog.choice();
        QCOMPARE(choice.armX, 0);
        QCOMPARE(choice.armY, 1);
        auto* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
        QVERIFY(ok->isEnabled());
        dialog.select(false, first_, 0);
        QVERIFY(!ok->isEnabled());

        // Last week's A against today's B, in the window's views.
        QVERIFY(w.showRunComparison(choice));
        QVERIFY(w.showsStoredRun());
        QCOMPARE(w.shownRunId(), qint64(0));  // a comparison is no stored run of its own
        auto* table = w.comparisonModel();
        QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 2, 10000);
        QCOMPARE(table->index(0, C::Arm).data().toString(), QStringLiteral("#%1 A").arg(first_));
        QCOMPARE(table->index(1, C::Arm).data().toString(), QStringLiteral("#%1 B").arg(second_));
        QCOMPARE(table->index(0, C::Ratio).data().toString(), QStringLiteral("baseline"));
        const QString verdict = table->index(1, C::Verdict).data().toString();
        QVERIFY2(verdict.contains(QStringLiteral("faster")) ||
                     verdict.contains(QStringLiteral("slower")) ||
                     verdict.contains(QStringLiteral("no significant")),
                 qPrintable(verdict));
        // The same verdict as the store's comparison, and the reader is told about interleaving.
        const auto expected = w.history()->compareRuns(first_, 0, second_, 1);
        QVERIFY(expected);
        QVERIFY(verdictText(w).contains(
            QString::fromStdString(expected->comparison.verdict).toHtmlEscaped()));
        QVERIFY2(verdictText(w).contains(QStringLiteral("not interleaved"), Qt::CaseInsensitive),
                 qPrintable(verdictText(w)));
        QCOMPARE(w.plotPanel()->timeline()->dataPoints(), 40 + 3 + 30 + 3);
        // The heading, verdict and note wrap, and the label is as tall as its wrapped text.
        auto* line = w.findChild<QLabel*>(QStringLiteral("verdictLine"));
        QTRY_VERIFY(line->height() >= line->heightForWidth(line->width()));
        // An arm that does not exist is reported and changes nothing.
        QVERIFY(!w.showRunComparison({first_, 0, second_, 7}));
        QCOMPARE(table->rowCount(), 2);
        const QString shot = dir_.filePath(QStringLiteral("compared.png"));
        QVERIFY(w.saveScreenshot(shot));
        if (!qEnvironmentVariableIsEmpty("PITLANE_SHOT_DIR"))
            QFile::copy(shot,
                        QDir(qEnvironmentVariable("PITLANE_SHOT_DIR")).filePath("compared.png"));
    }

    void exportEveryFormat() {
        QVERIFY(first_ && second_);
        QTemporaryDir out;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db_));
        QCOMPARE(w.exportAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
        QVERIFY(!w.exportAction()->isEnabled());  // nothing shown yet
        QVERIFY(w.showStoredRun(first_));
        QVERIFY(w.exportAction()->isEnabled());
        const qint64 samples = w.history()->sampleCount(first_);

        // The shown run, every format.
        for (const char* suffix : {"html", "pdf", "md", "csv", "json"}) {
            const QString path = out.filePath(QStringLiteral("shown.") + suffix);
            QString error;
            QVERIFY2(w.exportShownRun(path, &error), qPrintable(error));
            QVERIFY2(QFileInfo(path).size() > 100, qPrintable(path));
        }
        QFile html(out.filePath("shown.html"));
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QString page = QString::fromUtf8(html.readAll());
        QVERIFY(page.contains(QStringLiteral("<svg")));  // charts inline
        // No external resource: every src/href is inline data or an anchor.
        const QRegularExpression external(
            QStringLiteral("(src|href)\\s*=\\s*[\"\\x27]?(?!data:|#)[^\"\\x27\\s>]+"),
            QRegularExpression::CaseInsensitiveOption);
        const auto m = external.match(page);
        QVERIFY2(!m.hasMatch(), qPrintable(m.captured(0)));
        QVERIFY(!page.contains(QStringLiteral("@import")));
        QVERIFY(!page.contains(QStringLiteral("url(http")));
        QFile pdf(out.filePath("shown.pdf"));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QCOMPARE(pdf.read(5), QByteArray("%PDF-"));
        QCOMPARE(lineCount(out.filePath("shown.csv")), int(samples) + 1);  // header + samples
        const json j = testing::readJson(out.filePath("shown.json"));
        QCOMPARE(j["schema"], json(1));
        QCOMPARE(j["history_id"], json(std::to_string(first_)));
        QCOMPARE(j["arms"].size(), std::size_t(2));
        // Re-importing the JSON gives the same numbers.
        const auto back = results::fromResultsJson(j);
        const auto stored = w.history()->loadRun(first_);
        QCOMPARE(back.arms[1].samples.size(), stored->arms[1].samples.size());
        QCOMPARE(back.arms[1].samples.back().latency_ns, stored->arms[1].samples.back().latency_ns);
        QVERIFY(QFileInfo(out.filePath("shown.md")).size() > 0);

        // A run selected in the history, without opening it; and a comparison.
        QString error;
        QVERIFY2(w.exportStoredRun(second_, out.filePath("second.md"), &error), qPrintable(error));
        QFile md(out.filePath("second.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY(md.readAll().contains("second"));
        QVERIFY(w.showRunComparison({first_, 0, second_, 1}));
        QVERIFY2(w.exportShownRun(out.filePath("compared.html"), &error), qPrintable(error));
        QFile cmp(out.filePath("compared.html"));
        QVERIFY(cmp.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(cmp.readAll())
                    .contains(QStringLiteral("not interleaved"), Qt::CaseInsensitive));

        // Refused with a reason, and no file left behind.
        QVERIFY(!w.exportShownRun(out.filePath("shown.txt"), &error));
        QVERIFY(error.contains(QStringLiteral(".html")));
        QVERIFY(!QFile::exists(out.filePath("shown.txt")));
        QVERIFY(!w.exportStoredRun(999999, out.filePath("missing.html"), &error));
        QVERIFY(!QFile::exists(out.filePath("missing.html")));
    }

    // --db none, $PITLANE_DB, and a file that is not a history.
    // Issue 42: a run whose stored samples are damaged is reopened as damaged. A real run into a
    // history file of its own; one chunk of arm B's samples then damaged through SQLite, as
    // store_cli_integrity damages it: random value bits that still decode to the chunk's
    // latencies (only the chunk's CRC-32 finds them), and 8 bytes of 0xFF that do not decode.
    // The window says so above the verdict, shows B failed (code damaged) without its figures,
    // A whole, and no ratio, CI or verdict of B; shownRunDamaged() (--open-run exits 3 on it).
    void reopeningADamagedRunSaysItIsDamaged() {
        for (const bool decodes : {true, false}) {
            const QString db = dir_.filePath(decodes ? QStringLiteral("damaged-decodes.sqlite")
                                                     : QStringLiteral("damaged-garbage.sqlite"));
            qint64 runId = 0;
            QString intactMedianB;
            {
                app::MainWindow w;
                w.setInteractive(false);
                QVERIFY(w.setDatabasePath(db));
                QVERIFY(w.openPreset(testing::writeJson(dir_, "damaged.json", testing::mlpPreset(600, 300))));
                QSignalSpy finished(&w, &app::MainWindow::runFinished);
                QVERIFY(w.startRun());
                QVERIFY(finished.wait(120000));
                QCOMPARE(finished.first().first().toBool(), true);
                runId = w.shownRunId();
                QVERIFY(runId > 0);
                QTRY_COMPARE_WITH_TIMEOUT(w.comparisonModel()->rowCount(), 2, 10000);
                intactMedianB = w.comparisonModel()->index(1, C::Median).data().toString();
                QVERIFY(!intactMedianB.isEmpty());
            }
            const QString chunk = damageChunkOfArmB(db, decodes);
            QVERIFY2(!chunk.isEmpty(), "no chunk of arm B to damage");

            app::MainWindow w;
            w.setInteractive(false);
            QVERIFY(w.setDatabasePath(db));
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QVERIFY(w.showStoredRun(runId));
            QTRY_VERIFY_WITH_TIMEOUT(!verdictText(w).contains(QStringLiteral("computing")), 10000);
            QVERIFY(w.shownRunDamaged());
            const QString verdict = verdictText(w);
            QVERIFY2(verdict.contains(QStringLiteral("Damaged in the history: run %1 arm B: %2").arg(runId).arg(chunk)),
                     qPrintable(verdict));
            QVERIFY2(verdict.contains(QStringLiteral("shown as failed, without figures")), qPrintable(verdict));
            QVERIFY2(!verdict.contains(QStringLiteral("faster")) && !verdict.contains(QStringLiteral("slower")) &&
                         !verdict.contains(QStringLiteral("no significant difference")),
                     qPrintable(verdict));
            auto* table = w.comparisonModel();
            QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 2, 10000);
            QCOMPARE(table->index(0, C::Status).data().toString(), QStringLiteral("ok"));
            QVERIFY(!table->index(0, C::Median).data().toString().isEmpty());
            const QString statusB = table->index(1, C::Status).data().toString();
            QVERIFY2(statusB.contains(QStringLiteral("failed")), qPrintable(statusB));
            QVERIFY2(table->index(1, C::Status).data(Qt::ToolTipRole).toString().contains(QStringLiteral("damaged")),
                     qPrintable(table->index(1, C::Status).data(Qt::ToolTipRole).toString()));
            for (const int column : {int(C::Median), int(C::P90), int(C::P99)}) {
                const QString cell = table->index(1, column).data().toString();
                QVERIFY2(cell != intactMedianB && !cell.contains(QRegularExpression(QStringLiteral("[0-9]"))),
                         qPrintable(QStringLiteral("column %1 of the damaged arm shows %2").arg(column).arg(cell)));
            }
            const QString verdictB = table->index(1, C::Verdict).data().toString();
            QVERIFY2(verdictB.contains(QStringLiteral("B is damaged in the history")) &&
                         verdictB.contains(QStringLiteral("not compared")) && !verdictB.contains(QStringLiteral("faster")) &&
                         !verdictB.contains(QStringLiteral("slower")) && !verdictB.contains(QStringLiteral("CI")),
                     qPrintable(verdictB));
            QCOMPARE(w.statusPanel()->statusText(1), QStringLiteral("failed"));
            QVERIFY2(w.logPane()->plainText().contains(QStringLiteral("damaged")), qPrintable(w.logPane()->plainText()));
        }
    }

    void databaseChoice() {
        {
            app::MainWindow w;  // PITLANE_DB=none from the test registration
            w.setInteractive(false);
            QVERIFY(w.setDatabasePath(QString()));
            QVERIFY(!w.history());
            QVERIFY(w.historyPanel()
                        ->findChild<QLabel*>(QStringLiteral("historySummary"))
                        ->text()
                        .contains(QStringLiteral("--db none")));
            QVERIFY(w.setDatabasePath(QStringLiteral("none")));
            QVERIFY(!w.history());
            QVERIFY(!w.historyPanel()->compareAction()->isEnabled());
        }
        {
            QTemporaryDir tmp;
            const QString env = tmp.filePath(QStringLiteral("from-env.sqlite"));
            qputenv("PITLANE_DB", env.toLocal8Bit());
            app::MainWindow w;
            w.setInteractive(false);
            QCoreApplication::processEvents();  // the default choice is made once the loop runs
            qputenv("PITLANE_DB", "none");
            QCOMPARE(w.databasePath(), env);
            QVERIFY(QFile::exists(env));
            // --db wins over $PITLANE_DB.
            QVERIFY(w.setDatabasePath(db_));
            QCOMPARE(w.databasePath(), db_);
        }
        {
            QTemporaryDir tmp;
            const QString notSqlite = testing::writeJson(tmp, "notes.json", {{"keep", "me"}});
            const QByteArray before = [&] {
                QFile f(notSqlite);
                f.open(QIODevice::ReadOnly);
                return f.readAll();
            }();
            app::MainWindow w;
            w.setInteractive(false);
            QVERIFY(!w.setDatabasePath(notSqlite));
            QVERIFY(!w.history());
            QFile f(notSqlite);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QCOMPARE(f.readAll(), before);  // untouched
            QVERIFY(w.logPane()->plainText().contains(QStringLiteral("not an SQLite")));
        }
    }

    void historyModelOnAnImportedStore() {
        QTemporaryDir tmp;
        store::RunStore store;
        QVERIFY(store.open(tmp.filePath(QStringLiteral("h.sqlite"))));
        widgets::HistoryModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setStore(&store);
        QCOMPARE(model.rowCount(), 0);
        auto failed = fixtureRun("with a crash", "resnet18");
        failed.arms[1].status = results::kCrashed;
        const auto a = store.importRun(fixtureRun("old", "mlp"), "import");
        const auto b = store.importRun(failed, "import");
        QVERIFY(a && b);
        QVERIFY(store.setBaseline(*a, true));
        model.refresh();
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(H::ColumnCount));
        QCOMPARE(model.runId(0), *b);  // newest first
        QCOMPARE(model.index(0, H::Arms).data().toString(), QStringLiteral("A, B (crashed)"));
        QCOMPARE(model.index(1, H::Baseline).data().toString(), QStringLiteral("★"));
        QCOMPARE(model.index(1, H::Baseline).data(H::RunIdRole).toLongLong(), *a);
        QCOMPARE(model.index(1, H::Id).data().toString(), QStringLiteral("#%1").arg(*a));
        QVERIFY(model.index(1, H::Verdict).data().toString().contains(QStringLiteral("faster")));
        QVERIFY(model.index(1, H::Date).data().toString().startsWith(QStringLiteral("2024-03-0")));
        QVERIFY(model.index(0, H::Model)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("#%1").arg(*b)));
        QCOMPARE(model.headerData(H::Verdict, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QStringLiteral("Verdict"));
        model.setStore(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
};

PITLANE_GUI_TEST_MAIN(GuiHistory)
#include "gui_history.moc"
