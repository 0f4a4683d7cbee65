// Preset validation: every bad value is rejected with a SpecError that names the file, the JSON
// path of the field and a reason a user can act on.
#include "preset_fixture.h"
#include "pitlane/spec/run_limits.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using pitlane::spec::json;
using pitlane::spec::loadPresetFile;
using pitlane::spec::parsePreset;
using pitlane::spec::Preset;
using pitlane::spec::SpecError;
using pitlane::test::PresetTest;
using pitlane::test::TempDir;
using pitlane::test::writeFile;
namespace fs = std::filesystem;

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

// A time budget (issue 43) plans iters and processes: written with it they would be silently
// ignored, so the preset gives one or the other; it survives the round trip without them.
TEST_F(PresetTest, ABudgetPlansTheRunInsteadOfItsIterations) {
    auto j = twoArms();
    j["run"] = {{"warmup_iters", 2}, {"budget_ms", 30000}};
    const Preset p = parsePreset(j, presetFile, modelDir);
    EXPECT_TRUE(p.run.budgeted());
    EXPECT_EQ(p.run.budget_ms, 30000);
    EXPECT_EQ(p.run.max_processes, pitlane::spec::kBudgetMaxProcesses);
    const json back = pitlane::spec::presetToJson(p);
    EXPECT_FALSE(back["run"].contains("iters")) << back["run"].dump();
    EXPECT_FALSE(back["run"].contains("processes")) << back["run"].dump();
    EXPECT_EQ(back["run"].value("budget_ms", 0), 30000);
    EXPECT_TRUE(parsePreset(back, presetFile, modelDir).run.budgeted());

    j["run"]["iters"] = 100;
    expectError(j, "run.budget_ms", "also writes run.iters");
    j["run"] = {{"budget_ms", 500}};
    expectError(j, "run.budget_ms", "at least 2000 ms");
    j["run"] = {{"budget_ms", 30000}, {"target_ci_pct", 1}};
    expectError(j, "run.budget_ms", "adaptive stopping");
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
