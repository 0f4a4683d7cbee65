// session::decideAdaptive, stoppingRecord and inconclusivePairs (stopping_policy.h) on synthetic
// samples, with no worker process.
#include "pitlane/session/stopping_policy.h"
#include "pitlane/spec/run_limits.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

namespace S = pitlane::session;
namespace R = pitlane::results;
using pitlane::stats::BlockedSamples;

// A deterministic spread around `centre`: +-spread (a linear congruential sequence).
std::vector<double> noisy(double centre, double spread, int n, std::uint32_t seed) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        v.push_back(centre + spread * (double(seed >> 8) / double(1u << 24) * 2 - 1));
    }
    return v;
}

R::ArmResult arm(const std::string& name, double centre, double spread, int blocks = 10) {
    R::ArmResult a;
    a.name = name;
    a.status = R::kPending;
    int iter = 0;
    for (int b = 0; b < blocks; ++b)
        for (double x : noisy(centre * (1 + spread * 0.1 * ((b % 3) - 1)), centre * spread, 20, 7u + b))
            a.samples.push_back({b, iter++, 1, 0, std::int64_t(x), 0});
    return a;
}

TEST(StoppingPolicy, MoreUntilTheMinimumTimeThenUntilEveryCiIsWithinTheTarget) {
    pitlane::spec::RunSettings run;
    run.iters = 2000;
    run.block_iters = 200;
    run.processes = 1;
    run.min_time_ms = 1000;
    run.target_ci_pct = 1;
    const std::vector<R::ArmResult> tight = {arm("A", 1e6, 0.001), arm("B", 2e6, 0.001)};
    auto d = S::decideAdaptive(run, tight, 500);
    EXPECT_TRUE(d.anyPending);
    EXPECT_TRUE(d.stable);
    EXPECT_TRUE(d.more);  // the minimum time first
    d = S::decideAdaptive(run, tight, 1500);
    EXPECT_FALSE(d.more);
    ASSERT_TRUE(d.perArm.contains("B"));
    EXPECT_LT(d.perArm["B"]["half_width_pct"].get<double>(), 1.0);
    EXPECT_NEAR(d.perArm["B"]["median_ns"].get<double>(), 2e6, 2e6 * 0.01);

    const std::vector<R::ArmResult> wide = {arm("A", 1e6, 0.001), arm("B", 1e6, 0.9, 3)};
    d = S::decideAdaptive(run, wide, 1500);
    EXPECT_FALSE(d.stable);
    EXPECT_TRUE(d.more);
    // The cap: max_time_ms, else the default cap.
    run.max_time_ms = 2000;
    d = S::decideAdaptive(run, wide, 2000);
    EXPECT_FALSE(d.more);
    EXPECT_EQ(d.capMs, 2000);
    const auto record = S::stoppingRecord(run, d, 2000, 4, 1);
    EXPECT_EQ(record["stable"], false);
    EXPECT_EQ(record["rounds"], 4);
    EXPECT_EQ(record["processes_per_arm"], 1);
    EXPECT_EQ(record["message"],
              "not stable: the time cap (2000 ms) was reached before every median's CI was within +-1 %");
    EXPECT_EQ(record["rule"], "at least 2000 iterations in 1 processes, then rounds of 200 iterations "
                              "until every median's 95% CI is within +-1 % (time cap 2000 ms)");
}

TEST(StoppingPolicy, TimedOnlyRunsUntilItsTimeAndNothingPendingDecidesNothing) {
    pitlane::spec::RunSettings run;
    run.max_time_ms = 3000;  // "run for 3 s"
    std::vector<R::ArmResult> arms = {arm("A", 1e6, 0.001)};
    EXPECT_TRUE(S::decideAdaptive(run, arms, 2999).more);
    EXPECT_FALSE(S::decideAdaptive(run, arms, 3000).more);
    const auto d = S::decideAdaptive(run, arms, 3000);
    EXPECT_FALSE(S::stoppingRecord(run, d, 3000, 1, 1).contains("message"));
    arms[0].status = R::kOk;
    const auto none = S::decideAdaptive(run, arms, 0);
    EXPECT_FALSE(none.anyPending);
    EXPECT_FALSE(none.more);
    // The default cap without max_time_ms.
    run.max_time_ms = 0;
    run.target_ci_pct = 0.5;
    arms[0].status = R::kPending;
    const auto capped = S::decideAdaptive(run, {arm("A", 1e6, 0.9, 3)}, 1e9);
    EXPECT_FALSE(capped.more);
    EXPECT_EQ(capped.capMs, pitlane::spec::adaptiveTimeCapMs(run));
    EXPECT_NE(S::stoppingRecord(run, capped, 1e9, 1, 1)["message"].get<std::string>().find(
                  "the default: set run.max_time_ms to change it"),
              std::string::npos);
}

BlockedSamples blocked(double centre, double spread, int blocks, int perBlock, std::uint32_t seed) {
    BlockedSamples b;
    for (int i = 0; i < blocks; ++i) {
        b.blocks.push_back(noisy(centre, spread, perBlock, seed + std::uint32_t(i)));
        b.process.push_back(i);  // one block per process: the processes are the units
    }
    return b;
}

TEST(StoppingPolicy, ReplicationGoesOnOnlyWhileAComparisonIsInconclusive) {
    // A clear 2x difference, and two identical arms measured tightly: both conclusive.
    const auto base = blocked(1e6, 1e4, 8, 50, 1);
    std::vector<S::ReplicationPair> pairs = {{"A", "B", base, blocked(2e6, 2e4, 8, 50, 100)},
                                             {"A", "C", base, blocked(1e6, 1e4, 8, 50, 200)}};
    EXPECT_TRUE(S::inconclusivePairs(pairs, 8).empty());
    // Three processes each, process effects of +-30 % and a 15 % difference: neither significant
    // nor within 1/1.1-1.1.
    BlockedSamples a, b;
    for (int p = 0; p < 3; ++p) {
        const double effect = 1 + 0.3 * (p - 1);
        a.blocks.push_back(noisy(1e6 * effect, 1e4, 30, 10u + p));
        a.process.push_back(p);
        b.blocks.push_back(noisy(1.15e6 * (2 - effect), 1e4, 30, 20u + p));
        b.process.push_back(p);
    }
    const auto reasons = S::inconclusivePairs({{"A", "B", a, b}}, 3);
    ASSERT_EQ(reasons.size(), 1u);
    EXPECT_EQ(reasons[0].rfind("B vs A after 3 processes: ratio ", 0), 0u) << reasons[0];
    EXPECT_NE(reasons[0].find("interim 97.5% CI"), std::string::npos) << reasons[0];
}

}  // namespace
