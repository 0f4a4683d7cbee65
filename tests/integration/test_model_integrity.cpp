// A damaged model is never measured (issue 12): pitlane-cli validate and run refuse a copy of
// mlp with one flipped tensor byte, naming the entry and both CRCs (computed by Python's zlib),
// before any worker starts; an intact copy runs and its results JSON, Markdown report and stored
// run carry the file's SHA-256 (sha256sum's); a sound archive with a malicious data.pkl is
// refused by libtorch's unpickler and nothing runs it.
#include "cli.h"
#include "harness.h"

#include "pitlane/session/model_probe.h"
#include "pitlane/spec/preset.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

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

// Issue 42 item 5: a package that fails to load blames what failed, and leaves no extraction
// folder, sandbox on or off. A copy of the bundled tiny_probe.pt2 whose .so entry is damaged, its
// zip sound (damaged_package.py): with the ELF magic zeroed, libtorch's loader throws ("invalid
// ELF header"); cut to 1 KiB, dlopen dies of SIGBUS. Every entry sits under a folder name only
// this test's packages have, so a folder left anywhere in /tmp (libtorch's own mkdtemp) or the
// test's $TMPDIR (the run's scratch folder) is found.
std::vector<std::string> foldersHolding(const std::string& root, const std::string& name, int depth) {
    std::vector<std::string> found;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(root, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
        std::error_code e2;
        if (!it->is_directory(e2) || it->is_symlink(e2)) continue;
        if (it->path().filename() == name) found.push_back(it->path().string());
        else if (depth > 1)
            for (const auto& f : foldersHolding(it->path().string(), name, depth - 1)) found.push_back(f);
    }
    return found;
}

