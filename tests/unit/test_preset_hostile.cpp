// Hostile and extreme presets, round two (issue 28 items 3, 6, 7, 8, 9 and the minor ones): deep
// nesting refused before any recursive copy, the arm limit checked while parsing, every string
// field checked, numbers echoed as written, echoes shortened, a symlink loop named, target_ci_pct
// and memory_limit_mb bounded. Each error names the file, the field and the reason.
#include "pitlane/protocol/json_limits.h"
#include "pitlane/protocol/protocol.h"
#include "pitlane/spec/preset.h"
#include "pitlane/spec/run_limits.h"

#include "temp_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace {

using pitlane::spec::json;
using pitlane::spec::SpecError;
using pitlane::test::TempDir;
using pitlane::test::writeFile;
namespace spec = pitlane::spec;
namespace protocol = pitlane::protocol;

class HostileTest : public ::testing::Test {
protected:
    void SetUp() override {
        modelDir = pitlane::test::writeStandInModels(tmp);
        file = (tmp / "presets/hostile.json").string();
    }

    static json good() {
        return {{"model", "mlp"},
                {"run", {{"warmup_iters", 2}, {"iters", 20}, {"block_iters", 10}}},
                {"arms", json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                                      {{"name", "B"}, {"knobs", {{"grad", "inference_mode"}}}}})}};
    }

    std::vector<SpecError> validateText(const std::string& text) {
        writeFile(file, text);
        return spec::validatePresetFile(file, modelDir);
    }

    static std::string all(const std::vector<SpecError>& errors) {
        std::string s;
        for (const auto& e : errors) s += std::string(e.what()) + "\n";
        return s.empty() ? "(no error)" : s;
    }

    static std::string nested(const std::string& open, const std::string& inner,
                              const std::string& close, std::size_t depth) {
        std::string s;
        s.reserve(depth * (open.size() + close.size()) + inner.size());
        for (std::size_t i = 0; i < depth; ++i) s += open;
        s += inner;
        for (std::size_t i = 0; i < depth; ++i) s += close;
        return s;
    }

    TempDir tmp;
    std::string modelDir, file;
};

// Item 3: 60 000 nested objects or 300 000 nested arrays crashed the CLI (SIGSEGV in the copy).
TEST_F(HostileTest, DeepNestingIsRefusedNamingTheDepthWithoutCrashing) {
    const std::string head = R"({"model": "mlp", "arms": [{"name": "A"}], "lesson": )";
    for (const auto& deep : {nested("{\"a\": ", "1", "}", 60000), nested("[", "", "]", 300000)}) {
        const auto errors = validateText(head + deep + "}");
        ASSERT_EQ(errors.size(), 1u) << all(errors);
        EXPECT_EQ(errors[0].where(), file);
        EXPECT_EQ(errors[0].field(), "lesson");
        EXPECT_NE(errors[0].reason().find("nested more than 64 levels deep"), std::string::npos)
            << errors[0].what();
        EXPECT_THROW(spec::loadPresetFile(file, modelDir), SpecError);
    }
    // The whole document an array nested a million deep.
    auto errors = validateText(nested("[", "", "]", 1000000));
    ASSERT_EQ(errors.size(), 1u) << all(errors);
    EXPECT_NE(errors[0].reason().find("nested more than 64"), std::string::npos) << errors[0].what();

    // Any JSON file (results, sidecars): refused beyond protocol::kMaxJsonDepth.
    writeFile(tmp / "results.json", nested("[", "", "]", 300000));
    json j;
    std::string why;
    EXPECT_FALSE(spec::readJsonFile((tmp / "results.json").string(), &j, &why));
    EXPECT_NE(why.find("nested more than 100 levels deep"), std::string::npos) << why;
    writeFile(tmp / "results.json", nested("[", "", "]", 100));
    EXPECT_TRUE(spec::readJsonFile((tmp / "results.json").string(), &j, &why)) << why;

    // A preset built in memory (the window's) is refused before it is copied.
    json deepJson = 1;
    for (int i = 0; i < 70; ++i) deepJson = json{{"a", std::move(deepJson)}};
    json p = good();
    p["lesson"] = deepJson;
    const auto inMemory = spec::validatePreset(p, file, modelDir);
    ASSERT_EQ(inMemory.size(), 1u) << all(inMemory);
    EXPECT_EQ(inMemory[0].field(), "lesson");
    EXPECT_NE(inMemory[0].reason().find("nested more than 64"), std::string::npos);

    // A lesson nested 40 deep is no error of nesting.
    json shallow = 1;
    for (int i = 0; i < 40; ++i) shallow = json{{"a", std::move(shallow)}};
    p["lesson"] = shallow;
    writeFile(file, p.dump());
    EXPECT_TRUE(spec::validatePresetFile(file, modelDir).empty()) << all(spec::validatePresetFile(file, modelDir));
}

