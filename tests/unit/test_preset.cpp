// Preset validation: every bad value is rejected with a SpecError that names the file, the JSON
// path of the field and a reason a user can act on.
#include "pitlane/spec/preset.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using pitlane::spec::json;
using pitlane::spec::loadPresetFile;
using pitlane::spec::parsePreset;
using pitlane::spec::Preset;
using pitlane::spec::SpecError;
using pitlane::test::TempDir;
using pitlane::test::writeFile;
namespace fs = std::filesystem;

// A model directory holding a stand-in "mlp" bundle: the preset parser only checks that the .pt
// exists and reads the sidecar, it never loads TorchScript.
class PresetTest : public ::testing::Test {
protected:
    void SetUp() override {
        modelDir = pitlane::test::writeStandInModels(tmp);
        presetFile = (tmp / "presets/bad.json").string();
    }

    static json twoArms() {
        return {{"model", "mlp"},
                {"run", {{"warmup_iters", 2}, {"iters", 20}, {"block_iters", 10}}},
                {"arms", json::array({{{"name", "A"}, {"knobs", json::object()}},
                                      {{"name", "B"}, {"knobs", json::object()}}})}};
    }

    // Parses `j` expecting a SpecError on `field` whose reason contains `reasonPart`.
    void expectError(const json& j, const std::string& field, const std::string& reasonPart) {
        try {
            parsePreset(j, presetFile, modelDir);
            ADD_FAILURE() << "accepted an invalid preset, expected an error on " << field << ": "
                          << j.dump();
        } catch (const SpecError& e) {
            EXPECT_EQ(e.where(), presetFile);
            EXPECT_EQ(e.field(), field) << e.what();
            EXPECT_NE(e.reason().find(reasonPart), std::string::npos)
                << "reason \"" << e.reason() << "\" lacks \"" << reasonPart << "\"";
            // The one-line message a user sees carries all three.
            const std::string what = e.what();
            EXPECT_NE(what.find(presetFile), std::string::npos) << what;
            EXPECT_NE(what.find(field), std::string::npos) << what;
            EXPECT_NE(what.find(e.reason()), std::string::npos) << what;
        }
    }

    TempDir tmp;
    std::string modelDir, presetFile;
};

TEST_F(PresetTest, MinimalBundledPresetResolvesModelAndSidecarInput) {
    const Preset p = parsePreset(twoArms(), presetFile, modelDir);
    EXPECT_TRUE(p.bundled);
    EXPECT_EQ(p.model, "mlp");
    EXPECT_EQ(fs::path(p.model_path), fs::path(modelDir) / "mlp.pt");
    ASSERT_EQ(p.input.size(), 1u);
    EXPECT_EQ(p.input[0].shape, std::vector<std::int64_t>{256});
    EXPECT_EQ(p.input[0].dtype, "float32");
    EXPECT_EQ(p.name, "mlp");  // defaults to the model
    ASSERT_EQ(p.arms.size(), 2u);
    EXPECT_EQ(p.arms[1].name, "B");
    EXPECT_EQ(p.arms[1].knobs.grad, pitlane::spec::Grad::Enabled);
    EXPECT_EQ(p.arms[1].knobs.mode, pitlane::spec::Mode::Eval);
    EXPECT_EQ(p.run.iters, 20);
    EXPECT_EQ(p.run.block_iters, 10);
}

TEST_F(PresetTest, BundledModelMissingFromModelDirNamesTheFile) {
    auto j = twoArms();
    j["model"] = "resnet18";  // a bundled name, but not in our model dir
    expectError(j, "model", "resnet18.pt does not exist");
}

TEST_F(PresetTest, BundledModelWithoutModelDirSaysHowToGetOne) {
    auto j = twoArms();
    try {
        parsePreset(j, presetFile, "");
        FAIL() << "accepted a bundled model with no model directory";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.field(), "model");
        EXPECT_NE(e.reason().find("PITLANE_MODEL_DIR"), std::string::npos) << e.reason();
    }
}

