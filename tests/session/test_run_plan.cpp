// What a run will measure (run_plan.h) and the time it has left (remaining_time.h), on presets
// and costs computed by hand, with no worker process (issue 41 item 2: "60 asked" gave n = 120,
// a quick run's 200 gave 380, the window's 20 gave 50, and "20.2 s left" came 24 s into a run
// of 2 min 05 s).
#include "pitlane/session/remaining_time.h"
#include "pitlane/session/round_plan.h"
#include "pitlane/session/run_plan.h"

#include <gtest/gtest.h>

namespace {

namespace S = pitlane::session;
namespace spec = pitlane::spec;
using S::Task;

spec::Preset preset(int arms, int iters, int blockIters, int warmup = 5) {
    spec::Preset p;
    for (int i = 0; i < arms; ++i) {
        spec::ArmSpec a;
        a.name = std::string(1, char('A' + i));
        p.arms.push_back(a);
    }
    p.run.iters = iters;
    p.run.block_iters = blockIters;
    p.run.warmup_iters = warmup;
    return p;
}

// presets/default.json: 60 in 3 processes of 2 blocks; replication may add 3 rounds of 20.
TEST(RunPlan, TheDefaultPresetSaysItMayMeasureUpTo120) {
    const auto plan = S::measurementPlan(preset(2, 60, 10, 10));
    EXPECT_EQ(plan.minIters, 60);
    EXPECT_EQ(plan.maxIters, 120);
    EXPECT_EQ(plan.roundIters, (std::vector<int>{20, 20, 20}));
    EXPECT_EQ(plan.addedRound, (std::vector<int>{10, 10}));
    EXPECT_EQ(S::planText(plan),
              "60 asked -> 60-120 measured per arm: 3 processes of 2 blocks of 10 iterations, then up "
              "to 3 more processes of 20 iterations while a comparison is inconclusive "
              "(run.max_processes 6; give run.processes alone to measure exactly 60)");
}

// A quick run (`run MODEL.pt`: 200 iterations, blocks of 10): 20 blocks in rounds of 6, 7, 7;
// an added round is like the first (6 blocks): at most 200 + 3 x 60 = 380, the n seen.
TEST(RunPlan, TheQuickRunsTwoHundredMayBecome380AndSaysSo) {
    const auto plan = S::measurementPlan(preset(2, 200, 10, 10));
    EXPECT_EQ(plan.roundIters, (std::vector<int>{60, 70, 70}));
    EXPECT_EQ(plan.maxIters, 380);
    EXPECT_NE(S::planText(plan).find("200 asked -> 200-380 measured per arm: 3 processes of 6-7 blocks of 10 "
                                     "iterations, then up to 3 more processes of 60 iterations"),
              std::string::npos)
        << S::planText(plan);
}

// The window's Measured 20 in 3 processes: blocks of 7, 7, 6 (one per process). An added round
// used to be a block of block_iters (10): 20 + 3 x 10 = 50 ("50 / 50"); it is now like the first
// round (7), and the plan says 20-41.
TEST(RunPlan, AddedRoundsAreLikeThePlannedOnesWhenBlocksAreSmallerThanBlockIters) {
    const auto run = preset(2, 20, 10).run;
    EXPECT_EQ(S::blockIterations(run), (std::vector<int>{7, 7, 6}));
    EXPECT_EQ(S::addedRoundBlocks(run), (std::vector<int>{7}));
    const auto plan = S::measurementPlan(preset(2, 20, 10));
    EXPECT_EQ(plan.maxIters, 41);
    EXPECT_NE(S::planText(plan).find("20 asked -> 20-41 measured per arm: 3 processes of 7, 7 and 6 iterations"),
              std::string::npos)
        << S::planText(plan);
}

// run.processes alone (max_processes follows it), or a single arm (nothing to compare): exactly
// what was asked.
TEST(RunPlan, ProcessesAloneOrOneArmMeasureExactlyWhatIsAsked) {
    auto p = preset(2, 60, 10);
    p.run.max_processes = p.run.processes;
    auto plan = S::measurementPlan(p);
    EXPECT_EQ(plan.minIters, 60);
    EXPECT_EQ(plan.maxIters, 60);
    EXPECT_EQ(S::planText(plan), "60 iterations measured per arm, as asked: 3 processes of 2 blocks of 10 iterations");
    plan = S::measurementPlan(preset(1, 60, 10));
    EXPECT_EQ(plan.maxIters, 60);
    // 5 iterations in 3 processes: blocks of 2, 2, 1.
    p = preset(2, 5, 10);
    p.run.max_processes = 3;
    EXPECT_EQ(S::planText(S::measurementPlan(p)),
              "5 iterations measured per arm, as asked: 3 processes of 2, 2 and 1 iterations");
}

TEST(RunPlan, AdaptiveStoppingIsOpenEndedUpToItsCap) {
    auto p = preset(2, 60, 10);
    p.run.target_ci_pct = 2;
    p.run.max_time_ms = 30000;
    const auto plan = S::measurementPlan(p);
    EXPECT_EQ(plan.maxIters, -1);
    EXPECT_EQ(S::planText(plan),
              "60 asked -> 60 or more measured per arm: 3 processes of 2 blocks of 10 iterations, then "
              "rounds of 20 iterations in fresh processes until every median's 95 % CI is within +-2 %, "
              "at most 30 s measured (run.max_time_ms)");
    p.run.processes = p.run.max_processes = 1;
    p.run.target_ci_pct = 0;
    EXPECT_EQ(S::planText(S::measurementPlan(p)),
              "60 asked -> 60 or more measured per arm: 1 process of 6 blocks of 10 iterations, then "
              "rounds of 10 iterations until 30 s measured (run.max_time_ms)");
    p.run.max_time_ms = 0;
    p.run.min_time_ms = 1000;
    EXPECT_NE(S::planText(S::measurementPlan(p)).find("(the default cap: set run.max_time_ms)"), std::string::npos);
}

TEST(RunPlan, SweepsAndWorkersSayWhatTheCountIsPer) {
    auto p = preset(2, 60, 10);
    p.run.max_processes = 3;
    p.arms[0].knobs.batch_size = {1, 8};
    p.arms[1].knobs.workers = 2;
    EXPECT_NE(S::planText(S::measurementPlan(p))
                  .find("60 iterations measured per arm and batch size (each concurrent worker), as asked: "),
              std::string::npos);
    p.serving.enabled = true;
    EXPECT_EQ(S::planText(S::measurementPlan(p)), "");
}

// --- the time left ---

S::ObservedCosts costs() {
    S::ObservedCosts c;
    c.blockMsPerIter = {2, 1};
    c.warmupMsPerIter = {3, 1.5};
    c.configureMs = {500, 300};
    c.analysisMsPerSample = 1;  // a decision over 100 samples: 100 ms
    return c;
}

// Round 1 of two arms (warmup 5, blocks of 10 and 10), set up concurrently: configure costs the
// shorter arm's set-up alone (300: round 0's first set-up waited for every process started
// ahead, the later ones only load) until a concurrent one is measured, warmup the longer (5 x 3
// = 15), blocks 2 x (10 x 2 + 10 x 1) = 60: 375; the replication decision due, over the 60
// samples measured and the 40 to come, adds 100.
TEST(RemainingTime, PricesEveryTaskOfTheRoundsToCome) {
    const auto p = preset(2, 60, 10);
    S::RemainingInput in;
    in.finalAnalysis = false;
    in.samplesDone = 60;
    in.pending = S::planRound(p, 1, 0, {10, 10}, true, 2);
    auto r = S::estimateRemaining(in, costs());
    ASSERT_TRUE(r.known);
    EXPECT_DOUBLE_EQ(r.lowMs, 375);
    EXPECT_DOUBLE_EQ(r.highMs, 375);
    in.decisionDue = true;
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, costs()).lowMs, 475);
    // A measured concurrent set-up (800 ms) and warmup (40 ms) replace the guesses.
    auto c = costs();
    c.concurrentConfigureMs = 800;
    c.concurrentWarmupMs = 40;
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, c).lowMs, 800 + 40 + 60 + 100);
    // Round 0 sets up one arm at a time: 500 + 300 + 15 + 7.5 + 60.
    in.pending = S::planRound(p, 0, 0, {10, 10}, true, 2);
    in.decisionDue = false;
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, costs()).lowMs, 500 + 300 + 15 + 7.5 + 60);
}

