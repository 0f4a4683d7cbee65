// Item models and value helpers of the window, on fixed inputs: QAbstractItemModelTester, the
// highlighting of differing applied settings, the verdict rows, and the editor's text formats.
#include "gui_test_support.h"

#include "command_line.h"
#include "pitlane/spec/preset.h"
#include "pitlane/widgets/results/applied_settings_model.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/setup/knob_form.h"
#include "pitlane/widgets/setup/setup_panel.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QSignalSpy>
#include <QStandardItemModel>

using namespace pitlane;
using json = nlohmann::json;

namespace {
// Two arms with block structure; B is clearly faster (about 2x).
results::RunResult twoArmRun() {
    results::RunResult run;
    for (int a = 0; a < 2; ++a) {
        results::ArmResult arm;
        arm.name = a == 0 ? "A" : "B";
        arm.status = results::kOk;
        arm.peak_rss_bytes = (100 + a) * 1024 * 1024;
        for (int i = 0; i < 60; ++i)
            arm.samples.push_back(
                {i / 10, i, 1, 0,
                 std::int64_t((a == 0 ? 2'000'000 : 1'000'000) + (i % 7) * 10'000)});
        run.arms.push_back(arm);
    }
    return run;
}
}  // namespace

class GuiModels : public QObject {
    Q_OBJECT
private slots:
    void init() { testing::failOnQtWarnings(); }

    void comparisonModelPassesTesterAndShowsVerdict() {
        widgets::ComparisonTableModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRows(widgets::comparisonRows(twoArmRun()));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(widgets::ComparisonTableModel::ColumnCount));
        using C = widgets::ComparisonTableModel;
        QCOMPARE(model.index(0, C::Ratio).data().toString(), QStringLiteral("baseline"));
        QVERIFY(model.rows()[1].comparison);
        const double ratio = model.rows()[1].comparison->ratio;
        QVERIFY2(ratio > 1.9 && ratio < 2.05, qPrintable(QString::number(ratio)));
        QCOMPARE(model.index(1, C::Ratio).data().toString(),
                 QStringLiteral("%1×").arg(ratio, 0, 'f', 3));
        QVERIFY(model.index(1, C::Verdict).data().toString().contains(QStringLiteral("faster")));
        QCOMPARE(model.index(1, C::PeakRss).data().toString(), QStringLiteral("101.0 MiB"));
        QVERIFY(model.index(0, C::Arm).data(Qt::DecorationRole).canConvert<QIcon>());
        // Same number of rows: updated in place; different: reset. Both must keep the tester happy.
        model.setRows(widgets::comparisonRows(twoArmRun(), false));
        QCOMPARE(model.index(1, C::Ratio).data().toString(), QStringLiteral("—"));
        model.setRows({});
        QCOMPARE(model.rowCount(), 0);
    }

    void appliedSettingsHighlightDifferences() {
        widgets::AppliedSettingsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setArms(
            {{"A", {{"grad", "enabled"}, {"blas", "openblas"}, {"cudnn", {{"enabled", true}}}}},
             {"B",
              {{"grad", "inference_mode"}, {"blas", "openblas"}, {"cudnn", {{"enabled", true}}}}},
             {"C", nullptr}});
        QCOMPARE(model.columnCount(), 4);
        int grad = -1, blas = -1, cudnn = -1;
        for (int r = 0; r < model.rowCount(); ++r) {
            if (model.settingName(r) == QLatin1String("grad")) grad = r;
            if (model.settingName(r) == QLatin1String("blas")) blas = r;
            if (model.settingName(r) == QLatin1String("cudnn.enabled")) cudnn = r;
        }
        QVERIFY(grad >= 0 && blas >= 0 && cudnn >= 0);
        QVERIFY(grad < blas);  // knobs first
        // C has not reported yet: every row differs from it, so compare A and B only here.
        model.setArms({{"A", {{"grad", "enabled"}, {"blas", "openblas"}}},
                       {"B", {{"grad", "inference_mode"}, {"blas", "openblas"}}}});
        for (int r = 0; r < model.rowCount(); ++r) {
            const bool differs = model.settingName(r) == QLatin1String("grad");
            QCOMPARE(model.rowDiffers(r), differs);
            QCOMPARE(model.index(r, 1).data(Qt::BackgroundRole).isValid(), differs);
        }
        QCOMPARE(model.headerData(2, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QStringLiteral("B"));
        // The same read-backs again (every process reports them, the run's end once more): no
        // reset, which relays the view out; a changed value, an arm renamed or added: reset.
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.setArms({{"A", {{"grad", "enabled"}, {"blas", "openblas"}}},
                       {"B", {{"grad", "inference_mode"}, {"blas", "openblas"}}}});
        QCOMPARE(resets.count(), 0);
        model.setArms({{"A", {{"grad", "enabled"}, {"blas", "mkl"}}},
                       {"B", {{"grad", "inference_mode"}, {"blas", "openblas"}}}});
        QCOMPARE(resets.count(), 1);
        model.setArms({{"A", {{"grad", "enabled"}, {"blas", "mkl"}}},
                       {"B2", {{"grad", "inference_mode"}, {"blas", "openblas"}}}});
        QCOMPARE(resets.count(), 2);
        QCOMPARE(model.headerData(2, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("B2"));
        model.setArms({{"A", {{"grad", "enabled"}, {"blas", "mkl"}}},
                       {"B2", {{"grad", "inference_mode"}, {"blas", "openblas"}}},
                       {"C", nullptr}});
        QCOMPARE(resets.count(), 3);
        QCOMPARE(model.columnCount(), 4);
    }

    void textFormatsOfTheEditor() {
        QCOMPARE(widgets::parseIntList(QStringLiteral("1, 8 32")), json({1, 8, 32}));
        QCOMPARE(widgets::parseIntList(QStringLiteral("1, x")), json({1, "x"}));
        const json in = widgets::parseInputText(QStringLiteral("3x224x224 float32; 16 int64"));
        QCOMPARE(in, json({{{"shape", {3, 224, 224}}, {"dtype", "float32"}},
                           {{"shape", {16}}, {"dtype", "int64"}}}));
        QCOMPARE(widgets::inputText(in), QStringLiteral("3x224x224 float32; 16 int64"));
        QVERIFY(widgets::parseInputText(QStringLiteral("  ")).is_null());
        // Issue 27: what a newcomer types. A bare shape in brackets, a colon before the dtype,
        // commas; the preset's own JSON still works.
        const json one = {{{"shape", {3, 64, 64}}}};
        const json typed = {{{"shape", {3, 64, 64}}, {"dtype", "float32"}}};
        QCOMPARE(widgets::parseInputText(QStringLiteral("[3, 64, 64]")), one);
        QCOMPARE(widgets::parseInputText(QStringLiteral("3x64x64")), one);
        QCOMPARE(widgets::parseInputText(QStringLiteral("3,64,64")), one);
        QCOMPARE(widgets::parseInputText(QStringLiteral("[3,64,64]:float32")), typed);
        QCOMPARE(widgets::parseInputText(QStringLiteral("3x64x64:float32")), typed);
        QCOMPARE(widgets::parseInputText(QStringLiteral("[3,64,64] float32; [16]:int64")),
                 json({{{"shape", {3, 64, 64}}, {"dtype", "float32"}}, {{"shape", {16}}, {"dtype", "int64"}}}));
        QCOMPARE(widgets::parseInputText(QStringLiteral(R"([{"shape": [3, 64, 64]}])")), one);
    }

    // cuda_graph has no control in the form: it used to vanish when a preset was run or saved
    // from the window (issue 9). Every knob the form cannot show is carried through.
    void knobFormKeepsKnobsItHasNoControlFor() {
        widgets::KnobForm form;
        const json knobs = {{"device", "cuda:0"}, {"cuda_graph", true}, {"mode", "eval"}};
        form.setKnobs(knobs);
        const json out = form.knobsJson();
        QCOMPARE(out.value("cuda_graph", json()), json(true));
        QCOMPARE(out.value("device", json()), json("cuda:0"));
        form.setKnobs({{"mode", "train"}});
        QVERIFY(!form.knobsJson().contains("cuda_graph"));  // not carried into the next arm
    }

    void knobFormAllocatorRoundTripsAndDisablesMissingLibraries() {
        {
            widgets::KnobForm form;
            auto* combo = form.findChild<QComboBox*>(QStringLiteral("allocator"));
            QVERIFY(combo);
            QCOMPARE(combo->count(), 3);
            // The default stays out of the knobs JSON; a named or changed value is written.
            form.setKnobs(json::object());
            QCOMPARE(combo->currentData().toString(), QStringLiteral("system"));
            QVERIFY(!form.knobsJson().contains("allocator"));
            form.setKnobs({{"allocator", "jemalloc"}});
            QCOMPARE(combo->currentData().toString(), QStringLiteral("jemalloc"));
            QCOMPARE(form.knobsJson()["allocator"], json("jemalloc"));
            QSignalSpy changed(&form, &widgets::KnobForm::changed);
            combo->setCurrentIndex(combo->findData(QStringLiteral("tcmalloc")));
            QCOMPARE(changed.count(), 1);
            QCOMPARE(form.knobsJson()["allocator"], json("tcmalloc"));
            // What the form writes is a valid preset knob.
            QVERIFY(spec::parseKnobs(form.knobsJson(), "<test>", "knobs").allocator == spec::Allocator::Tcmalloc);
        }
        // A library that is not there: its entry is disabled and says what to install.
        qputenv("PITLANE_JEMALLOC", "/nonexistent/libjemalloc.so.2");
        widgets::KnobForm form;
        qunsetenv("PITLANE_JEMALLOC");
        auto* combo = form.findChild<QComboBox*>(QStringLiteral("allocator"));
        QVERIFY(combo);
        auto* items = qobject_cast<QStandardItemModel*>(combo->model());
        QVERIFY(items);
        const int je = combo->findData(QStringLiteral("jemalloc"));
        QVERIFY(!items->item(je)->isEnabled());
        QVERIFY2(items->item(je)->toolTip().contains(QLatin1String("libjemalloc2")),
                 qPrintable(items->item(je)->toolTip()));
        QVERIFY(items->item(combo->findData(QStringLiteral("system")))->isEnabled());
    }

    void commandLine() {
        auto c = app::parseCommandLine({"pitlane", "p.json", "--run", "--screenshot", "o.png",
                                        "--quit-when-done", "--db", "none"});
        QVERIFY(c.error.isEmpty());
        QCOMPARE(c.path, QStringLiteral("p.json"));
        QVERIFY(c.run && c.quitWhenDone);
        QCOMPARE(c.screenshot, QStringLiteral("o.png"));
        QCOMPARE(c.db, QStringLiteral("none"));
        QVERIFY(!app::parseCommandLine({"pitlane", "--run"}).error.isEmpty());
        QVERIFY(!app::parseCommandLine({"pitlane", "a.json", "--screenshot"}).error.isEmpty());
        QVERIFY(!app::parseCommandLine({"pitlane", "a.json", "--bogus"}).error.isEmpty());
    }
};

PITLANE_GUI_TEST_MAIN(GuiModels)
#include "gui_models.moc"
