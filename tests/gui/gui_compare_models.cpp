// Compare models in the window (issue 26): File > Compare two models gives a ready A/B of the
// bundled mlp.pt and its AOTInductor package mlp.pt2; the package's arm has the knobs it cannot
// take greyed out with the reason; each arm's model is checked in a sandboxed worker before any
// run (and a model that cannot run says why next to the model); a real run names both files in
// the verdict. Real worker processes, the real window, offscreen.
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/setup/arm_editor.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/setup/model_panel.h"
#include "pitlane/widgets/setup/setup_panel.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>

using namespace pitlane;
using json = nlohmann::json;

namespace {
QString modelFile(const QString& name) {
    return QDir(qEnvironmentVariable("PITLANE_MODEL_DIR")).filePath(name);
}
}  // namespace

class GuiCompareModels : public QObject {
    Q_OBJECT
private slots:
    void init() { testing::failOnQtWarnings(); }

    void twoModelsOpenAsAnABCheckedAndRun() {
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.compareModels(modelFile(QStringLiteral("mlp.pt")), modelFile(QStringLiteral("mlp.pt2"))));
        auto* setup = w.setupPanel();
        QTRY_VERIFY(setup->isValid());
        auto* arms = setup->armEditor();
        QCOMPARE(arms->armCount(), 2);
        QCOMPARE(arms->form(0)->armModel(), QString());
        QCOMPARE(arms->form(1)->armModel(), modelFile(QStringLiteral("mlp.pt2")));
        // The package's arm: the knobs it cannot take are off, the reason in their tooltip; the
        // TorchScript arm keeps them.
        for (const char* knob : {"jit", "mode", "precision", "memory_format", "workload"}) {
            QWidget* off = arms->form(1)->control(knob);
            QVERIFY2(off && !off->isEnabled(), knob);
            QVERIFY2(off->toolTip().contains(QStringLiteral("Off for this arm")), qPrintable(off->toolTip()));
            QVERIFY2(arms->form(0)->control(knob)->isEnabled(), knob);
        }
        QVERIFY(arms->form(1)->control("intra_op_threads")->isEnabled());
        auto* label = setup->findChild<QLabel*>(QStringLiteral("validationLabel"));
        QVERIFY2(label->text().contains(QStringLiteral("mlp.pt (A), mlp.pt2 (B)")), qPrintable(label->text()));
        // The model check: each arm's model loaded and run once in a worker, before any run.
        auto* panel = setup->modelPanel();
        QTRY_VERIFY_WITH_TIMEOUT(panel->checkText().startsWith(QStringLiteral("✓")), 60000);
        QTRY_VERIFY(!setup->checkingModels());
        auto* output = w.findChild<QLabel*>(QStringLiteral("modelOutput"));
        QVERIFY2(output->text().contains(QStringLiteral("[1, 10] float32")), qPrintable(output->text()));

        // A package's arm switched back to the TorchScript file gets its knobs back.
        arms->form(1)->setArmModel(modelFile(QStringLiteral("mlp.pt")));
        QVERIFY(arms->form(1)->control("jit")->isEnabled());
        arms->form(1)->setArmModel(modelFile(QStringLiteral("mlp.pt2")));
        QVERIFY(!arms->form(1)->control("jit")->isEnabled());

        // A short real run: the verdict names both files.
        json p = setup->presetJson();
        p["run"] = {{"warmup_iters", 2}, {"iters", 12}, {"block_iters", 3}, {"processes", 2}};
        QTemporaryDir dir;
        QVERIFY(w.openPreset(testing::writeJson(dir, QStringLiteral("ab.json"), p)));
        QTRY_VERIFY(setup->isValid());
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.first().first().toBool(), true);
        using C = widgets::ComparisonTableModel;
        const QString verdict = w.comparisonModel()->index(1, C::Verdict).data().toString();
        QVERIFY2(verdict.contains(QStringLiteral("B (mlp.pt2)")) && verdict.contains(QStringLiteral("A (mlp.pt)")),
                 qPrintable(verdict));
        QCOMPARE(w.runner()->result().arms[1].model_format, std::string("aoti"));
    }

    // A model that cannot run with the arm's input says why next to the model, before any run.
    void aModelThatCannotRunSaysWhyNextToIt() {
        app::MainWindow w;
        w.setInteractive(false);
        QTemporaryDir dir;
        json p = testing::mlpPreset(6, 3);
        p["input"] = json::array({{{"shape", {5}}, {"dtype", "float32"}}});  // the mlp takes 256
        QVERIFY(w.openPreset(testing::writeJson(dir, QStringLiteral("wrong.json"), p)));
        auto* panel = w.setupPanel()->modelPanel();
        QTRY_VERIFY_WITH_TIMEOUT(panel->checkText().startsWith(QStringLiteral("✗")), 60000);
        QVERIFY2(panel->checkText().contains(QStringLiteral("A: input_mismatch")), qPrintable(panel->checkText()));
        QVERIFY2(panel->checkText().contains(QStringLiteral("[1, 5]")), qPrintable(panel->checkText()));
        // The top line agrees (issue 42): not "Ready" while an arm's model fails its check.
        const QString line = w.setupPanel()->validationLine();
        QVERIFY2(line.startsWith(QStringLiteral("✗ The model check failed for")) && line.contains(QStringLiteral("A (input_mismatch)")),
                 qPrintable(line));
    }
};

PITLANE_GUI_TEST_MAIN(GuiCompareModels)
#include "gui_compare_models.moc"
