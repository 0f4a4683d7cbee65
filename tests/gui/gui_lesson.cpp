// A preset's lesson in the real window: a lesson preset shows its title, text, claim and what to
// expect above the verdict; a preset without one shows no panel; the lesson survives save ->
// reopen. A real run of a small mlp lesson (started from the Lessons browser) is judged once it
// finishes: one check reproduces, one does not, each a row with its badge and figure; the
// history stores the judgement (Lesson column), and the stored run shows it when reopened. The
// Lessons browser lists the lesson presets of $PITLANE_PRESETS_DIR with their status from the
// history, and follows the runs stored.
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/results/lesson.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/history/history_model.h"
#include "pitlane/widgets/history/history_panel.h"
#include "pitlane/widgets/lessons/lesson_panel.h"
#include "pitlane/widgets/lessons/lessons_browser.h"
#include "pitlane/widgets/setup/setup_panel.h"

#include <QAbstractButton>
#include <QDockWidget>
#include <QTableWidget>

using namespace pitlane;
using json = nlohmann::json;

namespace {
QString presetFile(const char* name) {
    return QDir(qEnvironmentVariable("PITLANE_SOURCE_DIR"))
        .filePath(QStringLiteral("presets/") + QString::fromLatin1(name));
}

// The mlp arms of gui_test_support (A train + grad, B eval + inference_mode) with a lesson whose
// first check must reproduce (B reads back inference_mode), second must not (A does not), and a
// speed check that may go either way on a busy machine.
json mlpLesson() {
    json p = testing::mlpPreset(30, 10);
    p["name"] = "Lesson: mlp under test";
    p["lesson"] = {
        {"title", "MLP grad under test"},
        {"text", "Autograd records a graph for every forward; inference_mode does not."},
        {"claim", "inference_mode is faster than autograd (the PyTorch docs)"},
        {"expect", "B reads back inference_mode; A does not"},
        {"checks",
         {{{"kind", "applied"}, {"arm", "B"}, {"field", "grad"}, {"equals", "inference_mode"}},
          {{"kind", "applied"}, {"arm", "A"}, {"field", "grad"}, {"equals", "inference_mode"}},
          {{"kind", "faster"}, {"arm", "B"}, {"than", "A"}}}}};
    return p;
}

// A lesson of a CUDA machine, and one already judged in the history (a synthetic run).
json cudaLesson() {
    json p = testing::mlpPreset(30, 10);
    p["name"] = "Lesson: a CUDA one";
    p["lesson"] = {
        {"title", "Needs a GPU"},
        {"text", "t"},
        {"needs", "cuda"},
        {"checks", {{{"kind", "applied"}, {"arm", "A"}, {"field", "device"}, {"equals", "cuda"}}}}};
    return p;
}
json storedLesson() {
    json p = testing::mlpPreset(30, 10);
    p["name"] = "Lesson: judged before";
    p["model"] = "resnet18";
    p["lesson"] = {
        {"title", "Judged before"},
        {"text", "t"},
        {"claim", "c"},
        {"checks",
         {{{"kind", "applied"}, {"arm", "A"}, {"field", "grad"}, {"equals", "enabled"}}}}};
    return p;
}
results::RunResult storedRun(const json& preset) {
    results::RunResult run;
    run.preset.name = preset["name"].get<std::string>();
    run.preset.model = preset["model"].get<std::string>();
    run.preset.lesson = preset["lesson"];
    run.preset_json = preset;
    run.started_at = "2024-03-01T10:00:00Z";
    results::ArmResult a;
    a.name = "A";
    a.status = results::kOk;
    a.applied.grad = "enabled";
    for (int i = 0; i < 10; ++i) a.samples.push_back({0, i, 1, 0, 1'000'000 + 100 * i, 0});
    run.arms.push_back(a);
    return run;
}

int rowOf(const widgets::LessonsBrowser* b, const QString& title) {
    for (int r = 0; r < b->lessonCount(); ++r)
        if (b->lessonAt(r).title == title) return r;
    return -1;
}

QString checkStatus(const widgets::LessonPanel* p, int i) {
    return QString::fromStdString(p->judgement()["checks"][i].value("status", std::string()));
}

// $PITLANE_SCREENSHOT_DIR: the window as a user at 1600x1000 would see it, for people to look at.
void maybeScreenshot(app::MainWindow& w, const char* name) {
    const QString dir = qEnvironmentVariable("PITLANE_SCREENSHOT_DIR");
    if (dir.isEmpty()) return;
    QTest::qWait(200);
    QVERIFY(w.saveScreenshot(QDir(dir).filePath(QLatin1String(name))));
}
}  // namespace

