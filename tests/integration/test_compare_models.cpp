// Compare models (issue 26): an arm's own model file, AOTInductor packages as a model format, and
// the knobs a package cannot take. Real worker processes, the bundled mlp.pt and mlp.pt2 (the
// same network with the same seeded weights, tools/export_packages.py) and the test packages
// tiny_probe.pt2 (dynamic batch 1-1024) and tiny_probe_static.pt2 (batch 1 only).
#include "cli.h"
#include "harness.h"

#include <QFile>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace {

using namespace pitlane::itest;

std::string sha256sum(const std::string& file) {
    std::string out;
    FILE* p = ::popen(("sha256sum " + file).c_str(), "r");
    if (!p) return out;
    char buf[256];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ::pclose(p);
    return out.substr(0, 64);
}

std::string readText(const QString& path) {
    std::ifstream in(path.toStdString());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class CompareModels : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(dir.isValid()); }
    QString path(const std::string& name) const { return dir.filePath(QString::fromStdString(name)); }
    QString preset(const std::string& name, const json& arms, const std::string& model = "mlp", int processes = 2) {
        const json j = {{"name", name},
                        {"model", model},
                        {"run", {{"warmup_iters", 2}, {"iters", 12}, {"block_iters", 3}, {"processes", processes}}},
                        {"arms", arms}};
        return writeJson(path(name + ".json"), j);
    }
    QTemporaryDir dir;
};

// TorchScript (frozen and optimized) against the AOTInductor package of the same network: one
// run, interleaved and replicated; each arm's model, SHA-256 and format in the results JSON, the
// table, the Markdown report and the stored run; the verdict names the files.
TEST_F(CompareModels, AnArmsOwnPackageRunsBesideTorchScriptAndEveryOutputNamesEachModel) {
    const json arms = json::array(
        {{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}, {"grad", "inference_mode"}, {"jit", "freeze_optimize"}}}},
         {{"name", "B"}, {"model", "mlp.pt2"}, {"knobs", {{"intra_op_threads", 1}}}}});
    const QString p = preset("ts_vs_aoti", arms);
    const auto r = runCli({"run", p, "--db", path("history.db"), "--json", path("out.json"), "--md", path("out.md")}, 180000);
    ASSERT_TRUE(r.finished) << r.err;
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const json j = readJson(path("out.json"));
    ASSERT_EQ(j["arms"].size(), 2u);
    const std::string pt = modelDir() + "/mlp.pt", pt2 = modelDir() + "/mlp.pt2";
    const json& a = j["arms"][0];
    const json& b = j["arms"][1];
    EXPECT_EQ(a["model"], pt);
    EXPECT_EQ(b["model"], pt2);
    EXPECT_EQ(a["model_format"], "torchscript");
    EXPECT_EQ(b["model_format"], "aoti");
    EXPECT_EQ(a["model_sha256"], sha256sum(pt));
    EXPECT_EQ(b["model_sha256"], sha256sum(pt2));
    EXPECT_TRUE(b["model_info"].is_object());
    // The package's read-back: inference_mode without asking, what the package says about itself,
    // and its files extracted in the run's scratch folder (the sandbox allows nothing else).
    EXPECT_EQ(b["applied"]["grad"], "inference_mode");
    EXPECT_EQ(b["applied"]["model_format"], "aoti");
    EXPECT_EQ(b["applied"]["jit"], "none");
    EXPECT_EQ(b["applied"]["package"]["metadata"]["AOTI_DEVICE_KEY"], "cpu");
    EXPECT_EQ(b["applied"]["package"]["metadata"]["pitlane_model"], "mlp");
    EXPECT_EQ(b["applied"]["package"]["input_checks"], true);
    const std::string extracted = b["applied"]["package"].value("extracted_to", std::string());
    EXPECT_NE(extracted.find("/pitlane-run-"), std::string::npos) << extracted;
    EXPECT_EQ(a["applied"]["jit"], "freeze_optimize");
    // The package's own kernels follow intra_op_threads (compiled with cpp.dynamic_threads), and
    // its processes agree on every setting (each extracts into a folder of its own: not one).
    EXPECT_EQ(b["applied"]["package"]["kernel_threads"], "dynamic");
    for (const auto* arm : {&a, &b})
        for (const auto& w : (*arm)["warnings"]) ADD_FAILURE() << (*arm)["name"] << ": " << w;
    // Interleaved and replicated like any two arms: both measured in two processes, in turns.
    for (const auto* arm : {&a, &b}) {
        EXPECT_EQ((*arm)["status"], "ok");
        EXPECT_EQ((*arm)["latency_ns"].size(), 12u);
        EXPECT_EQ((*arm)["processes"].size(), 2u);
    }
    ASSERT_EQ(j["comparisons"].size(), 1u);
    const std::string verdict = j["comparisons"][0]["verdict"];
    EXPECT_NE(verdict.find("B (mlp.pt2)"), std::string::npos) << verdict;
    EXPECT_NE(verdict.find("A (mlp.pt)"), std::string::npos) << verdict;
    EXPECT_EQ(j["comparisons"][0]["arm"], "B");  // the names scripts read stay the arms'
    EXPECT_NE(r.out.find("A: mlp.pt (torchscript, sha256 " + sha256sum(pt).substr(0, 8) + ")"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("B: mlp.pt2 (aoti, sha256 " + sha256sum(pt2).substr(0, 8) + ")"), std::string::npos) << r.out;
    const std::string md = readText(path("out.md"));
    EXPECT_NE(md.find("B: " + pt2 + " (aoti), SHA-256 `" + sha256sum(pt2) + "`"), std::string::npos) << md;
    // Through the history: each arm's model reads back.
    const auto stored = runCli({"report", "1", "--db", path("history.db"), "--json", path("stored.json")});
    ASSERT_EQ(stored.exitCode, 0) << stored.err;
    const json s = readJson(path("stored.json"));
    EXPECT_EQ(s["arms"][1]["model"], pt2);
    EXPECT_EQ(s["arms"][1]["model_format"], "aoti");
    EXPECT_EQ(s["arms"][1]["model_sha256"], sha256sum(pt2));
    EXPECT_EQ(s["arms"][0]["model_format"], "torchscript");
}

