// pitlane-cli end to end: a small preset on the real worker, its JSON checked against
// CONTRACT.md, its CSV against the samples, and the usage errors' exit code 2.
#include "cli.h"
#include "harness.h"

#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace {

using namespace pitlane::itest;

class Cli : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(dir.isValid()); }
    QString path(const char* name) const { return dir.filePath(QString::fromUtf8(name)); }

    QTemporaryDir dir;
};

json smallPreset() {
    return {{"name", "cli end to end"},
            {"model", "mlp"},
            // Exactly 3 processes per arm: sample counts follow `iters` (no rounds added).
            {"run", {{"warmup_iters", 3}, {"iters", 30}, {"block_iters", 10}, {"processes", 3}}},
            {"arms",
             json::array(
                 {{{"name", "A"},
                   {"knobs", {{"intra_op_threads", 1}, {"mode", "train"}, {"grad", "enabled"}}}},
                  {{"name", "B"},
                   {"knobs",
                    {{"intra_op_threads", 1},
                     {"grad", "inference_mode"},
                     {"jit", "freeze_optimize"}}}}})}};
}

TEST_F(Cli, RunWritesContractJsonAndCsv) {
    const auto preset = writeJson(path("small.json"), smallPreset());
    const auto r = runCli({"run", preset, "--json", path("out.json"), "--csv", path("out.csv")});
    ASSERT_TRUE(r.finished) << r.err;
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // The comparison table names both arms.
    EXPECT_NE(r.out.find("A"), std::string::npos);
    EXPECT_NE(r.out.find("B"), std::string::npos);

    json j = readJson(path("out.json"));
    ASSERT_TRUE(j.is_object()) << "results JSON does not parse";
    EXPECT_EQ(j["schema"], 1);
    EXPECT_EQ(j["preset"]["name"], "cli end to end");
    EXPECT_EQ(j["preset"]["arms"].size(), 2u);
    ASSERT_EQ(j["arms"].size(), 2u);
    std::size_t totalSamples = 0;
    const std::set<std::string> statuses = {"ok",     "failed",  "crashed",
                                            "killed", "timeout", "cancelled"};
    for (std::size_t i = 0; i < 2; ++i) {
        auto& arm = j["arms"][i];
        SCOPED_TRACE(arm.dump().substr(0, 300));
        EXPECT_EQ(arm["name"], i == 0 ? "A" : "B");
        ASSERT_TRUE(arm["status"].is_string());
        EXPECT_TRUE(statuses.count(arm["status"].get<std::string>()));
        EXPECT_EQ(arm["status"], "ok");
        EXPECT_FALSE(arm.contains("error"));
        // knobs as requested, applied as read back.
        EXPECT_EQ(arm["knobs"], smallPreset()["arms"][i]["knobs"]);
        auto& applied = arm["applied"];
        ASSERT_TRUE(applied.is_object());
        EXPECT_FALSE(applied.contains("type")) << "applied is the event without its envelope";
        for (const char* k : {"mode", "grad", "jit", "precision", "intra_op_threads",
                              "inter_op_threads", "affinity", "batch_size", "blas"})
            EXPECT_TRUE(applied.contains(k)) << k;
        EXPECT_EQ(applied["intra_op_threads"], 1);
        EXPECT_EQ(applied["grad"], i == 0 ? "enabled" : "inference_mode");
        EXPECT_EQ(applied["mode"], i == 0 ? "train" : "eval");
        EXPECT_EQ(applied["jit"], i == 0 ? "none" : "freeze_optimize");
        EXPECT_TRUE(applied["affinity"].is_array());
        auto& env = arm["environment"];
        ASSERT_TRUE(env.is_object());
        for (const char* k : {"libtorch", "cpu", "cores"}) EXPECT_TRUE(env.contains(k)) << k;
        auto& cold = arm["cold"];
        ASSERT_TRUE(cold.is_object());
        EXPECT_GT(cold["load_ms"].get<double>(), 0.0);
        EXPECT_GT(cold["first_iter_ms"].get<double>(), 0.0);
        ASSERT_TRUE(arm["latency_ns"].is_array());
        EXPECT_EQ(arm["latency_ns"].size(), 30u);
        for (const auto& ns : arm["latency_ns"]) EXPECT_GT(ns.get<std::int64_t>(), 0);
        totalSamples += arm["latency_ns"].size();
        auto& s = arm["summary"];
        for (const char* k : {"n", "median_ns", "mean_ns", "sd_ns", "min_ns", "max_ns", "p90_ns",
                              "p95_ns", "p99_ns", "throughput_per_s", "peak_rss_bytes"}) {
            ASSERT_TRUE(s.contains(k)) << k;
            EXPECT_TRUE(s[k].is_number()) << k;
        }
        EXPECT_EQ(s["n"], 30);
        EXPECT_LE(s["min_ns"].get<double>(), s["median_ns"].get<double>());
        EXPECT_LE(s["median_ns"].get<double>(), s["p90_ns"].get<double>());
        EXPECT_LE(s["p90_ns"].get<double>(), s["p95_ns"].get<double>());
        EXPECT_LE(s["p95_ns"].get<double>(), s["p99_ns"].get<double>());
        EXPECT_LE(s["p99_ns"].get<double>(), s["max_ns"].get<double>());
        EXPECT_GT(s["throughput_per_s"].get<double>(), 0.0);
        EXPECT_GT(s["peak_rss_bytes"].get<double>(), 0.0);
    }
    ASSERT_TRUE(j["comparisons"].is_array());
    ASSERT_EQ(j["comparisons"].size(), 1u);
    auto& c = j["comparisons"][0];
    EXPECT_EQ(c["baseline"], "A");
    EXPECT_EQ(c["arm"], "B");
    EXPECT_GT(c["ratio"].get<double>(), 0.0);
    ASSERT_TRUE(c["ci95"].is_array());
    ASSERT_EQ(c["ci95"].size(), 2u);
    EXPECT_LE(c["ci95"][0].get<double>(), c["ci95"][1].get<double>());
    EXPECT_GE(c["p_value"].get<double>(), 0.0);
    EXPECT_LE(c["p_value"].get<double>(), 1.0);
    ASSERT_TRUE(c["verdict"].is_string());
    EXPECT_FALSE(c["verdict"].get<std::string>().empty());

    // CSV: a header naming arm, block, iteration and latency_ns, then one row per measured
    // sample, in the JSON's order (our arm names need no CSV quoting).
    std::ifstream csv(path("out.csv").toStdString());
    ASSERT_TRUE(csv.good());
    auto split = [](const std::string& line) {
        std::vector<std::string> cells;
        std::stringstream ss(line);
        for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
        return cells;
    };
    std::string line;
    std::getline(csv, line);
    const auto header = split(line);
    auto column = [&](const char* name) {
        return std::size_t(std::find(header.begin(), header.end(), name) - header.begin());
    };
    for (const char* name : {"arm", "block", "iteration", "latency_ns"})
        ASSERT_LT(column(name), header.size()) << "CSV header lacks " << name << ": " << line;
    std::map<std::string, std::vector<std::int64_t>> csvLatencies;
    std::size_t rows = 0;
    while (std::getline(csv, line)) {
        const auto cells = split(line);
        ASSERT_EQ(cells.size(), header.size()) << line;
        csvLatencies[cells[column("arm")]].push_back(std::stoll(cells[column("latency_ns")]));
        ++rows;
    }
    EXPECT_EQ(rows, totalSamples);
    EXPECT_EQ(csvLatencies["A"], j["arms"][0]["latency_ns"].get<std::vector<std::int64_t>>());
    EXPECT_EQ(csvLatencies["B"], j["arms"][1]["latency_ns"].get<std::vector<std::int64_t>>());
}

