// A preset's `sweep` block (issue 15): models x batch sizes expanded into slices, each a preset
// of its own; every bad field refused with the file, the field and the reason.
#include "pitlane/spec/preset.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using pitlane::spec::json;
using pitlane::spec::SpecError;
using pitlane::test::TempDir;
using pitlane::test::writeFile;
namespace spec = pitlane::spec;

class SweepSpecTest : public ::testing::Test {
protected:
    void SetUp() override {
        modelDir = pitlane::test::writeStandInModels(tmp);
        writeFile(tmp / "presets/tiny.pt", "a model file next to the preset");
        writeFile(tmp / "presets/tiny.json", R"({"input": [{"shape": [16], "dtype": "float32"}]})");
        file = (tmp / "presets/sweep.json").string();
    }

    static json good() {
        return {{"name", "s"},
                {"model", "mlp"},
                {"run", {{"warmup_iters", 2}, {"iters", 20}, {"block_iters", 10}}},
                {"sweep", {{"models", {"mlp", "tiny.pt"}}, {"batch_sizes", {1, 4}}, {"arms", "all"}}},
                {"lesson", {{"title", "t"}}},
                {"arms", json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                                      {{"name", "B"}, {"knobs", {{"grad", "inference_mode"}}}}})}};
    }

    // The first error's field and reason, "" when valid.
    std::string firstError(const json& j) {
        const auto errors = spec::validatePreset(j, file, modelDir);
        if (errors.empty()) return "";
        EXPECT_EQ(errors.front().where(), file);
        return errors.front().field() + ": " + errors.front().reason();
    }

    TempDir tmp;
    std::string modelDir, file;
};

TEST_F(SweepSpecTest, ExpandsModelsTimesBatchSizesIntoPresetsOfTheirOwn) {
    const auto p = spec::parsePreset(good(), file, modelDir);
    ASSERT_TRUE(p.sweep.enabled);
    const auto slices = spec::expandSweep(p);
    ASSERT_EQ(slices.size(), 4u);
    const std::vector<std::string> labels = {"mlp/b1", "mlp/b4", "tiny/b1", "tiny/b4"};
    for (std::size_t i = 0; i < slices.size(); ++i) {
        const auto& s = slices[i];
        EXPECT_EQ(s.index, i);
        EXPECT_EQ(s.label, labels[i]);
        EXPECT_FALSE(s.preset.contains("sweep"));
        EXPECT_FALSE(s.preset.contains("lesson"));
        EXPECT_EQ(s.preset["name"], "s [" + labels[i] + "]");
        ASSERT_EQ(s.preset["arms"].size(), 2u);
        for (const auto& a : s.preset["arms"]) EXPECT_EQ(a["knobs"]["batch_size"], s.batch_size);
        // Each slice is a valid preset wherever it is written (the file model made absolute).
        EXPECT_TRUE(spec::validatePreset(s.preset, (tmp / "elsewhere/slice.json").string(), modelDir).empty())
            << s.preset.dump();
    }
    EXPECT_EQ(slices[0].preset["model"], "mlp");
    EXPECT_EQ(slices[2].preset["model"], (tmp / "presets/tiny.pt").string());
    EXPECT_EQ(slices[3].batch_size, 4);
    // The arms kept their own knobs.
    EXPECT_EQ(slices[3].preset["arms"][1]["knobs"]["grad"], "inference_mode");
    // The block survives a save.
    EXPECT_EQ(spec::presetToJson(p)["sweep"]["batch_sizes"], json({1, 4}));
}

