// A preset's lesson in the real window: a lesson preset shows its title, text and what to expect
// above the verdict; a preset without one shows no panel; the lesson survives save -> reopen.
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/widgets/lesson_panel.h"

using namespace pitlane;

namespace {
QString presetFile(const char* name) {
    return QDir(qEnvironmentVariable("PITLANE_SOURCE_DIR"))
        .filePath(QStringLiteral("presets/") + QString::fromLatin1(name));
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

        QVERIFY(w.openPreset(presetFile("lesson_grad_inference.json")));
        QVERIFY(lesson->hasLesson());
        QVERIFY(lesson->isVisibleTo(&w));
        QCOMPARE(lesson->lessonTitle(), QStringLiteral("Grad left on during inference"));
        QVERIFY(lesson->lessonText().contains(QStringLiteral("inference_mode")));
        QVERIFY(lesson->expectText().startsWith(QStringLiteral("B is faster")));
        // What the user reads: the title, the text and the expectation, on the screen.
        QVERIFY(lesson->text().contains(QStringLiteral("Lesson: Grad left on during inference")));
        QVERIFY(lesson->text().contains(QStringLiteral("Expect: B is faster")));
        // Laid out at the text's height (once the layout ran): more than the title alone, far
        // less than the height the text takes in a narrow column.
        QTRY_VERIFY2(lesson->height() > lesson->fontMetrics().height() * 3 &&
                         lesson->height() < lesson->fontMetrics().height() * 12,
                     qPrintable(QString::number(lesson->height())));

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
};

PITLANE_GUI_TEST_MAIN(GuiLesson)
#include "gui_lesson.moc"