// The protocol decoder holds its lines to the same limit.
TEST_F(HostileTest, ADeepProtocolLineIsRefusedWithAReason) {
    std::string why;
    const auto j = protocol::decode(R"({"v":1,"type":"warning","x":)" + nested("[", "", "]", 300000) + "}",
                                    protocol::Kind::Event, &why);
    EXPECT_FALSE(j.has_value());
    EXPECT_NE(why.find("nested more than 100"), std::string::npos) << why;
    EXPECT_TRUE(protocol::decode(R"({"v":1,"type":"bye"})", protocol::Kind::Event, &why).has_value());
}

// Item 8: 256 k arms took 27.9 s (the callback parser is quadratic) and were refused only after.
// Timings are in the commit, not here; the file is refused with the 64-arm message.
TEST_F(HostileTest, ThousandsOfArmsAreRefusedWhileParsing) {
    std::string arms;
    for (int i = 0; i < 256 * 1024; ++i)
        arms += std::string(i ? "," : "") + R"({"name": "a)" + std::to_string(i) + R"(", "knobs": {}})";
    const auto errors = validateText(R"({"model": "mlp", "arms": [)" + arms + "]}");
    ASSERT_EQ(errors.size(), 1u) << all(errors);
    EXPECT_EQ(errors[0].field(), "arms");
    EXPECT_NE(errors[0].reason().find("has more than 64 arms; at most 64 are measured side by side"),
              std::string::npos)
        << errors[0].what();

    // In memory: counted before any arm is looked at.
    json p = good();
    p["arms"] = json::array();
    for (int i = 0; i < 256 * 1024; ++i) p["arms"].push_back({{"name", "a" + std::to_string(i)}});
    const auto inMemory = spec::validatePreset(p, file, modelDir);
    ASSERT_EQ(inMemory.size(), 1u) << all(inMemory);
    EXPECT_NE(inMemory[0].reason().find("262144 arms; at most 64"), std::string::npos) << inMemory[0].what();

    // 64 arms are fine, and the parser is the linear one (a duplicate key still refused).
    p["arms"] = json::array();
    for (int i = 0; i < 64; ++i) p["arms"].push_back({{"name", "a" + std::to_string(i)}});
    writeFile(file, p.dump());
    EXPECT_TRUE(spec::validatePresetFile(file, modelDir).empty()) << all(spec::validatePresetFile(file, modelDir));
}

