// Lesson checks (spec/lesson.h validation, results/lesson.h judgement) on synthetic runs whose
// truth is known: a 2x difference must be reproduced, a claim of 2x on equal arms must not, and
// a handful of noisy samples must be inconclusive.
#include "pitlane/results/lesson.h"
#include "pitlane/spec/lesson.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace R = pitlane::results;
namespace S = pitlane::spec;
using R::json;

namespace {

// An arm measured in `processes` processes x `blocks` blocks x `n` samples, log-normal around
// `median_ns` with sigma `noise`.
R::ArmResult arm(const std::string& name, double median_ns, double noise, unsigned seed,
                 int processes = 3, int blocks = 4, int n = 10) {
    R::ArmResult a;
    a.name = name;
    a.status = R::kOk;
    std::mt19937 rng(seed);
    std::normal_distribution<double> z(0, noise);
    int block = 0;
    for (int p = 0; p < processes; ++p) {
        a.processes.push_back({p, 0, 100 + p, 10, 5, 0, 0, 0});
        for (int b = 0; b < blocks; ++b, ++block)
            for (int i = 0; i < n; ++i)
                a.samples.push_back({block, int(a.samples.size()), 1, 0,
                                     std::int64_t(median_ns * std::exp(z(rng))), p});
    }
    return a;
}

R::RunResult run(std::vector<R::ArmResult> arms, const json& checks) {
    R::RunResult r;
    r.arms = std::move(arms);
    r.preset.lesson = {{"title", "t"}, {"checks", checks}};
    return r;
}

}  // namespace

TEST(Lesson, FasterByTheClaimedRatioIsReproduced) {
    const auto r = run({arm("slow", 2e6, 0.05, 1), arm("fast", 1e6, 0.05, 2)},
                       json::array({{{"kind", "faster"}, {"arm", "fast"}, {"than", "slow"}, {"min_ratio", 1.5}}}));
    const auto rep = R::checkLesson(r);
    ASSERT_EQ(rep.checks.size(), 1u);
    EXPECT_EQ(rep.checks[0].status, R::kReproduced) << rep.checks[0].measured;
    EXPECT_NEAR(rep.checks[0].value, 2.0, 0.1);
    EXPECT_LT(rep.checks[0].ci_low, rep.checks[0].value);
    EXPECT_EQ(rep.status, R::kReproduced);
    EXPECT_EQ(rep.checks[0].expected, "fast is faster than slow by at least 1.50x");
}

TEST(Lesson, AClaimThatEqualArmsDifferIsNotReproduced) {
    const auto r = run({arm("a", 1e6, 0.03, 3), arm("b", 1e6, 0.03, 4)},
                       json::array({{{"kind", "faster"}, {"arm", "b"}, {"than", "a"}, {"min_ratio", 2}},
                                    {{"kind", "similar"}, {"arm", "b"}, {"than", "a"}}}));
    const auto rep = R::checkLesson(r);
    EXPECT_EQ(rep.checks[0].status, R::kNotReproduced) << rep.checks[0].measured;
    EXPECT_EQ(rep.checks[1].status, R::kReproduced) << rep.checks[1].measured;
    EXPECT_EQ(rep.status, R::kNotReproduced);
}

TEST(Lesson, TheWrongDirectionIsNotReproduced) {
    const auto r = run({arm("a", 1e6, 0.05, 5), arm("b", 2e6, 0.05, 6)},
                       json::array({{{"kind", "faster"}, {"arm", "b"}, {"than", "a"}}}));
    EXPECT_EQ(R::checkLesson(r).checks[0].status, R::kNotReproduced);
}

TEST(Lesson, FewNoisySamplesAreInconclusive) {
    // Two processes of two samples each, 60 % noise, a true 1.3x: the CI cannot tell.
    const auto r = run({arm("a", 1.3e6, 0.6, 7, 2, 1, 2), arm("b", 1e6, 0.6, 8, 2, 1, 2)},
                       json::array({{{"kind", "faster"}, {"arm", "b"}, {"than", "a"}, {"min_ratio", 1.2}}}));
    const auto rep = R::checkLesson(r);
    EXPECT_EQ(rep.checks[0].status, R::kInconclusive) << rep.checks[0].measured;
    EXPECT_EQ(rep.status, R::kInconclusive);
}

