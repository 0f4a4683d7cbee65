// The paired gate, `pitlane-cli run PRESET --against BASELINE_PRESET|MODEL [--max-slowdown PCT]`
// (issue 41), with real workers running the bundled mlp: the baseline's arm joins the run as
// "A (baseline)", interleaved with A, and A is gated on the run's own paired comparison with it.
// An identical baseline (given as the model file) passes and writes the paired comparison as
// "gate"; a batch-1 baseline against a batch-64 arm (per-iteration latency many times over, on
// any CPU: the existing --baseline test's slowdown) fails with exit 4 and names the batch_size
// difference; what is refused (both gates, a missing file, an invalid baseline preset, arm names
// that do not match) exits 2 before anything is measured, naming the file, the field, the reason.
// Four processes per arm and jemalloc, as in test_cli_gate.cpp.
#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include "cli_run.h"

using nlohmann::json;

namespace {

using pitlane::testing::cli;

QString writeFile(const QTemporaryDir& dir, const QString& file, const QString& text) {
    const QString path = dir.filePath(file);
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(text.toUtf8());
    return path;
}

QString preset(const QTemporaryDir& dir, const QString& file, int batch, const QString& arm = QStringLiteral("A")) {
    return writeFile(dir, file, QStringLiteral(R"({"name": "paired gate", "model": "mlp",
        "run": {"warmup_iters": 5, "iters": 40, "block_iters": 10, "processes": 4},
        "arms": [{"name": "%2", "knobs": {"intra_op_threads": 1, "grad": "no_grad", "batch_size": %1, "allocator": "jemalloc"}}]})")
                                    .arg(batch)
                                    .arg(arm));
}

using pitlane::testing::readJson;

TEST(CliGatePaired, RefusesBeforeMeasuringAndNamesTheFileTheFieldAndTheReason) {
    QTemporaryDir dir;
    const QString a = preset(dir, QStringLiteral("a.json"), 1);
    auto r = cli({"run", a, "--db", "none", "--against", a, "--baseline", "latest"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(r.err.contains(QStringLiteral("--baseline and --against are two gates"))) << r.err.toStdString();

    r = cli({"run", a, "--db", "none", "--against", dir.filePath(QStringLiteral("nope.json"))});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(r.err.contains(QStringLiteral("nope.json: no such file"))) << r.err.toStdString();

    // Arm names that do not match, both ways.
    const QString other = preset(dir, QStringLiteral("other.json"), 1, QStringLiteral("B"));
    r = cli({"run", a, "--db", "none", "--against", other});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(r.err.contains(other + QStringLiteral(": arms[0].name: \"B\" is not an arm of ") + a))
        << r.err.toStdString();
    EXPECT_FALSE(r.out.contains(QStringLiteral("block"))) << "nothing measured: " << r.out.toStdString();

    // An invalid baseline preset: its own errors, with its file and field.
    const QString bad = writeFile(dir, QStringLiteral("bad.json"), QStringLiteral(R"({"name": "bad", "model": "mlp",
        "arms": [{"name": "A", "knobs": {"intra_op_threads": -3}}]})"));
    r = cli({"run", a, "--db", "none", "--against", bad});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(r.err.contains(bad + QStringLiteral(": arms[0].knobs.intra_op_threads"))) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("--against: invalid baseline preset"))) << r.err.toStdString();

    // A model file the preset's knobs cannot run: the combined preset's errors, named as such.
    const QString notModel = writeFile(dir, QStringLiteral("junk.pt"), QStringLiteral("not a model"));
    r = cli({"run", a, "--db", "none", "--against", notModel});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(r.err.contains(QStringLiteral("the preset's arms with the model ") + notModel)) << r.err.toStdString();
}

