// Tests for the process level of pitlane::stats (issue 8): the three-level bootstrap against an
// exhaustive enumeration, A/A simulations with a bimodal process effect, power through process
// noise, the sequential replication rule, and the variance shares against a hand computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "pitlane/stats/stats.h"
#include "synthetic.h"

using namespace pitlane::stats;
using pitlane::stats::testing::normal01;
using pitlane::stats::testing::uniform01;

// ---------------------------------------------------------------------------------------------
// Process replicates: the three-level bootstrap (process, block, sample)

namespace {

// An arm measured in `procs` processes, each with `blocksPer` blocks of `perBlock` samples. Each
// process gets a multiplicative offset: lognormal with log-sd `procSd`, or, with probability
// `slowProb`, a `slowFactor` slowdown (glibc malloc's bimodal processes).
BlockedSamples makeProcArm(std::mt19937_64& rng, double median_ns, int procs, int blocksPer,
                           int perBlock, double procSd, double blockSd, double noise,
                           double slowProb = 0, double slowFactor = 1) {
    BlockedSamples s;
    for (int p = 0; p < procs; ++p) {
        double offset = std::exp(procSd * normal01(rng));
        if (slowProb > 0 && uniform01(rng) < slowProb) offset *= slowFactor;
        for (int b = 0; b < blocksPer; ++b) {
            const double blockOffset = 1 + blockSd * normal01(rng);
            std::vector<double> block;
            for (int i = 0; i < perBlock; ++i)
                block.push_back(median_ns * offset * blockOffset * std::exp(noise * normal01(rng)));
            s.blocks.push_back(block);
            s.process.push_back(p);
        }
    }
    return s;
}

}  // namespace

// The process level is seen: 3 processes per arm, constant inside each process, so the whole
// bootstrap distribution is the 27 equally likely process draws (paired by replicate). That
// distribution is enumerated here, independently of compare(): its sd of log ratios gives the
// log-normal interval exp(log r +- sqrt(3/2) t_{2,0.975} sd), which compare() must reproduce
// (2000 resamples: Monte Carlo error of the sd about 2 %).
TEST(CompareProcesses, ThreeProcessCiMatchesExhaustiveEnumeration) {
    const std::vector<double> a = {4.0e6, 4.4e6, 0.6e6};  // one fast process (bimodal malloc)
    const std::vector<double> b = {4.1e6, 3.9e6, 4.2e6};
    BlockedSamples A, B;
    for (int p = 0; p < 3; ++p)
        for (int blk = 0; blk < 2; ++blk) {
            A.blocks.push_back(std::vector<double>(15, a[std::size_t(p)]));
            B.blocks.push_back(std::vector<double>(15, b[std::size_t(p)]));
            A.process.push_back(p);
            B.process.push_back(p);
        }
    // Enumerate every paired draw of 3 processes out of 3 with replacement.
    std::vector<double> logs;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) {
                std::vector<double> da = {a[i], a[j], a[k]}, db = {b[i], b[j], b[k]};
                std::sort(da.begin(), da.end());
                std::sort(db.begin(), db.end());
                logs.push_back(std::log(da[1] / db[1]));  // pooled median = median of the 3
            }
    double mean = 0;
    for (double l : logs) mean += l / 27;
    double var = 0;
    for (double l : logs) var += (l - mean) * (l - mean) / 26;
    const double sd = std::sqrt(var);
    std::vector<double> pooledA = A.pooled(), pooledB = B.pooled();
    const double ratio = median(pooledA) / median(pooledB);
    const double half = std::sqrt(1.5) * studentTQuantile(0.975, 2) * sd;
    const Comparison c = compare("A", A, "B", B);
    EXPECT_EQ(c.units, 3u);
    EXPECT_EQ(c.unit, "processes");
    EXPECT_NEAR(c.ratio, ratio, 1e-12);
    EXPECT_NEAR(std::log(c.ci_low), std::log(ratio) - half, 0.05 * half);
    EXPECT_NEAR(std::log(c.ci_high), std::log(ratio) + half, 0.05 * half);
    EXPECT_FALSE(c.significant) << c.verdict;
    EXPECT_NE(c.method.find("three-level hierarchical bootstrap, paired by replicate"), std::string::npos)
        << c.method;
}

