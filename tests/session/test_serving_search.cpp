// The serving levels' pure pieces (serving_search.h): each worker's share of a level, the serve
// command, and what serve_batches and a level's block_done do to it, with no process.
#include "pitlane/session/serving_search.h"

#include <gtest/gtest.h>

#include <set>

namespace {

namespace S = pitlane::session;
namespace P = pitlane::protocol;
namespace R = pitlane::results;
namespace spec = pitlane::spec;

spec::Preset servingPreset(const std::string& arrival) {
    spec::Preset p;
    for (const char* name : {"A", "B"}) {
        spec::ArmSpec a;
        a.name = name;
        a.knobs.max_batch = 8;
        a.knobs.max_wait_ms = 2;
        p.arms.push_back(a);
    }
    p.serving.enabled = true;
    p.serving.arrival = arrival;
    p.serving.rates = {100, 400};
    p.serving.clients = {1, 5};
    p.serving.duration_ms = 500;
    p.run.seed = 7;
    return p;
}

S::Task serveTask(int arm, int level, double rate, int clients = 0) {
    S::Task t{S::Task::Serve, arm};
    t.block = 3;
    t.level = level;
    t.rate = rate;
    t.clients = clients;
    return t;
}

TEST(ServingSearch, EachWorkerServesItsShareWithTheArmsCommonSeed) {
    const auto p = servingPreset("poisson");
    const auto a0 = S::servingLevelFor(p, serveTask(0, 1, 400), 2, 0, 4);
    const auto b0 = S::servingLevelFor(p, serveTask(1, 1, 400), 2, 0, 4);
    const auto a1 = S::servingLevelFor(p, serveTask(0, 1, 400), 2, 1, 4);
    EXPECT_DOUBLE_EQ(a0.rate_per_s, 400);
    EXPECT_DOUBLE_EQ(a0.load.rate_per_s, 100) << "1/K of the arm's rate";
    EXPECT_EQ(a0.process, 2);
    EXPECT_EQ(a1.worker, 1);
    EXPECT_EQ(a0.load.max_batch, 8);
    EXPECT_DOUBLE_EQ(a0.load.max_wait_ms, 2);
    EXPECT_DOUBLE_EQ(a0.load.duration_ms, 500);
    EXPECT_EQ(a0.load.seed, b0.load.seed) << "both arms get the same arrivals at a level of a round";
    EXPECT_NE(a0.load.seed, a1.load.seed) << "workers differ";
    std::set<std::uint64_t> seeds;
    for (int round = 0; round < 3; ++round)
        for (int level = -1; level < 3; ++level) seeds.insert(S::levelSeed(7, round, level, 0));
    EXPECT_EQ(seeds.size(), 12u) << "rounds and levels differ";
    EXPECT_EQ(seeds.count(0), 0u);
}

TEST(ServingSearch, ClosedLoopClientsAreSharedOutAndAskedFor) {
    const auto p = servingPreset("closed");
    int total = 0;
    for (int w = 0; w < 3; ++w) {
        const auto level = S::servingLevelFor(p, serveTask(0, 1, 0, 5), 0, w, 3);
        EXPECT_EQ(level.load.clients, w < 2 ? 2 : 1) << "worker " << w;
        total += level.load.clients;
        const auto cmd = S::serveCommand(p.serving, level, 3);
        EXPECT_EQ(cmd.value("clients", -1), level.load.clients);
        EXPECT_FALSE(cmd.contains("rate_per_s"));
    }
    EXPECT_EQ(total, 5);
}

TEST(ServingSearch, TheServeCommandCarriesTheWorkersShare) {
    const auto p = servingPreset("poisson");
    const auto level = S::servingLevelFor(p, serveTask(0, 0, 100), 1, 1, 2);
    const auto cmd = S::serveCommand(p.serving, level, 3);
    EXPECT_EQ(cmd.value("block", -1), 3);
    EXPECT_DOUBLE_EQ(cmd.value("rate_per_s", 0.0), 50);
    EXPECT_EQ(cmd.value("seed", std::uint64_t(0)), level.load.seed);
    EXPECT_EQ(cmd.value("arrival", std::string()), "poisson");
    EXPECT_FALSE(cmd.contains("clients"));
}

P::ServeBatches batches(std::int64_t first, int n, std::int64_t firstRequest) {
    P::ServeBatches e;
    e.block = 3;
    e.first_batch = first;
    e.first_request = firstRequest;
    for (int k = 0; k < n; ++k) {
        e.size.push_back(2);
        e.free_ns.push_back(k * 10);
        e.start_ns.push_back(k * 10 + 1);
        e.end_ns.push_back(k * 10 + 5);
        e.arrival_ns.push_back(k * 10);
        e.arrival_ns.push_back(k * 10 + 1);
    }
    return e;
}

TEST(ServingSearch, BatchesAreAppendedInStepAndAGapIsRefused) {
    R::ServingLevel level;
    S::appendServeBatches(level, batches(0, 3, 0));
    S::appendServeBatches(level, batches(3, 2, 6));
    ASSERT_EQ(level.record.batches.size(), 5u);
    EXPECT_EQ(level.record.arrival_ns.size(), 10u);
    EXPECT_EQ(level.record.batches[3].end_ns, 5);
    EXPECT_THROW(S::appendServeBatches(level, batches(7, 1, 10)), std::runtime_error) << "a gap";
    EXPECT_THROW(S::appendServeBatches(level, batches(0, 1, 0)), std::runtime_error) << "a repeat";
    auto ragged = batches(5, 2, 10);
    ragged.end_ns.pop_back();
    EXPECT_THROW(S::appendServeBatches(level, ragged), std::runtime_error) << "arrays of different lengths";
    EXPECT_EQ(level.record.batches.size(), 5u) << "nothing of a refused event is kept";
}

TEST(ServingSearch, ALevelsBlockDoneCountsTheRequestsNeverServed) {
    R::ServingLevel level;
    S::appendServeBatches(level, batches(0, 2, 0));  // 4 requests served, arrivals up to 11
    P::BlockDone done;
    done.block = 3;
    done.serving = P::ServingDone{};
    done.serving->arrived = 7;
    done.serving->scheduled = 9;
    done.serving->max_queue = 4;
    done.serving->saturated = true;
    done.stopped = false;
    S::closeServingLevel(level, done);
    EXPECT_EQ(level.record.scheduled, 9);
    EXPECT_EQ(level.record.max_queue, 4);
    EXPECT_TRUE(level.record.saturated);
    EXPECT_TRUE(level.complete);
    ASSERT_EQ(level.record.arrival_ns.size(), 7u) << "every arrival counted";
    EXPECT_EQ(level.record.arrival_ns.back(), 11) << "the unserved are placed at the last arrival";
    R::ServingLevel cut;
    done.stopped = true;
    S::closeServingLevel(cut, done);
    EXPECT_FALSE(cut.complete) << "a stopped worker's level is not complete";
}

TEST(ServingSearch, TheSearchStepsToANewRateAndStopsAtOneAlreadyMeasured) {
    R::RunResult run;
    run.preset = servingPreset("poisson");
    run.preset.serving.slo_p99_ms = 50;
    run.arms.emplace_back();
    EXPECT_EQ(S::searchStepRate(run, 0), 0) << "nothing measured: no rate to start from";
    R::ServingLevel met;
    met.rate_per_s = 100;
    met.complete = true;
    S::appendServeBatches(met, batches(0, 2, 0));  // latencies of a few ns: well within the SLO
    run.arms[0].serving.push_back(met);
    EXPECT_DOUBLE_EQ(S::searchStepRate(run, 0), 200) << "every rate met the SLO: look higher";
    R::ServingLevel cut;  // 200 req/s sent before, never completed
    cut.rate_per_s = 200;
    run.arms[0].serving.push_back(cut);
    EXPECT_EQ(S::searchStepRate(run, 0), 0) << "a rate already measured would only repeat a level";
}

}  // namespace
