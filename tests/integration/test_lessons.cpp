// pitlane-cli lessons: a folder of lesson presets listed, run with real workers and judged: one
// lesson that must reproduce (read-back fields and memory kept for backward, both
// deterministic), one that must not (the same claims turned around), the history's status
// afterwards, the generated Markdown, and a bad check named by its field.
#include "cli.h"
#include "harness.h"

#include <QFile>
#include <QTemporaryDir>

#include <gtest/gtest.h>

namespace {

using namespace pitlane::itest;

json lesson(const std::string& title, const json& arms, const json& checks) {
    return {{"name", title},
            {"model", "mlp"},
            {"lesson", {{"title", title}, {"text", "mechanism"}, {"claim", "claim"}, {"checks", checks}}},
            {"run", {{"warmup_iters", 2}, {"iters", 12}, {"block_iters", 4}, {"processes", 2}}},
            {"arms", arms}};
}

const json kTrain = {{"name", "train+grad"}, {"knobs", {{"mode", "train"}, {"grad", "enabled"}, {"intra_op_threads", 1}}}};
const json kInference = {{"name", "inference"}, {"knobs", {{"grad", "inference_mode"}, {"intra_op_threads", 1}}}};

class Lessons : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(dir.isValid());
        writeJson(dir.filePath("lesson_a_holds.json"),
                  lesson("Inference mode keeps nothing for backward", json::array({kTrain, kInference}),
                         json::array({{{"kind", "applied"}, {"arm", "inference"},
                                       {"field", "grad_state.output_is_inference"}, {"equals", true}},
                                      {{"kind", "applied"}, {"arm", "train+grad"}, {"field", "mode"}, {"equals", "train"}},
                                      {{"kind", "higher"}, {"metric", "tensor_peak_bytes"},
                                       {"arm", "train+grad"}, {"than", "inference"}}})));
        // The claim turned around: training keeps less memory, and inference_mode ran in train
        // mode. (The statistics of faster / similar are tested on synthetic runs of known truth
        // in tests/unit/test_lesson.cpp; on a shared 2-core machine three processes of identical
        // arms can give a CI as wide as 0.1-5.6, which is rightly inconclusive.)
        writeJson(dir.filePath("lesson_b_fails.json"),
                  lesson("Training keeps less memory", json::array({kTrain, kInference}),
                         json::array({{{"kind", "lower"}, {"metric", "tensor_peak_bytes"},
                                       {"arm", "train+grad"}, {"than", "inference"}},
                                      {{"kind", "applied"}, {"arm", "inference"}, {"field", "mode"}, {"equals", "train"}}})));
        qputenv("PITLANE_PRESETS_DIR", dir.path().toLocal8Bit());
    }
    void TearDown() override { qunsetenv("PITLANE_PRESETS_DIR"); }
    QTemporaryDir dir;
};

TEST_F(Lessons, RunJudgesEveryLessonAndTheHistoryRemembers) {
    const QString db = dir.filePath("h.sqlite"), md = dir.filePath("LESSONS.md");
    auto r = runCli({"lessons", "--db", db});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("lesson_a_holds.json"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not run"), std::string::npos) << r.out;

    r = runCli({"lessons", "--run", "--db", db, "--markdown", md}, 240000);
    ASSERT_TRUE(r.finished);
    // Not reproducing is a finding, not an error.
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("reproduced      Inference mode keeps nothing for backward (3/3 checks reproduced)"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not reproduced  Training keeps less memory (0/2 checks reproduced)"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2 lessons: 1 reproduced, 1 not reproduced, 0 inconclusive or not run, 0 errors"),
              std::string::npos) << r.out;
    QFile f(md);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    const std::string text = f.readAll().toStdString();
    EXPECT_NE(text.find("## Training keeps less memory"), std::string::npos);
    EXPECT_NE(text.find("| train+grad has lower tensor_peak_bytes than inference | not reproduced |"), std::string::npos) << text;

    r = runCli({"lessons", "--db", db});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("lesson_a_holds.json               reproduced"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("lesson_b_fails.json               not reproduced"), std::string::npos) << r.out;
}

TEST_F(Lessons, ABadCheckIsNamedAndExitsTwo) {
    writeJson(dir.filePath("lesson_c_bad.json"),
              lesson("bad", json::array({kTrain, kInference}),
                     json::array({{{"kind", "faster"}, {"arm", "nobody"}, {"than", "inference"}}})));
    const auto r = runCli({"lessons", "--db", "none"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("lesson_c_bad.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("lesson.checks[0].arm"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("lesson_a_holds.json"), std::string::npos) << "the good ones are still listed";
}

}  // namespace
