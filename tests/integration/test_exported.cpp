// Exported programs (issue 40) through the real pitlane-cli and sandboxed workers, no preset and
// no --input: a decoder-only language model (int64 token ids) runs on the example inputs it was
// exported with — their values, read back by the worker and compared with what the project's
// Python reads from the same archive —, a static batch refuses another size naming the dimension,
// and validate names the format.
#include "cli.h"
#include "harness.h"

#include <QProcess>
#include <QTemporaryDir>

#include <gtest/gtest.h>

namespace {

using namespace pitlane::itest;

// The example inputs of `archive` as the project's Python reads them (torch.export.load):
// per tensor, shape, dtype, min, max, sum.
json pythonExampleValues(const std::string& archive) {
    const QString script = QStringLiteral(
        "import json, sys, torch\n"
        "ep = torch.export.load(sys.argv[1])\n"
        "args, kwargs = ep.example_inputs\n"
        "flat = [t for t in list(args) + list(kwargs.values()) if isinstance(t, torch.Tensor)]\n"
        "print(json.dumps([{'shape': list(t.shape), 'min': t.double().min().item(), 'max': t.double().max().item(),\n"
        "                   'sum': t.double().sum().item()} for t in flat]))\n");
    QProcess p;
    p.start(QStringLiteral(PITLANE_PYTHON), {QStringLiteral("-c"), script, QString::fromStdString(archive)});
    if (!p.waitForFinished(120000) || p.exitCode() != 0) return json();
    return json::parse(p.readAllStandardOutput().toStdString(), nullptr, false);
}

class Exported : public ::testing::Test {
protected:
    QString path(const QString& name) const { return dir.filePath(name); }
    QTemporaryDir dir;
};

TEST_F(Exported, ALanguageModelRunsOnItsOwnExampleTokenIds) {
    const std::string lm = modelDir() + "/tiny_lm.exported.pt2";
    // On a 10 s budget: the run's length is not this test's subject.
    const auto r = runCli({"run", QString::fromStdString(lm), "--arm", "A:compile=none,intra_op_threads=1", "--arm",
                           "B:compile=none,intra_op_threads=1", "--db", "none", "--time", "10s", "--json", path("lm.json")},
                          180000);
    ASSERT_TRUE(r.finished) << r.err;
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const json j = readJson(path("lm.json"));
    const json expected = pythonExampleValues(lm);
    ASSERT_TRUE(expected.is_array() && !expected.empty()) << "the project's Python could not read " << lm;
    for (const auto& arm : j["arms"]) {
        SCOPED_TRACE(arm["name"].get<std::string>());
        EXPECT_EQ(arm["status"], "ok");
        EXPECT_EQ(arm["model_format"], "exported");
        EXPECT_EQ(arm["applied"]["model_format"], "exported");
        EXPECT_EQ(arm["applied"]["grad"], "inference_mode");
        // The default batch is the example's: the token ids as exported, dtype int64.
        EXPECT_EQ(arm["applied"]["batch_size"], expected[0]["shape"][0]);
        const json& info = arm["model_info"];
        EXPECT_EQ(info["example_inputs"], lm);
        ASSERT_EQ(info["example_values"].size(), expected.size()) << info.dump();
        for (std::size_t i = 0; i < expected.size(); ++i) {
            const json& got = info["example_values"][i];
            EXPECT_EQ(got["shape"], expected[i]["shape"]);
            EXPECT_EQ(got["min"], expected[i]["min"]);
            EXPECT_EQ(got["max"], expected[i]["max"]);
            EXPECT_EQ(got["sum"], expected[i]["sum"]);
        }
        EXPECT_EQ(info["example_values"][0]["dtype"], "int64");
        EXPECT_EQ(info["input"][0]["example"], true) << info["input"].dump();
        EXPECT_GT(arm["summary"]["n"].get<int>(), 0);
    }
    // libtorch's notices that every fresh process prints again (NativeRT's "missing static
    // dispatched kernels" list for attention) are logged once per arm, not once per process.
    const std::string notice = "Following ops are missing static dispatched kernels";
    std::size_t count = 0;
    for (std::size_t at = r.err.find(notice); at != std::string::npos; at = r.err.find(notice, at + 1)) ++count;
    EXPECT_LE(count, 2u) << r.err;
    if (count > 0) EXPECT_NE(r.err.find("later processes print the same stderr lines"), std::string::npos) << r.err;
}

// Integer ids in a range the user gives (issue 41 item 4): within the vocabulary the model runs,
// read back in the loaded input; beyond it the error names the input, the range and the syntax.
TEST_F(Exported, IdsInTheRangeGivenAndAnErrorNamingItBeyond) {
    const QString lm = QString::fromStdString(modelDir() + "/tiny_lm.exported.pt2");
    auto r = runCli({"run", lm, "--input", "32:int64[0,1000)", "--arm", "A:intra_op_threads=1", "--db", "none",
                     "--time", "10s", "--json", path("in.json")}, 120000);
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const json in = readJson(path("in.json"))["arms"][0]["model_info"]["input"][0];
    EXPECT_EQ(in["low"], 0) << in.dump();
    EXPECT_EQ(in["high"], 1000) << in.dump();
    EXPECT_FALSE(in.contains("example"));
    r = runCli({"validate", lm, "--input", "32:int64[0,2000)"}, 120000);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("index out of range"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("input[0] int64 drawn from [0, 2000)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--input \"16:int64[0,50)\""), std::string::npos) << r.err;
}

TEST_F(Exported, AStaticBatchRefusesAnotherSizeNamingTheDimension) {
    const std::string program = modelDir() + "/tiny_probe.static.exported.pt2";
    const auto r = runCli({"run", QString::fromStdString(program), "--arm", "A:batch_size=4,intra_op_threads=1", "--db", "none"});
    ASSERT_TRUE(r.finished);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("arms[0].knobs.batch_size"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("dimension 0 of input"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("a static batch of 1"), std::string::npos) << r.err;
}

TEST_F(Exported, ValidateNamesTheFormatAndLoadsIt) {
    const std::string program = modelDir() + "/tiny_probe.exported.pt2";
    const auto r = runCli({"validate", QString::fromStdString(program)}, 120000);
    ASSERT_TRUE(r.finished);
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("a torch.export archive"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("NativeRT"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("format exported"), std::string::npos) << r.out;
    // A package and a TorchScript file are named as what they are.
    const auto pkg = runCli({"validate", "--no-load", QString::fromStdString(modelDir() + "/mlp.pt2")});
    EXPECT_NE(pkg.out.find("an AOTInductor package compiled for cpu"), std::string::npos) << pkg.out << pkg.err;
    const auto ts = runCli({"validate", "--no-load", QString::fromStdString(modelDir() + "/mlp.pt"), "--input", "256"});
    EXPECT_NE(ts.out.find("TorchScript"), std::string::npos) << ts.out << ts.err;
}

}  // namespace