TEST(Lesson, MetricsAppliedFieldsAndSweeps) {
    auto a = arm("a", 1e6, 0.05, 9), b = arm("b", 1e6, 0.05, 10);
    a.peak_rss_bytes = 300 << 20;
    b.peak_rss_bytes = 100 << 20;
    b.applied.grad_state = pitlane::protocol::GradState{};
    b.applied.grad_state->output_is_inference = true;
    // b also swept batch 8: 8 items per 2 ms is 4x the items/s of batch 1 at 1 ms.
    for (int i = 0; i < 20; ++i) b.samples.push_back({0, 0, 8, 0, 2000000, 0});
    const auto r = run({a, b}, json::array({
        {{"kind", "lower"}, {"metric", "peak_rss_bytes"}, {"arm", "b"}, {"than", "a"}, {"min_ratio", 2}},
        {{"kind", "higher"}, {"metric", "peak_rss_bytes"}, {"arm", "b"}, {"than", "a"}},
        {{"kind", "applied"}, {"arm", "b"}, {"field", "grad_state.output_is_inference"}, {"equals", true}},
        {{"kind", "applied"}, {"arm", "a"}, {"field", "grad_state.output_is_inference"}, {"equals", true}},
        {{"kind", "throughput_grows"}, {"arm", "b"}, {"from", 1}, {"to", 8}, {"min_ratio", 3}},
        {{"kind", "lower"}, {"metric", "tensor_peak_bytes"}, {"arm", "b"}, {"than", "a"}}}));
    const auto rep = R::checkLesson(r);
    EXPECT_EQ(rep.checks[0].status, R::kReproduced) << rep.checks[0].measured;
    EXPECT_DOUBLE_EQ(rep.checks[0].value, 3.0);
    EXPECT_EQ(rep.checks[1].status, R::kNotReproduced);
    EXPECT_EQ(rep.checks[2].status, R::kReproduced);
    EXPECT_EQ(rep.checks[3].status, R::kNotReproduced);
    EXPECT_NE(rep.checks[3].measured.find("(absent)"), std::string::npos);
    EXPECT_EQ(rep.checks[4].status, R::kReproduced) << rep.checks[4].measured;
    // Items/s = items / total time, computed here from the samples themselves.
    double sum1 = 0, n1 = 0;
    for (const auto& x : b.samples)
        if (x.batch_size == 1) sum1 += double(x.latency_ns), n1 += 1;
    EXPECT_NEAR(rep.checks[4].value, (8.0 / 2e6) / (n1 / sum1), 1e-9);
    EXPECT_EQ(rep.checks[5].status, R::kNotRun);  // no tensor counting in this run
    EXPECT_EQ(R::toJson(rep)["checks"].size(), 6u);
}

TEST(Lesson, AFailedArmIsNotRunAndSaysWhy) {
    auto a = arm("cpu", 1e6, 0.05, 11);
    R::ArmResult g;
    g.name = "gpu";
    g.status = R::kFailed;
    g.error = pitlane::protocol::Error{"device_unavailable", "no CUDA", {}};
    auto r = run({a, g}, json::array({{{"kind", "faster"}, {"arm", "gpu"}, {"than", "cpu"}}}));
    r.preset.lesson["needs"] = "cuda";
    const auto rep = R::checkLesson(r);
    EXPECT_EQ(rep.status, R::kNotRun);
    EXPECT_NE(rep.checks[0].measured.find("needs a CUDA device"), std::string::npos);
    EXPECT_NE(rep.checks[0].measured.find("device_unavailable"), std::string::npos);
}

TEST(Lesson, ValidationNamesTheCheckAndTheField) {
    std::vector<S::ArmSpec> arms(2);
    arms[0].name = "A";
    arms[1].name = "B";
    const auto error = [&](const json& checks) {
        try {
            S::validateLesson({{"title", "t"}, {"checks", checks}}, arms, "p.json");
        } catch (const S::SpecError& e) {
            return e.field() + ": " + e.reason();
        }
        return std::string("accepted");
    };
    EXPECT_EQ(error(json::array({{{"kind", "faster"}, {"arm", "B"}, {"than", "A"}}})), "accepted");
    EXPECT_EQ(error(json::array({{{"kind", "quicker"}, {"arm", "B"}}})).substr(0, 23),
              "lesson.checks[0].kind: ");
    EXPECT_EQ(error(json::array({json::object(), {{"kind", "faster"}, {"arm", "C"}, {"than", "A"}}})).substr(0, 16),
              "lesson.checks[0]");
    EXPECT_EQ(error(json::array({{{"kind", "faster"}, {"arm", "C"}, {"than", "A"}}})),
              "lesson.checks[0].arm: no arm is called \"C\" (arms: A, B)");
    EXPECT_EQ(error(json::array({{{"kind", "faster"}, {"arm", "B"}, {"than", "A"}, {"min_ratio", 0.5}}})),
              "lesson.checks[0].min_ratio: expected a ratio >= 1, got 0.5");
    EXPECT_EQ(error(json::array({{{"kind", "lower"}, {"arm", "B"}, {"than", "A"}, {"metric", "speed"}}})).substr(0, 31),
              "lesson.checks[0].metric: unknow");
    EXPECT_EQ(error(json::array({{{"kind", "applied"}, {"arm", "B"}, {"field", "grad"}}})),
              "lesson.checks[0].equals: missing: the value expected");
}