TEST_F(PresetTest, RelativeModelPathIsResolvedAgainstThePresetFile) {
    writeFile(tmp / "proj/nets/custom.pt", "stand-in");
    const auto file = tmp / "proj/presets/p.json";
    auto j = twoArms();
    j["model"] = "../nets/custom.pt";
    j["input"] = json::array({{{"shape", {4}}}});
    writeFile(file, j.dump());
    const Preset p = loadPresetFile(file.string(), modelDir);
    EXPECT_FALSE(p.bundled);
    EXPECT_EQ(fs::path(p.model_path), fs::canonical(tmp / "proj/nets/custom.pt"));
    EXPECT_TRUE(fs::path(p.model_path).is_absolute());
}

TEST_F(PresetTest, MissingModelFileNamesThePath) {
    auto j = twoArms();
    j["model"] = "nowhere/ghost.pt";
    j["input"] = json::array({{{"shape", {4}}}});
    expectError(j, "model", "ghost.pt does not exist");
}

TEST_F(PresetTest, ModelWithoutSidecarNeedsAnInput) {
    writeFile(tmp / "presets/own.pt", "stand-in");
    auto j = twoArms();
    j["model"] = "own.pt";
    expectError(j, "input", "missing");
}

TEST_F(PresetTest, MissingModel) {
    auto j = twoArms();
    j.erase("model");
    expectError(j, "model", "missing");
    j["model"] = 42;  // not "missing" (issue 12): what it is, and what it must be
    expectError(j, "model", "must be a string, got number 42");
    j["model"] = "";
    expectError(j, "model", "is empty");
}

TEST_F(PresetTest, UnknownTopLevelField) {
    auto j = twoArms();
    j["modle"] = "mlp";
    expectError(j, "modle", "unknown field");
}

TEST_F(PresetTest, NotAnObject) {
    try {
        parsePreset(json::array({1, 2}), presetFile, modelDir);
        FAIL();
    } catch (const SpecError& e) {
        EXPECT_EQ(e.where(), presetFile);
        EXPECT_NE(e.reason().find("JSON object"), std::string::npos);
    }
}

TEST_F(PresetTest, ArmsStructure) {
    auto j = twoArms();
    j["arms"] = json::array();
    expectError(j, "arms", "at least one arm");
    j.erase("arms");
    expectError(j, "arms", "missing");
    j = twoArms();
    j["arms"][1] = "B";
    expectError(j, "arms[1]", "expected an object");
    j = twoArms();
    j["arms"][1].erase("name");
    expectError(j, "arms[1].name", "missing");
    j = twoArms();
    j["arms"][0]["knobz"] = json::object();
    expectError(j, "arms[0].knobz", "unknown field");
    j = twoArms();
    j["arms"][1]["knobs"] = "fast";
    expectError(j, "arms[1].knobs", "expected an object");
}

TEST_F(PresetTest, DuplicateArmNames) {
    auto j = twoArms();
    j["arms"][1]["name"] = "A";
    expectError(j, "arms[1].name", "used twice");
}

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

TEST_F(PresetTest, RunSettings) {
    auto j = twoArms();
    j["run"] = {{"iters", 20}, {"block_iters", 30}};
    expectError(j, "run.block_iters", "exceeds iters");
    j["run"] = {{"iters", 0}};
    expectError(j, "run.iters", "between 1 and");
    j["run"] = {{"iters", "50"}};
    expectError(j, "run.iters", "expected an integer");
    j["run"] = {{"warmup_iters", -1}};
    expectError(j, "run.warmup_iters", "between 0 and");
    j["run"] = {{"block_iters", 0}};
    expectError(j, "run.block_iters", "between 1 and");
    j["run"] = {{"event_timeout_ms", 5}};
    expectError(j, "run.event_timeout_ms", "between 100 and");
    j["run"] = {{"seed", -3}};
    expectError(j, "run.seed", "between 0 and");
    j["run"] = {{"itters", 5}};
    expectError(j, "run.itters", "unknown field");
    j["run"] = 50;
    expectError(j, "run", "expected an object");

    // block_iters defaults to min(10, iters) so a short run stays valid.
    j["run"] = {{"iters", 4}};
    EXPECT_EQ(parsePreset(j, presetFile, modelDir).run.block_iters, 4);
}

