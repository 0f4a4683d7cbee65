// serving::runLevel on a virtual clock with a model of known cost, checked against a simulation
// written here from the batching rule alone (a recurrence over batches, no loop, no clock), and
// serving::summarize against figures computed by hand.
#include "pitlane/serving/serve_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace pitlane::serving;

namespace {

// Time moves only when the loop sleeps or runs a batch.
class VirtualClock : public LoopClock {
public:
    std::int64_t now() override { return t; }
    void sleepUntil(std::int64_t ns) override { t = std::max(t, ns); }
    std::int64_t t = 0;
};

std::int64_t cost(int size) {  // ns: 2 ms + 0.5 ms per request
    return 2'000'000 + 500'000 * std::int64_t(size);
}

struct SimBatch {
    int size;
    std::int64_t start, end;
};
struct Sim {
    std::vector<SimBatch> batches;
    bool saturated = false;
};

// The rule, stated per batch: with the oldest unserved request i and the worker free at F, the
// batch starts at S = max(F, a_i, min(a_{i+B-1}, a_i + W)) and takes every request arrived by S,
// at most B. Saturated when S - a_i exceeds the bound.
Sim simulate(const std::vector<std::int64_t>& a, int B, std::int64_t W, std::int64_t sat) {
    Sim sim;
    std::int64_t F = 0;
    std::size_t i = 0;
    while (i < a.size()) {
        const std::int64_t full = i + std::size_t(B) - 1 < a.size()
                                      ? a[i + std::size_t(B) - 1]
                                      : std::numeric_limits<std::int64_t>::max();
        const std::int64_t S = std::max({F, a[i], std::min(full, a[i] + W)});
        if (S - a[i] > sat) {
            sim.saturated = true;
            break;
        }
        int size = 0;
        while (size < B && i + std::size_t(size) < a.size() && a[i + std::size_t(size)] <= S)
            ++size;
        sim.batches.push_back({size, S, S + cost(size)});
        F = S + cost(size);
        i += std::size_t(size);
    }
    return sim;
}

std::vector<std::int64_t> poisson(std::uint64_t seed, double rate, double seconds) {
    // Written from the documented formula, not by calling openArrivals.
    std::mt19937_64 rng(seed);
    std::vector<std::int64_t> out;
    for (double t = 0;;) {
        const double u = double(rng() >> 11) / 9007199254740992.0;
        t -= std::log(1.0 - u) / rate;
        if (t >= seconds) break;
        out.push_back(std::llround(t * 1e9));
    }
    return out;
}

LevelRecord run(const LoadSpec& spec, VirtualClock& clock) {
    return runLevel(spec, clock, [&](int size) {
        clock.t += cost(size);
        return true;
    });
}

}  // namespace

TEST(Arrivals, PoissonIsTheDocumentedSequence) {
    LoadSpec spec;
    spec.rate_per_s = 300;
    spec.duration_ms = 20000;
    spec.seed = 7;
    const auto got = openArrivals(spec);
    const auto want = poisson(7, 300, 20);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(double(got[i]), double(want[i]), 2.0);
    // 6000 expected; a Poisson count's sd is sqrt(6000) = 77.
    EXPECT_NEAR(double(got.size()), 6000.0, 4 * 77.0);
    spec.seed = 8;
    EXPECT_NE(openArrivals(spec), got);
}

