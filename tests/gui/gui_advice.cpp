// The Advice tab (issue 14): a real profiled run of the bundled resnet18 (a train-mode arm with
// autograd on against an eval / inference_mode arm) lists the advisor's suggestions per arm,
// ranked, with the share they address and the change; "Add arm" puts the suggested arm into the
// arm editor, ready to run; the same run reopened from the history is advised again; the Run
// box's "Profile after measuring" writes run.profile_iters.
#include "gui_test_support.h"

#include "command_line.h"
#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/results/advice_view.h"
#include "pitlane/widgets/setup/arm_editor.h"
#include "pitlane/widgets/setup/setup_panel.h"

#include <QCheckBox>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QTabWidget>

using namespace pitlane;
using json = nlohmann::json;

namespace {

const json kPreset = {
    {"name", "advice"},
    {"model", "resnet18"},
    {"input", {{{"shape", {3, 64, 64}}}}},
    {"run",
     {{"warmup_iters", 2},
      {"iters", 10},
      {"block_iters", 5},
      {"processes", 1},
      {"profile_iters", 2}}},
    {"arms",
     {{{"name", "A"},
       {"knobs", {{"mode", "train"}, {"grad", "enabled"}, {"intra_op_threads", 1}}}},
      {{"name", "B"},
       {"knobs", {{"mode", "eval"}, {"grad", "inference_mode"}, {"intra_op_threads", 1}}}}}}};

// The index in the snapshot of the arm's first (highest-ranked) advice; -1: none.
int firstAdviceOf(const widgets::AdviceSnapshot& s, std::size_t arm) {
    for (std::size_t i = 0; i < s.advice.size(); ++i)
        if (s.advice[i].arm == arm) return int(i);
    return -1;
}

QString tabText(const app::MainWindow& w, QWidget* page) {
    auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("resultsTabs"));
    return tabs->tabText(tabs->indexOf(page));
}

void saveShot(app::MainWindow& w, const char* name) {
    if (const QByteArray dir = qgetenv("PITLANE_SCREENSHOT_DIR"); !dir.isEmpty())
        QVERIFY(w.saveScreenshot(QString::fromLocal8Bit(dir) + QLatin1Char('/') +
                                 QLatin1String(name)));
}

}  // namespace

class GuiAdvice : public QObject {
    Q_OBJECT
    QTemporaryDir history_;

private slots:
    void init() {
        testing::failOnQtWarnings();
        QSettings().clear();
    }