// The block under way has run 5 of its 20 ms: 15 left, then B's block (10).
TEST(RemainingTime, TakesTheTimeSpentOffTheTaskUnderWay) {
    S::RemainingInput in;
    in.finalAnalysis = false;
    in.pending = {{Task::Block, 0, 4, 10, 1, 0}, {Task::Block, 1, 4, 10, 1, 0}};
    in.activeElapsedMs = 5;
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, costs()).lowMs, 15 + 10);
    in.activeElapsedMs = 50;  // slower than its price: nothing below zero
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, costs()).lowMs, 10);
}

// An added round starts its processes with it: its set-up is priced with the added rounds'
// measured set-up, else with the loads (the shortest set-up alone, 300) and its share of round
// 0's start of every process (the longest less the shortest, 200: all of it with share 1, a
// quarter with 1/4), rather than a planned round's concurrent one, whose processes were
// started ahead.
TEST(RemainingTime, AnAddedRoundsSetUpIncludesItsProcessStart) {
    const auto p = preset(2, 60, 10);
    auto c = costs();
    c.concurrentConfigureMs = 200;
    c.addedFromRound = 3;
    S::RemainingInput in;
    in.finalAnalysis = false;
    in.pending = S::planRound(p, 2, 4, {10, 10}, false, 6);
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, c).lowMs, 200 + 15 + 60);
    c.concurrentConfigureMs = -1;  // none measured yet: the loads alone (300)
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, c).lowMs, 300 + 15 + 60);
    c.concurrentConfigureMs = 200;
    in.pending = S::planRound(p, 3, 6, {10, 10}, false, 6);
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, c).lowMs, 500 + 15 + 60);
    c.addedStartShare = 1.0 / 4;
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, c).lowMs, 350 + 15 + 60);
    c.addedConfigureMs = 900;
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, c).lowMs, 900 + 15 + 60);
}

