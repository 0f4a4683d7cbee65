// Knob validation in presets: each bad knob value is refused naming the file, the field and the
// accepted values; combinations of knobs are checked; every good value is accepted and round-trips.
#include "preset_fixture.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using pitlane::spec::json;
using pitlane::spec::parsePreset;
using pitlane::spec::Preset;
using pitlane::spec::SpecError;
using pitlane::test::PresetTest;

TEST_F(PresetTest, UnknownKnobListsTheKnownOnes) {
    auto j = twoArms();
    j["arms"][1]["knobs"]["threads"] = 2;
    expectError(j, "arms[1].knobs.threads", "unknown knob");
    expectError(j, "arms[1].knobs.threads", "intra_op_threads");
}

TEST_F(PresetTest, AllocatorKnobNamesTheFieldAndTheAcceptedValues) {
    auto j = twoArms();
    j["arms"][1]["knobs"]["allocator"] = "mimalloc";
    expectError(j, "arms[1].knobs.allocator", "unknown value \"mimalloc\"");
    expectError(j, "arms[1].knobs.allocator", "system, jemalloc, tcmalloc");
    j["arms"][1]["knobs"]["allocator"] = true;
    expectError(j, "arms[1].knobs.allocator", "expected a string");

    auto ok = twoArms();
    ok["arms"][0]["knobs"]["allocator"] = "jemalloc";
    ok["arms"][1]["knobs"]["allocator"] = "tcmalloc";
    const Preset p = parsePreset(ok, presetFile, modelDir);
    EXPECT_EQ(p.arms[0].knobs.allocator, pitlane::spec::Allocator::Jemalloc);
    EXPECT_EQ(p.arms[1].knobs.allocator, pitlane::spec::Allocator::Tcmalloc);
    EXPECT_EQ(pitlane::spec::Knobs{}.allocator, pitlane::spec::Allocator::System);
    // Round trip through what the orchestrator sends to the worker.
    const auto again = pitlane::spec::parseKnobs(pitlane::spec::knobsToJson(p.arms[1].knobs),
                                                 "<configure>", "knobs");
    EXPECT_EQ(again.allocator, pitlane::spec::Allocator::Tcmalloc);
    EXPECT_EQ(pitlane::spec::knobsToJson(pitlane::spec::Knobs{}).value("allocator", ""),
              "system");
}

TEST_F(PresetTest, JitFreezeNeedsEvalMode) {
    for (const char* jit : {"freeze", "freeze_optimize"}) {
        auto j = twoArms();
        j["arms"][1]["knobs"] = {{"mode", "train"}, {"jit", jit}};
        expectError(j, "arms[1].knobs.jit", "needs mode \"eval\"");
    }
    auto ok = twoArms();
    ok["arms"][1]["knobs"] = {{"mode", "eval"}, {"jit", "freeze"}};
    EXPECT_NO_THROW(parsePreset(ok, presetFile, modelDir));
}

// A train step needs autograd recording (grad "enabled") and parameters (no jit freeze): both
// combinations are rejected naming the workload field and saying why.
TEST_F(PresetTest, TrainStepWorkloadNeedsGradEnabledAndAnUnfrozenModule) {
    for (const char* grad : {"no_grad", "inference_mode"}) {
        auto j = twoArms();
        j["arms"][1]["knobs"] = {{"workload", "train_step"}, {"grad", grad}};
        expectError(j, "arms[1].knobs.workload", "needs grad \"enabled\"");
        expectError(j, "arms[1].knobs.workload", grad);
    }
    for (const char* jit : {"freeze", "freeze_optimize"}) {
        auto j = twoArms();
        j["arms"][1]["knobs"] = {{"workload", "train_step"}, {"jit", jit}};
        expectError(j, "arms[1].knobs.workload", "no parameters left to train");
    }
    auto ok = twoArms();
    ok["arms"][1]["knobs"] = {{"workload", "train_step"}, {"grad", "enabled"}, {"mode", "train"},
                              {"precision", "autocast_bf16"}};
    const Preset p = parsePreset(ok, presetFile, modelDir);
    EXPECT_EQ(p.arms[1].knobs.workload, pitlane::spec::Workload::TrainStep);
    EXPECT_EQ(p.arms[0].knobs.workload, pitlane::spec::Workload::Inference);  // the default
    // Inference under no_grad / freeze stays fine.
    ok["arms"][1]["knobs"] = {{"workload", "inference"}, {"grad", "no_grad"}, {"jit", "freeze"}};
    EXPECT_NO_THROW(parsePreset(ok, presetFile, modelDir));
}