// Every knob a package cannot take is refused by validation, naming the knob and the reason.
TEST_F(CompareModels, KnobsThatCannotApplyToAPackageAreRefusedNamingTheKnob) {
    const std::vector<std::pair<json, std::string>> cases = {
        {{{"mode", "train"}}, "mode \"train\" cannot apply"},
        {{{"grad", "enabled"}}, "grad \"enabled\" cannot apply"},
        {{{"grad", "no_grad"}}, "grad \"no_grad\" cannot apply"},
        {{{"jit", "freeze"}}, "is a TorchScript pass"},
        {{{"jit", "freeze_optimize"}}, "is a TorchScript pass"},
        {{{"precision", "autocast_bf16"}}, "precision \"autocast_bf16\" cannot apply"},
        {{{"precision", "half"}}, "precision \"half\" cannot apply"},
        {{{"memory_format", "channels_last"}}, "memory_format \"channels_last\" cannot apply"},
        {{{"profiling_executor", false}}, "the TorchScript executor does not run it"},
        {{{"fuser", true}}, "the TorchScript fuser does not run it"},
        {{{"workload", "train_step"}}, "it has no backward"},
        {{{"device", "cuda:0"}}, "the package was compiled for cpu"},
    };
    for (const auto& [knobs, reason] : cases) {
        const std::string knob = knobs.begin().key();
        const json arms = json::array({{{"name", "A"}, {"knobs", json::object()}},
                                       {{"name", "B"}, {"model", "mlp.pt2"}, {"knobs", knobs}}});
        const auto v = runCli({"validate", "--no-load", preset("refuse_" + knob, arms)});
        EXPECT_EQ(v.exitCode, 2) << knobs.dump() << "\n" << v.out << v.err;
        EXPECT_NE(v.err.find("arms[1].knobs." + knob + ": "), std::string::npos) << knobs.dump() << "\n" << v.err;
        EXPECT_NE(v.err.find(reason), std::string::npos) << knobs.dump() << "\n" << v.err;
    }
    // What does apply: threads, batch size within the package's range, affinity, allocator.
    const json fine = json::array({{{"name", "A"}, {"model", "mlp.pt2"}, {"knobs", {{"intra_op_threads", 1}, {"batch_size", 8}}}},
                                   {{"name", "B"}, {"model", "mlp.pt2"}, {"knobs", {{"grad", "inference_mode"}, {"mode", "eval"}}}}});
    const auto ok = runCli({"validate", "--no-load", preset("package_fine", fine)});
    EXPECT_EQ(ok.exitCode, 0) << ok.out << ok.err;
}