TEST_F(PresetTest, BadInputs) {
    auto j = twoArms();
    j["input"] = json::array({{{"shape", 256}}});
    expectError(j, "input[0].shape", "expected a list of dimension sizes");
    j["input"] = json::array({{{"shape", {3, 0}}}});
    expectError(j, "input[0].shape[1]", "dimension size >= 1");
    j["input"] = json::array({{{"shape", {3, "224"}}}});
    expectError(j, "input[0].shape[1]", "dimension size >= 1");
    j["input"] = json::array({{{"shape", {8}}}, {{"shape", {8}}, {"dtype", "float8"}}});
    expectError(j, "input[1].dtype", "unknown dtype \"float8\"");
    j["input"] = json::array({{{"shape", {8}}, {"dtype", 32}}});
    expectError(j, "input[0].dtype", "unknown dtype");
    j["input"] = json::array({{{"dtype", "float32"}}});
    expectError(j, "input[0].shape", "missing");
    j["input"] = json::array({{{"shape", {8}}, {"layout", "nchw"}}});
    expectError(j, "input[0].layout", "unknown input field");
    j["input"] = json::array();
    expectError(j, "input", "non-empty list");
    j["input"] = {{"shape", {8}}};
    expectError(j, "input", "non-empty list");
    j["input"] = json::array({{{"shapes", json::array()}}});
    expectError(j, "input[0].shapes", "non-empty list of shapes");
    j["input"] = json::array({{{"shapes", {{4}, {0}}}}});
    expectError(j, "input[0].shapes[1][0]", "dimension size >= 1");
}

TEST_F(PresetTest, PresetFileErrors) {
    const auto missing = (tmp / "presets/none.json").string();
    try {
        loadPresetFile(missing, modelDir);
        FAIL() << "loaded a file that does not exist";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.where(), missing);
        EXPECT_NE(e.reason().find("cannot open"), std::string::npos);
    }
    const auto broken = (tmp / "presets/broken.json").string();
    writeFile(broken, "{\"model\": \"mlp\", \"arms\": [");
    try {
        loadPresetFile(broken, modelDir);
        FAIL() << "loaded a file that is not JSON";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.where(), broken);
        EXPECT_NE(e.reason().find("not valid JSON"), std::string::npos) << e.reason();
        EXPECT_NE(std::string(e.what()).find(broken), std::string::npos);
    }
    // Errors found after reading name the file too.
    const auto invalid = (tmp / "presets/invalid.json").string();
    auto j = twoArms();
    j["arms"][0]["knobs"]["grad"] = "off";
    writeFile(invalid, j.dump());
    try {
        loadPresetFile(invalid, modelDir);
        FAIL();
    } catch (const SpecError& e) {
        EXPECT_EQ(e.where(), invalid);
        EXPECT_EQ(e.field(), "arms[0].knobs.grad");
    }
}

TEST_F(PresetTest, RoundTripThroughPresetToJson) {
    auto j = twoArms();
    j["name"] = "round trip";
    j["description"] = "every part of a preset survives save + load";
    j["lesson"] = {{"title", "t"}, {"steps", {"a", "b"}}};
    j["input"] =
        json::array({{{"shape", {256}}, {"dtype", "float32"}},
                     {{"shape", {2, 3}}, {"dtype", "int64"}, {"shapes", {{2, 3}, {4, 3}}}}});
    j["run"] = {{"warmup_iters", 3},
                {"iters", 40},
                {"block_iters", 8},
                {"event_timeout_ms", 1500},
                {"seed", 7}};
    j["arms"][0]["knobs"] = {{"mode", "train"}, {"grad", "enabled"}, {"intra_op_threads", 2}};
    j["arms"][1]["knobs"] = {{"grad", "inference_mode"},
                             {"jit", "freeze_optimize"},
                             {"affinity", {1}},
                             {"batch_size", {1, 4}}};
    const Preset a = parsePreset(j, presetFile, modelDir);
    const json saved = pitlane::spec::presetToJson(a);
    const Preset b = parsePreset(saved, presetFile, modelDir);

    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.description, a.description);
    EXPECT_EQ(b.lesson, a.lesson);
    EXPECT_EQ(b.model_path, a.model_path);
    EXPECT_EQ(pitlane::spec::inputsToJson(b.input), pitlane::spec::inputsToJson(a.input));
    EXPECT_EQ(b.input[1].shapes.size(), 2u);
    EXPECT_EQ(b.run.warmup_iters, 3);
    EXPECT_EQ(b.run.iters, 40);
    EXPECT_EQ(b.run.block_iters, 8);
    EXPECT_EQ(b.run.event_timeout_ms, 1500);
    EXPECT_EQ(b.run.seed, 7u);
    ASSERT_EQ(b.arms.size(), a.arms.size());
    for (std::size_t i = 0; i < a.arms.size(); ++i) {
        EXPECT_EQ(b.arms[i].name, a.arms[i].name);
        EXPECT_EQ(b.arms[i].knobs_json, a.arms[i].knobs_json);
        EXPECT_EQ(pitlane::spec::knobsToJson(b.arms[i].knobs),
                  pitlane::spec::knobsToJson(a.arms[i].knobs));
    }
    EXPECT_EQ(pitlane::spec::presetToJson(b), saved);
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