// Issue 27 saw the offered rate below the asked one in every run (34.5 vs 40 req/s): the
// schedule is seeded (run.seed), so identical runs draw the same arrivals. Over many seeds the
// generator is Poisson: the count's mean and variance are rate x T (a Poisson count's variance
// equals its mean), and the gaps are exponential (Kolmogorov-Smirnov against 1 - exp(-rate t)).
// Fixed seeds: the figures are the same every run.
TEST(Arrivals, PoissonCountsAndGapsFollowTheirDistribution) {
    LoadSpec spec;
    spec.rate_per_s = 40;
    spec.duration_ms = 2000;
    const int seeds = 2000;
    const double expected = 80;
    double sum = 0, sumSq = 0;
    std::vector<double> gaps;
    for (int s = 1; s <= seeds; ++s) {
        spec.seed = std::uint64_t(s) * 0x9E3779B97F4A7C15ULL;
        const auto a = openArrivals(spec);
        sum += double(a.size());
        sumSq += double(a.size()) * double(a.size());
        // The first arrival and the next ten gaps: far from the level's end (their sum
        // exceeds 2 s with probability ~1e-26), so no gap is cut off by it (a gap that crosses
        // the end is left out, which would bias the later ones short).
        if (a.size() < 11) continue;
        gaps.push_back(double(a[0]) / 1e9);
        for (std::size_t i = 1; i <= 10; ++i) gaps.push_back(double(a[i] - a[i - 1]) / 1e9);
    }
    const double mean = sum / seeds, var = sumSq / seeds - mean * mean;
    // sd of the mean: sqrt(80 / 2000) = 0.2; 5 sd either side.
    EXPECT_NEAR(mean, expected, 1.0) << "mean arrivals per 2 s level at 40 req/s";
    // The sample variance of 2000 Poisson(80) counts: sd about 80 * sqrt(2 / 2000) = 2.5.
    EXPECT_NEAR(var, expected, 12.5);
    std::sort(gaps.begin(), gaps.end());
    double d = 0;
    for (std::size_t i = 0; i < gaps.size(); ++i) {
        const double cdf = 1 - std::exp(-spec.rate_per_s * gaps[i]);
        d = std::max({d, std::abs(cdf - double(i) / gaps.size()), std::abs(cdf - double(i + 1) / gaps.size())});
    }
    // KS critical value at alpha 0.001: 1.95 / sqrt(n) (n = 22 000 gaps: 0.013).
    EXPECT_LT(d, 1.95 / std::sqrt(double(gaps.size()))) << gaps.size() << " gaps";
}

TEST(Arrivals, ConstantRateIsEvenlySpaced) {
    LoadSpec spec;
    spec.arrival = Arrival::Constant;
    spec.rate_per_s = 250;
    spec.duration_ms = 1000;
    const auto a = openArrivals(spec);
    ASSERT_EQ(a.size(), 250u);
    EXPECT_EQ(a[0], 0);
    EXPECT_EQ(a[1], 4'000'000);
    EXPECT_EQ(a.back(), 249 * 4'000'000LL);
}

// Below capacity, at capacity's edge and above it, with and without batching: batch for batch
// the loop does what the rule says.
TEST(ServeLoop, MatchesTheIndependentSimulation) {
    for (int B : {1, 4, 8})
        for (double waitMs : {0.0, 2.0, 10.0})
            for (double rate : {50.0, 300.0, 900.0, 3000.0}) {
                LoadSpec spec;
                spec.rate_per_s = rate;
                spec.duration_ms = 3000;
                spec.seed = 11;
                spec.max_batch = B;
                spec.max_wait_ms = waitMs;
                spec.saturation_ms = 500;
                VirtualClock clock;
                const auto rec = run(spec, clock);
                const auto sim = simulate(openArrivals(spec), B, std::int64_t(waitMs * 1e6),
                                          std::int64_t(500e6));
                SCOPED_TRACE("B " + std::to_string(B) + " wait " + std::to_string(waitMs) +
                             " rate " + std::to_string(rate));
                ASSERT_EQ(rec.batches.size(), sim.batches.size());
                for (std::size_t k = 0; k < sim.batches.size(); ++k) {
                    ASSERT_EQ(rec.batches[k].size, sim.batches[k].size) << "batch " << k;
                    ASSERT_EQ(rec.batches[k].start_ns, sim.batches[k].start) << "batch " << k;
                    ASSERT_EQ(rec.batches[k].end_ns, sim.batches[k].end) << "batch " << k;
                }
                EXPECT_EQ(rec.saturated, sim.saturated);
            }
}

