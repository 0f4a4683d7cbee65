// Every knob of spec::knobTable() through the real window: load -> run -> save keeps each one
// (issue 9: the window used to drop cuda_graph), and the form has one control per row. The
// serving batcher's knobs need a serving block (issue 13): they take the same path in a serving
// preset.
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/spec/knob_table.h"
#include "pitlane/widgets/setup/arm_editor.h"
#include "pitlane/widgets/setup/setup_panel.h"

#include <QSettings>

using namespace pitlane;
using nlohmann::json;

namespace {

// A value of the knob that is not its default, derived from the row alone: a knob added to the
// table later is covered without touching this test.
json nonDefault(const spec::KnobInfo& k) {
    using K = spec::KnobKind;
    switch (k.kind) {
        case K::Choice:
            for (const auto& c : k.choices)
                if (json(c) != k.defaultValue) return c;
            break;
        case K::Device: return "cuda:0";
        case K::Bool: return !k.defaultValue.get<bool>();
        case K::TorchBool: return false;
        case K::Count:
        case K::OptionalCount: return k.min + 1;
        case K::CountOrList: return {k.min + 1, k.min + 3};
        case K::ChoiceOrCores: return {k.min};
        case K::Flags: {  // every option the other way round
            json flipped = k.defaultValue;
            for (auto& [option, on] : flipped.items()) on = !on.get<bool>();
            return flipped;
        }
    }
    return nullptr;
}

}  // namespace

class GuiKnobs : public QObject {
    Q_OBJECT
private slots:
    void init() {
        testing::failOnQtWarnings();
        QSettings().clear();
    }

    // Every knob off its default, in as few arms as the combination rules allow (jit needs eval,
    // train_step needs grad, ...). The serving batcher's knobs (group "Serving") are refused
    // without a serving block, so they go through the same path in a serving preset of their own.
    void everyKnobSurvivesLoadRunAndSave() {
        // The compiler's knobs apply to an exported program only: their own case below.
        const auto arms = armsWithEveryKnobOff([](const spec::KnobInfo& k) { return !isServing(k) && !isCompiler(k); });
        const json preset = {
            {"name", "every knob"},
            {"model", "mlp"},
            {"run", {{"warmup_iters", 1}, {"iters", 2}, {"block_iters", 1}, {"processes", 1}}},
            {"arms", armList(arms)}};
        loadRunAndSave(preset);
    }

    void everyServingKnobSurvivesLoadRunAndSave() {
        const auto arms = armsWithEveryKnobOff(isServing);
        QVERIFY(!arms.empty());
        // The worker serves one short level: what the runner was asked for is every knob.
        const json preset = {
            {"name", "every serving knob"},
            {"model", "mlp"},
            {"run", {{"warmup_iters", 1}, {"processes", 1}}},
            {"serving", {{"arrival", "poisson"}, {"rates", {50}}, {"duration_ms", 200}}},
            {"arms", armList(arms)}};
        loadRunAndSave(preset);
    }

    // compile and inductor on an exported program: loaded into their controls (inductor on only
    // with compile aoti), saved as written; on a TorchScript model both are off with the reason.
    void compilerKnobsFollowTheModelFormat() {
        const json knobsA = {{"compile", "aoti"}, {"inductor", {{"freezing", true}, {"max_autotune", false}, {"dynamic_threads", false}}}};
        const json knobsB = {{"compile", "none"}};
        const json preset = {{"name", "compiler"},
                             {"model", "resnet18.exported.pt2"},
                             {"run", {{"warmup_iters", 1}, {"iters", 2}, {"block_iters", 1}, {"processes", 1}}},
                             {"arms", json::array({{{"name", "A"}, {"knobs", knobsA}}, {{"name", "B"}, {"knobs", knobsB}}})}};
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.openPreset(testing::writeJson(dir, "in.json", preset)));
        auto* editor = w.setupPanel()->armEditor();
        QCOMPARE(editor->form(0)->knobsJson(), knobsA);
        QCOMPARE(editor->form(1)->knobsJson(), knobsB);
        QVERIFY(editor->form(0)->control("compile")->isEnabled());
        QVERIFY(editor->form(0)->control("inductor")->isEnabled());
        QVERIFY(!editor->form(1)->control("inductor")->isEnabled());
        QVERIFY(editor->form(1)->control("inductor")->toolTip().contains(QStringLiteral("compile aoti")));
        const QString out = dir.filePath("out.json");
        QString error;
        QVERIFY2(w.savePreset(out, &error), qPrintable(error));
        const json saved = testing::readJson(out);
        QCOMPARE(saved["arms"][0]["knobs"], knobsA);
        // A TorchScript model: both off, with the reason.
        QVERIFY(w.openPreset(testing::writeJson(dir, "ts.json", json{{"name", "ts"}, {"model", "mlp"},
                                                                      {"arms", json::array({{{"name", "A"}, {"knobs", json::object()}}})}})));
        auto* compile = w.setupPanel()->armEditor()->form(0)->control("compile");
        QVERIFY(!compile->isEnabled());
        QVERIFY(compile->toolTip().contains(QStringLiteral("only an exported program")));
    }

