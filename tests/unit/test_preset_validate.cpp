// `pitlane-cli validate` lists every error of a preset (issue 11 item 9): spec::validatePreset
// goes on past a bad field wherever the rest does not depend on it, never reports a combination
// of fields one of which was already refused, and parsePreset still throws the first of them.
#include "pitlane/spec/preset.h"

#include "temp_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

namespace {

using pitlane::spec::json;
using pitlane::spec::SpecError;
using pitlane::test::TempDir;
using pitlane::test::writeFile;
namespace spec = pitlane::spec;

class ValidateTest : public ::testing::Test {
protected:
    void SetUp() override {
        modelDir = pitlane::test::writeStandInModels(tmp);
        file = (tmp / "presets/many.json").string();
    }

    static json good() {
        return {{"model", "mlp"},
                {"run", {{"warmup_iters", 2}, {"iters", 20}, {"block_iters", 10}}},
                {"arms", json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                                      {{"name", "B"}, {"knobs", {{"grad", "inference_mode"}}}}})},
                {"lesson",
                 {{"title", "t"},
                  {"checks", json::array({{{"kind", "faster"}, {"arm", "B"}, {"than", "A"}}})}}}};
    }

    static std::vector<std::string> fields(const std::vector<SpecError>& errors) {
        std::vector<std::string> out;
        for (const auto& e : errors) out.push_back(e.field());
        return out;
    }

    TempDir tmp;
    std::string modelDir, file;
};

TEST_F(ValidateTest, AValidPresetHasNoErrors) {
    EXPECT_TRUE(spec::validatePreset(good(), file, modelDir).empty());
}

// Errors in every part of a preset, each reported once, in the order of the file, each naming
// the file, its field and its reason.
TEST_F(ValidateTest, EveryErrorIsListedWithFileFieldAndReason) {
    json j = good();
    j["colour"] = "red";                                  // unknown top-level field
    j["input"] = json::array({{{"shape", {0}}, {"dtype", "float8"}}});  // two bad input fields
    j["run"]["iters"] = "many";                           // refused: iters-based rules are skipped
    j["run"]["warmup_iters"] = -1;
    j["run"]["block_iters"] = 100;                        // would exceed iters: not reported
    j["arms"][0]["knobs"]["grad"] = "sometimes";
    j["arms"][0]["knobs"]["jit"] = "always";
    j["arms"][1]["knobs"] = {{"device", "gpu"}, {"cuda_graph", true}};  // no cuda_graph rule
    j["arms"].push_back({{"knobs", {{"intra_op_threads", 0}}}});        // no name, bad knob
    j["arms"].push_back({{"name", "A"}, {"knobs", {{"mode", "train"}, {"jit", "freeze"}}}});
    j["lesson"]["checks"].push_back({{"kind", "quicker"}, {"arm", "A"}});
    j["lesson"]["checks"].push_back({{"kind", "faster"}, {"arm", "Z"}, {"than", "A"}});
    const auto errors = spec::validatePreset(j, file, modelDir);
    const std::vector<std::string> expected = {
        "colour",
        "input[0].dtype",  // the keys of an object come in name order
        "input[0].shape[0]",
        "run.warmup_iters",
        "run.iters",
        "arms[0].knobs.grad",
        "arms[0].knobs.jit",
        "arms[1].knobs.device",
        "arms[2].name",
        "arms[2].knobs.intra_op_threads",
        "arms[3].name",
        "arms[3].knobs.jit",  // the combination rule: both of its knobs were accepted
        "lesson.checks[1].kind",
        "lesson.checks[2].arm",
    };
    EXPECT_EQ(fields(errors), expected);
    for (const auto& e : errors) {
        EXPECT_EQ(e.where(), file);
        EXPECT_FALSE(e.reason().empty());
        EXPECT_EQ(std::string(e.what()), file + ": " + e.field() + ": " + e.reason());
    }
    ASSERT_EQ(errors.size(), expected.size());
    EXPECT_NE(errors[5].reason().find("sometimes"), std::string::npos) << errors[5].what();
    EXPECT_NE(errors[10].reason().find("used twice"), std::string::npos) << errors[10].what();
    EXPECT_NE(errors[11].reason().find("needs mode \"eval\""), std::string::npos) << errors[11].what();
    EXPECT_NE(errors[12].reason().find("quicker"), std::string::npos) << errors[12].what();
    EXPECT_NE(errors[13].reason().find("\"Z\""), std::string::npos) << errors[13].what();
}

