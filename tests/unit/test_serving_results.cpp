// A serving run's figures against values computed here by hand: points pooled over processes
// and workers, the backlog rule for saturation, the capacity within the SLO and the search's
// next rate, the bootstrap CI of a p99 ratio (its point value, its coverage of a known ratio and
// of 1 for identical arms), the serving block's validation, and the JSON round trip.
#include "pitlane/results/run_result.h"
#include "pitlane/results/serving_result.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace pitlane;
using json = nlohmann::json;

namespace {

// Type-7 percentile, written here independently of stats::percentile.
double type7(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double h = (double(v.size()) - 1) * q / 100.0;
    const auto lo = std::size_t(std::floor(h));
    const auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (h - double(lo)) * (v[hi] - v[lo]);
}

// A level served in batches of one, each taking `serviceMs`, from the given arrivals (ms).
results::ServingLevel levelOf(int process, double rate, const std::vector<double>& arrivalsMs,
                              double serviceMs, double durationMs) {
    results::ServingLevel l;
    l.process = process;
    l.rate_per_s = rate;
    l.load.rate_per_s = rate;
    l.load.duration_ms = durationMs;
    l.complete = true;
    std::int64_t free = 0;
    for (double a : arrivalsMs) {
        const auto arr = std::int64_t(a * 1e6);
        l.record.arrival_ns.push_back(arr);
        serving::BatchRecord b;
        b.size = 1;
        b.free_ns = free;
        b.start_ns = std::max(arr, free);
        b.end_ns = b.start_ns + std::int64_t(serviceMs * 1e6);
        free = b.end_ns;
        l.record.batches.push_back(b);
    }
    l.record.scheduled = std::int64_t(arrivalsMs.size());
    return l;
}

results::RunResult runWith(double slo) {
    results::RunResult run;
    run.preset.serving.enabled = true;
    run.preset.serving.rates = {10, 100};
    run.preset.serving.slo_p99_ms = slo;
    run.arms.resize(2);
    run.arms[0].name = "A";
    run.arms[1].name = "B";
    for (auto& a : run.arms) a.status = results::kOk;
    return run;
}

}  // namespace

TEST(ServingResults, PointsPoolEveryProcessAndMatchAHandComputation) {
    auto run = runWith(5);
    // Process 0: arrivals every 10 ms, 2 ms service: each request takes 2 ms end to end.
    // Process 1: the same plus one request arriving while another is served (waits 1 ms).
    std::vector<double> a0, a1;
    for (int k = 0; k < 10; ++k) a0.push_back(10.0 * k);
    a1 = a0;
    a1.push_back(91.0);  // served 92..94 after the one at 90: end to end 3 ms
    run.arms[0].serving.push_back(levelOf(0, 10, a0, 2, 1000));
    run.arms[0].serving.push_back(levelOf(1, 10, a1, 2, 1000));
    const auto points = results::servingPoints(run, 0);
    ASSERT_EQ(points.size(), 1u);
    const auto& p = points[0];
    std::vector<double> e2e(20, 2.0);
    e2e.push_back(3.0);
    EXPECT_EQ(p.pooled.served, 21);
    EXPECT_NEAR(p.pooled.p50_ms, type7(e2e, 50), 1e-9);
    EXPECT_NEAR(p.pooled.p99_ms, type7(e2e, 99), 1e-9);
    EXPECT_NEAR(p.pooled.offered_per_s, (10 + 11) / 2.0, 1e-9) << "processes are repeats: their mean";
    ASSERT_EQ(p.processes.size(), 2u);
    EXPECT_NEAR(p.processes[1].max_ms, 3.0, 1e-9);
    EXPECT_EQ(p.meeting_slo, 2);
    EXPECT_TRUE(p.meetsSlo());
    EXPECT_FALSE(p.pooled.saturated);
}

TEST(ServingResults, ABacklogGrowingWithTheDurationIsSaturated) {
    auto run = runWith(0);
    // 200 req/s for 1 s into a 10 ms server (100/s): by the end ~100 of 200 are still queued.
    std::vector<double> arr;
    for (int k = 0; k < 200; ++k) arr.push_back(5.0 * k);
    run.arms[0].serving.push_back(levelOf(0, 200, arr, 10, 1000));
    const auto p = results::servingPoints(run, 0).at(0);
    EXPECT_TRUE(p.pooled.saturated);
    EXPECT_NEAR(double(p.pooled.backlog_at_end), 100, 2);
    EXPECT_FALSE(p.pooled.stopped_early);
    // The allowance: max(5 % of what arrived, 3 x max_batch + 5).
    EXPECT_FALSE(serving::isSaturatedBacklog(10, 200, 1));
    EXPECT_TRUE(serving::isSaturatedBacklog(11, 200, 1));
    EXPECT_FALSE(serving::isSaturatedBacklog(29, 200, 8));
    EXPECT_TRUE(serving::isSaturatedBacklog(51, 1000, 1));
}