TEST_F(SweepSpecTest, NamedArmsOnlyAndBatchSizesAlone) {
    json j = good();
    j["sweep"] = {{"batch_sizes", {2, 8, 16}}, {"arms", {"B"}}};
    const auto slices = spec::expandSweep(spec::parsePreset(j, file, modelDir));
    ASSERT_EQ(slices.size(), 3u);
    EXPECT_EQ(slices[2].label, "mlp/b16");
    ASSERT_EQ(slices[0].preset["arms"].size(), 1u);
    EXPECT_EQ(slices[0].preset["arms"][0]["name"], "B");
    // A preset without a sweep has no slices.
    json plain = good();
    plain.erase("sweep");
    EXPECT_TRUE(spec::expandSweep(spec::parsePreset(plain, file, modelDir)).empty());
}

TEST_F(SweepSpecTest, BadBlocksAreRefusedNamingTheField) {
    auto with = [&](json sweep) {
        json j = good();
        j["sweep"] = std::move(sweep);
        return firstError(j);
    };
    EXPECT_EQ(with(json::array()).rfind("sweep: expected an object", 0), 0u);
    EXPECT_EQ(with(json::object()).rfind("sweep: needs models or batch_sizes", 0), 0u);
    EXPECT_EQ(with({{"models", {"mlp"}}, {"colour", 1}}).rfind("sweep.colour: unknown field", 0), 0u);
    EXPECT_EQ(with({{"models", json::array()}}).rfind("sweep.models: expected a non-empty list", 0), 0u);
    EXPECT_EQ(with({{"models", {"mlp", 3}}}).rfind("sweep.models[1]: expected a non-empty string", 0), 0u);
    EXPECT_EQ(with({{"models", {"mlp", "mlp"}}}).rfind("sweep.models[1]: \"mlp\" is listed twice", 0), 0u);
    EXPECT_EQ(with({{"batch_sizes", {1, 0}}}).rfind("sweep.batch_sizes[1]: expected a batch size", 0), 0u);
    EXPECT_EQ(with({{"batch_sizes", {4, 4}}}).rfind("sweep.batch_sizes[1]: 4 is listed twice", 0), 0u);
    EXPECT_EQ(with({{"batch_sizes", "8"}}).rfind("sweep.batch_sizes: expected a non-empty list", 0), 0u);
    EXPECT_EQ(with({{"batch_sizes", {1}}, {"arms", "some"}}).rfind("sweep.arms: expected \"all\"", 0), 0u);
    EXPECT_EQ(with({{"batch_sizes", {1}}, {"arms", {"A", "C"}}}),
              "sweep.arms[1]: no arm is named \"C\" in this preset's arms");
    // A model that does not exist is named by its place in the list.
    const auto missing = with({{"models", {"mlp", "nowhere.pt"}}});
    EXPECT_EQ(missing.rfind("sweep.models[1]: model file ", 0), 0u) << missing;
    EXPECT_NE(missing.find("does not exist"), std::string::npos);
    // A model without a sidecar when the preset's input is for another model.
    writeFile(tmp / "presets/bare.pt", "no sidecar");
    const auto bare = with({{"models", {"bare.pt"}}});
    EXPECT_EQ(bare.rfind("sweep.models[0]: slice bare: input:", 0), 0u) << bare;
    // A slice that breaks a rule of the preset: serving needs batch size 1.
    json serving = good();
    serving["serving"] = {{"rates", {10}}, {"duration_ms", 100}};
    serving["sweep"] = {{"batch_sizes", {1, 4}}};
    const auto s = firstError(serving);
    EXPECT_EQ(s.rfind("arms[0].knobs.batch_size: in sweep slice mlp/b4: ", 0), 0u) << s;
    // Too many slices.
    json many = json::array();
    for (int b = 1; b <= 256; ++b) many.push_back(b);
    json big = good();
    big["sweep"] = {{"models", {"mlp", "tiny.pt", "mlp2", "m3", "m4"}}, {"batch_sizes", many}};
    const auto errors = spec::validatePreset(big, file, modelDir);
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors.back().field(), "sweep");
    EXPECT_NE(std::string(errors.back().reason()).find("1280 slices; at most 1000"), std::string::npos);
}

}  // namespace