// Callers that only want to know whether a preset is valid keep the exception: the first error.
TEST_F(ValidateTest, ParsePresetThrowsTheFirstError) {
    std::vector<json> bad;
    json j = good();
    j["run"]["iters"] = 5;  // block_iters 10 exceeds it
    j["arms"][1]["knobs"]["grad"] = "x";
    bad.push_back(j);
    j = good();
    j["arms"][0]["knobs"] = {{"workload", "train_step"}, {"grad", "no_grad"}, {"threads", 2}};
    bad.push_back(j);
    j = good();
    j["lesson"]["checks"][0]["min_ratio"] = 0.5;
    j["lesson"]["checks"].push_back({{"kind", "applied"}, {"arm", "A"}});
    bad.push_back(j);
    j = good();
    j["model"] = "no_such_model";
    bad.push_back(j);
    for (const auto& preset : bad) {
        const auto errors = spec::validatePreset(preset, file, modelDir);
        ASSERT_FALSE(errors.empty()) << preset.dump();
        try {
            spec::parsePreset(preset, file, modelDir);
            ADD_FAILURE() << "accepted " << preset.dump();
        } catch (const SpecError& e) {
            EXPECT_EQ(std::string(e.what()), errors.front().what());
        }
    }
    EXPECT_EQ(fields(spec::validatePreset(bad[1], file, modelDir)),
              (std::vector<std::string>{"arms[0].knobs.threads", "arms[0].knobs.workload"}));
    EXPECT_EQ(fields(spec::validatePreset(bad[2], file, modelDir)),
              (std::vector<std::string>{"lesson.checks[0].min_ratio", "lesson.checks[1].field"}));
    // A model that is not found: its sidecar (the input) is not looked for, the rest is checked.
    EXPECT_EQ(fields(spec::validatePreset(bad[3], file, modelDir)), std::vector<std::string>{"model"});
}

TEST_F(ValidateTest, AFileThatCannotBeReadIsOneError) {
    auto errors = spec::validatePresetFile((tmp / "absent.json").string(), modelDir);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].reason().find("cannot open"), std::string::npos);
    writeFile(file, "{\"model\": \"mlp\",");
    errors = spec::validatePresetFile(file, modelDir);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].reason().find("not valid JSON"), std::string::npos);
    json j = good();
    j["run"]["seed"] = -3;
    j["arms"][0]["knobs"]["affinity"] = "sideways";
    writeFile(file, j.dump());
    errors = spec::validatePresetFile(file, modelDir);
    EXPECT_EQ(fields(errors), (std::vector<std::string>{"run.seed", "arms[0].knobs.affinity"}));
    writeFile(tmp / "presets/ok.json", good().dump());
    EXPECT_TRUE(spec::validatePresetFile((tmp / "presets/ok.json").string(), modelDir).empty());
}

// The worker's knob check: every bad knob, then every combination rule whose knobs were accepted.
TEST_F(ValidateTest, ParseKnobsCollectsEveryBadKnobAndRule) {
    std::vector<SpecError> errors;
    spec::parseKnobs({{"precision", "autocast_fp16"}, {"workers", 0}, {"mode", "train"}, {"jit", "freeze"}},
                     "<configure>", "knobs", errors);
    EXPECT_EQ(fields(errors),
              (std::vector<std::string>{"knobs.workers", "knobs.jit", "knobs.precision"}));
    try {
        spec::parseKnobs({{"precision", "autocast_fp16"}, {"workers", 0}}, "<configure>", "knobs");
        ADD_FAILURE() << "accepted bad knobs";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.field(), "knobs.workers");
    }
}

}  // namespace

