// The verdict's words when the two significance tests disagree (issue 11 item 4): significance
// needs both the CI excluding 1 and Mann-Whitney p < alpha (the documented rule, unchanged);
// when only the CI excludes 1 the verdict says so and why, and ordinary verdicts keep their words.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "pitlane/stats/stats.h"
#include "synthetic.h"

using namespace pitlane::stats;
using pitlane::stats::testing::uniform01;

namespace {

// Baseline: latencies spread evenly over 0.5-1.5 ms (median 1 ms). Arm: 55 % of its iterations
// tightly at 0.74-0.82 ms, 45 % at 1.22-1.32 ms. The arm's median sits in its fast group (about
// 0.81 ms: ratio about 1.23, and the fast group's share is far from 50 %, so the CI excludes 1),
// yet a random arm iteration is as often slower as faster than a baseline one, so the rank test
// sees no shift: only the middle of the distribution moved.
void middleShiftOnly(BlockedSamples& base, BlockedSamples& arm) {
    std::mt19937_64 rng(42);
    for (int b = 0; b < 8; ++b) {
        std::vector<double> va, vb;
        for (int i = 0; i < 250; ++i) {
            va.push_back(1e6 * (0.5 + uniform01(rng)));
            const bool fast = uniform01(rng) < 0.55;
            vb.push_back(1e6 * (fast ? 0.74 + 0.08 * uniform01(rng) : 1.22 + 0.1 * uniform01(rng)));
        }
        base.blocks.push_back(va);
        arm.blocks.push_back(vb);
    }
}

std::string fmt(const char* f, double a, double b, double c) {
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

}  // namespace

TEST(VerdictWords, MediansDifferButTheRankTestDoesNotIsExplained) {
    BlockedSamples a, b;
    middleShiftOnly(a, b);
    const Comparison c = compare("A", a, "B", b);
    // The data produce exactly the disagreement: the CI excludes 1, the rank test does not.
    ASSERT_GT(c.ci_low, 1.0) << c.verdict;
    ASSERT_GE(c.p_value, 0.05) << c.verdict;
    EXPECT_FALSE(c.significant) << "the documented rule is kept: both must agree";
    const std::string head = fmt("no significant difference between A and B (ratio %.2f, 95%% CI "
                                 "%.2f-%.2f)",
                                 c.ratio, c.ci_low, c.ci_high);
    char p[32];
    std::snprintf(p, sizeof p, "%.2g", c.p_value);
    EXPECT_EQ(c.verdict,
              head + ": the medians differ (the CI excludes 1) but the rank test does not "
                     "(Mann-Whitney p = " + p +
                  "): the distributions overlap (a shift of the middle only); not called "
                  "significant, which needs both");
}

// The same disagreement the other way round (the arm's median is the slower one).
TEST(VerdictWords, TheExplanationAlsoHoldsWhenTheArmIsSlower) {
    BlockedSamples a, b;
    middleShiftOnly(a, b);
    const Comparison c = compare("B", b, "A", a);
    ASSERT_LT(c.ci_high, 1.0) << c.verdict;
    ASSERT_GE(c.p_value, 0.05) << c.verdict;
    EXPECT_FALSE(c.significant);
    EXPECT_EQ(c.verdict.rfind("no significant difference between B and A (ratio 0.", 0), 0u)
        << c.verdict;
    EXPECT_NE(c.verdict.find(": the medians differ (the CI excludes 1) but the rank test does not"),
              std::string::npos)
        << c.verdict;
}

// Ordinary verdicts keep their words: a real shift of the whole distribution is called, and no
// difference at all gets no explanation.
TEST(VerdictWords, OrdinaryVerdictsAreUnchanged) {
    std::mt19937_64 rng(3);
    BlockedSamples base, faster, same;
    for (int blk = 0; blk < 6; ++blk) {
        std::vector<double> va, vf, vs;
        for (int i = 0; i < 100; ++i) {
            const double noise = 1 + 0.02 * (uniform01(rng) - 0.5);
            va.push_back(1.3e6 * noise);
            vf.push_back(1.0e6 * noise);
            vs.push_back(1.3e6 * (1 + 0.02 * (uniform01(rng) - 0.5)));
        }
        base.blocks.push_back(va);
        faster.blocks.push_back(vf);
        same.blocks.push_back(vs);
    }
    const Comparison f = compare("A", base, "B", faster);
    ASSERT_TRUE(f.significant) << f.verdict;
    EXPECT_EQ(f.verdict, fmt("B is %.2fx faster (95%% CI %.2f-%.2f)", f.ratio, f.ci_low, f.ci_high));
    const Comparison s = compare("B", faster, "A", base);
    ASSERT_TRUE(s.significant) << s.verdict;
    EXPECT_EQ(s.verdict, fmt("A is %.2fx slower (95%% CI %.2f-%.2f)", 1 / s.ratio, 1 / s.ci_high,
                             1 / s.ci_low));
    const Comparison n = compare("A", base, "C", same);
    ASSERT_FALSE(n.significant) << n.verdict;
    ASSERT_LE(n.ci_low, 1.0);
    ASSERT_GE(n.ci_high, 1.0);
    ASSERT_GE(n.p_value, 0.05) << n.verdict;
    EXPECT_EQ(n.verdict, fmt("no significant difference between A and C (ratio %.2f, 95%% CI "
                             "%.2f-%.2f)",
                             n.ratio, n.ci_low, n.ci_high));
}