class GuiLesson : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { testing::failOnQtWarnings(); }

    void lessonPresetShowsItsLessonAndDefaultShowsNone() {
        app::MainWindow w;
        w.setInteractive(false);
        w.setDatabasePath(QStringLiteral("none"));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* lesson = w.lessonPanel();
        QVERIFY(lesson);
        QVERIFY(!lesson->isVisibleTo(&w));  // nothing loaded yet

        // The bundled lessons are being written: what the file says is what the panel shows.
        const json bundled = testing::readJson(presetFile("lesson_grad_inference.json"))["lesson"];
        auto field = [&](const char* key) {
            return QString::fromStdString(bundled.value(key, std::string())).trimmed();
        };
        QVERIFY(w.openPreset(presetFile("lesson_grad_inference.json")));
        QVERIFY(lesson->hasLesson());
        QVERIFY(lesson->isVisibleTo(&w));
        QCOMPARE(lesson->lessonTitle(), field("title"));
        QCOMPARE(lesson->lessonText(), field("text"));
        QCOMPARE(lesson->claimText(), field("claim"));
        QCOMPARE(lesson->expectText(), field("expect"));
        QVERIFY(!lesson->isJudged());
        // What the user reads: the title, the claim and the expectation, on the screen.
        QVERIFY(lesson->aboutText().contains(
            QStringLiteral("Lesson: %1").arg(field("title").toHtmlEscaped())));
        if (!field("claim").isEmpty())
            QVERIFY(lesson->aboutText().contains(QStringLiteral("Claim:")));
        if (!field("expect").isEmpty())
            QVERIFY(lesson->aboutText().contains(QStringLiteral("Expect: ")));
        // Before a run, its checks say what they expect and when they are judged.
        if (bundled.contains("checks"))
            QVERIFY(lesson->checksText().contains(QStringLiteral("judged when")));
        // Laid out at the text's height (once the layout ran), but never taller than three
        // fifths of the verdict page: a long lesson scrolls, the verdict stays in sight.
        QTRY_VERIFY2(lesson->height() > lesson->fontMetrics().height() * 3 &&
                         lesson->height() <= std::max(lesson->parentWidget()->height() * 3 / 5,
                                                      lesson->fontMetrics().lineSpacing() * 6) +
                                                 4,
                     qPrintable(QStringLiteral("%1 of %2")
                                    .arg(lesson->height())
                                    .arg(lesson->parentWidget()->height())));
        QVERIFY(w.height() <= w.screen()->availableGeometry().height());

        QVERIFY(w.openPreset(presetFile("default.json")));
        QVERIFY(!lesson->hasLesson());
        QVERIFY(!lesson->isVisibleTo(&w));
        QVERIFY(lesson->lessonTitle().isEmpty());
    }

    void lessonSurvivesSaveAndReopen() {
        QTemporaryDir dir;
        const QString saved = dir.filePath(QStringLiteral("mine.json"));
        {
            app::MainWindow w;
            w.setInteractive(false);
            w.setDatabasePath(QStringLiteral("none"));
            QVERIFY(w.openPreset(presetFile("lesson_threads.json")));
            QVERIFY(w.lessonPanel()->hasLesson());
            QString error;
            QVERIFY2(w.savePreset(saved, &error), qPrintable(error));
            QVERIFY(w.lessonPanel()->hasLesson());  // saving reloads the setup: still there
        }
        const auto original = testing::readJson(presetFile("lesson_threads.json"));
        QCOMPARE(testing::readJson(saved).value("lesson", nlohmann::json()), original["lesson"]);

        app::MainWindow w;
        w.setInteractive(false);
        w.setDatabasePath(QStringLiteral("none"));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openPreset(saved));
        QVERIFY(w.lessonPanel()->isVisibleTo(&w));
        QCOMPARE(w.lessonPanel()->lessonTitle(),
                 QString::fromStdString(original["lesson"]["title"].get<std::string>()));
    }

    void browserListsTheLessonPresetsWithTheirStatus() {
        QTemporaryDir dir;
        testing::writeJson(dir, QStringLiteral("lesson_mlp.json"), mlpLesson());
        testing::writeJson(dir, QStringLiteral("lesson_cuda.json"), cudaLesson());
        testing::writeJson(dir, QStringLiteral("lesson_stored.json"), storedLesson());
        testing::writeJson(dir, QStringLiteral("default.json"), testing::mlpPreset(30, 10));
        const QString db = dir.filePath(QStringLiteral("h.sqlite"));
        {
            store::RunStore s;
            QVERIFY(s.open(db));
            QVERIFY(s.importRun(storedRun(storedLesson()), QStringLiteral("import")));
        }
        qputenv("PITLANE_PRESETS_DIR", dir.path().toLocal8Bit());
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db));
        if (qEnvironmentVariableIsSet("PITLANE_SCREENSHOT_DIR")) w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(!w.lessonsDock()->isVisible());
        w.browseLessonsAction()->trigger();
        QVERIFY(w.lessonsDock()->isVisible());
        auto* b = w.lessonsBrowser();
        QCOMPARE(b->lessonCount(), 3);  // lesson_*.json only, by file name
        const int mlp = rowOf(b, QStringLiteral("MLP grad under test"));
        const int cuda = rowOf(b, QStringLiteral("Needs a GPU"));
        const int stored = rowOf(b, QStringLiteral("Judged before"));
        QVERIFY(mlp >= 0 && cuda >= 0 && stored >= 0);
        auto cell = [b](int row, int col) { return b->table()->item(row, col)->text(); };
        using L = widgets::LessonsBrowser;
        QCOMPARE(cell(mlp, L::Model), QStringLiteral("mlp"));
        QCOMPARE(cell(stored, L::Model), QStringLiteral("resnet18"));
        QCOMPARE(cell(mlp, L::Needs), QStringLiteral("CPU"));
        QVERIFY(cell(cuda, L::Needs).startsWith(QStringLiteral("CUDA")));
        // Status on this machine from the history; never run: "not run", with the word.
        QCOMPARE(b->statusOf(stored), QString::fromLatin1(results::kReproduced));
        QCOMPARE(cell(stored, L::Status), QStringLiteral("✔ reproduced"));
        QVERIFY(cell(stored, L::LastRun).startsWith(QStringLiteral("#")));
        QVERIFY(b->statusOf(mlp).isEmpty());
        QCOMPARE(cell(mlp, L::Status), QStringLiteral("– not run"));
        QCOMPARE(cell(mlp, L::LastRun), QStringLiteral("never"));
        // Selected: its mechanism, claim and verdict side by side.
        b->selectLesson(mlp);
        QVERIFY(b->detailsText().contains(QStringLiteral("inference_mode does not")));
        QVERIFY(b->detailsText().contains(QStringLiteral("the PyTorch docs")));
        QVERIFY(b->detailsText().contains(QStringLiteral("Not run on this machine yet")));
        QVERIFY(b->detailsText().contains(QStringLiteral("B reads back grad")));
        b->selectLesson(stored);
        QVERIFY(b->detailsText().contains(QStringLiteral("A read back grad = \"enabled\"")));

        // Open loads the preset into the setup.
        b->openButton(cuda)->click();
        QCOMPARE(QString::fromStdString(w.setupPanel()->presetJson().value("name", std::string())),
                 QStringLiteral("Lesson: a CUDA one"));
        // ...and the details follow the lesson whose button was pressed (issue 27).
        QCOMPARE(b->selectedLesson(), cuda);
        QVERIFY(b->detailsText().contains(QStringLiteral("Needs a GPU")));
        QCOMPARE(w.lessonPanel()->lessonTitle(), QStringLiteral("Needs a GPU"));

        // Run loads and starts it; the lesson is judged once the run is over.
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        b->runButton(mlp)->click();
        QCOMPARE(b->selectedLesson(), mlp);
        QVERIFY(w.isRunning());
        QVERIFY(!b->runButton(mlp)->isEnabled());  // one run at a time
        QCOMPARE(w.lessonPanel()->lessonTitle(), QStringLiteral("MLP grad under test"));
        QVERIFY(w.lessonPanel()->checksText().contains(QStringLiteral("judged when the run")));
        QVERIFY(finished.wait(90000));
        QVERIFY(finished.first().first().toBool());
        checkJudgedPanel(w.lessonPanel());
        maybeScreenshot(w, "gui_lesson_live.png");
        b->selectLesson(mlp);

        // The browser follows the run stored; the history has its Lesson column.
        const auto runs = w.history()->listRuns();
        QVERIFY(!runs.isEmpty());
        const qint64 id = runs.first().id;
        QCOMPARE(runs.first().lessonStatus(), QString::fromLatin1(results::kNotReproduced));
        QTRY_COMPARE(b->statusOf(mlp), QString::fromLatin1(results::kNotReproduced));
        QCOMPARE(cell(mlp, L::Status), QStringLiteral("✘ not reproduced"));
        // How long it took here (the next run's expected duration), and why it may not have
        // reproduced here.
        QVERIFY2(QRegularExpression(QStringLiteral("^#\\d+ · \\d{4}-\\d\\d-\\d\\d · \\d+ s$"))
                     .match(cell(mlp, L::LastRun))
                     .hasMatch(),
                 qPrintable(cell(mlp, L::LastRun)));
        QVERIFY(b->detailsText().contains(QStringLiteral("other load while it ran")));
        QVERIFY(b->runButton(mlp)->isEnabled());
        auto* history = w.historyPanel()->model();
        QTRY_COMPARE(
            history->index(history->rowOf(id), widgets::HistoryModel::Lesson).data().toString(),
            QStringLiteral("✘ not reproduced"));
        QVERIFY(history->index(history->rowOf(id), widgets::HistoryModel::Lesson)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("✔ reproduced: B reads back grad")));

        // The stored run opened from the history shows its stored judgement.
        QVERIFY(w.openPreset(presetFile("default.json")));
        QVERIFY(!w.lessonPanel()->isVisibleTo(&w));
        QVERIFY(w.showStoredRun(id));
        QVERIFY(w.lessonPanel()->isVisibleTo(&w));
        QCOMPARE(w.lessonPanel()->lessonTitle(), QStringLiteral("MLP grad under test"));
        checkJudgedPanel(w.lessonPanel());
        QVERIFY(
            w.lessonPanel()->checksText().contains(QStringLiteral("as judged when it was stored")));
        QCOMPARE(w.lessonPanel()->judgement(), runs.first().lesson);
        QVERIFY(b->detailsText().contains(QStringLiteral("run #%1").arg(id)));
        maybeScreenshot(w, "gui_lesson_stored.png");
        qunsetenv("PITLANE_PRESETS_DIR");
    }

    void browserListsTheBundledLessons() {
        // Without $PITLANE_PRESETS_DIR: the bundled folder (the source tree's, in a build).
        qunsetenv("PITLANE_PRESETS_DIR");
        const QDir bundled(
            QDir(qEnvironmentVariable("PITLANE_SOURCE_DIR")).filePath(QStringLiteral("presets")));
        const QStringList files = bundled.entryList({QStringLiteral("lesson_*.json")}, QDir::Files);
        app::MainWindow w;
        w.setInteractive(false);
        w.setDatabasePath(QStringLiteral("none"));
        if (qEnvironmentVariableIsSet("PITLANE_SCREENSHOT_DIR")) w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.browseLessonsAction()->trigger();
        auto* b = w.lessonsBrowser();
        QCOMPARE(b->lessonCount(), int(files.size()));
        for (int r = 0; r < b->lessonCount(); ++r) {
            const auto& l = b->lessonAt(r);
            QVERIFY2(l.error.isEmpty(), qPrintable(l.error));
            QVERIFY2(!l.title.isEmpty() && !l.model.isEmpty() && !l.text.isEmpty(),
                     qPrintable(l.path));
            QCOMPARE(b->table()->item(r, widgets::LessonsBrowser::Status)->text(),
                     QStringLiteral("– not run"));  // no history here
        }
        if (b->lessonCount() > 0) {
            b->selectLesson(0);
            b->openButton(0)->click();
            QCOMPARE(w.lessonPanel()->lessonTitle(), b->lessonAt(0).title);
        }
        maybeScreenshot(w, "gui_lesson_bundled.png");
    }