// Two rounds may be added (3 of max 5 run, the decision due over 90 + 10 samples): each like a
// later planned round (575: an added round's set-up is the longest alone, 500, a process start
// included; 40 samples), with one more decision between them (over 140 samples): high = 10 +
// 100 + 2 x 575 + 140. The verdict's analysis at the end compares every sample: 100
// more at the low end, 180 at the high.
TEST(RemainingTime, TheHighEndAddsTheRoundsReplicationMayAdd) {
    const auto p = preset(2, 60, 10);
    S::RemainingInput in;
    in.finalAnalysis = false;
    in.samplesDone = 90;
    in.pending = {{Task::Block, 1, 5, 10, 1, 2}};
    in.decisionDue = true;
    in.roundsMayBeAdded = 2;
    in.addedRound = S::planRound(p, 3, 6, {10, 10}, false, 6);
    auto c = costs();
    c.addedFromRound = 3;
    auto r = S::estimateRemaining(in, c);
    ASSERT_TRUE(r.known);
    EXPECT_DOUBLE_EQ(r.lowMs, 10 + 100);
    EXPECT_DOUBLE_EQ(r.highMs, 10 + 100 + 2 * 575 + 140);
    in.finalAnalysis = true;
    r = S::estimateRemaining(in, c);
    EXPECT_DOUBLE_EQ(r.lowMs, 10 + 100 + 100);
    EXPECT_DOUBLE_EQ(r.highMs, 10 + 100 + 2 * 575 + 140 + 180);
    // A's two concurrent workers make two samples an iteration: its blocks count twice.
    in.workers = {2, 1};
    in.pending = {{Task::Block, 0, 5, 10, 1, 2}};
    in.roundsMayBeAdded = 0;
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, costs()).lowMs, 20 + 2 * 110);
    // Before a decision was measured: the prior, 10 ms + 35 us a sample.
    EXPECT_DOUBLE_EQ(S::analysisMs(S::ObservedCosts{}, 1000), 10 + 35);
    EXPECT_EQ(S::remainingText({true, 45000, 100000}), "about 45 s left (up to 1:40 if rounds are added)");
    EXPECT_EQ(S::remainingText({true, 45000, 45200}), "about 45 s left");
    EXPECT_EQ(S::remainingText({true, 4210, 4240}), "about 4.2 s left");
    EXPECT_EQ(S::remainingText({false, 0, 0}), "");
    EXPECT_EQ(S::clockText(59600), "1:00");
}

