// Process replicates (issue 8) through the real ExperimentRunner and pitlane-worker: every arm is
// measured in run.processes fresh worker processes, in order-balanced rounds (A1 B1, B2 A2, ...),
// each process warmed up on its own, and the results say which process measured what.
#include "harness.h"

#include "pitlane/results/run_result.h"
#include "pitlane/session/experiment_runner.h"

#include <QObject>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

namespace {

using namespace pitlane::itest;
namespace R = pitlane::results;
namespace S = pitlane::session;
namespace protocol = pitlane::protocol;

json twoArms() {
    return json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                        {{"name", "B"},
                         {"knobs", {{"intra_op_threads", 1}, {"grad", "inference_mode"}}}}});
}

TEST(Processes, EveryArmIsMeasuredInFreshProcessesInOrderBalancedRounds) {
    const auto preset = mlpPreset(
        twoArms(), {{"warmup_iters", 2}, {"iters", 30}, {"block_iters", 5}, {"processes", 3}});
    S::RunnerOptions opts;
    opts.workerPath = S::defaultWorkerPath();
    S::ExperimentRunner runner(opts);
    // The order in which measured blocks and warmups finished, and every hello's pid.
    std::vector<std::pair<int, int>> measured;  // (arm, block)
    std::vector<int> warmups;                   // arm
    std::map<int, std::vector<long>> hellos;
    QObject::connect(&runner, &S::ExperimentRunner::armEvent, [&](int arm, const protocol::Event& ev) {
        if (const auto* hello = std::get_if<protocol::Hello>(&ev)) hellos[arm].push_back(long(hello->pid));
        const auto* done = std::get_if<protocol::BlockDone>(&ev);
        if (done && done->phase == "measure") measured.emplace_back(arm, done->block);
        if (done && done->phase == "warmup") warmups.push_back(arm);
    });
    bool finished = false;
    QObject::connect(&runner, &S::ExperimentRunner::finished, [&] { finished = true; });
    runner.start(preset);
    ASSERT_TRUE(spinUntil([&] { return finished; }, 90000));
    const auto& result = runner.result();
    ASSERT_TRUE(result.allOk());

    // 6 blocks per arm, 2 per process; round r takes blocks 2r, 2r+1; odd rounds start with B.
    const std::vector<std::pair<int, int>> expected = {{0, 0}, {1, 0}, {0, 1}, {1, 1},
                                                       {1, 2}, {0, 2}, {1, 3}, {0, 3},
                                                       {0, 4}, {1, 4}, {0, 5}, {1, 5}};
    EXPECT_EQ(measured, expected);
    EXPECT_EQ(warmups.size(), 6u) << "each of the 6 processes warms up on its own";

    std::set<long> allPids;
    for (int arm = 0; arm < 2; ++arm) {
        const auto& a = result.arms[std::size_t(arm)];
        ASSERT_EQ(a.processes.size(), 3u);
        ASSERT_EQ(hellos[arm].size(), 3u) << "three fresh processes said hello";
        for (int r = 0; r < 3; ++r) {
            const auto& p = a.processes[std::size_t(r)];
            EXPECT_EQ(p.replicate, r);
            EXPECT_EQ(p.pid, hellos[arm][std::size_t(r)]);
            EXPECT_GT(p.load_ms, 0.0);
            EXPECT_EQ(p.fault_iters, 10) << "page faults counted over its 10 measured iterations";
            allPids.insert(p.pid);
        }
        // Samples name their process: 10 each, in the process's blocks.
        std::map<int, int> perProcess;
        for (const auto& s : a.samples) {
            ++perProcess[s.process];
            EXPECT_EQ(s.process, s.block / 2);
        }
        EXPECT_EQ(perProcess, (std::map<int, int>{{0, 10}, {1, 10}, {2, 10}}));
        for (const auto& ps : R::processSummaries(a)) {
            EXPECT_EQ(ps.n, 10u);
            EXPECT_GT(ps.median_ns, 0.0);
        }
        EXPECT_TRUE(R::varianceShares(a).computed);
        EXPECT_GE(R::minorFaultsPerIter(a), 0.0);
        // The replicates applied the same settings: what each process measures about itself
        // (the data it mapped before the sandbox's memory limit, a few MiB apart) is no setting.
        for (const auto& w : a.warnings)
            EXPECT_EQ(w.find("differs between processes"), std::string::npos) << w;
        ASSERT_TRUE(a.applied.extraField("sandbox").contains("data_at_start_bytes")) << a.applied.extraField("sandbox").dump();
    }
    EXPECT_EQ(allPids.size(), 6u) << "no process is reused";

    const auto comparisons = R::compareArms(result);
    ASSERT_EQ(comparisons.size(), 1u);
    EXPECT_EQ(comparisons[0].unit, "processes");
    EXPECT_EQ(comparisons[0].units, 3u);
    const json j = R::toResultsJson(result);
    EXPECT_EQ(j["arms"][0]["processes"].size(), 3u);
    EXPECT_EQ(j["comparisons"][0]["unit"], "processes");
}

// More processes than blocks: the iterations are shared out so that every process measures.
TEST(Processes, MoreProcessesThanBlocksShareTheIterations) {
    const auto preset = mlpPreset(
        json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}}}),
        {{"warmup_iters", 1}, {"iters", 10}, {"block_iters", 10}, {"processes", 4}});
    const auto result = runPreset(preset, 90000);
    ASSERT_TRUE(result.allOk());
    const auto& a = result.arms[0];
    ASSERT_EQ(a.samples.size(), 10u);
    std::map<int, int> perProcess;
    for (const auto& s : a.samples) ++perProcess[s.process];
    EXPECT_EQ(perProcess, (std::map<int, int>{{0, 3}, {1, 3}, {2, 2}, {3, 2}}));
}

// A later replicate that fails ends its arm, keeps every sample measured before, and the other
// arm finishes: the allocator knob asks for a library that is not there (checked per round).
TEST(Processes, AnArmWhoseAllocatorIsMissingFailsWithBadKnobAndTheOtherFinishes) {
    qputenv("PITLANE_TCMALLOC", "/nonexistent/libtcmalloc_minimal.so.4");
    const auto preset = mlpPreset(
        json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                     {{"name", "T"}, {"knobs", {{"intra_op_threads", 1}, {"allocator", "tcmalloc"}}}}}),
        {{"warmup_iters", 1}, {"iters", 10}, {"block_iters", 5}, {"processes", 2}});
    const auto result = runPreset(preset, 90000);
    qunsetenv("PITLANE_TCMALLOC");
    ASSERT_EQ(result.arms.size(), 2u);
    EXPECT_EQ(result.arms[0].status, R::kOk);
    EXPECT_EQ(result.arms[0].samples.size(), 10u);
    EXPECT_EQ(result.arms[1].status, R::kFailed);
    ASSERT_TRUE(result.arms[1].error.has_value());
    EXPECT_EQ(result.arms[1].error->code, "bad_knob");
    EXPECT_NE(result.arms[1].error->message.find("allocator"), std::string::npos)
        << result.arms[1].error->message;
}

}  // namespace
