// Knobs and files the worker cannot honour end the arm with a stable error code and a message
// naming the cause; the other arms still finish.
#include "harness.h"

#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <fstream>

namespace {

using namespace pitlane::itest;
namespace R = pitlane::results;

const json kFast = {{"warmup_iters", 2}, {"iters", 20}, {"block_iters", 10}};

json arm(const char* name, json knobs) {
    return {{"name", name}, {"knobs", std::move(knobs)}};
}

// The arm that failed must not take the healthy one down.
void expectHealthy(const R::ArmResult& a, std::size_t iters) {
    EXPECT_EQ(a.status, R::kOk) << (a.error ? a.error->message : "");
    EXPECT_EQ(a.samples.size(), iters);
}

TEST(WorkerErrors, CudaDeviceOnCpuBuildIsDeviceUnavailable) {
    {
        WorkerDriver probe;
        json hello = probe.start();
        ASSERT_FALSE(hello.is_null());
        if (hello["environment"].value("cuda_available", false))
            GTEST_SKIP() << "this libtorch has CUDA: cuda:0 is a valid device here";
        probe.quit();
    }
    const auto preset =
        mlpPreset(json::array({arm("A", {{"intra_op_threads", 1}}),
                               arm("B", {{"intra_op_threads", 1}, {"device", "cuda:0"}})}),
                  kFast);
    const auto run = runPreset(preset);
    ASSERT_EQ(run.arms.size(), 2u);
    expectHealthy(run.arms[0], 20);
    const auto& b = run.arms[1];
    EXPECT_EQ(b.status, R::kFailed);
    ASSERT_TRUE(b.error.has_value());
    EXPECT_EQ(b.error->code, "device_unavailable");
    EXPECT_NE(b.error->message.find("cuda:0"), std::string::npos) << b.error->message;
    // The worker is a CUDA build (the pinned wheel): what is missing is the device, and the
    // message says so rather than blaming libtorch.
    EXPECT_NE(b.error->message.find("is a CUDA build, but"), std::string::npos) << b.error->message;
    EXPECT_TRUE(b.samples.empty());
    EXPECT_FALSE(run.allOk());
}

// Not a zip: the runner's model check refuses it before any worker loads it (the worker's own
// model_load_failed is tested with a sound archive libtorch refuses: test_model_integrity).
TEST(WorkerErrors, GarbageModelFileIsRefusedBeforeLoading) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const std::string bad = dir.filePath("garbage.pt").toStdString();
    {
        std::ofstream f(bad, std::ios::binary);
        for (int i = 0; i < 4096; ++i) f.put(char((i * 131 + 7) & 0xff));
    }
    json j = {{"model", bad},
              {"input", mlpInput()},
              {"run", kFast},
              {"arms", json::array({arm("A", {{"intra_op_threads", 1}})})}};
    const auto run = runPreset(pitlane::spec::parsePreset(j, "", modelDir()));
    ASSERT_EQ(run.arms.size(), 1u);
    const auto& a = run.arms[0];
    EXPECT_EQ(a.status, R::kFailed);
    ASSERT_TRUE(a.error.has_value());
    EXPECT_EQ(a.error->code, "model_not_torchscript");
    EXPECT_NE(a.error->message.find("garbage.pt"), std::string::npos) << a.error->message;
    EXPECT_TRUE(a.processes.empty()) << "a worker was started";
}

TEST(WorkerErrors, InputShapeThatDoesNotFitTheModel) {
    json j = {{"model", "mlp"},
              {"input", json::array({{{"shape", {7}}, {"dtype", "float32"}}})},
              {"run", kFast},
              {"arms", json::array({arm("A", {{"intra_op_threads", 1}})})}};
    const auto run = runPreset(pitlane::spec::parsePreset(j, "", modelDir()));
    ASSERT_EQ(run.arms.size(), 1u);
    const auto& a = run.arms[0];
    EXPECT_EQ(a.status, R::kFailed);
    ASSERT_TRUE(a.error.has_value());
    EXPECT_TRUE(a.error->code == "input_mismatch" || a.error->code == "forward_failed")
        << a.error->code;
    EXPECT_NE(a.error->message.find("[1, 7]"), std::string::npos)
        << "the message must name the input shape: " << a.error->message;
}

TEST(WorkerErrors, ErrorsOverTheProtocolKeepTheWorkerAlive) {
    WorkerDriver w;
    ASSERT_FALSE(w.start().is_null());
    // Run before configure, then an unknown knob: both are errors, neither kills the worker.
    json early = w.run(0, 5);
    EXPECT_EQ(early.value("code", ""), "not_configured") << early.dump();
    json bad = w.configure({{"grad", "off"}});
    EXPECT_EQ(bad.value("type", ""), "error");
    EXPECT_EQ(bad.value("code", ""), "bad_knob");
    EXPECT_EQ(bad["detail"].value("field", ""), "knobs.grad") << bad.dump();
    // A line that is not a command is counted and answered, not fatal.
    w.process().send(json{{"v", 1}, {"no_cmd", true}});
    EXPECT_TRUE(w.quit());
    EXPECT_EQ(w.eventsOfType("bye").at(0)["malformed_commands"], 1);
}

}  // namespace