TEST(RemainingTime, AdaptiveStoppingsHighEndIsItsCap) {
    S::RemainingInput in;
    in.finalAnalysis = false;
    in.pending = {{Task::Block, 0, 5, 10, 1, 0}};
    in.adaptiveCapLeftMs = 5000;
    const auto r = S::estimateRemaining(in, costs());
    EXPECT_DOUBLE_EQ(r.lowMs, 20);
    EXPECT_DOUBLE_EQ(r.highMs, 5000);
}

// Before B's first block, its blocks are priced with A's block pace (10 x 2), else with its
// own warmup's (10 x 1.5); with neither the time left is not known.
TEST(RemainingTime, UnknownUntilEveryArmHasAMeasuredBlockOrWarmup) {
    auto c = costs();
    c.blockMsPerIter[1] = -1;
    S::RemainingInput in;
    in.finalAnalysis = false;
    in.pending = {{Task::Block, 0, 0, 10, 1, 0}, {Task::Block, 1, 0, 10, 1, 0}};
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, c).lowMs, 20 + 20);
    c.blockMsPerIter[0] = -1;
    EXPECT_DOUBLE_EQ(S::estimateRemaining(in, c).lowMs, 30 + 15);
    c.warmupMsPerIter[1] = -1;
    EXPECT_FALSE(S::estimateRemaining(in, c).known);
    in.pending = {{Task::Block, 0, 0, 10, 1, 0}};
    EXPECT_TRUE(S::estimateRemaining(in, c).known);
}

// The log's means: blocks per iteration over every block of the arm, a group of two configures
// as the concurrent set-up, one alone as that arm's.
TEST(RemainingTime, TheCostLogAveragesWhatWasMeasured) {
    S::CostLog log(2);
    log.record({{Task::Block, 0, 0, 10, 1, 0}}, 25);
    log.record({{Task::Block, 0, 1, 30, 1, 0}}, 55);
    log.record({{Task::Configure, 1, -1, 0, 1, 0}}, 300);
    Task c0{Task::Configure, 0, -1, 0, 1, 1, true}, c1{Task::Configure, 1, -1, 0, 1, 1, true};
    log.record({c0, c1}, 800);
    log.record({{Task::Warmup, 1, -1, 5, 1, 0}}, 10);
    log.recordDecision(120, 40);
    auto c = log.costs();
    EXPECT_LT(c.addedConfigureMs, 0) << "no round added: nothing logged apart";
    S::CostLog added(2, 3);  // rounds 3.. were added: their set-up starts their processes
    Task a0 = c0, a1 = c1;
    a0.round = a1.round = 3;
    added.record({c0, c1}, 800);
    added.record({a0, a1}, 2000);
    EXPECT_DOUBLE_EQ(added.costs().concurrentConfigureMs, 800);
    EXPECT_DOUBLE_EQ(added.costs().addedConfigureMs, 2000);
    c = log.costs();
    EXPECT_DOUBLE_EQ(c.blockMsPerIter[0], 2);
    EXPECT_LT(c.blockMsPerIter[1], 0);
    EXPECT_DOUBLE_EQ(c.configureMs[1], 300);
    EXPECT_LT(c.configureMs[0], 0);
    EXPECT_DOUBLE_EQ(c.concurrentConfigureMs, 800);
    EXPECT_DOUBLE_EQ(c.warmupMsPerIter[1], 2);
    EXPECT_DOUBLE_EQ(c.analysisMsPerSample, 3);
}

}  // namespace