// Item 9: a NUL cut the model path short; names with NUL, newlines or escape codes were accepted;
// 10 MB names were echoed everywhere.
TEST_F(HostileTest, EveryStringFieldIsCheckedForNulControlsAndLength) {
    writeFile(tmp / "presets/tiny_add.pt", "stand-in");
    auto errors = validateText(R"({"model": "tiny_add.pt\u0000.evil", "arms": [{"name": "A"}]})");
    ASSERT_EQ(errors.size(), 1u) << all(errors);  // one error on the field, not also "does not exist"
    EXPECT_EQ(errors[0].field(), "model");
    EXPECT_NE(errors[0].reason().find("NUL"), std::string::npos) << errors[0].what();

    json p = good();
    p["arms"][0]["name"] = std::string("A\0B", 3);
    p["arms"][1]["name"] = "B\nfake progress line";
    p["name"] = "run \x1b[31mred";
    p["description"] = "two lines\nand a\ttab are fine";
    errors = spec::validatePreset(p, file, modelDir);
    std::vector<std::string> fields;
    for (const auto& e : errors) fields.push_back(e.field());
    EXPECT_EQ(fields, (std::vector<std::string>{"arms[0].name", "arms[1].name", "name"})) << all(errors);
    EXPECT_NE(errors[0].reason().find("NUL"), std::string::npos);
    EXPECT_NE(errors[1].reason().find("control character (U+000A"), std::string::npos) << errors[1].what();
    EXPECT_NE(errors[2].reason().find("control character (U+001B"), std::string::npos) << errors[2].what();
    // The message itself carries no control character.
    for (const auto& e : errors)
        for (char c : std::string(e.what())) EXPECT_FALSE(c >= 0 && c < 0x20) << e.what();

    // A C1 control (U+009B, a terminal's CSI) too.
    p = good();
    p["arms"][0]["name"] = "A\xC2\x9B" "31m";
    errors = spec::validatePreset(p, file, modelDir);
    ASSERT_EQ(errors.size(), 1u) << all(errors);
    EXPECT_NE(errors[0].reason().find("U+009B"), std::string::npos) << errors[0].what();

    // Lengths: a name of 129 characters, a path of 4097, free text of 64 KiB + 1.
    p = good();
    p["arms"][0]["name"] = std::string(129, 'n');
    p["model"] = std::string(4097, 'm');
    p["description"] = std::string(65537, 'd');
    errors = spec::validatePreset(p, file, modelDir);
    fields.clear();
    for (const auto& e : errors) fields.push_back(e.field());
    EXPECT_EQ(fields, (std::vector<std::string>{"arms[0].name", "description", "model"})) << all(errors);
    EXPECT_NE(all(errors).find("is 129 characters long; a name has at most 128"), std::string::npos) << all(errors);

    // 128 characters (not bytes) are fine, "<script>" is a name like any other (the reports escape it).
    p = good();
    std::string accented;
    for (int i = 0; i < 128; ++i) accented += "\xC3\xA9";  // é
    p["arms"][0]["name"] = accented;
    p["arms"][1]["name"] = "<script>alert(1)</script>";
    EXPECT_TRUE(spec::validatePreset(p, file, modelDir).empty()) << all(spec::validatePreset(p, file, modelDir));
}

// Minor: a 10 MB key or value was echoed whole in the error.
TEST_F(HostileTest, LongKeysAndValuesAreEchoedShortened) {
    json p = good();
    const std::string huge(10 * 1000 * 1000, 'k');
    p[huge] = 1;
    p["arms"][0]["knobs"]["mode"] = std::string(10 * 1000 * 1000, 'v');
    p["arms"][1]["knobs"][huge] = 1;
    const auto errors = spec::validatePreset(p, file, modelDir);
    ASSERT_GE(errors.size(), 3u) << errors.size();
    for (const auto& e : errors) {
        EXPECT_LT(std::string(e.what()).size(), 1000u) << std::string(e.what()).substr(0, 300);
        EXPECT_LT(e.field().size(), 120u);
    }
    bool shortenedKey = false;
    for (const auto& e : errors)
        shortenedKey |= e.field().find(std::string(80, 'k') + "\u2026") != std::string::npos;
    EXPECT_TRUE(shortenedKey) << all(errors).substr(0, 2000);
}

