// Progress counters (issue 11 item 6): the runner's doneIters never exceeds totalIters at any
// signal and they are equal when an arm ends ok, with K concurrent workers per arm, when
// replication adds rounds of fresh processes and when adaptive stopping adds rounds; and
// pitlane-cli's progress lines say the same, naming only worker pids that are known. What is
// measured is what was asked, or the plan said "up to" before and the results say why (issue 41).
#include "cli.h"
#include "harness.h"

#include "pitlane/session/experiment_runner.h"

#include <QObject>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace {

using namespace pitlane::itest;
namespace R = pitlane::results;
namespace S = pitlane::session;

// A has two concurrent workers (each measures every block), B one.
json armsWithWorkers() {
    return json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}, {"workers", 2}}}},
                        {{"name", "B"}, {"knobs", {{"intra_op_threads", 1}}}}});
}

struct Counted {
    R::RunResult result;
    int checks = 0;             // signals at which the counters were read
    std::string firstOverrun;   // "" when done never exceeded total
    std::vector<int> done, total;  // at the end
};

// Runs `preset`, reading every arm's counters at every signal the runner emits.
Counted runCounting(const pitlane::spec::Preset& preset) {
    S::RunnerOptions opts;
    opts.workerPath = QString::fromStdString(workerPath());
    S::ExperimentRunner runner(opts);
    Counted c;
    auto check = [&](const char* signal) {
        ++c.checks;
        for (int i = 0; i < int(runner.result().arms.size()); ++i)
            if (runner.doneIters(i) > runner.totalIters(i) && c.firstOverrun.empty())
                c.firstOverrun = std::string(signal) + ": arm " + std::to_string(i) + " at " +
                                 std::to_string(runner.doneIters(i)) + "/" +
                                 std::to_string(runner.totalIters(i));
    };
    QObject::connect(&runner, &S::ExperimentRunner::armPhaseChanged, [&] { check("phase"); });
    QObject::connect(&runner, &S::ExperimentRunner::armEvent, [&] { check("event"); });
    QObject::connect(&runner, &S::ExperimentRunner::samplesAppended, [&] { check("samples"); });
    QObject::connect(&runner, &S::ExperimentRunner::logMessage, [&] { check("log"); });
    QObject::connect(&runner, &S::ExperimentRunner::armFinished, [&] { check("arm finished"); });
    bool finished = false;
    QObject::connect(&runner, &S::ExperimentRunner::finished, [&] {
        check("finished");
        finished = true;
    });
    runner.start(preset);
    EXPECT_TRUE(spinUntil([&] { return finished; }, 100000)) << "the run did not finish";
    if (!finished) {
        runner.stop();
        spinUntil([&] { return finished; }, 5000);
    }
    for (int i = 0; i < int(runner.result().arms.size()); ++i) {
        c.done.push_back(runner.doneIters(i));
        c.total.push_back(runner.totalIters(i));
    }
    c.result = runner.result();
    return c;
}

void expectCountersInStep(const Counted& c) {
    ASSERT_TRUE(c.result.allOk());
    EXPECT_GT(c.checks, 20);
    EXPECT_EQ(c.firstOverrun, "") << "done exceeded total";
    for (std::size_t i = 0; i < c.result.arms.size(); ++i) {
        const auto& a = c.result.arms[i];
        EXPECT_EQ(c.done[i], c.total[i]) << a.name;
        EXPECT_EQ(c.done[i], int(a.samples.size())) << a.name << ": every measured iteration counted";
    }
}

