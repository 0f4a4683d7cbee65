// The worker's serve command with the real mlp: the arrivals are the documented seeded sequence,
// every batch obeys the batching rule when replayed with the service times the worker measured
// (an independent simulation of the same arrivals), a low rate costs what a closed-loop forward
// costs, and a rate above capacity is flagged saturated within the level's duration.
#include "harness.h"

#include "pitlane/protocol/protocol.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>

using namespace pitlane;
using namespace pitlane::itest;

namespace {

struct Level {
    std::vector<std::int64_t> size, freeNs, start, end, arrival;
    json done;
};

// The level's batches, gathered from its serve_batches events (in order, none missing).
Level collect(const WorkerDriver& w, int block, json done) {
    Level l;
    l.done = std::move(done);
    std::size_t nextBatch = 0;
    for (const auto& ev : w.eventsOfType(protocol::kServeBatches)) {
        if (ev.value("block", -1) != block) continue;
        EXPECT_EQ(ev.value("first_batch", std::size_t(0)), nextBatch);
        auto append = [&](std::vector<std::int64_t>& dst, const char* key) {
            const auto v = ev.at(key).get<std::vector<std::int64_t>>();
            dst.insert(dst.end(), v.begin(), v.end());
        };
        append(l.size, "size");
        append(l.freeNs, "free_ns");
        append(l.start, "start_ns");
        append(l.end, "end_ns");
        append(l.arrival, "arrival_ns");
        nextBatch = l.size.size();
    }
    return l;
}

std::vector<std::int64_t> poisson(std::uint64_t seed, double rate, double seconds) {
    std::mt19937_64 rng(seed);
    std::vector<std::int64_t> out;
    for (double t = 0;;) {
        t -= std::log(1.0 - double(rng() >> 11) / 9007199254740992.0) / rate;
        if (t >= seconds) break;
        out.push_back(std::llround(t * 1e9));
    }
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// Median forward latency (ms) of the configured worker at batch 1, closed loop.
double closedLoopMs(WorkerDriver& w) {
    const auto before = w.eventsOfType(protocol::kSamples).size();
    EXPECT_EQ(w.run(0, 200).value("type", ""), "block_done");
    std::vector<double> lat;
    const auto samples = w.eventsOfType(protocol::kSamples);
    for (std::size_t i = before; i < samples.size(); ++i)
        for (auto ns : samples[i]["latency_ns"]) lat.push_back(ns.get<double>() / 1e6);
    return median(lat);
}

json knobs() {
    json k = {{"intra_op_threads", 1}, {"grad", "no_grad"}};
    if (qEnvironmentVariableIsSet("PITLANE_TEST_ALLOCATOR"))
        k["allocator"] = qEnvironmentVariable("PITLANE_TEST_ALLOCATOR").toStdString();
    return k;
}

}  // namespace

TEST(Serving, BatchesFollowTheRuleOnTheDocumentedArrivals) {
    WorkerDriver w;
    ASSERT_FALSE(w.start().is_null());
    ASSERT_EQ(w.configure(knobs()).value("type", ""), "applied");
    const double forwardMs = closedLoopMs(w);
    // Half of batch-1 capacity: with a 2 ms wait for up to 8, batches of several requests are
    // made, and a machine that slows down after the closed loop above does not saturate it (at
    // 0.8 it could).
    const double rate = 0.5 * 1e3 / forwardMs;
    const int B = 8;
    const double waitMs = 2;
    const json load = {{"arrival", "poisson"}, {"rate_per_s", rate}, {"duration_ms", 2000},
                       {"seed", 5}, {"max_batch", B}, {"max_wait_ms", waitMs}};
    const auto done = w.serve(1, load);
    ASSERT_EQ(done.value("type", ""), "block_done") << done.dump();
    const Level l = collect(w, 1, done);
    const auto& sv = done.at("serving");
    EXPECT_FALSE(sv.value("saturated", true));
    const auto expected = poisson(5, rate, 2.0);
    ASSERT_EQ(sv.value("scheduled", 0L), std::int64_t(expected.size()));
    ASSERT_EQ(std::int64_t(l.arrival.size()), sv.value("served", 0L));
    ASSERT_EQ(l.arrival.size(), expected.size()) << "every request is served";
    for (std::size_t i = 0; i < expected.size(); ++i)
        ASSERT_NEAR(double(l.arrival[i]), double(expected[i]), 2.0) << "request " << i;

    // Replay the rule with the worker's own service times: batch k may not start before
    // S_k = max(end_{k-1}, a_i, min(a_{i+B-1}, a_i + W)), and holds every request arrived by
    // S_k (up to B) and none arrived after it started.
    const std::int64_t W = std::int64_t(waitMs * 1e6);
    std::size_t i = 0;
    std::vector<double> lateMs;
    int multi = 0;
    for (std::size_t k = 0; k < l.size.size(); ++k) {
        const std::int64_t prevEnd = k ? l.end[k - 1] : 0;
        ASSERT_EQ(l.freeNs[k], prevEnd);
        const std::int64_t full = i + B - 1 < expected.size()
                                      ? expected[i + B - 1]
                                      : std::numeric_limits<std::int64_t>::max();
        const std::int64_t S = std::max({prevEnd, expected[i], std::min(full, expected[i] + W)});
        ASSERT_GE(l.start[k], S) << "batch " << k << " dispatched before the rule allows";
        lateMs.push_back(double(l.start[k] - S) / 1e6);
        std::int64_t byS = 0, byStart = 0;
        for (std::size_t j = i; j < expected.size() && j < i + B; ++j) {
            byS += expected[j] <= S;
            byStart += expected[j] <= l.start[k];
        }
        EXPECT_GE(l.size[k], byS) << "batch " << k << " left behind a request that had arrived";
        EXPECT_LE(l.size[k], byStart) << "batch " << k << " holds a request not yet arrived";
        multi += l.size[k] > 1;
        i += std::size_t(l.size[k]);
    }
    EXPECT_EQ(i, expected.size());
    EXPECT_GT(multi, 0) << "near capacity some batches must hold several requests";
    const double lateMedian = median(lateMs);
    std::cout << "forward " << forwardMs << " ms, rate " << rate << "/s, " << l.size.size()
              << " batches (" << multi << " of several), dispatch later than the rule by median "
              << lateMedian << " ms, max " << *std::max_element(lateMs.begin(), lateMs.end())
              << " ms\n";
    // A loose bound (tests run side by side on 2 cores): the measured medians are 0.1 us on a
    // quiet AMD EPYC and 0.25 us with four busy loops on its 2 cores (the max then 12 ms, a time
    // slice): most batches start when the previous one ends, while the worker holds the CPU.
    EXPECT_LT(lateMedian, 2.0) << "the batcher wakes late";
    ASSERT_TRUE(w.quit());
}

// At 20 % of batch-1 capacity with no batching wait, a request costs about what a forward
// costs. Issue 13 asks within 10 % of the closed-loop median: that is measured by
// bench/serving.sh on a quiet machine and written in docs/PERFORMANCE.md. Here (ctest runs tests
// side by side on 2 cores) only a gross error is asserted: a request timed from the wrong
// moment, or queueing where nothing queues, is far outside 0.7-2x.
TEST(Serving, ALowRateCostsAClosedLoopForward) {
    // resnet18 at 3x64x64 (a few ms a forward): the mlp's 30 us forward would measure the
    // wake-up of a sleeping thread more than serving.
    WorkerDriver w;
    ASSERT_FALSE(w.start().is_null());
    ASSERT_EQ(w.configure(knobs(), json::array({{{"shape", {3, 64, 64}}, {"dtype", "float32"}}}),
                          modelDir() + "/resnet18.pt")
                  .value("type", ""),
              "applied");
    const double forwardMs = closedLoopMs(w);
    // Constant arrivals: at 20 % no request ever queues behind another, so the comparison
    // isolates what the serving path adds. (Poisson at 20 % queues ~20 % of the requests, M/D/1,
    // which moves the median up by the forward's own spread: docs/PERFORMANCE.md.)
    // idle_wait spin: a batcher that sleeps between requests finds the core cold (~1.4x a
    // back-to-back forward on this VM; that is what a sleeping server pays, and what
    // docs/PERFORMANCE.md records); spinning isolates the serving path.
    // Long enough for ~75 requests whatever a forward costs on this machine now (a forward of
    // 20 ms under load gave only 40 requests in a fixed 4 s).
    // No saturation stop: on a busy machine a stall of a few seconds once ended the level early
    // (33 requests served of 75 scheduled); every scheduled request is served, so the count is
    // what the schedule says, whatever the load.
    const json load = {{"arrival", "constant"}, {"rate_per_s", 0.2 * 1e3 / forwardMs},
                       {"duration_ms", std::max(4000.0, 75 * forwardMs / 0.2)}, {"max_batch", 1},
                       {"max_wait_ms", 0}, {"idle_wait", "spin"}, {"saturation_ms", 600000}};
    const auto done = w.serve(1, load);
    ASSERT_EQ(done.value("type", ""), "block_done") << done.dump();
    const Level l = collect(w, 1, done);
    std::vector<double> e2e, inference, wait;
    std::size_t r = 0;
    for (std::size_t k = 0; k < l.size.size(); ++k) {
        inference.push_back(double(l.end[k] - l.start[k]) / 1e6);
        for (int j = 0; j < l.size[k]; ++j, ++r) {
            e2e.push_back(double(l.end[k] - l.arrival[r]) / 1e6);
            wait.push_back(double(l.start[k] - l.arrival[r]) / 1e6);
        }
    }
    ASSERT_GT(e2e.size(), 50u);
    EXPECT_EQ(done.at("serving").value("idle_wait", ""), "spin");
    const double m = median(e2e), inf = median(inference);
    std::cout << "closed loop " << forwardMs << " ms, end-to-end median at 20 % load " << m
              << " ms (" << e2e.size() << " requests), ratio " << m / forwardMs << "; median inference "
              << inf << " ms, wait " << median(wait) << " ms\n";
    // Against the forwards of this same level: a load that comes or goes between the closed
    // loop above and the level moves both alike (the closed-loop ratio failed 1 run in ~6 on a
    // busy 2-core machine). The closed-loop ratio is bench/serving.sh's, on a quiet machine.
    EXPECT_GT(m / inf, 0.7);
    EXPECT_LT(m / inf, 2.0);
    ASSERT_TRUE(w.quit());
}

TEST(Serving, ARateAboveCapacityIsFlaggedSaturatedEarly) {
    WorkerDriver w;
    ASSERT_FALSE(w.start().is_null());
    ASSERT_EQ(w.configure(knobs()).value("type", ""), "applied");
    const double forwardMs = closedLoopMs(w);
    const json load = {{"arrival", "constant"}, {"rate_per_s", 3 * 1e3 / forwardMs},
                       {"duration_ms", 5000}, {"max_batch", 1}, {"saturation_ms", 300}};
    const auto done = w.serve(1, load);
    ASSERT_EQ(done.value("type", ""), "block_done") << done.dump();
    EXPECT_TRUE(done.at("serving").value("saturated", false)) << done.dump();
    EXPECT_LT(done.value("wall_ms", 1e9), 5000.0) << "a saturated level stops early";
    EXPECT_LT(done.at("serving").value("served", 0L), done.at("serving").value("arrived", 0L));
    ASSERT_TRUE(w.quit());
}

TEST(Serving, ABadServeCommandNamesTheField) {
    WorkerDriver w;
    ASSERT_FALSE(w.start().is_null());
    ASSERT_EQ(w.configure(knobs()).value("type", ""), "applied");
    auto ev = w.serve(1, {{"arrival", "bursty"}, {"rate_per_s", 10}, {"duration_ms", 100}});
    EXPECT_EQ(ev.value("code", ""), "bad_command");
    EXPECT_NE(ev.value("message", "").find("arrival"), std::string::npos) << ev.dump();
    ev = w.serve(2, {{"rate_per_s", 10}, {"duration_ms", 100}, {"max_batch", 0}});
    EXPECT_NE(ev.value("message", "").find("max_batch"), std::string::npos) << ev.dump();
    ev = w.serve(3, {{"rate_per_s", 10}, {"duration_ms", 100}, {"idle_wait", "nap"}});
    EXPECT_NE(ev.value("message", "").find("idle_wait"), std::string::npos) << ev.dump();
    ASSERT_TRUE(w.quit());
}