TEST(CliGatePaired, AnIdenticalBaselinePassesAndARealSlowdownFailsWithItsKnobNamed) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const QString fast = preset(dir, QStringLiteral("fast.json"), 1);
    // The same model file as the baseline: A against itself, interleaved. A limit no noise
    // reaches (this checks the wiring and the pairing, not the statistics: bench/gate_noise.sh).
    const QString mlp = QDir(qEnvironmentVariable("PITLANE_MODEL_DIR")).filePath(QStringLiteral("mlp.pt"));
    const QString same = dir.filePath(QStringLiteral("same.json"));
    auto r = cli({"run", fast, "--db", db, "--quiet", "--against", mlp, "--max-slowdown", "300", "--json", same});
    EXPECT_EQ(r.exitCode, 0) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("paired by block and process"))) << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("gate: passed"))) << r.out.toStdString();
    const json results = readJson(same);
    ASSERT_TRUE(results.is_object());
    ASSERT_EQ(results["arms"].size(), 2u);
    EXPECT_EQ(results["arms"][0]["name"], "A (baseline)");
    EXPECT_EQ(results["arms"][1]["name"], "A");
    // Interleaved and replicated as every run's arms: the same processes and blocks on both sides.
    EXPECT_EQ(results["arms"][0]["processes"].size(), results["arms"][1]["processes"].size());
    EXPECT_EQ(results["arms"][0]["summary"]["n"], results["arms"][1]["summary"]["n"]);
    json gate = results.value("gate", json());
    ASSERT_TRUE(gate.is_object()) << results.dump().substr(0, 300);
    EXPECT_EQ(gate["paired"], true);
    EXPECT_EQ(gate["failed"], false);
    EXPECT_EQ(gate["against"], mlp.toStdString());
    ASSERT_EQ(gate["arms"].size(), 1u);
    const json& arm = gate["arms"][0];
    EXPECT_EQ(arm["arm"], "A");
    EXPECT_EQ(arm["baseline_arm"], "A (baseline)");
    EXPECT_EQ(arm["decision"], "pass");
    EXPECT_NE(arm["method"].get<std::string>().find("paired"), std::string::npos) << arm["method"];
    EXPECT_NEAR(arm["slowdown_pct"].get<double>(), (1 / arm["ratio"].get<double>() - 1) * 100, 1e-9);
    // The gate's ratio is the run's own comparison of A with its twin.
    ASSERT_EQ(results["comparisons"].size(), 1u);
    EXPECT_DOUBLE_EQ(results["comparisons"][0]["ratio"].get<double>(), arm["ratio"].get<double>());
    EXPECT_DOUBLE_EQ(results["comparisons"][0]["ci95"][0].get<double>(), arm["ci95"][0].get<double>());
    // The same knobs and model, and no load figure (both sides ran in the same run).
    EXPECT_EQ(arm["differences"], json::array());
    EXPECT_FALSE(r.out.contains(QStringLiteral("differs from its baseline"))) << r.out.toStdString();

    // A batch-64 arm against its batch-1 baseline preset: exit 4, and the knob named. The bundled
    // model found through a relative $PITLANE_MODEL_DIR: the twin's model is still found (it was
    // once looked up again beside the preset).
    const QString slow = preset(dir, QStringLiteral("slow.json"), 64);
    const QString out = dir.filePath(QStringLiteral("slow-results.json"));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PITLANE_MODEL_DIR"), QDir::current().relativeFilePath(qEnvironmentVariable("PITLANE_MODEL_DIR")));
    ASSERT_TRUE(QDir::isRelativePath(env.value(QStringLiteral("PITLANE_MODEL_DIR"))));
    r = pitlane::testing::runCli({"run", slow, "--db", db, "--quiet", "--against", fast, "--json", out}, env, 120000);
    EXPECT_EQ(r.exitCode, 4) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("FAIL: slower beyond 5 % with the whole CI"))) << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("A differs from its baseline in more than the code: batch_size 1 vs 64")))
        << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("gate: FAILED (exit 4)"))) << r.out.toStdString();
    gate = readJson(out).value("gate", json());
    ASSERT_TRUE(gate.is_object());
    EXPECT_EQ(gate["failed"], true);
    EXPECT_EQ(gate["against"], fast.toStdString());
    ASSERT_EQ(gate["arms"].size(), 1u);
    EXPECT_EQ(gate["arms"][0]["decision"], "fail");
    EXPECT_GT(gate["arms"][0]["slowdown_ci95_pct"][0].get<double>(), 5.0);
    const json& diffs = gate["arms"][0]["differences"];
    ASSERT_FALSE(diffs.empty());
    EXPECT_EQ(diffs[0], (json{{"kind", "knob"}, {"field", "batch_size"}, {"baseline", 1}, {"this_run", 64}}));
}

}  // namespace