namespace {

// Hostile paths (issue 12): a directory or a FIFO given as the preset, a directory or FIFO as
// the model, a model that is not a string: each a clear error naming the field, never an abort
// (a directory used to throw std::ios_base::failure out of the JSON parser: SIGABRT).
class HostilePathTest : public ValidateTest {};

std::string firstReason(const std::vector<SpecError>& errors) {
    return errors.empty() ? std::string("(no error)") : errors.front().what();
}

TEST_F(HostilePathTest, ADirectoryOrFifoAsThePresetIsAnError) {
    const auto dir = tmp / "presets/a-folder.json";
    std::filesystem::create_directories(dir);
    const auto errs = spec::validatePresetFile(dir.string(), modelDir);
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_NE(firstReason(errs).find("is a directory"), std::string::npos) << firstReason(errs);
    EXPECT_THROW(spec::loadPresetFile(dir.string(), modelDir), SpecError);

    const auto fifo = tmp / "presets/pipe.json";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto fifoErrs = spec::validatePresetFile(fifo.string(), modelDir);  // must not block
    ASSERT_EQ(fifoErrs.size(), 1u);
    EXPECT_NE(firstReason(fifoErrs).find("not a regular file"), std::string::npos)
        << firstReason(fifoErrs);
}

TEST_F(HostilePathTest, ADirectoryAsTheModelOrANumberAsItsNameIsNamed) {
    std::filesystem::create_directories(tmp / "presets/model-folder");
    json j = good();
    j["model"] = "model-folder";
    auto errs = spec::validatePreset(j, file, modelDir);
    ASSERT_FALSE(errs.empty());
    EXPECT_EQ(errs.front().field(), "model");
    EXPECT_NE(firstReason(errs).find("is a directory, not a model file"),
              std::string::npos)
        << firstReason(errs);

    j["model"] = 42;
    errs = spec::validatePreset(j, file, modelDir);
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(firstReason(errs).find("must be a string, got number 42"), std::string::npos)
        << firstReason(errs);
}

}  // namespace

namespace {

// Resource exhaustion passes validation no more (issue 12 item 6): too many arms, too many
// blocks, an iters x batch sizes x workers that overflowed an int.
TEST_F(ValidateTest, RunsTooLargeForMemoryAreRefused) {
    json j = good();
    j.erase("lesson");
    j["run"]["iters"] = 100000000;
    j["run"]["block_iters"] = 1;
    auto errs = spec::validatePreset(j, file, modelDir);
    ASSERT_FALSE(errs.empty());
    EXPECT_EQ(errs.front().field(), "run.block_iters");
    EXPECT_NE(std::string(errs.front().what()).find("100000000 blocks"), std::string::npos)
        << errs.front().what();

    j = good();
    j.erase("lesson");
    j["run"] = {{"iters", 1000000}, {"block_iters", 100000}};
    j["arms"][0]["knobs"] = {{"batch_size", json::array({1, 2, 4, 8, 16, 32, 64, 128})},
                             {"workers", 4}};
    errs = spec::validatePreset(j, file, modelDir);
    ASSERT_EQ(errs.size(), 1u) << errs.front().what();
    EXPECT_EQ(errs.front().field(), "arms[0]");
    EXPECT_NE(std::string(errs.front().what()).find("= 32000000 samples"), std::string::npos)
        << errs.front().what();

    j = good();
    j.erase("lesson");
    j["arms"] = json::array();
    for (int i = 0; i < 65; ++i)
        j["arms"].push_back({{"name", "arm" + std::to_string(i)}, {"knobs", json::object()}});
    errs = spec::validatePreset(j, file, modelDir);
    ASSERT_FALSE(errs.empty());
    EXPECT_EQ(errs.front().field(), "arms");
    EXPECT_NE(std::string(errs.front().what()).find("65 arms; at most 64"), std::string::npos)
        << errs.front().what();
}

}  // namespace

namespace {

TEST_F(HostilePathTest, ADuplicateKeyIsRefusedNamingIt) {
    writeFile(tmp / "presets/dup.json",
              R"({"model": "mlp", "run": {"iters": 20, "block_iters": 10, "iters": 40},
                  "arms": [{"name": "A"}], "model": "other"})");
    const auto errs = spec::validatePresetFile((tmp / "presets/dup.json").string(), modelDir);
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_NE(firstReason(errs).find("the key \"iters\" appears twice"), std::string::npos)
        << firstReason(errs);
}

}  // namespace