TEST_F(Cli, ValidateAcceptsAGoodPreset) {
    const auto preset = writeJson(path("good.json"), smallPreset());
    const auto r = runCli({"validate", preset});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("ok"), std::string::npos) << r.out;
}

TEST_F(Cli, ValidateRejectsABadPresetNamingFileAndField) {
    auto j = smallPreset();
    j["arms"][1]["knobs"]["grad"] = "sometimes";
    const auto preset = writeJson(path("bad.json"), j);
    const auto r = runCli({"validate", preset});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find(preset.toStdString()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("arms[1].knobs.grad"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("sometimes"), std::string::npos) << r.err;
}

TEST_F(Cli, RunRejectsABadPresetWithExitTwo) {
    auto j = smallPreset();
    j["run"]["block_iters"] = 100;  // > iters
    const auto preset = writeJson(path("bad_run.json"), j);
    const auto r = runCli({"run", preset, "--json", path("never.json")});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("run.block_iters"), std::string::npos) << r.err;
    EXPECT_FALSE(QFile::exists(path("never.json"))) << "nothing is run for an invalid preset";
}

TEST_F(Cli, ValidateOfAMissingFileExitsTwo) {
    const auto r = runCli({"validate", path("absent.json")});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("absent.json"), std::string::npos) << r.err;
}