    void profiledRunAdvisesAndAddsTheArm() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(history_.filePath(QStringLiteral("advice.sqlite"))));
        w.resize(1366, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openPreset(testing::writeJson(dir, "advice.json", kPreset)));
        auto* profile = w.findChild<QCheckBox*>(QStringLiteral("profileAfter"));
        QVERIFY(profile && profile->isChecked());  // the preset's profile_iters
        QVERIFY(w.showResultsTab(QStringLiteral("advice")));
        widgets::AdviceView* view = w.adviceView();
        QCOMPARE(tabText(w, view), QStringLiteral("Advice"));

        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        QVERIFY(!view->snapshot());  // computed when the run finishes
        QVERIFY(finished.wait(150000));
        QCOMPARE(finished.first().first().toBool(), true);
        const auto& result = w.runner()->result();
        QVERIFY(result.arms[0].profile.is_object());

        // With the final verdict (runFinished follows it): every arm profiled, advice for the
        // train arm, its first piece the one about train mode or the unfused layers, measured
        // from the profile.
        const widgets::AdviceSnapshot* s = view->snapshot();
        QVERIFY(s);
        QCOMPARE(s->arms, (std::vector<std::string>{"A", "B"}));
        QVERIFY(s->profiled[0] && s->profiled[1]);
        QVERIFY(!s->advice.empty());
        QCOMPARE(tabText(w, view), QStringLiteral("Advice (%1)").arg(s->advice.size()));
        const int first = firstAdviceOf(*s, 0);
        QVERIFY(first == 0);  // the train arm's advice comes first
        const results::Advice& top = s->advice[std::size_t(first)];
        QVERIFY2(top.rule == "fuse_for_inference" || top.rule == "train_mode_layers",
                 top.rule.c_str());
        QCOMPARE(top.tier, results::AdviceTier::Latency);
        QVERIFY(top.measured);
        QVERIFY(top.share > 0.25);
        QVERIFY(!top.arm_knobs.is_null());
        for (std::size_t i = 1; i < s->advice.size(); ++i)  // per arm, in the order of the run
            QVERIFY(s->advice[i].arm >= s->advice[i - 1].arm);
        // The arms that rules named for the train arm: the change to eval mode among them.
        bool evalSuggested = false;
        for (const auto& a : s->advice)
            if (a.arm == 0 && a.change.value("mode", std::string()) == "eval") evalSuggested = true;
        QVERIFY(evalSuggested);

        // On screen: the title with its evidence, the share, the change.
        auto* row = view->findChild<QLabel*>(QStringLiteral("advice_%1").arg(first));
        QVERIFY(row && row->isVisible());
        QVERIFY(row->text().contains(QString::fromStdString(top.title).toHtmlEscaped()));
        QVERIFY(row->text().contains(QStringLiteral("per profiled iteration")));
        QCOMPARE(row->property("rule").toString(), QString::fromStdString(top.rule));
        QVERIFY(view->findChild<QLabel*>(QStringLiteral("adviceHint"))->isHidden());
        bool shareShown = false, changeShown = false;
        const QString share = QStringLiteral("%1 %").arg(100.0 * top.share, 0, 'f', 0);
        const QString change = QString::fromStdString(results::changeText(top.change));
        for (auto* l : view->findChildren<QLabel*>()) {
            shareShown = shareShown || (l->text().contains(share) && l->text().contains("measured"));
            changeShown = changeShown || l->text().contains(change.toHtmlEscaped());
        }
        QVERIFY(shareShown);
        QVERIFY(changeShown);
        // Advice that is not a knob: its button says why it cannot add an arm.
        for (std::size_t i = 0; i < s->advice.size(); ++i)
            if (s->advice[i].arm_knobs.is_null()) {
                QVERIFY(!view->addButton(i)->isEnabled());
                QCOMPARE(view->addButton(i)->toolTip(), QString::fromStdString(s->advice[i].action));
            }
        saveShot(w, "advice.png");

        // "Add arm": a third arm in the setup, named as the advisor names it, with exactly the
        // advice's knobs, valid, ready for Run.
        QPushButton* add = view->addButton(std::size_t(first));
        QVERIFY(add && add->isEnabled() && add->isVisible());
        QTest::mouseClick(add, Qt::LeftButton);
        const json arms = w.setupPanel()->presetJson()["arms"];
        QCOMPARE(arms.size(), std::size_t(3));
        QCOMPARE(arms[2]["knobs"], top.arm_knobs);
        QCOMPARE(arms[2]["name"], s->suggested[std::size_t(first)]["name"]);
        QCOMPARE(arms[2]["name"].get<std::string>(), "A + " + results::changeText(top.change));
        QCOMPARE(arms[0]["knobs"], kPreset["arms"][0]["knobs"]);  // the others untouched
        QVERIFY(!add->isEnabled());
        QCOMPARE(add->text(), QStringLiteral("Added"));
        const auto built = w.setupPanel()->build();
        QVERIFY2(built.preset.has_value(), qPrintable(built.error));
        QCOMPARE(built.preset->arms.size(), std::size_t(3));
        QTRY_VERIFY(w.runAction()->isEnabled());

        // The same run reopened from the history is advised again (computed on the verdict's
        // thread when it is shown); without a stored profile, the hint says what gives the rules
        // more evidence.
        const qint64 id = w.shownRunId();
        QVERIFY(id > 0);
        QVERIFY(w.showStoredRun(id));
        QVERIFY(w.showsStoredRun());
        QTRY_VERIFY_WITH_TIMEOUT(view->snapshot() != nullptr, 30000);
        const auto* stored = view->snapshot();
        QCOMPARE(stored->arms, (std::vector<std::string>{"A", "B"}));
        QVERIFY(firstAdviceOf(*stored, 0) >= 0);
        auto* hint = view->findChild<QLabel*>(QStringLiteral("adviceHint"));
        if (!w.shownResult().arms[0].profile.is_object()) {
            QVERIFY(!stored->profiled[0]);
            QVERIFY(!hint->isHidden());
            QVERIFY(hint->text().contains(QStringLiteral("Profile after measuring")));
        } else {
            QVERIFY(hint->isHidden());
        }
    }

    // Advice that is not a knob (the reference_blas rule: install a BLAS) shows what to do, and
    // its button is disabled with that as the reason; a serving run says why it has no advice.
    void nonKnobAdviceExplainsItself() {
        auto s = std::make_shared<widgets::AdviceSnapshot>();
        s->arms = {"A"};
        s->profiled = {true};
        s->measured = {true};
        results::Advice a;
        a.rule = "reference_blas";
        a.title = "Use an optimized BLAS instead of the reference BLAS";
        a.evidence = "aten::addmm 4.00 ms of 5.00 ms per profiled iteration (80 %). More.";
        a.share = 0.8;
        a.measured = true;
        a.arm_knobs = nullptr;
        a.action = "install libopenblas0 (update-alternatives --config libblas.so.3)";
        s->advice.push_back(a);
        s->suggested.push_back(nullptr);
        widgets::AdviceView view;
        view.resize(1000, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setSnapshot(s);
        QCOMPARE(view.title(), QStringLiteral("Advice (1)"));
        QPushButton* add = view.addButton(0);
        QVERIFY(add && !add->isEnabled());
        QCOMPARE(add->toolTip(), QString::fromStdString(a.action));
        bool actionShown = false;
        for (auto* l : view.findChildren<QLabel*>())
            actionShown = actionShown || (l->text().contains(QStringLiteral("do:")) &&
                                          l->text().contains(QStringLiteral("libopenblas0")));
        QVERIFY(actionShown);
        auto* row = view.findChild<QLabel*>(QStringLiteral("advice_0"));
        QVERIFY(row->text().contains(QStringLiteral("(80 %).")));   // the first sentence
        QVERIFY(!row->text().contains(QStringLiteral("More.")));    // the rest in the tooltip
        QVERIFY(row->toolTip().contains(QStringLiteral("More.")));
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("adviceHint"))->isHidden());

        auto serving = std::make_shared<widgets::AdviceSnapshot>();
        serving->arms = {"A", "B"};
        serving->profiled = serving->measured = {false, false};
        serving->serving = true;
        view.setSnapshot(serving);
        QCOMPARE(view.title(), QStringLiteral("Advice"));
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("adviceHint"))->text().contains("serving"));
        QVERIFY(!view.addButton(0));
        view.clear(QStringLiteral("waiting"));
        QVERIFY(!view.snapshot());
    }

    // pitlane --tab NAME (and tools/screenshot.sh --tab): a results tab by the start of its title.
    void tabByName() {
        const auto c = app::parseCommandLine({"pitlane", "p.json", "--run", "--tab", "advice"});
        QVERIFY(c.error.isEmpty());
        QCOMPARE(c.tab, QStringLiteral("advice"));
        QVERIFY(!app::parseCommandLine({"pitlane", "p.json", "--tab"}).error.isEmpty());
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(QStringLiteral("none")));
        auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("resultsTabs"));
        QVERIFY(w.showResultsTab(QStringLiteral("Advice")));
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(w.adviceView()));
        QVERIFY(w.showResultsTab(QStringLiteral("applied")));
        QCOMPARE(tabs->tabText(tabs->currentIndex()), QStringLiteral("Applied settings"));
        QVERIFY(!w.showResultsTab(QStringLiteral("nonsense")));
        QVERIFY(!w.showResultsTab(QString()));
    }

    // The Run box's checkbox is run.profile_iters: a preset's own count is kept, a new one is
    // kProfileIters, unchecked writes none.
    void profileCheckboxWritesProfileIters() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(QStringLiteral("none")));
        json p = kPreset;
        p["run"]["profile_iters"] = 3;
        QVERIFY(w.openPreset(testing::writeJson(dir, "p.json", p)));
        auto* box = w.findChild<QCheckBox*>(QStringLiteral("profileAfter"));
        QVERIFY(box->isChecked());
        QCOMPARE(w.setupPanel()->presetJson()["run"]["profile_iters"].get<int>(), 3);
        box->setChecked(false);
        QVERIFY(!w.setupPanel()->presetJson()["run"].contains("profile_iters"));
        QCOMPARE(w.setupPanel()->build().preset->run.profile_iters, 0);

        p["run"].erase("profile_iters");
        QVERIFY(w.openPreset(testing::writeJson(dir, "q.json", p)));
        QVERIFY(!box->isChecked());
        box->setChecked(true);
        QCOMPARE(w.setupPanel()->presetJson()["run"]["profile_iters"].get<int>(),
                 int(widgets::SetupPanel::kProfileIters));
        QCOMPARE(w.setupPanel()->build().preset->run.profile_iters,
                 int(widgets::SetupPanel::kProfileIters));
    }
};

PITLANE_GUI_TEST_MAIN(GuiAdvice)
#include "gui_advice.moc"