// The package's own word on its batch: a static batch of 1 refuses batch_size 4 at validation
// (from its metadata), and a dynamic one outside its range; the worker refuses them as well
// when driven directly (its metadata read again), and the package's own input check refuses an
// input of another size, its reason read from AOTInductor's runtime.
TEST_F(CompareModels, APackagesBatchRangeAndInputAreCheckedBeforeTheRun) {
    const json arms = json::array({{{"name", "A"}, {"knobs", {{"batch_size", 4}}}}});
    const QString staticModel = QString::fromStdString(modelDir() + "/tiny_probe_static.pt2");
    json p = readJson(preset("static_file", arms, (modelDir() + "/tiny_probe_static.pt2"), 1));
    const auto v2 = runCli({"validate", "--no-load", writeJson(path("static_file.json"), p)});
    EXPECT_EQ(v2.exitCode, 2) << v2.out << v2.err;
    EXPECT_NE(v2.err.find("arms[0].knobs.batch_size: the package was exported with a static batch of 1"), std::string::npos) << v2.err;

    const json big = json::array({{{"name", "A"}, {"knobs", {{"batch_size", 2048}}}}});
    const auto v3 = runCli({"validate", "--no-load", preset("big", big, modelDir() + "/tiny_probe.pt2", 1)});
    EXPECT_EQ(v3.exitCode, 2) << v3.out << v3.err;
    EXPECT_NE(v3.err.find("batch dimension from 1 to 1024: batch_size 2048 is outside it"), std::string::npos) << v3.err;

    // An input of the wrong size: the package's input check refuses it when validate loads it.
    json wrong = readJson(preset("wrong_input", json::array({{{"name", "A"}, {"knobs", json::object()}}}),
                                 modelDir() + "/tiny_probe.pt2", 1));
    wrong["input"] = json::array({{{"shape", {5}}, {"dtype", "float32"}}});
    const auto w = runCli({"validate", writeJson(path("wrong_input.json"), wrong)}, 60000);
    EXPECT_EQ(w.exitCode, 2) << w.out << w.err;
    EXPECT_NE(w.err.find("arm A: input_mismatch: "), std::string::npos) << w.err;
    EXPECT_NE(w.err.find("the package refused it: input_handles[0]: unmatched dim value at 1, expected: 4, but got: 5"),
              std::string::npos)
        << w.err;

    // The worker itself, with no validation in front of it.
    WorkerDriver worker;
    ASSERT_FALSE(worker.start().is_null());
    const json e = worker.configure({{"batch_size", 2}}, json::array({{{"shape", {4}}, {"dtype", "float32"}}}),
                                    staticModel.toStdString());
    EXPECT_EQ(e.value("type", ""), "error") << e.dump();
    EXPECT_EQ(e.value("code", ""), "bad_knob") << e.dump();
    EXPECT_EQ(e["detail"].value("knob", ""), "batch_size") << e.dump();
    worker.quit();
}

// A bare package opens as a ready A/B of threads (it has no grad to compare), and two files as
// an A/B of the two models (File > Compare two models: spec::presetForModels), run by the real
// runner.
TEST_F(CompareModels, APackageOrTwoModelsOpenAsAReadyAB) {
    const std::string pt2 = modelDir() + "/tiny_probe.pt2", pt = modelDir() + "/tiny_probe.pt";
    auto bare = pitlane::spec::presetForModel(pt2, modelDir());
    ASSERT_EQ(bare.arms.size(), 2u);
    EXPECT_EQ(bare.arms[0].knobs.grad, pitlane::spec::Grad::InferenceMode);
    EXPECT_EQ(bare.arms[0].name, "1 thread");
    EXPECT_EQ(bare.arms[0].knobs.intra_op_threads.value_or(0), 1);
    EXPECT_EQ(bare.arms[1].knobs.intra_op_threads.value_or(0), 2);
    // A TorchScript file: the arms differ in grad alone, named after it, one thread each.
    auto ts = pitlane::spec::presetForModel(pt, modelDir());
    EXPECT_EQ(ts.arms[0].name, "grad enabled");
    EXPECT_EQ(ts.arms[1].name, "inference_mode");
    json a = pitlane::spec::knobsToJson(ts.arms[0].knobs), b = pitlane::spec::knobsToJson(ts.arms[1].knobs);
    EXPECT_EQ(a["intra_op_threads"], 1);
    EXPECT_NE(a["grad"], b["grad"]);
    a.erase("grad");
    b.erase("grad");
    EXPECT_EQ(a, b) << "the default arms differ in one knob";
    auto two = pitlane::spec::presetForModels(pt, pt2, modelDir());
    ASSERT_EQ(two.arms.size(), 2u);
    EXPECT_EQ(two.name, "tiny_probe.pt vs tiny_probe.pt2");
    EXPECT_EQ(two.arms[0].model_path, pt);
    EXPECT_EQ(two.arms[1].model_path, pt2);
    EXPECT_EQ(two.arms[1].model_format, "aoti");
    EXPECT_EQ(two.arms[0].knobs.grad, two.arms[1].knobs.grad) << "both arms measure inference alike";
    EXPECT_TRUE(pitlane::spec::armsDifferInModel(two));
    two.run.budget_ms = 0;  // a fixed plan: the bare model's budget (30 s) would plan its own
    two.run.iters = 6;
    two.run.block_iters = 3;
    two.run.processes = 2;
    two.run.max_processes = 2;
    const auto run = runPreset(two, 120000);
    ASSERT_EQ(run.arms.size(), 2u);
    for (const auto& a : run.arms) {
        EXPECT_EQ(a.status, "ok") << (a.error ? a.error->message : std::string());
        EXPECT_EQ(a.samples.size(), 6u);
    }
    EXPECT_EQ(run.arms[0].model_format, "torchscript");
    EXPECT_EQ(run.arms[1].model_format, "aoti");
    EXPECT_TRUE(pitlane::results::armsDifferInModel(run));
    // The same file in two arms is no model comparison.
    auto same = pitlane::spec::presetForModels(pt, pt, modelDir());
    EXPECT_FALSE(pitlane::spec::armsDifferInModel(same));
}

}  // namespace