// Replication left at its default adds rounds of fresh processes while the comparison is
// inconclusive: with one iteration per process (an A/A pair whose process medians are single
// iterations) the interim CI cannot be tight, so rounds are added up to run.max_processes.
TEST(Progress, CountersStayInStepWhenReplicationAddsRounds) {
    const auto preset = mlpPreset(armsWithWorkers(), {{"warmup_iters", 2},
                                                      {"iters", 3},
                                                      {"block_iters", 1},
                                                      {"max_processes", 4}});
    ASSERT_EQ(preset.run.processes, 3);
    const auto c = runCounting(preset);
    expectCountersInStep(c);
    EXPECT_GT(c.result.replication.value("processes", 0), 3) << c.result.replication.dump();
    // A's two workers both measure every block.
    EXPECT_EQ(c.result.arms[0].samples.size(), 2 * c.result.arms[1].samples.size());
    // Each added round measures what the first planned one did (one iteration here), so the
    // plan's "3-4" holds, and the results say measured next to asked, with the reason (issue 41).
    const auto& rep = c.result.replication;
    const int processes = rep.value("processes", 0);
    EXPECT_EQ(int(c.result.arms[1].samples.size()), 3 + (processes - 3)) << rep.dump();
    EXPECT_EQ(rep.value("asked_iters", 0), 3);
    EXPECT_EQ(rep.value("planned_iters", json::array()), json::array({3, 4}));
    EXPECT_EQ(rep["measured_iters"].value("B", 0), 3 + (processes - 3));
    EXPECT_EQ(rep["measured_iters"].value("A", 0), 3 + (processes - 3)) << "per worker";
    EXPECT_NE(rep.value("measured_reason", std::string()).find("replication added 1 round(s)"), std::string::npos)
        << rep.dump();
}

// Adaptive stopping over fresh processes (run.processes 2): an unreachable target adds rounds
// until the time cap.
TEST(Progress, CountersStayInStepWhenAdaptiveStoppingAddsRounds) {
    const auto preset = mlpPreset(armsWithWorkers(), {{"warmup_iters", 2},
                                                      {"iters", 10},
                                                      {"block_iters", 5},
                                                      {"processes", 2},
                                                      {"target_ci_pct", 0.1},
                                                      {"max_time_ms", 1500}});
    const auto c = runCounting(preset);
    expectCountersInStep(c);
    EXPECT_GT(c.result.arms[1].samples.size(), 10u) << "rounds were added";
}

// Adaptive stopping in one process: each round is one more block per arm.
TEST(Progress, CountersStayInStepWhenAdaptiveStoppingAddsBlocks) {
    const auto preset = mlpPreset(armsWithWorkers(), {{"warmup_iters", 2},
                                                      {"iters", 10},
                                                      {"block_iters", 5},
                                                      {"processes", 1},
                                                      {"target_ci_pct", 0.1},
                                                      {"max_time_ms", 800}});
    const auto c = runCounting(preset);
    expectCountersInStep(c);
    EXPECT_GT(c.result.arms[1].samples.size(), 10u) << "blocks were added";
}

// pitlane-cli's progress: "block N done (done/total iterations)" never above its total, the last
// line of each arm at its total, and "loading" names only pids that are known (never 0).
TEST(Progress, CliProgressLinesNeverExceedTheirTotalsAndNameKnownPids) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const json preset = {{"name", "progress"},
                         {"model", "mlp"},
                         {"run", {{"warmup_iters", 2}, {"iters", 3}, {"block_iters", 1},
                                  {"max_processes", 4}}},
                         {"arms", armsWithWorkers()}};
    const auto file = writeJson(dir.filePath("progress.json"), preset);
    const auto r = runCli({"run", file, "--db", "none"}, 100000);
    ASSERT_TRUE(r.finished) << r.err;
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // ", about 12 s left (up to 40 s if rounds are added)" follows once the time left is known.
    const std::regex done(R"(\[(\w+)\] block \d+ done \((\d+)/(\d+) iterations\)(, about .* left.*)?)");
    const std::regex loading(R"(\[(\w+)\] loading(.*))");
    const std::regex pids(R"( \(worker pids? [1-9]\d*(, [1-9]\d*)*\))");
    std::map<std::string, std::pair<int, int>> last;
    int loadingLines = 0;
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_match(line, m, done)) {
            const int d = std::stoi(m[2]), t = std::stoi(m[3]);
            EXPECT_LE(d, t) << line;
            last[m[1]] = {d, t};
        } else if (std::regex_match(line, m, loading)) {
            ++loadingLines;
            const std::string tail = m[2];
            EXPECT_TRUE(tail.empty() || std::regex_match(tail, pids)) << line;
        }
    }
    EXPECT_GE(loadingLines, 2 * 3) << r.err;
    ASSERT_EQ(last.size(), 2u) << r.err;
    for (const auto& [arm, dt] : last) EXPECT_EQ(dt.first, dt.second) << arm << "\n" << r.err;
    EXPECT_EQ(r.err.find("pid 0"), std::string::npos) << r.err;
}