TEST_F(PresetTest, Fp16AutocastIsRejectedOnCpu) {
    auto j = twoArms();
    j["arms"][0]["knobs"] = {{"precision", "autocast_fp16"}};
    expectError(j, "arms[0].knobs.precision", "autocast_bf16");
}

// One bad value per knob: {knob value, field the error must name, part of the reason}.
struct BadKnob {
    const char* knob;
    json value;
    const char* field;  // relative to arms[1].knobs
    const char* reason;
};

class BadKnobTest : public PresetTest, public ::testing::WithParamInterface<BadKnob> {};

TEST_P(BadKnobTest, NamesFileFieldAndReason) {
    const auto& bad = GetParam();
    auto j = twoArms();
    j["arms"][1]["knobs"][bad.knob] = bad.value;
    expectError(j, std::string("arms[1].knobs.") + bad.field, bad.reason);
}

INSTANTIATE_TEST_SUITE_P(
    EveryKnob, BadKnobTest,
    ::testing::Values(
        BadKnob{"device", "gpu", "device", "unknown device \"gpu\""},
        BadKnob{"device", "cuda:", "device", "cuda:N"},
        BadKnob{"device", "cuda:x", "device", "cuda:N"}, BadKnob{"device", 0, "device", "cuda:N"},
        BadKnob{"device", "cuda:\xd9\xa3", "device", "cuda:N"},  // a non-ASCII digit
        BadKnob{"mode", "training", "mode",
                "unknown value \"training\" (expected one of train, eval)"},
        BadKnob{"mode", true, "mode", "expected a string"},
        BadKnob{"grad", "off", "grad", "expected one of enabled, no_grad, inference_mode"},
        BadKnob{"jit", "script", "jit", "expected one of none, freeze, freeze_optimize"},
        BadKnob{"precision", "fp64", "precision",
                "expected one of fp32, autocast_bf16, autocast_fp16, half"},
        BadKnob{"batch_size", 0, "batch_size", "must be >= 1"},
        BadKnob{"batch_size", "8", "batch_size", "expected an integer"},
        BadKnob{"batch_size", 1.5, "batch_size", "expected an integer"},
        BadKnob{"batch_size", json::array(), "batch_size", "at least one size"},
        BadKnob{"batch_size", json::array({1, 4, 1}), "batch_size[2]", "listed twice"},
        BadKnob{"batch_size", json::array({1, -4}), "batch_size[1]", "must be >= 1"},
        BadKnob{"batch_size", 2000000, "batch_size", "must be <="},
        BadKnob{"intra_op_threads", 0, "intra_op_threads", "must be >= 1"},
        BadKnob{"intra_op_threads", 5000, "intra_op_threads", "must be <= 4096"},
        BadKnob{"intra_op_threads", "2", "intra_op_threads", "expected an integer"},
        BadKnob{"inter_op_threads", -1, "inter_op_threads", "must be >= 1"},
        BadKnob{"affinity", "all", "affinity", "expected one of none, compact, spread"},
        BadKnob{"affinity", json::array(), "affinity", "at least one core id"},
        BadKnob{"affinity", json::array({0, 0}), "affinity[1]", "listed twice"},
        BadKnob{"affinity", json::array({-1}), "affinity[0]", "core id 0..4095"},
        BadKnob{"affinity", json::array({0, "1"}), "affinity[1]", "core id 0..4095"},
        BadKnob{"cudnn_enabled", "yes", "cudnn_enabled", "expected true or false"},
        BadKnob{"cudnn_benchmark", 1, "cudnn_benchmark", "expected true or false"},
        BadKnob{"cudnn_deterministic", nullptr, "cudnn_deterministic", "expected true or false"},
        BadKnob{"allow_tf32", "true", "allow_tf32", "expected true or false"},
        BadKnob{"memory_format", "nhwc", "memory_format",
                "expected one of contiguous, channels_last"},
        BadKnob{"workers", 0, "workers", "must be >= 1"},
        BadKnob{"workers", 65, "workers", "must be <= 64"},
        BadKnob{"host_sync_each_iter", "no", "host_sync_each_iter", "expected true or false"},
        BadKnob{"input_on_host", 0, "input_on_host", "expected true or false"},
        BadKnob{"profiling_executor", "on", "profiling_executor", "expected true or false"},
        BadKnob{"fuser", 1, "fuser", "expected true or false"},
        BadKnob{"allocator", "glibc", "allocator",
                "unknown value \"glibc\" (expected one of system, jemalloc, tcmalloc)"},
        BadKnob{"workload", "training", "workload",
                "unknown value \"training\" (expected one of inference, train_step)"}));

