// session::planRound and the block plan (round_plan.h) on presets, with no worker process: the
// order balance, the sweep points, the block ids and shares, and when set-up runs concurrently.
#include "pitlane/session/round_plan.h"

#include <gtest/gtest.h>

#include <numeric>

namespace {

using pitlane::session::Task;
namespace S = pitlane::session;
namespace spec = pitlane::spec;

spec::Preset preset(int arms, std::vector<int> batches = {1}, const char* device = "cpu") {
    spec::Preset p;
    for (int i = 0; i < arms; ++i) {
        spec::ArmSpec a;
        a.name = std::string(1, char('A' + i));
        a.knobs.batch_size = batches;
        a.knobs.device = device;
        p.arms.push_back(a);
    }
    p.run.warmup_iters = 5;
    return p;
}

// "C0 A1 B1 ..." : kind letter (S start, C configure, W warmup, B block) and arm; block ids apart.
std::string kinds(const std::vector<Task>& tasks) {
    std::string out;
    for (const auto& t : tasks) {
        const char* k = "SCWBVP";
        out += (out.empty() ? "" : " ") + std::string(1, k[t.kind]) + (t.arm < 0 ? "" : std::string(1, char('A' + t.arm)));
    }
    return out;
}

TEST(RoundPlan, OddRoundsTakeTheArmsInReverseOrder) {
    EXPECT_EQ(S::roundOrder(3, 0), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(S::roundOrder(3, 1), (std::vector<int>{2, 1, 0}));
    EXPECT_EQ(S::roundOrder(3, 2), (std::vector<int>{0, 1, 2}));
    EXPECT_TRUE(S::roundOrder(0, 1).empty());
    const auto p = preset(2);
    EXPECT_EQ(kinds(S::planRound(p, 0, 0, {10, 10}, true, 2)), "S CA CB WA WB BA BB BA BB");
    EXPECT_EQ(kinds(S::planRound(p, 1, 2, {10, 10}, true, 4)), "S CB CA WB WA BB BA BB BA");
}

TEST(RoundPlan, SetUpIsConcurrentOnlyInLaterRoundsOnCpu) {
    EXPECT_FALSE(S::setUpConcurrently(preset(2), 0));
    EXPECT_TRUE(S::setUpConcurrently(preset(2), 1));
    EXPECT_FALSE(S::setUpConcurrently(preset(2, {1}, "cuda"), 1));  // cudnn.benchmark times algorithms
    for (const auto& t : S::planRound(preset(2), 1, 0, {10}, true, 1)) {
        const bool setUp = t.kind == Task::Configure || t.kind == Task::Warmup;
        EXPECT_EQ(t.concurrent, setUp) << t.kind;
        EXPECT_EQ(t.round, 1);
    }
}

TEST(RoundPlan, BlocksCarryTheirIdsItersAndBatchPerSweepPoint) {
    auto p = preset(2, {1, 8});
    p.arms[1].knobs.batch_size = {4};  // B has one sweep point, A two
    const auto tasks = S::planRound(p, 0, 3, {7, 6}, true, 5);
    // Sweep point 0: both arms; point 1: A alone, its block ids offset by blocksPerPoint.
    EXPECT_EQ(kinds(tasks), "S CA CB WA WB BA BB BA BB WA BA BA");
    std::vector<int> ids, iters, batches;
    for (const auto& t : tasks)
        if (t.kind == Task::Block) {
            ids.push_back(t.block);
            iters.push_back(t.iters);
            batches.push_back(t.batchSize);
        }
    EXPECT_EQ(ids, (std::vector<int>{3, 3, 4, 4, 8, 9}));
    EXPECT_EQ(iters, (std::vector<int>{7, 7, 6, 6, 7, 6}));
    EXPECT_EQ(batches, (std::vector<int>{1, 4, 1, 4, 8, 8}));
    // Only the first sweep point (a replicate added for replication or adaptive stopping).
    EXPECT_EQ(kinds(S::planRound(p, 2, 0, {7}, false, 5)), "S CA CB WA WB BA BB");
    // No warmup asked: no warmup task.
    p.run.warmup_iters = 0;
    EXPECT_EQ(kinds(S::planRound(p, 0, 0, {7}, false, 1)), "S CA CB BA BB");
}

TEST(RoundPlan, BlockIterationsSumToItersAndShareOutAmongProcesses) {
    spec::RunSettings run;
    run.iters = 1000;
    run.block_iters = 300;
    run.processes = 1;
    EXPECT_EQ(S::blockIterations(run), (std::vector<int>{300, 300, 300, 100}));
    // More processes than natural blocks: one block per process, the iterations shared evenly.
    run.processes = 6;
    EXPECT_EQ(S::blockIterations(run), (std::vector<int>{167, 167, 167, 167, 166, 166}));
    // More processes than iterations: one per iteration.
    run.iters = 3;
    run.block_iters = 3;
    run.processes = 5;
    EXPECT_EQ(S::plannedProcesses(run), 3);
    EXPECT_EQ(S::blockIterations(run), (std::vector<int>{1, 1, 1}));
    // Every block measured by exactly one round, in order.
    run = {};
    run.iters = 1000;
    run.block_iters = 100;
    run.processes = 3;
    const auto blocks = S::blockIterations(run);
    int next = 0, total = 0;
    for (int r = 0; r < 3; ++r) {
        const auto share = S::roundShare(blocks, 3, r);
        EXPECT_EQ(share.first, next);
        next += int(share.iters.size());
        total += std::accumulate(share.iters.begin(), share.iters.end(), 0);
    }
    EXPECT_EQ(next, 10);
    EXPECT_EQ(total, 1000);
    EXPECT_EQ(S::roundShare(blocks, 3, 0).iters.size(), 3u);
    EXPECT_EQ(S::roundShare(blocks, 3, 2).iters.size(), 4u);
}

}  // namespace