TEST_F(PresetTest, ProcessesDefaultToThreeUpToSixAndAloneMeanExactly) {
    const Preset d = parsePreset(twoArms(), presetFile, modelDir);
    EXPECT_EQ(d.run.processes, 3);
    EXPECT_EQ(d.run.max_processes, 6);
    json j = twoArms();
    j["run"]["processes"] = 5;
    const Preset exact = parsePreset(j, presetFile, modelDir);
    EXPECT_EQ(exact.run.processes, 5);
    EXPECT_EQ(exact.run.max_processes, 5);
    j["run"]["max_processes"] = 9;
    EXPECT_EQ(parsePreset(j, presetFile, modelDir).run.max_processes, 9);
    // Fewer iterations than the default processes: the default shrinks, a stated value does not.
    json few = twoArms();
    few["run"] = {{"iters", 2}, {"block_iters", 1}};
    EXPECT_EQ(parsePreset(few, presetFile, modelDir).run.processes, 2);
    // Round trip through presetToJson keeps both.
    const json back = presetToJson(parsePreset(j, presetFile, modelDir));
    EXPECT_EQ(back["run"]["processes"], 5);
    EXPECT_EQ(back["run"]["max_processes"], 9);
}

TEST_F(PresetTest, BadProcessCountsNameTheFieldAndTheReason) {
    json j = twoArms();
    j["run"]["processes"] = 0;
    expectError(j, "run.processes", "between 1 and");
    j["run"]["processes"] = 65;
    expectError(j, "run.processes", "at most 64");
    j["run"]["processes"] = 21;
    expectError(j, "run.processes", "exceeds iters");
    j["run"]["processes"] = 4;
    j["run"]["max_processes"] = 3;
    expectError(j, "run.max_processes", "below processes");
    j["run"]["max_processes"] = "six";
    expectError(j, "run.max_processes", "integer");
}

