// A damaged model is never measured (issue 12): pitlane-cli validate and run refuse a copy of
// mlp with one flipped tensor byte, naming the entry and both CRCs (computed by Python's zlib),
// before any worker starts; an intact copy runs and its results JSON, Markdown report and stored
// run carry the file's SHA-256 (sha256sum's); a sound archive with a malicious data.pkl is
// refused by libtorch's unpickler and nothing runs it.
#include "cli.h"
#include "harness.h"

#include "pitlane/session/model_probe.h"
#include "pitlane/spec/preset.h"

#include <QFile>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace {

using namespace pitlane::itest;

std::string shell(const std::string& command) {
    std::string out;
    FILE* p = ::popen(command.c_str(), "r");
    if (!p) return out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    EXPECT_EQ(::pclose(p), 0) << command;
    return out;
}

class ModelIntegrity : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(dir.isValid());
        shell(std::string(PITLANE_PYTHON) + " " + PITLANE_MODEL_COPIES + " " + modelDir() +
              "/mlp.pt " + dir.path().toStdString() + " " + marker());
        facts = readJson(path("facts.json"));
        ASSERT_TRUE(facts.is_object());
    }
    QString path(const char* name) const { return dir.filePath(QString::fromUtf8(name)); }
    std::string marker() const { return path("os_system_ran").toStdString(); }
    QString preset(const char* model) {
        const json j = {{"name", model},
                        {"model", std::string(model) + ".pt"},
                        {"input", json::array({{{"shape", {256}}, {"dtype", "float32"}}})},
                        {"run", {{"warmup_iters", 2}, {"iters", 6}, {"block_iters", 3},
                                 {"processes", 1}}},
                        {"arms", json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                                              {{"name", "B"},
                                               {"knobs", {{"intra_op_threads", 1},
                                                          {"grad", "no_grad"}}}}})}};
        return writeJson(path((std::string(model) + ".json").c_str()), j);
    }

    QTemporaryDir dir;
    json facts;
};