TEST(ServingResults, CapacityAndSearchFollowTheBracket) {
    auto mk = [](double rate, double p99, bool saturated) {
        results::ServingPoint p;
        p.rate_per_s = rate;
        p.pooled.slo_ms = 10;
        p.pooled.served = 100;
        p.pooled.p99_ms = p99;
        p.pooled.saturated = saturated;
        return p;
    };
    // Met at 100 and 200, missed at 400: capacity 200, next 300.
    std::vector<results::ServingPoint> pts = {mk(100, 3, false), mk(200, 8, false), mk(400, 50, true)};
    auto c = results::sloCapacity(pts);
    EXPECT_EQ(c.max_rate_per_s, 200);
    EXPECT_EQ(c.first_failing_per_s, 400);
    EXPECT_EQ(results::nextSearchRate(pts), 300);
    // Every rate met: double the highest. None met: half the lowest.
    EXPECT_EQ(results::nextSearchRate({mk(100, 3, false), mk(200, 8, false)}), 400);
    EXPECT_EQ(results::nextSearchRate({mk(100, 30, false), mk(200, 80, false)}), 50);
    EXPECT_EQ(results::sloCapacity({mk(100, 30, false)}).max_rate_per_s, 0);
    // A rate met above one missed does not count: capacity is below the first miss.
    c = results::sloCapacity({mk(100, 3, false), mk(200, 30, false), mk(300, 5, false)});
    EXPECT_EQ(c.max_rate_per_s, 100);
    EXPECT_EQ(c.first_failing_per_s, 200);
    // A bracket within 2 %: converged.
    EXPECT_EQ(results::nextSearchRate({mk(100, 3, false), mk(101, 30, false)}), 0);
    // Rounded to three significant digits.
    EXPECT_EQ(results::nextSearchRate({mk(100, 3, false), mk(133, 30, false)}), 117);
}

TEST(ServingResults, RatioCiHasTheHandRatioAndCoversTheTruth) {
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> lat(0.0, 0.5);
    // Autocorrelated latencies (AR(1) in the log), as a queue makes them.
    auto process = [&](double scale, std::size_t n) {
        std::vector<double> v;
        double x = 0;
        std::normal_distribution<double> z(0, 1);
        for (std::size_t i = 0; i < n; ++i) {
            x = 0.8 * x + 0.6 * z(rng);
            v.push_back(scale * std::exp(0.5 * x));
        }
        return v;
    };
    using Arm = std::vector<std::vector<std::vector<double>>>;
    auto arm = [&](double scale) {
        Arm a;
        for (int p = 0; p < 3; ++p) a.push_back({process(scale, 600)});
        return a;
    };
    const Arm a = arm(1.0), b = arm(2.0);
    std::vector<double> pa, pb;
    for (const auto& p : a) pa.insert(pa.end(), p[0].begin(), p[0].end());
    for (const auto& p : b) pb.insert(pb.end(), p[0].begin(), p[0].end());
    const auto ci = results::percentileRatioCi(a, b, 99, 400, 1);
    EXPECT_NEAR(ci.ratio, type7(pb, 99) / type7(pa, 99), 1e-12);
    EXPECT_LT(ci.lo, ci.ratio);
    EXPECT_GT(ci.hi, ci.ratio);
    EXPECT_GT(ci.lo, 1.0) << "a 2x difference is found";
    // Identical arms: the CI covers 1 in most of 100 independent A/A pairs.
    int covers = 0, total = 100;
    for (int t = 0; t < total; ++t) {
        const auto c = results::percentileRatioCi(arm(1.0), arm(1.0), 99, 200, std::uint64_t(t) + 10);
        covers += c.lo <= 1.0 && c.hi >= 1.0;
    }
    EXPECT_GE(covers, 88) << "A/A pairs whose 95 % CI covered 1";
}

TEST(ServingResults, ServingBlockValidationNamesEachField) {
    std::vector<spec::SpecError> errors;
    spec::parseServing({{"arrival", "poisson"}, {"rates", {100, 50}}, {"duration_ms", 10},
                        {"idle_wait", "nap"}, {"bogus", 1}},
                       "p.json", errors);
    std::vector<std::string> fields;
    for (const auto& e : errors) fields.push_back(e.field());
    std::sort(fields.begin(), fields.end());
    EXPECT_EQ(fields, (std::vector<std::string>{"serving.bogus", "serving.duration_ms", "serving.idle_wait",
                                                "serving.rates[1]"}));
    errors.clear();
    const auto s = spec::parseServing({{"arrival", "closed"}, {"clients", {1, 4}}, {"slo_p99_ms", 20}},
                                      "p.json", errors);
    EXPECT_TRUE(errors.empty());
    EXPECT_EQ(s.levels(), 2u);
    EXPECT_FALSE(s.search()) << "the search varies a rate: not in a closed loop";
    std::vector<spec::SpecError> again;
    const auto back = spec::parseServing(spec::servingToJson(s), "p.json", again);
    EXPECT_TRUE(again.empty());
    EXPECT_EQ(back.clients, s.clients);
    EXPECT_EQ(back.slo_p99_ms, 20);
}

TEST(ServingResults, ComparisonSaysWhichArmSaturated) {
    auto run = runWith(0);
    std::vector<double> arr;
    for (int k = 0; k < 200; ++k) arr.push_back(5.0 * k);
    run.arms[0].serving.push_back(levelOf(0, 100, arr, 10, 1000));  // saturated
    run.arms[1].serving.push_back(levelOf(0, 100, arr, 1, 1000));   // keeps up
    const auto comps = results::compareServing(run);
    ASSERT_EQ(comps.size(), 1u);
    EXPECT_TRUE(comps[0].significant);
    EXPECT_TRUE(comps[0].baseline_saturated);
    EXPECT_FALSE(comps[0].arm_saturated);
    EXPECT_NE(comps[0].text.find("A saturated"), std::string::npos) << comps[0].text;
}