TEST_F(ModelIntegrity, ADamagedPackageSaysItIsMalformedAndLeavesNoExtractionFolder) {
    const std::string top = ".pl42-" + std::to_string(::getpid()) + "-" + dir.path().section('/', -1).toStdString();
    const auto damage = [&](const char* mode, const char* name) {
        std::string entry = shell(std::string(PITLANE_PYTHON) + " " + PITLANE_DAMAGED_PACKAGE + " " + modelDir() +
                                  "/tiny_probe.pt2 " + path(name).toStdString() + " " + top + " " + mode);
        while (!entry.empty() && std::isspace(static_cast<unsigned char>(entry.back()))) entry.pop_back();
        return entry;
    };
    const std::string entry = damage("header", "header.pt2");
    ASSERT_EQ(entry.rfind(top + "/data/aotinductor/model/", 0), 0u) << entry;
    damage("truncate", "truncated.pt2");
    const auto presetFor = [&](const char* model, const char* sandbox) {
        const json j = {{"name", "package"}, {"model", model},
                        {"input", json::array({{{"shape", {4}}, {"dtype", "float32"}}})},
                        {"run", {{"warmup_iters", 1}, {"iters", 4}, {"block_iters", 2}, {"processes", 1}}},
                        {"arms", json::array({{{"name", "A"}, {"knobs", {{"sandbox", sandbox}, {"intra_op_threads", 1}}}}})}};
        return writeJson(path((std::string(model) + "." + sandbox + ".json").c_str()), j);
    };
    // The workers' $TMPDIR (the runner makes its scratch folders there): empty after each command.
    QTemporaryDir tmpdir;
    ASSERT_TRUE(tmpdir.isValid());
    const QByteArray savedTmpdir = qgetenv("TMPDIR");
    const bool hadTmpdir = qEnvironmentVariableIsSet("TMPDIR");
    qputenv("TMPDIR", tmpdir.path().toLocal8Bit());
    const auto nothingLeft = [&](const std::string& after) {
        EXPECT_TRUE(QDir(tmpdir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).isEmpty())
            << after << ": left in $TMPDIR: "
            << QDir(tmpdir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).join(' ').toStdString();
        for (const std::string& root : {std::string("/tmp"), tmpdir.path().toStdString()})
            for (const auto& f : foldersHolding(root, top, 3)) ADD_FAILURE() << after << ": extraction folder left: " << f;
    };
    const std::string says = "cannot load " + path("header.pt2").toStdString() +
                             " as an AOTInductor package: the package is malformed: entry " + entry +
                             ": not a shared library the dynamic loader can load (invalid ELF header)";
    for (const char* sandbox : {"off", "on"}) {
        const QString p = presetFor("header.pt2", sandbox);
        const auto v = runCli({"validate", p}, 60000);
        EXPECT_EQ(v.exitCode, 2) << sandbox << v.out << v.err;
        EXPECT_NE(v.err.find("arm A: model_load_failed: " + says), std::string::npos) << v.err;
        EXPECT_NE(v.err.find("not a version mismatch"), std::string::npos) << v.err;
        EXPECT_EQ(v.err.find("runs only with the libtorch"), std::string::npos) << "blames the version: " << v.err;
        nothingLeft(std::string("validate, sandbox ") + sandbox);
        const QString out = path((std::string("header.") + sandbox + ".out.json").c_str());
        const auto r = runCli({"run", p, "--db", "none", "--json", out}, 60000);
        EXPECT_EQ(r.exitCode, 1) << sandbox << r.err;
        const json a = readJson(out)["arms"][0];
        EXPECT_EQ(a["error"]["code"], "model_load_failed") << a.dump();
        EXPECT_NE(a["error"]["message"].get<std::string>().find(says), std::string::npos) << a["error"]["message"];
        nothingLeft(std::string("run, sandbox ") + sandbox);
        // A library that kills the worker mid-load (SIGBUS): the arm crashed, nothing left.
        const auto c = runCli({"run", presetFor("truncated.pt2", sandbox), "--db", "none"}, 60000);
        EXPECT_EQ(c.exitCode, 1) << sandbox << c.err;
        EXPECT_NE(c.err.find("signal 7"), std::string::npos) << c.err;
        nothingLeft(std::string("crashing run, sandbox ") + sandbox);
    }
    // A worker started by hand with the sandbox off and no scratch folder (no $TMPDIR): libtorch
    // extracts into /tmp itself; the worker removes that folder when the load fails, before it
    // answers, and when the library crashes it.
    qunsetenv("TMPDIR");
    {
        WorkerDriver w({"--sandbox", "off"});
        ASSERT_FALSE(w.start().is_null());
        const json ev = w.configure({{"sandbox", "off"}, {"intra_op_threads", 1}},
                                    json::array({{{"shape", {4}}, {"dtype", "float32"}}}), path("header.pt2").toStdString());
        EXPECT_EQ(ev.value("code", ""), "model_load_failed") << ev.dump();
        const json& d = ev["detail"];
        EXPECT_EQ(d.value("cause", ""), "malformed") << d.dump();
        EXPECT_EQ(d.value("entry", ""), entry) << d.dump();
        const std::string extracted = d.value("extracted_to", "");
        EXPECT_EQ(extracted.rfind("/tmp/", 0), 0u) << d.dump();
        EXPECT_EQ(d.value("extraction_removed", false), true) << d.dump();
        EXPECT_FALSE(extracted.empty() || QFileInfo::exists(QString::fromStdString(extracted))) << extracted;
        EXPECT_TRUE(w.quit());
    }
    {
        WorkerDriver w({"--sandbox", "off"});
        ASSERT_FALSE(w.start().is_null());
        const json ev = w.configure({{"sandbox", "off"}, {"intra_op_threads", 1}},
                                    json::array({{{"shape", {4}}, {"dtype", "float32"}}}), path("truncated.pt2").toStdString());
        EXPECT_TRUE(ev.is_null()) << "the truncated library loaded: " << ev.dump();
        EXPECT_TRUE(w.exited()) << "the worker did not die loading the truncated library";
    }
    if (hadTmpdir) qputenv("TMPDIR", savedTmpdir);
    for (const auto& f : foldersHolding("/tmp", top, 3)) ADD_FAILURE() << "by hand: extraction folder left: " << f;
}

// Issue 42 item 5: a 0-byte arm model and character devices are refused alike, by validate with
// and without --no-load: /dev/null is not read as a 0-byte file where /dev/zero is a device.
TEST_F(ModelIntegrity, AZeroByteModelAndCharacterDevicesAreRefusedInBothModes) {
    QFile empty(path("empty.pt"));
    ASSERT_TRUE(empty.open(QIODevice::WriteOnly));
    empty.close();
    const std::vector<std::pair<std::string, std::string>> cases = {
        {path("empty.pt").toStdString(), "model_not_torchscript: model file " + path("empty.pt").toStdString() +
                                             ": not a zip archive (0 bytes"},
        {"/dev/null", "arms[1].model: /dev/null is not a regular file (a device, FIFO or socket), not a model file"},
        {"/dev/zero", "arms[1].model: /dev/zero is not a regular file (a device, FIFO or socket), not a model file"}};
    for (const auto& [model, said] : cases) {
        json j = readJson(preset("intact"));
        j["arms"][1]["model"] = model;
        const QString p = writeJson(path("zero_arm.json"), j);
        for (const bool load : {false, true}) {
            const auto r = load ? runCli({"validate", p}, 60000) : runCli({"validate", "--no-load", p});
            ASSERT_TRUE(r.finished);
            EXPECT_EQ(r.exitCode, 2) << model << " load=" << load << r.out << r.err;
            EXPECT_NE(r.err.find(said), std::string::npos) << model << " load=" << load << ": " << r.err;
            EXPECT_EQ(r.out.find("arm B: the model loads"), std::string::npos) << r.out;
        }
    }
}

}  // namespace