// Without the process level the same data is "significant": every block of a process agrees, so
// a block bootstrap that ignores which process measured them sees 6 consistent blocks. This is
// the defect of issue 8 ("two identical arms called 6x different").
TEST(CompareProcesses, IgnoringTheProcessLevelWouldCallAnAADifference) {
    BlockedSamples A, B;
    const std::vector<double> a = {0.45e6, 0.46e6, 0.44e6}, b = {4.0e6, 4.1e6, 3.9e6};
    std::mt19937_64 rng(3);
    for (int p = 0; p < 3; ++p)
        for (int blk = 0; blk < 2; ++blk) {
            std::vector<double> va, vb;
            for (int i = 0; i < 20; ++i) {
                va.push_back(a[std::size_t(p)] * std::exp(0.01 * normal01(rng)));
                vb.push_back(b[std::size_t(p)] * std::exp(0.01 * normal01(rng)));
            }
            A.blocks.push_back(va);
            B.blocks.push_back(vb);
            A.process.push_back(p);
            B.process.push_back(p);
        }
    BlockedSamples flatA = A, flatB = B;
    flatA.process.clear();
    flatB.process.clear();
    EXPECT_TRUE(compare("A", flatA, "B", flatB).significant);
    // Three consistent processes per arm are still a real difference...
    EXPECT_TRUE(compare("A", A, "B", B).significant) << compare("A", A, "B", B).verdict;
    // ...but if the arms' processes disagree among themselves more than the arms do, it is not.
    BlockedSamples mixedA = A;
    for (std::size_t i = 2; i < 4; ++i)
        for (auto& v : mixedA.blocks[i]) v *= 9;  // replicate 1 of A is a slow process
    const Comparison m = compare("A", mixedA, "B", B);
    EXPECT_FALSE(m.significant) << m.verdict;
}

// A/A honesty with a process-level effect: 3 processes per arm, each with a lognormal offset
// (log-sd 10 %) and a 20 % chance of being 3x slower (the bimodal processes measured on this
// machine), 2 blocks of 20 samples per process. Two identical arms must be called "no
// significant difference" in >= 94 % of 300 runs; a block bootstrap that ignores the process
// level fails far more often (printed).
TEST(CompareProcesses, AAFalsePositiveRateWithProcessEffectIsHonest) {
    std::mt19937_64 rng(0xAA55);
    const int experiments = 300;
    int positives = 0, flatPositives = 0;
    for (int e = 0; e < experiments; ++e) {
        const BlockedSamples a = makeProcArm(rng, 1e6, 3, 2, 20, 0.10, 0.02, 0.02, 0.2, 3.0);
        const BlockedSamples b = makeProcArm(rng, 1e6, 3, 2, 20, 0.10, 0.02, 0.02, 0.2, 3.0);
        CompareOptions fast;
        fast.resamples = 500;
        if (compare("A", a, "B", b, fast).significant) ++positives;
        BlockedSamples fa = a, fb = b;
        fa.process.clear();
        fb.process.clear();
        if (compare("A", fa, "B", fb, fast).significant) ++flatPositives;
    }
    const double rate = double(positives) / experiments;
    std::printf("A/A with a process effect: false-positive rate %.1f%% (ignoring processes: %.1f%%)\n",
                rate * 100, 100.0 * flatPositives / experiments);
    EXPECT_LE(rate, 0.06);
    EXPECT_GT(flatPositives, 3 * positives);
}

// A real 1.6x difference with the same process noise (lognormal, log-sd 10 %, no slow mode) is
// found with 5 processes per arm in at least 18 of 20 runs.
TEST(CompareProcesses, RealDifferenceFoundThroughProcessNoise) {
    std::mt19937_64 rng(0x1616);
    int found = 0;
    for (int e = 0; e < 20; ++e) {
        const BlockedSamples a = makeProcArm(rng, 1.6e6, 5, 2, 20, 0.10, 0.02, 0.02);
        const BlockedSamples b = makeProcArm(rng, 1.0e6, 5, 2, 20, 0.10, 0.02, 0.02);
        const Comparison c = compare("A", a, "B", b);
        if (c.significant && c.ratio > 1) ++found;
        EXPECT_LT(c.ci_low, c.ratio);
        EXPECT_GT(c.ci_high, c.ratio);
    }
    EXPECT_GE(found, 18);
}