// Minor: 18446744073709551615 was reported as "got -1"; 1e999 without its field.
TEST_F(HostileTest, NumbersAreEchoedAsWrittenAndOverflowNamesTheField) {
    auto errors = validateText(
        R"({"model": "mlp", "run": {"iters": 18446744073709551615}, "arms": [{"name": "A", "knobs": {"intra_op_threads": 18446744073709551615}}]})");
    ASSERT_EQ(errors.size(), 2u) << all(errors);
    EXPECT_EQ(errors[0].field(), "run.iters");
    EXPECT_NE(errors[0].reason().find("got 18446744073709551615"), std::string::npos) << errors[0].what();
    EXPECT_EQ(errors[1].field(), "arms[0].knobs.intra_op_threads");
    EXPECT_NE(errors[1].reason().find("must be <= 4096, got 18446744073709551615"), std::string::npos)
        << errors[1].what();

    errors = validateText(R"({"model": "mlp", "run": {"iters": 20, "block_iters": 1e999}, "arms": [{"name": "A"}]})");
    ASSERT_EQ(errors.size(), 1u) << all(errors);
    EXPECT_EQ(errors[0].field(), "run.block_iters");
    EXPECT_NE(errors[0].reason().find("number out of range"), std::string::npos) << errors[0].what();
    EXPECT_NE(errors[0].reason().find("1e999"), std::string::npos) << errors[0].what();
}

// Minor: a symlink loop was "does not exist".
TEST_F(HostileTest, ASymlinkLoopIsNamedAsSuch) {
    const auto a = tmp / "presets/loop-a.json", b = tmp / "presets/loop-b.json";
    std::filesystem::create_directories(a.parent_path());
    ASSERT_EQ(::symlink(b.c_str(), a.c_str()), 0);
    ASSERT_EQ(::symlink(a.c_str(), b.c_str()), 0);
    const auto errors = spec::validatePresetFile(a.string(), modelDir);
    ASSERT_EQ(errors.size(), 1u) << all(errors);
    EXPECT_NE(errors[0].reason().find("symlink loop"), std::string::npos) << errors[0].what();
    // A model behind a loop too.
    json p = good();
    p["model"] = "loop-a.json";
    const auto model = spec::validatePreset(p, file, modelDir);
    ASSERT_FALSE(model.empty());
    EXPECT_EQ(model[0].field(), "model");
    EXPECT_NE(model[0].reason().find("symlink loop"), std::string::npos) << model[0].what();
}

// Item 7: target_ci_pct 1e-320 was accepted and, without max_time_ms, the run never ended.
TEST_F(HostileTest, TargetCiIsBoundedAndAdaptiveStoppingAlwaysHasACap) {
    for (const double bad : {1e-320, 0.05, 0.0, 100.5}) {
        json p = good();
        p["run"]["target_ci_pct"] = bad;
        const auto errors = spec::validatePreset(p, file, modelDir);
        ASSERT_EQ(errors.size(), 1u) << bad << ": " << all(errors);
        EXPECT_EQ(errors[0].field(), "run.target_ci_pct");
        EXPECT_NE(errors[0].reason().find("from 0.1 to 100"), std::string::npos) << errors[0].what();
    }
    json p = good();
    p["run"]["target_ci_pct"] = 0.1;
    const auto preset = spec::parsePreset(p, file, modelDir);
    EXPECT_EQ(spec::adaptiveTimeCapMs(preset.run), spec::kDefaultAdaptiveCapMs);
    p["run"]["max_time_ms"] = 2000;
    EXPECT_EQ(spec::adaptiveTimeCapMs(spec::parsePreset(p, file, modelDir).run), 2000);
    p["run"].erase("max_time_ms");
    p["run"]["min_time_ms"] = 600000;  // longer than the default cap: the minimum is honoured
    EXPECT_EQ(spec::adaptiveTimeCapMs(spec::parsePreset(p, file, modelDir).run), 600000);
}