// Issue 26: an arm's own model and input. The arm's model resolves like the preset's (relative to
// the preset's folder, or a bundled name); its input is its own, else the preset's written one,
// else its model's sidecar, else the preset's; presetToJson writes both back.
TEST_F(PresetTest, AnArmsOwnModelAndInputOverrideThePresets) {
    writeFile(tmp / "presets/v2.pt", "stand-in");
    writeFile(tmp / "presets/v3.pt", "stand-in");
    writeFile(tmp / "presets/v3.json", R"({"input": [{"shape": [3, 64, 64], "dtype": "float32"}]})");
    json j = twoArms();
    j["arms"].push_back({{"name", "C"}, {"model", "v3.pt"}, {"knobs", json::object()}});
    j["arms"].push_back({{"name", "D"}, {"model", "v3.pt"}, {"input", json::array({{{"shape", {7}}}})}, {"knobs", json::object()}});
    j["arms"][1]["model"] = "v2.pt";
    const Preset p = parsePreset(j, presetFile, modelDir);
    ASSERT_EQ(p.arms.size(), 4u);
    EXPECT_EQ(p.arms[0].model, "");
    EXPECT_EQ(p.arms[0].model_path, p.model_path);
    EXPECT_EQ(p.arms[1].model_path, fs::weakly_canonical(tmp / "presets/v2.pt").string());
    // v2 describes nothing: the preset's (the mlp sidecar's) input.
    EXPECT_EQ(p.arms[1].input.front().shape, std::vector<std::int64_t>({256}));
    EXPECT_EQ(p.arms[2].input.front().shape, std::vector<std::int64_t>({3, 64, 64}));  // v3's sidecar
    EXPECT_EQ(p.arms[3].input.front().shape, std::vector<std::int64_t>({7}));          // written
    EXPECT_TRUE(pitlane::spec::armsDifferInModel(p));
    // A preset that writes its input gives it to every arm that does not write its own.
    json written = j;
    written["input"] = json::array({{{"shape", {9}}}});
    const Preset w = parsePreset(written, presetFile, modelDir);
    EXPECT_EQ(w.arms[2].input.front().shape, std::vector<std::int64_t>({9}));
    EXPECT_EQ(w.arms[3].input.front().shape, std::vector<std::int64_t>({7}));
    // Written back as written.
    const json back = pitlane::spec::presetToJson(p);
    EXPECT_FALSE(back["arms"][0].contains("model"));
    EXPECT_EQ(back["arms"][1]["model"], "v2.pt");
    EXPECT_FALSE(back["arms"][2].contains("input"));
    EXPECT_EQ(back["arms"][3]["input"][0]["shape"], json::array({7}));
    EXPECT_EQ(parsePreset(back, presetFile, modelDir).arms[3].input.front().shape, std::vector<std::int64_t>({7}));
}

TEST_F(PresetTest, AnArmsModelThatIsMissingOrRemoteIsNamed) {
    json j = twoArms();
    j["arms"][1]["model"] = "nowhere/v9.pt";
    expectError(j, "arms[1].model", "does not exist");
    j["arms"][1]["model"] = 7;
    expectError(j, "arms[1].model", "must be a string");
    j["arms"][1]["model"] = "resnet18";  // bundled, but not in this model dir
    expectError(j, "arms[1].model", "bundled model \"resnet18\" is missing");
    writeFile(tmp / "presets/v2.pt", "stand-in");
    j["arms"][1]["model"] = "v2.pt";
    j["host"] = "gpu-box";  // every arm there: a host comparison needs no compare_hosts
    expectError(j, "arms[1].model", "receives the preset's model only");
    j.erase("host");
    j["arms"][1]["nonsense"] = 1;
    expectError(j, "arms[1].nonsense", "expected name, knobs, model, input, host");
}

// Issue 27: an input given whole (batch_dim false) keeps its shape, round-trips, and leaves no
// room for a batch size; a leading "N" marks the batch where it goes anyway.
TEST_F(PresetTest, InputGivenWholeOrWithALeadingN) {
    json j = twoArms();
    j["input"] = {{{"shape", {1, 256}}, {"batch_dim", false}}};
    Preset p = parsePreset(j, presetFile, modelDir);
    ASSERT_EQ(p.input.size(), 1u);
    EXPECT_FALSE(p.input[0].batch_dim);
    EXPECT_EQ(p.input[0].shape, (std::vector<std::int64_t>{1, 256}));
    EXPECT_EQ(pitlane::spec::inputsToJson(p.input)[0]["batch_dim"], false);
    j["arms"][1]["knobs"]["batch_size"] = 8;
    expectError(j, "arms[1].knobs.batch_size", "batch_dim false");
    j["input"][0]["batch_dim"] = "no";
    expectError(j, "input[0].batch_dim", "expected true");
    j["input"] = {{{"shape", {"N", 256}}}};
    p = parsePreset(j, presetFile, modelDir);
    EXPECT_TRUE(p.input[0].batch_dim);
    EXPECT_EQ(p.input[0].shape, (std::vector<std::int64_t>{256}));
    EXPECT_FALSE(pitlane::spec::inputsToJson(p.input)[0].contains("batch_dim"));
    j["input"] = {{{"shape", {3, "N"}}}};
    expectError(j, "input[0].shape[1]", "dimension size");
}