// Variance shares against a hand computation on log latency: two processes, two blocks each.
TEST(VarianceSharesTest, NestedSumsOfSquaresMatchAHandComputation) {
    BlockedSamples s;
    // log values chosen as exp of small integers so the sums are exact.
    s.blocks = {{std::exp(1.0), std::exp(3.0)}, {std::exp(2.0), std::exp(2.0)},
                {std::exp(6.0), std::exp(6.0)}, {std::exp(5.0), std::exp(7.0)}};
    s.process = {0, 0, 1, 1};
    // grand mean 4; process means 2 and 6: SS_proc = 4*(4) + 4*(4) = 32.
    // block means 2,2 | 6,6: SS_block = 0. within: (1+1) + 0 + 0 + (1+1) = 4. total 36.
    const VarianceShares v = varianceShares(s);
    ASSERT_TRUE(v.computed);
    EXPECT_NEAR(v.between_processes, 32.0 / 36, 1e-12);
    EXPECT_NEAR(v.between_blocks, 0.0, 1e-12);
    EXPECT_NEAR(v.within_blocks, 4.0 / 36, 1e-12);
    EXPECT_EQ(v.processes, 2u);
    EXPECT_EQ(v.blocks, 4u);
    EXPECT_EQ(v.n, 8u);
    EXPECT_EQ(s.processCount(), 2u);
    BlockedSamples flat;
    flat.blocks = {{5, 5}, {5}};
    EXPECT_FALSE(varianceShares(flat).computed);  // no spread at all
}

// The verdict says why a small pooled p-value is not a difference when processes are the units.
TEST(CompareProcesses, DisagreeingProcessesAreNamedInTheVerdict) {
    BlockedSamples A, B;
    const std::vector<double> a = {4.0e6, 0.5e6, 4.2e6}, b = {4.1e6, 4.0e6, 0.45e6};
    std::mt19937_64 rng(5);
    for (int p = 0; p < 3; ++p)
        for (int blk = 0; blk < 2; ++blk) {
            std::vector<double> va, vb;
            for (int i = 0; i < 30; ++i) {
                va.push_back(a[std::size_t(p)] * std::exp(0.02 * normal01(rng)));
                vb.push_back(b[std::size_t(p)] * 1.05 * std::exp(0.02 * normal01(rng)));
            }
            A.blocks.push_back(va);
            B.blocks.push_back(vb);
            A.process.push_back(p);
            B.process.push_back(p);
        }
    const Comparison c = compare("A", A, "B", B);
    EXPECT_FALSE(c.significant) << c.verdict;
    EXPECT_LT(c.p_value, 0.05);
    EXPECT_NE(c.verdict.find("not consistently from process to process"), std::string::npos)
        << c.verdict;
}

// The runner's sequential replication (3 processes, then one more while the 97.5 % comparison is
// not conclusive, up to 6; the last look at 95 %), simulated: A/A with a bimodal process effect
// (log-sd 15 %, 20 % of processes 2.5x slower) stays honest, and a real 1.6x difference whose
// baseline has slow processes (30 %) is found, mostly before the cap.
TEST(CompareProcesses, SequentialReplicationIsHonestAndFindsRealDifferences) {
    std::mt19937_64 rng(0x5E0);
    auto addProcess = [&](BlockedSamples& s, int p, double med, double slowProb) {
        double offset = std::exp(0.15 * normal01(rng));
        if (uniform01(rng) < slowProb) offset *= 2.5;
        const double blockOffset = 1 + 0.03 * normal01(rng);
        std::vector<double> block;
        for (int i = 0; i < 10; ++i) block.push_back(med * offset * blockOffset * std::exp(0.05 * normal01(rng)));
        s.blocks.push_back(block);
        s.process.push_back(p);
    };
    auto run = [&](double medA, double slowA, double slowB, int* processes) {
        BlockedSamples A, B;
        int p = 0;
        for (; p < 3; ++p) {
            addProcess(A, p, medA, slowA);
            addProcess(B, p, 1e6, slowB);
        }
        for (;; ++p) {
            CompareOptions o;
            o.resamples = 500;
            o.confidence = p >= 6 ? 0.95 : kInterimConfidence;
            const Comparison c = compare("A", A, "B", B, o);
            if (p >= 6 || conclusive(c)) {
                *processes = p;
                return c.significant;
            }
            addProcess(A, p, medA, slowA);
            addProcess(B, p, 1e6, slowB);
        }
    };
    const int experiments = 200;
    int falsePositives = 0, found = 0, procsAA = 0, procsReal = 0;
    for (int e = 0; e < experiments; ++e) {
        int n = 0;
        falsePositives += run(1e6, 0.2, 0.2, &n);
        procsAA += n;
        found += run(1.6e6, 0.3, 0.0, &n);
        procsReal += n;
    }
    std::printf("sequential replication: A/A false positives %.1f%% (mean %.1f processes), real "
                "1.6x found %.1f%% (mean %.1f processes)\n",
                100.0 * falsePositives / experiments, double(procsAA) / experiments,
                100.0 * found / experiments, double(procsReal) / experiments);
    EXPECT_LE(falsePositives, experiments * 6 / 100);
    EXPECT_GE(found, experiments * 90 / 100);
}