// Item 6: memory_limit_mb 64-256 passed, then the worker aborted (or hung) starting its threads.
TEST_F(HostileTest, MemoryLimitBelowWhatAWorkerNeedsIsRefusedWithTheMinimum) {
    json p = good();
    p["arms"][0]["knobs"] = {{"intra_op_threads", 1}, {"memory_limit_mb", 128}};
    auto errors = spec::validatePreset(p, file, modelDir);
    ASSERT_EQ(errors.size(), 1u) << all(errors);
    EXPECT_EQ(errors[0].field(), "arms[0].knobs.memory_limit_mb");
    EXPECT_NE(errors[0].reason().find("must be >= 256, got 128"), std::string::npos) << errors[0].what();
    EXPECT_NE(errors[0].reason().find("a worker needs at least 256 MiB"), std::string::npos) << errors[0].what();

    // 64 threads need 16 MiB each (1024 measured): 512 is refused with the minimum for them.
    p["arms"][0]["knobs"] = {{"intra_op_threads", 64}, {"memory_limit_mb", 512}};
    errors = spec::validatePreset(p, file, modelDir);
    ASSERT_EQ(errors.size(), 1u) << all(errors);
    EXPECT_EQ(errors[0].field(), "arms[0].knobs.memory_limit_mb");
    EXPECT_NE(errors[0].reason().find("at least 1168 MiB"), std::string::npos) << errors[0].what();

    p["arms"][0]["knobs"] = {{"intra_op_threads", 1}, {"memory_limit_mb", 256}};
    EXPECT_TRUE(spec::validatePreset(p, file, modelDir).empty()) << all(spec::validatePreset(p, file, modelDir));
    p["arms"][0]["knobs"] = {{"intra_op_threads", 64}, {"memory_limit_mb", 1168}};
    EXPECT_TRUE(spec::validatePreset(p, file, modelDir).empty());
}

// Issue 42: an input's rank and element count are bounded before any worker starts, the bound
// named in the error (a shape of 100 000 dimensions passed validate and ran 21 s a forward).
TEST_F(HostileTest, InputRankAndElementCountAreBoundedNamingTheBound) {
    json p = good();
    p["input"] = json::array({{{"shape", std::vector<int>(100000, 1)}, {"dtype", "float32"}}});
    auto errors = spec::validatePreset(p, file, modelDir);
    ASSERT_EQ(errors.size(), 1u) << all(errors);
    EXPECT_EQ(errors[0].field(), "input[0].shape");
    EXPECT_NE(errors[0].reason().find("a shape of 100000 dimensions; at most 12 are accepted"), std::string::npos)
        << errors[0].what();
    p["input"] = json::array({{{"shape", {65536, 65536, 2}}, {"dtype", "float32"}}});
    errors = spec::validatePreset(p, file, modelDir);
    ASSERT_EQ(errors.size(), 1u) << all(errors);
    EXPECT_NE(errors[0].reason().find("more than 2147483648 elements"), std::string::npos) << errors[0].what();
    // At the bounds: 12 dimensions (13 with a leading "N"), 2^31 elements.
    p["input"] = json::array({{{"shape", std::vector<int>(12, 2)}, {"dtype", "float32"}}});
    EXPECT_TRUE(spec::validatePreset(p, file, modelDir).empty()) << all(spec::validatePreset(p, file, modelDir));
    json withN = json::array({"N"});
    for (int i = 0; i < 12; ++i) withN.push_back(2);
    p["input"] = json::array({{{"shape", withN}, {"dtype", "float32"}}});
    EXPECT_TRUE(spec::validatePreset(p, file, modelDir).empty()) << all(spec::validatePreset(p, file, modelDir));
    p["input"] = json::array({{{"shape", {65536, 32768}}, {"dtype", "float32"}}});
    EXPECT_TRUE(spec::validatePreset(p, file, modelDir).empty()) << all(spec::validatePreset(p, file, modelDir));
}

}  // namespace