private:
    static bool isServing(const spec::KnobInfo& k) { return k.group == "Serving"; }
    static bool isCompiler(const spec::KnobInfo& k) { return k.group == "Compiler"; }

    // Each chosen knob's value goes into the first arm it is valid in; every one ends off its
    // default.
    template <typename Pred>
    static std::vector<json> armsWithEveryKnobOff(Pred chosen) {
        std::vector<json> arms;
        for (const auto& k : spec::knobTable()) {
            if (!chosen(k)) continue;
            bool placed = false;
            for (auto& knobs : arms) {
                json trial = knobs;
                trial[k.name] = nonDefault(k);
                try {
                    spec::parseKnobs(trial, "<test>", "knobs");
                } catch (const spec::SpecError&) {
                    continue;
                }
                knobs = trial;
                placed = true;
                break;
            }
            if (!placed) arms.push_back({{k.name, nonDefault(k)}});
        }
        const json defaults = spec::knobsToJson(spec::Knobs{});
        for (const auto& k : spec::knobTable()) {
            if (!chosen(k)) continue;
            bool off = false;
            for (const auto& knobs : arms)
                off |= knobs.contains(k.name) && knobs[k.name] != defaults.value(k.name, json());
            if (!off) qFatal("knob %s is not off its default", k.name.c_str());
        }
        return arms;
    }

    static json armList(const std::vector<json>& arms) {
        json list = json::array();
        for (std::size_t i = 0; i < arms.size(); ++i)
            list.push_back({{"name", "arm" + std::to_string(i)}, {"knobs", arms[i]}});
        return list;
    }

    // load -> run -> save through the real window: every arm's knobs come back as written.
    static void loadRunAndSave(const json& original) {
        const int n = int(original["arms"].size());
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.openPreset(testing::writeJson(dir, "in.json", original)));
        auto* editor = w.setupPanel()->armEditor();
        QCOMPARE(editor->armCount(), n);
        for (int i = 0; i < n; ++i) QCOMPARE(editor->form(i)->knobsJson(), original["arms"][i]["knobs"]);
        // One control per knob, named after it.
        for (const auto& k : spec::knobTable())
            QVERIFY2(editor->form(0)->control(k.name) &&
                         editor->form(0)->control(k.name)->objectName() == QString::fromStdString(k.name),
                     k.name.c_str());

        // Run: the worker cannot use cuda:0 here, but what the runner was asked for is every knob.
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        QVERIFY(finished.wait(60000));
        const auto& run = w.runner()->result();
        QCOMPARE(run.arms.size(), std::size_t(n));
        for (int i = 0; i < n; ++i) QCOMPARE(results::knobsJson(run.arms[std::size_t(i)]), original["arms"][i]["knobs"]);

        // Save: the file has every knob as loaded.
        const QString out = dir.filePath("out.json");
        QString error;
        QVERIFY2(w.savePreset(out, &error), qPrintable(error));
        const json saved = testing::readJson(out);
        for (int i = 0; i < n; ++i) QCOMPARE(saved["arms"][i]["knobs"], original["arms"][i]["knobs"]);
        // The serving block comes back as written (the file spells out its defaults too).
        if (original.contains("serving"))
            for (const auto& [key, value] : original["serving"].items())
                QVERIFY2(saved["serving"].value(key, json()) == value, key.c_str());
    }
};

PITLANE_GUI_TEST_MAIN(GuiKnobs)
#include "gui_knobs.moc"