// presets/default.json, shortened (the bundled mlp, 6 iterations in blocks of 2): pitlane-cli
// says what it will measure before its first progress line, and each arm's n is what the preset
// asks, or more by whole added rounds within the plan's "up to", with the reason in the results
// JSON and the table (issue 41 item 2: "iters: 60" gave n = 120 and nothing said why). Given
// run.processes alone, n is exactly what was asked.
TEST(Progress, CliMeasuresWhatThePresetAsksOrSaysPlannedAndMeasuredWithTheReason) {
    const QString source = qEnvironmentVariable("PITLANE_SOURCE_DIR");
    ASSERT_FALSE(source.isEmpty()) << "PITLANE_SOURCE_DIR (set by ctest) names the source tree";
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    json preset = readJson(source + "/presets/default.json");
    preset["model"] = "mlp";
    preset["run"] = {{"warmup_iters", 2}, {"iters", 6}, {"block_iters", 2}};
    for (const bool exact : {false, true}) {
        if (exact) preset["run"]["processes"] = 3;
        const auto file = writeJson(dir.filePath(exact ? "exact.json" : "default.json"), preset);
        const QString out = dir.filePath(exact ? "exact.out.json" : "default.out.json");
        const auto r = runCli({"run", file, "--db", "none", "--json", out}, 150000);
        ASSERT_TRUE(r.finished) << r.err;
        ASSERT_EQ(r.exitCode, 0) << r.err;
        // The plan, before the first progress line.
        const auto plan = r.err.find("pitlane-cli: plan: ");
        ASSERT_NE(plan, std::string::npos) << r.err;
        EXPECT_LT(plan, r.err.find("] block ")) << r.err;
        EXPECT_NE(r.err.find(exact ? "plan: 6 iterations measured per arm, as asked: 3 processes of 1 block of 2 "
                                     "iterations"
                                   : "plan: 6 asked -> 6-12 measured per arm: 3 processes of 1 block of 2 "
                                     "iterations, then up to 3 more processes of 2 iterations while a "
                                     "comparison is inconclusive"),
                  std::string::npos)
            << r.err;
        // The whole run's time left, once every arm has measured a block.
        EXPECT_NE(r.err.find(" left"), std::string::npos) << r.err;
        const json results = readJson(out);
        const json& rep = results["replication"];
        EXPECT_EQ(rep.value("asked_iters", 0), 6) << rep.dump();
        EXPECT_EQ(rep.value("planned_iters", json::array()), exact ? json::array({6, 6}) : json::array({6, 12}));
        for (const auto& arm : results["arms"]) {
            const int n = arm["summary"].value("n", 0);
            const std::string name = arm.value("name", "");
            EXPECT_EQ(rep["measured_iters"].value(name, -1), n) << name;
            if (exact || n == 6) {
                EXPECT_EQ(n, 6) << name;
                continue;
            }
            // More than asked: whole added rounds of 2, within the plan, with the reason.
            EXPECT_LE(n, 12) << name;
            EXPECT_EQ((n - 6) % 2, 0) << name;
            EXPECT_EQ(n, 6 + 2 * (rep.value("processes", 0) - 3)) << rep.dump();
            EXPECT_NE(rep.value("measured_reason", std::string()).find("while a comparison was inconclusive"),
                      std::string::npos)
                << rep.dump();
            EXPECT_NE(r.out.find("measured " + std::to_string(n) + " iterations per arm where 6 were asked"),
                      std::string::npos)
                << r.out;
        }
        if (exact) {
            EXPECT_FALSE(rep.contains("measured_reason")) << rep.dump();
        }
    }
}

}  // namespace