private:
    static void checkJudgedPanel(widgets::LessonPanel* panel) {
        QVERIFY(panel->isJudged());
        QCOMPARE(panel->status(), QString::fromLatin1(results::kNotReproduced));
        QCOMPARE(checkStatus(panel, 0), QString::fromLatin1(results::kReproduced));
        QCOMPARE(checkStatus(panel, 1), QString::fromLatin1(results::kNotReproduced));
        QVERIFY(checkStatus(panel, 2) != QLatin1String(results::kNotRun));
        // On the screen: a row per check with its badge word, expectation and measured figure.
        const QString shown = panel->checksText();
        QVERIFY(shown.contains(QStringLiteral("✔&nbsp;reproduced")));
        QVERIFY(shown.contains(QStringLiteral("✘&nbsp;not&nbsp;reproduced")));
        QVERIFY(shown.contains(QStringLiteral("B reads back grad = &quot;inference_mode&quot;")));
        QVERIFY(shown.contains(QStringLiteral("A read back grad = &quot;enabled&quot;")));
        QVERIFY(shown.contains(QStringLiteral("x the speed of A")));
        QCOMPARE(shown.count(QStringLiteral("<tr>")), 4);  // header + 3 checks
        QVERIFY(panel->aboutText().contains(QStringLiteral("the PyTorch docs")));
    }
};

PITLANE_GUI_TEST_MAIN(GuiLesson)
#include "gui_lesson.moc"