TEST_F(PresetTest, EveryGoodKnobValueIsAccepted) {
    auto j = twoArms();
    j["arms"][1]["knobs"] = {{"device", "cuda:1"},
                             {"mode", "eval"},
                             {"grad", "inference_mode"},
                             {"jit", "freeze_optimize"},
                             {"precision", "autocast_bf16"},
                             {"batch_size", {1, 8}},
                             {"intra_op_threads", 2},
                             {"inter_op_threads", 1},
                             {"affinity", {0, 1}},
                             {"cudnn_enabled", true},
                             {"cudnn_benchmark", false},
                             {"cudnn_deterministic", true},
                             {"allow_tf32", false},
                             {"memory_format", "channels_last"},
                             {"workers", 2},
                             {"host_sync_each_iter", true},
                             {"input_on_host", true},
                             {"profiling_executor", false},
                             {"fuser", false},
                             {"allocator", "jemalloc"}};
    const auto p = parsePreset(j, presetFile, modelDir);
    const auto& k = p.arms[1].knobs;
    EXPECT_EQ(k.allocator, pitlane::spec::Allocator::Jemalloc);
    EXPECT_EQ(k.device, "cuda:1");
    EXPECT_EQ(k.batch_size, (std::vector<int>{1, 8}));
    EXPECT_TRUE(k.batchSweep());
    EXPECT_EQ(k.affinity, pitlane::spec::Affinity::List);
    EXPECT_EQ(k.affinity_cores, (std::vector<int>{0, 1}));
    EXPECT_EQ(k.intra_op_threads, 2);
    ASSERT_TRUE(k.cudnn_benchmark.has_value());
    EXPECT_FALSE(*k.cudnn_benchmark);
    EXPECT_TRUE(k.input_on_host);
}


TEST_F(PresetTest, KnobsToJsonParsesBackToTheSameKnobs) {
    // The orchestrator sends knobsToJson() to the worker, which parses it with parseKnobs().
    const json requested = {{"mode", "eval"},
                            {"grad", "no_grad"},
                            {"affinity", {0}},
                            {"batch_size", 4},
                            {"allow_tf32", true}};
    const auto k = pitlane::spec::parseKnobs(requested, "<configure>", "knobs");
    const auto again =
        pitlane::spec::parseKnobs(pitlane::spec::knobsToJson(k), "<configure>", "knobs");
    EXPECT_EQ(pitlane::spec::knobsToJson(again), pitlane::spec::knobsToJson(k));
    EXPECT_EQ(again.affinity_cores, std::vector<int>{0});
    EXPECT_EQ(again.batch_size, std::vector<int>{4});
}


}  // namespace