TEST_F(ModelIntegrity, ValidateRefusesADamagedModelNamingTheEntryAndCrcs) {
    const auto r = runCli({"validate", preset("damaged")});
    ASSERT_TRUE(r.finished);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    const std::string says = "entry " + facts["damaged_entry"].get<std::string>() + ": CRC-32 " +
                             facts["damaged_crc"].get<std::string>() + ", recorded " +
                             facts["recorded_crc"].get<std::string>();
    EXPECT_NE(r.err.find("model_damaged"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(path("damaged.pt").toStdString() + ": " + says), std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find(": ok"), std::string::npos) << r.out;
}

// Issue 42: an arm's own damaged model is refused as the preset's is, by the same check in
// validate (both modes), the window's model check (session::probeArms) and run, naming the arm,
// the file and the entry; the intact arm is not blamed.
TEST_F(ModelIntegrity, AnArmsOwnDamagedModelIsRefusedEverywhereNamingTheArm) {
    json j = readJson(preset("intact"));
    j["arms"][1]["model"] = "damaged.pt";
    const QString p = writeJson(path("arm_damaged.json"), j);
    const std::string says = path("damaged.pt").toStdString() + ": entry " + facts["damaged_entry"].get<std::string>() +
                             ": CRC-32 " + facts["damaged_crc"].get<std::string>();
    for (const bool load : {false, true}) {
        const auto r = load ? runCli({"validate", p}, 60000) : runCli({"validate", "--no-load", p});
        ASSERT_TRUE(r.finished);
        EXPECT_EQ(r.exitCode, 2) << load << r.out << r.err;
        EXPECT_NE(r.err.find("arm B: model: model_damaged: "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("arm A"), std::string::npos) << r.err;
        EXPECT_EQ(r.out.find(": ok"), std::string::npos) << r.out;
    }
    // The window's model check: B refused with the check's code and reason, before any worker.
    const auto preset = pitlane::spec::loadPresetFile(p.toStdString(), modelDir());
    const auto probes = pitlane::session::probeArms(preset, QString::fromStdString(workerPath()), 60000);
    ASSERT_EQ(probes.size(), 2u);
    EXPECT_TRUE(probes[0].ok) << probes[0].code << ": " << probes[0].message;
    EXPECT_FALSE(probes[1].ok);
    EXPECT_EQ(probes[1].code, "model_damaged");
    EXPECT_NE(probes[1].message.find(says), std::string::npos) << probes[1].message;
    // And run: B failed with the same reason, A measured.
    const auto r = runCli({"run", p, "--db", "none", "--json", path("arm_damaged.out.json")}, 120000);
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    const json out = readJson(path("arm_damaged.out.json"));
    EXPECT_EQ(out["arms"][0]["status"], "ok");
    EXPECT_EQ(out["arms"][1]["error"]["code"], "model_damaged");
}

TEST_F(ModelIntegrity, RunRefusesADamagedModelBeforeAnyWorkerStarts) {
    const auto r = runCli({"run", preset("damaged"), "--db", "none", "--json", path("out.json")},
                          30000);
    ASSERT_TRUE(r.finished) << r.err;
    EXPECT_EQ(r.exitCode, 1) << r.err;
    const json j = readJson(path("out.json"));
    ASSERT_EQ(j["arms"].size(), 2u);
    for (const auto& a : j["arms"]) {
        EXPECT_EQ(a["status"], "failed");
        EXPECT_EQ(a["error"]["code"], "model_damaged");
        EXPECT_NE(a["error"]["message"].get<std::string>().find(
                      facts["damaged_entry"].get<std::string>()),
                  std::string::npos);
        EXPECT_TRUE(a["latency_ns"].empty());
        EXPECT_TRUE(a["processes"].empty()) << "a worker was started";
    }
    EXPECT_FALSE(j.contains("model_sha256"));
}

TEST_F(ModelIntegrity, AnIntactCopyRunsAndEveryOutputCarriesItsSha256) {
    const std::string sha = shell("sha256sum " + path("intact.pt").toStdString()).substr(0, 64);
    ASSERT_EQ(sha, facts["intact_sha256"].get<std::string>());
    const auto r = runCli({"run", preset("intact"), "--db", path("history.db"), "--json",
                           path("out.json"), "--md", path("out.md")});
    ASSERT_TRUE(r.finished) << r.err;
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(readJson(path("out.json"))["model_sha256"], sha);
    std::ifstream md(path("out.md").toStdString());
    std::stringstream text;
    text << md.rdbuf();
    EXPECT_NE(text.str().find("SHA-256 `" + sha + "`"), std::string::npos) << text.str();
    // Through the history: the stored run reads back with the same digest.
    const auto stored = runCli({"report", "1", "--db", path("history.db"), "--json",
                                path("stored.json")});
    ASSERT_EQ(stored.exitCode, 0) << stored.err;
    EXPECT_EQ(readJson(path("stored.json"))["model_sha256"], sha);
}

TEST_F(ModelIntegrity, AMaliciousPickleIsRefusedByTheLoaderAndNeverRuns) {
    const auto quick = runCli({"validate", "--no-load", preset("pickle")});
    EXPECT_EQ(quick.exitCode, 0) << "a sound archive: the zip check has nothing against it\n" << quick.err;
    // Loading it, in a sandboxed worker as a run would: libtorch's unpickler refuses it.
    const auto v = runCli({"validate", preset("pickle")}, 60000);
    EXPECT_EQ(v.exitCode, 2) << v.out << v.err;
    EXPECT_NE(v.err.find("arm A: model_load_failed: "), std::string::npos) << v.err;
    EXPECT_FALSE(QFile::exists(QString::fromStdString(marker()))) << "os.system ran during validate";
    const auto r = runCli({"run", preset("pickle"), "--db", "none", "--json", path("out.json")});
    ASSERT_TRUE(r.finished) << r.err;
    EXPECT_EQ(r.exitCode, 1) << r.err;
    for (const auto& a : readJson(path("out.json"))["arms"]) {
        EXPECT_EQ(a["status"], "failed");
        EXPECT_EQ(a["error"]["code"], "model_load_failed");
        EXPECT_TRUE(a["latency_ns"].empty());
    }
    EXPECT_FALSE(QFile::exists(QString::fromStdString(marker()))) << "os.system ran";
}

// Issue 26, "explain a model before the run": validate loads each arm's model in a sandboxed
// worker and runs one forward with the arm's input. A model that calls an operator this libtorch
// lacks (a custom operator registered only in the Python that saved it: what a file from a newer
// PyTorch looks like) exits 2 naming the operator and this libtorch; an input of the wrong rank
// exits 2 naming the input; a good preset says each arm's model loads.
TEST_F(ModelIntegrity, ValidateLoadsEachArmsModelAndRunsAForward) {
    const QString unknown = path("unknown_op.pt");
    shell(std::string(PITLANE_PYTHON) + " " + PITLANE_UNKNOWN_OP_MODEL + " " + unknown.toStdString());
    json j = readJson(preset("mlp"));
    j["model"] = "unknown_op.pt";
    j["input"] = json::array({{{"shape", {4}}, {"dtype", "float32"}}});
    const QString unknownPreset = writeJson(path("unknown.json"), j);
    const auto quick = runCli({"validate", "--no-load", unknownPreset});
    EXPECT_EQ(quick.exitCode, 0) << "the archive is sound\n" << quick.err;
    EXPECT_NE(quick.out.find("not loaded: --no-load"), std::string::npos) << quick.out;
    const auto v = runCli({"validate", unknownPreset}, 60000);
    EXPECT_EQ(v.exitCode, 2) << v.out << v.err;
    for (const char* arm : {"arm A: model_load_failed: ", "arm B: model_load_failed: "})
        EXPECT_NE(v.err.find(arm), std::string::npos) << v.err;
    EXPECT_NE(v.err.find("Unknown builtin op: pitlane_test::mystery"), std::string::npos) << v.err;
    EXPECT_NE(v.err.find("this worker's libtorch 2."), std::string::npos) << v.err;
    EXPECT_NE(v.err.find("has no operator pitlane_test::mystery"), std::string::npos) << v.err;
    EXPECT_NE(v.err.find("re-export it with PyTorch"), std::string::npos) << v.err;

    // resnet18 fed a [1, 256] input: the convolution refuses it, naming the input's shape.
    json r = readJson(preset("mlp"));
    r["model"] = "resnet18";
    const auto rank = runCli({"validate", writeJson(path("rank.json"), r)}, 60000);
    EXPECT_EQ(rank.exitCode, 2) << rank.out << rank.err;
    EXPECT_NE(rank.err.find("arm A: "), std::string::npos) << rank.err;
    EXPECT_NE(rank.err.find("input [1, 256] float32"), std::string::npos) << rank.err;

    // The intact mlp: both arms load and run a forward, then the summary line.
    const auto ok = runCli({"validate", preset("intact")}, 60000);
    EXPECT_EQ(ok.exitCode, 0) << ok.out << ok.err;
    for (const char* arm : {"arm A: the model loads and runs a forward", "arm B: the model loads and runs a forward"})
        EXPECT_NE(ok.out.find(arm), std::string::npos) << ok.out;
    EXPECT_NE(ok.out.find("output [1,10] float32"), std::string::npos) << ok.out;
    EXPECT_NE(ok.out.find(": ok (2 arms"), std::string::npos) << ok.out;
}

}  // namespace