TEST_F(Cli, VersionAndHelpExitZero) {
    auto r = runCli({"--version"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out, std::string("pitlane-cli ") + PITLANE_VERSION + "\n");
    EXPECT_EQ(r.err, "");
    r = runCli({"--help"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    for (const char* said : {"--version", "--quiet:", "validate [--no-load] [--input SPEC] PRESET.json|MODEL", "--no-load: no worker",
                             "4 a gate (--baseline, --against) found a regression"})
        EXPECT_NE(r.out.find(said), std::string::npos) << said << "\n" << r.out;
}

// validate lists every error of a preset, one "file: field: reason" line each, and exits 2.
TEST_F(Cli, ValidateListsEveryError) {
    auto j = smallPreset();
    j["colour"] = "red";
    j["run"]["warmup_iters"] = -1;
    j["arms"][0]["knobs"]["grad"] = "sometimes";
    j["arms"][1]["knobs"]["device"] = "gpu";
    j["arms"][1]["name"] = "A";
    j["lesson"] = {{"checks", json::array({{{"kind", "quicker"}, {"arm", "A"}},
                                           {{"kind", "faster"}, {"arm", "Z"}, {"than", "A"}}})}};
    const auto bad = writeJson(path("many.json"), j);
    const auto good = writeJson(path("good.json"), smallPreset());
    const auto r = runCli({"validate", good, bad});
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.out.find(good.toStdString() + ": ok"), std::string::npos) << r.out;
    const std::string file = bad.toStdString();
    for (const std::string& line :
         {file + ": colour: unknown field",
          file + ": run.warmup_iters: must be between 0 and 100000000, got -1",
          file + ": arms[0].knobs.grad: unknown value \"sometimes\"",
          file + ": arms[1].name: arm name \"A\" is used twice",
          file + ": arms[1].knobs.device: unknown device \"gpu\"",
          file + ": lesson.checks[0].kind: unknown check \"quicker\"",
          file + ": lesson.checks[1].arm: no arm is called \"Z\"",
          "pitlane-cli: invalid preset: 7 errors in " + file})
        EXPECT_NE(("\n" + r.err).find("\n" + line), std::string::npos) << line << "\n" << r.err;
    // A preset with one error says "1 error"; `run` still stops at an invalid preset.
    j = smallPreset();
    j["run"]["iters"] = "many";
    const auto one = writeJson(path("one.json"), j);
    const auto v = runCli({"validate", one});
    EXPECT_EQ(v.exitCode, 2);
    EXPECT_NE(v.err.find("invalid preset: 1 error in"), std::string::npos) << v.err;
}

// --quiet drops the chatter on stderr (progress, "recording run", info) and keeps the result on
// stdout: the table and the run id (pytest -q, git -q: quieter, never silent about the result).
TEST_F(Cli, QuietKeepsTheResultAndDropsTheChatter) {
    auto j = smallPreset();
    j["run"] = {{"warmup_iters", 2}, {"iters", 10}, {"block_iters", 5}, {"processes", 1}};
    const auto preset = writeJson(path("quiet.json"), j);
    const auto r = runCli({"run", preset, "--quiet", "--db", path("history.sqlite")});
    ASSERT_TRUE(r.finished) << r.err;
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("B"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("run id: "), std::string::npos) << r.out;
    for (const char* chatter : {"[A]", "[B]", "recording run", "info:", "stderr:"})
        EXPECT_EQ(r.err.find(chatter), std::string::npos) << chatter << "\n" << r.err;
}

TEST_F(Cli, UnknownOptionAndCommandExitTwo) {
    const auto preset = writeJson(path("good.json"), smallPreset());
    auto r = runCli({"run", preset, "--frobnicate"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--frobnicate"), std::string::npos) << r.err;
    r = runCli({"run", preset, "--json"});
    EXPECT_EQ(r.exitCode, 2) << "--json without a file name";
    r = runCli({"sprint", preset});
    EXPECT_EQ(r.exitCode, 2);
    r = runCli({});
    EXPECT_EQ(r.exitCode, 2);
}

}  // namespace

// An output into a folder that does not exist is refused before anything runs (issue 12: it was
// reported only after the whole run).
TEST_F(Cli, RunRefusesAnOutputIntoAMissingFolderBeforeRunning) {
    const auto preset = writeJson(path("good.json"), smallPreset());
    const auto r = runCli({"run", preset, "--db", "none", "--json", path("no/such/folder/r.json")},
                          20000);
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("pid"), std::string::npos) << "a worker was started: " << r.err;
}