// Capacity with B = 1: one request per 2.5 ms, 400/s. With B = 8: 8 per 6 ms, 1333/s.
TEST(ServeLoop, SaturationIsFlaggedAboveCapacityOnly) {
    LoadSpec spec;
    spec.duration_ms = 5000;
    spec.saturation_ms = 1000;
    spec.rate_per_s = 600;
    spec.max_batch = 1;
    VirtualClock c1;
    const auto over = run(spec, c1);
    EXPECT_TRUE(over.saturated);
    EXPECT_LT(c1.t, 5'000'000'000LL) << "a saturated level stops early";
    spec.max_batch = 8;
    spec.max_wait_ms = 5;
    VirtualClock c2;
    const auto batched = run(spec, c2);
    EXPECT_FALSE(batched.saturated);
    EXPECT_EQ(batched.served(), std::int64_t(batched.arrival_ns.size()));
    const auto s = summarize(batched, spec, 50);
    EXPECT_GT(s.mean_batch, 1.5);
    EXPECT_NEAR(s.achieved_per_s, 600, 60);
    EXPECT_LT(s.p99_ms, 50);
    EXPECT_EQ(s.slo_miss_share, 0);
}

// N closed-loop clients and B >= N: after the first batch every batch holds all N requests.
TEST(ServeLoop, ClosedLoopClientsBatchTogether) {
    LoadSpec spec;
    spec.arrival = Arrival::Closed;
    spec.clients = 4;
    spec.max_batch = 8;
    spec.max_wait_ms = 1;
    spec.duration_ms = 1000;
    VirtualClock clock;
    const auto rec = run(spec, clock);
    ASSERT_GT(rec.batches.size(), 10u);
    for (const auto& b : rec.batches) EXPECT_EQ(b.size, 4);
    // The clients send again the moment their batch returns; 4 < max_batch, so the batcher holds
    // them max_wait (1 ms) for more that never come.
    for (std::size_t k = 1; k < rec.batches.size(); ++k)
        EXPECT_EQ(rec.batches[k].start_ns, rec.batches[k - 1].end_ns + 1'000'000);
    const auto s = summarize(rec, spec, 0);
    EXPECT_NEAR(s.formation_wait_ms, 1.0, 1e-9);
    EXPECT_NEAR(s.p50_ms, 1.0 + cost(4) / 1e6, 1e-9);
    EXPECT_EQ(s.slo_miss_share, -1);
    EXPECT_EQ(rec.served(), std::int64_t(rec.arrival_ns.size()));
}

// Three requests by hand: arrivals 0, 1, 9 ms; B = 2, W = 4 ms; cost(2) = 3 ms, cost(1) = 2.5 ms.
// Batch 1 = {0, 1} starts at 1 (full), ends 4. Request 9 waits alone until 13 (W), ends 15.5.
TEST(ServeSummary, ByHand) {
    LevelRecord rec;
    rec.arrival_ns = {0, 1'000'000, 9'000'000};
    rec.scheduled = 3;
    rec.batches = {{2, 0, 1'000'000, 4'000'000}, {1, 4'000'000, 13'000'000, 15'500'000}};
    LoadSpec spec;
    spec.duration_ms = 10;
    const auto t = requestTimes(rec);
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0].end_to_end, 4'000'000);
    EXPECT_EQ(t[0].formation_wait, 1'000'000);
    EXPECT_EQ(t[0].queue_wait, 0);
    EXPECT_EQ(t[2].end_to_end, 6'500'000);
    EXPECT_EQ(t[2].formation_wait, 4'000'000);
    EXPECT_EQ(t[2].inference, 2'500'000);
    const auto s = summarize(rec, spec, 5.0);
    EXPECT_DOUBLE_EQ(s.p50_ms, 4.0);                   // {3, 4, 6.5}
    EXPECT_NEAR(s.p99_ms, 4.0 + 0.98 * 2.5, 1e-9);     // type 7: between 4 and 6.5
    EXPECT_NEAR(s.mean_ms, 13.5 / 3, 1e-9);
    EXPECT_DOUBLE_EQ(s.mean_batch, 1.5);
    EXPECT_EQ(s.batch_histogram, (std::vector<std::int64_t>{0, 1, 1}));
    EXPECT_NEAR(s.slo_miss_share, 1.0 / 3, 1e-12);
    EXPECT_NEAR(s.offered_per_s, 300.0, 1e-9);          // 3 in 10 ms
    EXPECT_NEAR(s.achieved_per_s, 3 / 0.0155, 1e-6);    // wall: the last batch ends at 15.5 ms
}
