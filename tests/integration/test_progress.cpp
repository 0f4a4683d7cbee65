// Progress counters (issue 11 item 6): the runner's doneIters never exceeds totalIters at any
// signal and they are equal when an arm ends ok, with K concurrent workers per arm, when
// replication adds rounds of fresh processes and when adaptive stopping adds rounds; and
// pitlane-cli's progress lines say the same, naming only worker pids that are known.
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
    const std::regex done(R"(\[(\w+)\] block \d+ done \((\d+)/(\d+) iterations\))");
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

}  // namespace
