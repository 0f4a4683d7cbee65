// compareUnpaired: the bootstrap of arms of different runs (pitlane-cli compare), checked against
// an independent enumeration of its resampling distribution and by its coverage on synthetic
// data with a process-level effect.
#include "pitlane/stats/stats.h"

#include "synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using pitlane::stats::BlockedSamples;

// One sample per process, one block each: every process is a unit of its own.
BlockedSamples onePerProcess(const std::vector<double>& values) {
    BlockedSamples s;
    for (std::size_t i = 0; i < values.size(); ++i) {
        s.blocks.push_back({values[i]});
        s.process.push_back(int(i));
    }
    return s;
}

double median3(double a, double b, double c) {
    return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

// The exact unpaired resampling distribution of 3 processes against 3, by enumeration: each arm
// draws 3 of its 3 processes with replacement on its own (27 draws each, 729 pairs, equally
// likely); one sample per block leaves nothing to draw below. Returns the sd of the log ratio.
double enumeratedLogSd(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> logs;
    for (int i = 0; i < 27; ++i)
        for (int j = 0; j < 27; ++j) {
            const double ma = median3(a[i % 3], a[i / 3 % 3], a[i / 9]);
            const double mb = median3(b[j % 3], b[j / 3 % 3], b[j / 9]);
            logs.push_back(std::log(ma / mb));
        }
    double mean = 0;
    for (double l : logs) mean += l;
    mean /= double(logs.size());
    double ss = 0;
    for (double l : logs) ss += (l - mean) * (l - mean);
    return std::sqrt(ss / double(logs.size()));
}

}  // namespace

// With 3 processes per arm the expanded percentile tail (7e-8) lies beyond what 3 units can
// show, so the interval is the log-normal one: ratio * exp(+-sqrt(3/2) * t_2(0.975) * sd), sd the
// spread of the log resampled ratios. The enumerated distribution gives that sd exactly; 20000
// resamples must agree within 3 %. t_2(0.975) = 4.302652729911275 (tables).
TEST(CompareUnpaired, MatchesTheEnumeratedResamplingDistribution) {
    const std::vector<double> a = {1.0e6, 1.3e6, 2.0e6}, b = {0.8e6, 1.1e6, 1.25e6};
    pitlane::stats::CompareOptions o;
    o.resamples = 20000;
    const auto c = pitlane::stats::compareUnpaired("A", onePerProcess(a), "B", onePerProcess(b), o);
    EXPECT_DOUBLE_EQ(c.ratio, 1.3e6 / 1.1e6);  // median / median, baseline first
    EXPECT_EQ(c.units, 3u);
    EXPECT_EQ(c.unit, "processes");
    EXPECT_NE(c.method.find("unpaired"), std::string::npos) << c.method;
    const double half = std::sqrt(1.5) * 4.302652729911275 * enumeratedLogSd(a, b);
    EXPECT_NEAR(std::log(c.ci_high / c.ratio), half, 0.03 * half);
    EXPECT_NEAR(std::log(c.ratio / c.ci_low), half, 0.03 * half);
}

// The same processes in both arms: paired by replicate, every draw takes the same processes on
// both sides and the CI collapses to 1; unpaired, the arms are drawn apart and the CI is the
// enumerated one. compareUnpaired ignores options.paired.
TEST(CompareUnpaired, DrawsTheArmsProcessesIndependently) {
    const std::vector<double> v = {1.0e6, 1.5e6, 2.2e6};
    const auto paired = pitlane::stats::compare("A", onePerProcess(v), "B", onePerProcess(v));
    EXPECT_DOUBLE_EQ(paired.ci_low, 1.0);
    EXPECT_DOUBLE_EQ(paired.ci_high, 1.0);
    pitlane::stats::CompareOptions o;
    o.paired = true;  // ignored
    o.resamples = 20000;
    const auto u = pitlane::stats::compareUnpaired("A", onePerProcess(v), "B", onePerProcess(v), o);
    const double half = std::sqrt(1.5) * 4.302652729911275 * enumeratedLogSd(v, v);
    EXPECT_NEAR(std::log(u.ci_high), half, 0.03 * half);
    EXPECT_NEAR(-std::log(u.ci_low), half, 0.03 * half);
    EXPECT_FALSE(u.significant);
}

// Coverage on synthetic runs made "at different times": 5 processes per arm, 2 blocks of 15
// samples each, a process effect (log sd 8 %) far above the within-process noise (log sd 2 %),
// as measured in this project. 200 A/A pairs: the 95 % CI holds the true ratio 1 at least 93 %
// of the time (the expanded interval is conservative by design); 200 pairs with a true ratio of
// 1.3: the CI holds 1.3 as often, and excludes 1 in most of them.
TEST(CompareUnpaired, CoversTheTrueRatioAcrossSimulatedRuns) {
    namespace t = pitlane::stats::testing;
    std::mt19937_64 rng(20240529);
    auto arm = [&](double scale) {
        BlockedSamples s;
        for (int p = 0; p < 5; ++p) {
            const double procEffect = std::exp(0.08 * t::normal01(rng));
            for (int blk = 0; blk < 2; ++blk) {
                std::vector<double> block;
                for (int i = 0; i < 15; ++i)
                    block.push_back(scale * 1e6 * procEffect * std::exp(0.02 * t::normal01(rng)));
                s.blocks.push_back(std::move(block));
                s.process.push_back(p);
            }
        }
        return s;
    };
    pitlane::stats::CompareOptions o;
    o.resamples = 1000;
    for (const double truth : {1.0, 1.3}) {
        int covered = 0, excludesOne = 0;
        constexpr int kPairs = 200;
        for (int i = 0; i < kPairs; ++i) {
            const auto base = arm(truth), other = arm(1.0);
            o.seed = 0x5eed + std::uint64_t(i);
            const auto c = pitlane::stats::compareUnpaired("A", base, "B", other, o);
            covered += c.ci_low <= truth && truth <= c.ci_high;
            excludesOne += c.ci_low > 1;
        }
        std::printf("unpaired bootstrap, true ratio %.1f: 95%% CI covers it in %.1f%% of %d pairs, "
                    "excludes 1 in %.1f%%\n",
                    truth, 100.0 * covered / kPairs, kPairs, 100.0 * excludesOne / kPairs);
        EXPECT_GE(covered, kPairs * 93 / 100) << "true ratio " << truth;
        if (truth > 1) {
            EXPECT_GE(excludesOne, kPairs / 2) << "a 1.3x difference is found in most pairs";
        }
    }
}
