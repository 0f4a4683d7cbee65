// Per-process CPU figures from metric ticks (issue 41 item 3, results/cpu_rates.h): differenced
// within one process only, over the worker's own clock, never over when the ticks arrived.
#include "pitlane/protocol/events.h"
#include "pitlane/results/cpu_rates.h"
#include "pitlane/results/run_result.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

namespace {

namespace R = pitlane::results;
namespace P = pitlane::protocol;

R::MetricTick tick(int worker, int process, double arrivedMs, double sampledMs, double cpuS) {
    R::MetricTick t;
    t.worker = worker;
    t.process = process;
    t.t_ms = arrivedMs;
    t.sampled_ms = sampledMs;
    t.cpu_s = cpuS;
    return t;
}

// Two processes of one arm (two concurrent workers, or two rounds' processes) whose ticks
// interleave: one busy on two cores since long (50 s of CPU), one nearly idle (1 s). Differenced
// in arrival order, each pair would read as +-49 s of CPU in 50 ms.
TEST(CpuRates, DifferencesTicksOfOneProcessOnly) {
    std::vector<R::MetricTick> ticks;
    for (int k = 0; k < 40; ++k) {
        const double ms = 100.0 * k;
        ticks.push_back(tick(0, 0, 1000 + ms, 500 + ms, 50.0 + 0.200 * k));      // 200 %
        ticks.push_back(tick(1, 0, 1050 + ms, 7000 + ms, 1.0 + 0.005 * k));      // 5 %
    }
    const auto rates = R::processCpuRates(ticks);
    std::map<int, int> perWorker;
    for (const auto& r : rates) {
        ++perWorker[r.worker];
        EXPECT_TRUE(r.worker_clock);
        EXPECT_GE(r.window_ms, R::kCpuRateMinWindowMs);
        EXPECT_NEAR(r.pct, r.worker == 0 ? 200.0 : 5.0, 1e-6) << "worker " << r.worker;
    }
    // 39 intervals of 100 ms per process, taken 3 at a time (300 ms >= 250 ms): 13 each.
    EXPECT_EQ(perWorker, (std::map<int, int>{{0, 13}, {1, 13}}));

    // Two processes of the same worker (rounds) are apart too.
    std::vector<R::MetricTick> rounds;
    for (int k = 0; k < 10; ++k) {
        rounds.push_back(tick(0, 0, 100.0 * k, 100.0 * k, 0.1 * k));          // 100 %
        rounds.push_back(tick(0, 1, 100.0 * k + 1, 100.0 * k, 30 + 0.02 * k));  // 20 %
    }
    for (const auto& r : R::processCpuRates(rounds))
        EXPECT_NEAR(r.pct, r.process == 0 ? 100.0 : 20.0, 1e-6);
}

// The lead: ticks that reached the session 1 ms apart (t_ms 49574, 49575) carried
// 60 ms of CPU: the worker read them 30 ms apart (a 2-thread process on two cores). Over the
// worker's clock the rate is what the process used; over arrival it read 6000 %.
TEST(CpuRates, TakesTheRateOverTheWorkersClockNotArrival) {
    std::vector<R::MetricTick> ticks;
    double cpu = 2.0;
    for (int k = 0; k < 30; ++k) {
        // The worker samples every 30 ms at 180 %; the session receives them in bursts of five.
        const double sampled = 30.0 * k;
        const double arrived = 49000 + 150.0 * (k / 5) + (k % 5);
        ticks.push_back(tick(0, 0, arrived, sampled, cpu));
        cpu += 0.054;
    }
    const auto rates = R::processCpuRates(ticks);
    ASSERT_FALSE(rates.empty());
    for (const auto& r : rates) {
        EXPECT_NEAR(r.pct, 180.0, 1e-6);
        EXPECT_GE(r.window_ms, R::kCpuRateMinWindowMs);
    }
    // The same ticks without the worker's clock (a run recorded before it) fall back on when
    // they arrived, marked so, over windows of at least the same length.
    for (auto& t : ticks) t.sampled_ms = -1;
    for (const auto& r : R::processCpuRates(ticks)) {
        EXPECT_FALSE(r.worker_clock);
        EXPECT_GE(r.window_ms, R::kCpuRateMinWindowMs);
    }
}

// A tick a few ms after the one before (the block-end tick) extends the window instead of
// closing a 3 ms one; a process whose counters go back (a fresh process under the same key)
// starts its window again and never gives a negative or inflated figure.
TEST(CpuRates, ShortWindowsExtendAndARestartedProcessStartsAgain) {
    R::CpuRateSeries s;
    EXPECT_FALSE(s.add(tick(0, 0, 0, 0, 1.0)));
    EXPECT_FALSE(s.add(tick(0, 0, 100, 100, 1.1)));
    EXPECT_FALSE(s.add(tick(0, 0, 103, 103, 1.103)));  // would be 3 ms of CPU over 3 ms
    const auto r = s.add(tick(0, 0, 260, 260, 1.26));
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(r->window_ms, 260);
    EXPECT_NEAR(r->pct, 100.0, 1e-9);
    EXPECT_FALSE(s.add(tick(0, 0, 400, 5, 0.01)));  // a new process: clock and CPU went back
    const auto again = s.add(tick(0, 0, 700, 305, 0.16));
    ASSERT_TRUE(again);
    EXPECT_NEAR(again->pct, 50.0, 1e-9);
    EXPECT_DOUBLE_EQ(again->t_ms, 700);
}

// The worker's clock travels: the metrics event's t_ms, the tick's sampled_ms, the results JSON
// (absent for a run recorded before it, which reads back as -1).
TEST(CpuRates, TheWorkersClockReachesTheResultsJsonAndOldRunsReadAsNotReported) {
    P::Metrics m;
    m.t_ms = 1234.5;
    m.cpu_user_s = 1.5;
    m.cpu_sys_s = 0.25;
    const auto parsed = P::metricsFromJson(P::toJson(m));
    EXPECT_DOUBLE_EQ(parsed.t_ms, 1234.5);
    EXPECT_DOUBLE_EQ(P::metricsFromJson(nlohmann::json{{"type", "metrics"}, {"rss_bytes", 1}}).t_ms, -1);
    const auto t = R::metricTick(parsed, 9000, 1, 2);
    EXPECT_DOUBLE_EQ(t.t_ms, 9000);
    EXPECT_DOUBLE_EQ(t.sampled_ms, 1234.5);
    EXPECT_DOUBLE_EQ(t.cpu_s, 1.75);

    R::RunResult run;
    R::ArmResult a;
    a.name = "A";
    a.metrics = {t, tick(0, 0, 10, -1, 0.5)};
    run.arms.push_back(a);
    const nlohmann::json j = R::toResultsJson(run);
    const auto& metrics = j["arms"][0]["metrics"];
    ASSERT_EQ(metrics.size(), 2u);
    EXPECT_EQ(metrics[0]["sampled_ms"], 1234.5);
    EXPECT_FALSE(metrics[1].contains("sampled_ms"));
    const auto back = R::fromResultsJson(j);
    ASSERT_EQ(back.arms.size(), 1u);
    ASSERT_EQ(back.arms[0].metrics.size(), 2u);
    EXPECT_DOUBLE_EQ(back.arms[0].metrics[0].sampled_ms, 1234.5);
    EXPECT_DOUBLE_EQ(back.arms[0].metrics[1].sampled_ms, -1);
}

}  // namespace
