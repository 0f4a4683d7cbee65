// The real pitlane-worker on the bundled mlp: every knob asked for is what the `applied` event
// reads back from torch and the OS, and the worker measures exactly the iterations asked for.
#include "harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>

namespace {

using namespace pitlane::itest;

// Starts a worker, configures it with `knobs` and returns the applied event (fails otherwise).
json applied(WorkerDriver& w, const json& knobs) {
    json hello = w.start();
    EXPECT_FALSE(hello.is_null()) << "no hello from " << workerPath();
    if (hello.is_null()) return json();
    json ev = w.configure(knobs);
    EXPECT_EQ(ev.value("type", ""), "applied")
        << "configure " << knobs.dump() << " gave " << ev.dump();
    return ev.value("type", "") == "applied" ? ev : json();
}

TEST(WorkerReadback, HelloCarriesPidAndEnvironment) {
    WorkerDriver w;
    json hello = w.start();
    ASSERT_FALSE(hello.is_null());
    EXPECT_EQ(hello["pid"].get<long>(), long(w.process().pid()));
    EXPECT_EQ(hello["protocol"], 1);
    ASSERT_TRUE(hello["environment"].is_object());
    EXPECT_TRUE(hello["environment"].contains("libtorch"));
    EXPECT_TRUE(w.quit());
}

// Issue 25: the worker is built on the pinned PyTorch wheel (2.x, a CUDA build), and a model
// that PyTorch 2.x saves with scaled_dot_product_attention (the test model attention_probe,
// exported at build time with the same wheel; libtorch 1.13 refused it with "Unknown builtin op")
// loads and is measured. The libtorch the worker reports is the torch that wrote the file.
TEST(WorkerReadback, ModelSavedByPinnedTorchWithScaledDotProductAttentionIsMeasured) {
    const std::string model = modelDir() + "/attention_probe.pt";
    std::ifstream sidecarFile(modelDir() + "/attention_probe.json");
    ASSERT_TRUE(sidecarFile) << "no sidecar of " << model << " (the test_models target exports it)";
    const json sidecar = json::parse(sidecarFile);
    std::string exportedWith = sidecar["exported_with"]["torch"];  // "2.11.0+cu130"
    exportedWith = exportedWith.substr(0, exportedWith.find('+'));
    WorkerDriver w;
    const json hello = w.start();
    ASSERT_FALSE(hello.is_null());
    const json& env = hello["environment"];
    EXPECT_EQ(env["libtorch"], exportedWith) << "the worker's libtorch is the torch that saved the model";
    EXPECT_GE(std::stoi(env["libtorch"].get<std::string>()), 2) << env.dump();
    EXPECT_EQ(env.value("kineto", false), true);
    const json input = json::array({{{"shape", {16, 64}}, {"dtype", "float32"}}});
    const json ev = w.configure({{"intra_op_threads", 1}, {"grad", "inference_mode"}, {"mode", "eval"}},
                                input, model);
    ASSERT_EQ(ev.value("type", ""), "applied") << ev.dump();
    const json done = w.run(0, 20);
    ASSERT_EQ(done.value("type", ""), "block_done") << done.dump();
    int samples = 0;
    for (const auto& s : w.eventsOfType("samples"))
        for (const auto& ns : s["latency_ns"]) {
            EXPECT_GT(ns.get<std::int64_t>(), 0);
            ++samples;
        }
    EXPECT_EQ(samples, 20);
    EXPECT_TRUE(w.quit());
}

// Issue 27: an input given whole (batch_dim false) reaches the model as written: the mlp takes
// [1, 256], not [1, 1, 256] (which the MLP would turn into a [1, 1, 10] output); a leading "N"
// is where the batch goes, as when it is left out.
TEST(WorkerReadback, AnInputGivenWholeGetsNoBatchDimension) {
    WorkerDriver w;
    ASSERT_FALSE(w.start().is_null());
    const json whole = json::array({{{"shape", {1, 256}}, {"dtype", "float32"}, {"batch_dim", false}}});
    json ev = w.configure({{"intra_op_threads", 1}}, whole);
    ASSERT_EQ(ev.value("type", ""), "applied") << ev.dump();
    EXPECT_EQ(ev["input_shapes"], json::array({{1, 256}})) << ev.dump();
    EXPECT_TRUE(w.quit());

    WorkerDriver n;
    ASSERT_FALSE(n.start().is_null());
    const json marked = json::array({{{"shape", {"N", 256}}, {"dtype", "float32"}}});
    ev = n.configure({{"intra_op_threads", 1}, {"batch_size", 4}}, marked);
    ASSERT_EQ(ev.value("type", ""), "applied") << ev.dump();
    EXPECT_EQ(ev["input_shapes"], json::array({{4, 256}})) << ev.dump();
    EXPECT_TRUE(n.quit());
}

TEST(WorkerReadback, OneIntraOpThreadTrainModeGradEnabled) {
    WorkerDriver w;
    json a = applied(
        w,
        {{"intra_op_threads", 1}, {"inter_op_threads", 1}, {"mode", "train"}, {"grad", "enabled"}});
    ASSERT_FALSE(a.is_null());
    EXPECT_EQ(a["intra_op_threads"], 1);
    EXPECT_EQ(a["inter_op_threads"], 1);
    EXPECT_EQ(a["mode"], "train");
    EXPECT_EQ(a["grad"], "enabled");
    EXPECT_EQ(a["grad_state"]["grad_mode_enabled"], true);
    EXPECT_EQ(a["grad_state"]["output_requires_grad"], true);
    EXPECT_EQ(a["grad_state"]["output_is_inference"], false);
    // As loaded, nothing is frozen: the graph still reads parameters through GetAttr.
    EXPECT_EQ(a["jit"], "none");
    EXPECT_EQ(a["jit_state"]["frozen"], false);
    EXPECT_GT(a["jit_state"]["getattr_nodes"].get<int>(), 0);
    EXPECT_EQ(a["jit_state"]["remaining_parameters"], 399370);
    ASSERT_TRUE(a.contains("blas"));
    EXPECT_TRUE(a["blas"].is_string());
    EXPECT_FALSE(a["blas"].get<std::string>().empty());
    EXPECT_EQ(a["batch_size"], 1);
    EXPECT_EQ(a["input_shapes"], json::array({{1, 256}}));
    EXPECT_TRUE(w.quit());
}

TEST(WorkerReadback, TwoIntraAndTwoInterOpThreadsEvalNoGrad) {
    WorkerDriver w;
    json a = applied(
        w,
        {{"intra_op_threads", 2}, {"inter_op_threads", 2}, {"mode", "eval"}, {"grad", "no_grad"}});
    ASSERT_FALSE(a.is_null());
    EXPECT_EQ(a["intra_op_threads"], 2);
    EXPECT_EQ(a["inter_op_threads"], 2);
    EXPECT_EQ(a["mode"], "eval");
    EXPECT_EQ(a["grad"], "no_grad");
    EXPECT_EQ(a["grad_state"]["grad_mode_enabled"], false);
    EXPECT_EQ(a["grad_state"]["output_requires_grad"], false);
    EXPECT_EQ(a["grad_state"]["output_is_inference"], false);
    EXPECT_TRUE(w.quit());
}

TEST(WorkerReadback, InferenceModeAndFreeze) {
    WorkerDriver w;
    json a = applied(
        w,
        {{"intra_op_threads", 1}, {"mode", "eval"}, {"grad", "inference_mode"}, {"jit", "freeze"}});
    ASSERT_FALSE(a.is_null());
    EXPECT_EQ(a["grad"], "inference_mode");
    EXPECT_EQ(a["grad_state"]["inference_mode_enabled"], true);
    EXPECT_EQ(a["grad_state"]["output_requires_grad"], false);
    EXPECT_EQ(a["grad_state"]["output_is_inference"], true);
    EXPECT_EQ(a["jit"], "freeze");
    EXPECT_EQ(a["jit_state"]["frozen"], true);
    EXPECT_EQ(a["jit_state"]["getattr_nodes"], 0);
    EXPECT_EQ(a["jit_state"]["remaining_parameters"], 0) << "frozen weights are graph constants";
    const auto loaded = w.eventsOfType("loaded");
    ASSERT_EQ(loaded.size(), 1u);
    EXPECT_TRUE(loaded[0].contains("freeze_ms"));
    EXPECT_FALSE(loaded[0].contains("optimize_ms"));
    EXPECT_TRUE(w.quit());
}

TEST(WorkerReadback, FreezeOptimize) {
    WorkerDriver w;
    json a = applied(w, {{"intra_op_threads", 1},
                         {"mode", "eval"},
                         {"grad", "no_grad"},
                         {"jit", "freeze_optimize"}});
    ASSERT_FALSE(a.is_null());
    EXPECT_EQ(a["jit"], "freeze_optimize");
    EXPECT_EQ(a["jit_state"]["frozen"], true);
    EXPECT_EQ(a["jit_state"]["getattr_nodes"], 0);
    EXPECT_EQ(a["jit_state"]["remaining_parameters"], 0) << "frozen weights are graph constants";
    const auto loaded = w.eventsOfType("loaded");
    ASSERT_EQ(loaded.size(), 1u);
    EXPECT_TRUE(loaded[0].contains("freeze_ms"));
    EXPECT_TRUE(loaded[0].contains("optimize_ms"));
    for (const char* k : {"load_ms", "first_forward_ms", "parameters", "file_size_bytes"})
        EXPECT_TRUE(loaded[0].contains(k)) << k;
    EXPECT_EQ(loaded[0]["parameters"], 399370);  // 256*512+512 + 512*512+512 + 512*10+10
    EXPECT_TRUE(w.quit());
}

TEST(WorkerReadback, AffinityCoreListIsTheMaskOfEveryThread) {
    const auto cores = allowedCores();
    if (cores.size() < 2 || std::find(cores.begin(), cores.end(), 1) == cores.end())
        GTEST_SKIP() << "needs cores 0 and 1 allowed; this process may use " << cores.size();
    WorkerDriver w;
    json a = applied(w, {{"affinity", {1}}, {"intra_op_threads", 1}, {"inter_op_threads", 1}});
    ASSERT_FALSE(a.is_null());
    EXPECT_EQ(a["affinity"], json::array({1}));
    EXPECT_EQ(a["affinity_uniform"], true);
    EXPECT_EQ(a["affinity_policy"], "list");
    EXPECT_EQ(a["intra_op_threads"], 1);
    // Measuring after pinning still works and keeps the mask.
    EXPECT_EQ(w.run(0, 5).value("type", ""), "block_done");
    EXPECT_TRUE(w.quit());
}

TEST(WorkerReadback, UnpinnedWorkerSeesEveryAllowedCore) {
    WorkerDriver w;
    json a = applied(w, {{"intra_op_threads", 1}});
    ASSERT_FALSE(a.is_null());
    EXPECT_EQ(a["affinity"].get<std::vector<int>>(), allowedCores());
    EXPECT_EQ(a["affinity_policy"], "none");
    EXPECT_TRUE(w.quit());
}

TEST(WorkerReadback, SamplesCountEqualsItersPerBlockAndWarmupIsApart) {
    WorkerDriver w;
    ASSERT_FALSE(applied(w, {{"intra_op_threads", 1}, {"grad", "no_grad"}}).is_null());
    const std::map<int, int> plan = {{-1, 3}, {0, 10}, {1, 10}, {2, 7}};  // block -> iters
    for (const auto& [block, iters] : plan) {
        json done = w.run(block, iters, block < 0 ? "warmup" : "measure");
        ASSERT_EQ(done.value("type", ""), "block_done") << done.dump();
        EXPECT_EQ(done["block"], block);
        EXPECT_EQ(done["iters"], iters);
    }
    std::map<int, int> got;
    for (const auto& ev : w.eventsOfType("samples")) {
        const int block = ev["block"];
        EXPECT_EQ(ev["phase"], block < 0 ? "warmup" : "measure");
        EXPECT_EQ(ev["first_iter"].get<int>(), got[block]) << "samples of a block arrive in order";
        for (const auto& ns : ev["latency_ns"]) EXPECT_GT(ns.get<std::int64_t>(), 0);
        got[block] += int(ev["latency_ns"].size());
    }
    EXPECT_EQ(got, plan);
    EXPECT_TRUE(w.quit());
    const auto bye = w.eventsOfType("bye");
    ASSERT_EQ(bye.size(), 1u);
    EXPECT_EQ(bye[0]["malformed_commands"], 0);
}

TEST(WorkerReadback, RunnerMeasuresItersPerArmInInterleavedBlocks) {
    const auto preset = mlpPreset(
        json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}, {"grad", "enabled"}}}},
                     {{"name", "B"},
                      {"knobs",
                       {{"intra_op_threads", 1}, {"grad", "inference_mode"}, {"jit", "freeze"}}}}}),
        {{"warmup_iters", 3}, {"iters", 25}, {"block_iters", 10}, {"processes", 3}});
    auto run = runPreset(preset);
    ASSERT_EQ(run.arms.size(), 2u);
    for (const auto& arm : run.arms) {
        SCOPED_TRACE(arm.name);
        EXPECT_EQ(arm.status, "ok") << (arm.error ? arm.error->message : "");
        ASSERT_EQ(arm.samples.size(), 25u);
        EXPECT_EQ(arm.warmup_ns.size(), 3u);
        std::map<int, int> perBlock;
        for (const auto& s : arm.samples) ++perBlock[s.block];
        EXPECT_EQ(perBlock, (std::map<int, int>{{0, 10}, {1, 10}, {2, 5}}));
        EXPECT_GT(arm.peak_rss_bytes, 0);
        EXPECT_FALSE(arm.metrics.empty()) << "a metrics tick at least every 100 ms";
    }
    EXPECT_EQ(run.arms[0].applied.grad.value_or(""), "enabled");
    EXPECT_EQ(run.arms[1].applied.grad.value_or(""), "inference_mode");
    ASSERT_TRUE(run.arms[1].applied.jit_state.has_value());
    EXPECT_EQ(run.arms[1].applied.jit_state->frozen, std::optional<bool>(true));
    EXPECT_TRUE(run.allOk());
}

}  // namespace
