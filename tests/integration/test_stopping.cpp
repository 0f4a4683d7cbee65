// Adaptive and timed stopping (DESIGN.md "Stopping") with the real worker on the mlp.
#include "harness.h"

#include "pitlane/stats/stats.h"

#include <gtest/gtest.h>

using namespace pitlane;
using itest::json;

namespace {
const json kArms = json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                                {{"name", "B"}, {"knobs", {{"intra_op_threads", 1}, {"grad", "inference_mode"}}}}});
}

// A loose target is met: the run stops as soon as every median's CI is within it, and the
// reported half-widths are the ones recomputed from the stored samples.
TEST(Stopping, StopsWhenEveryMedianIsWithinTheTarget) {
    const auto preset = itest::mlpPreset(
        kArms, {{"warmup_iters", 10}, {"iters", 60}, {"block_iters", 20}, {"target_ci_pct", 25},
                {"max_time_ms", 20000}});
    const auto r = itest::runPreset(preset);
    ASSERT_TRUE(r.allOk());
    ASSERT_TRUE(r.stopping.is_object());
    EXPECT_TRUE(r.stopping.value("stable", false)) << r.stopping.dump();
    for (const auto& a : r.arms) {
        EXPECT_GE(a.samples.size(), 60u);
        EXPECT_EQ(a.samples.size() % 20, 0u);  // whole rounds of blocks
        const auto ci = stats::medianCi(a.blocked());
        EXPECT_LE(ci.half_width_pct, 25.0);
        EXPECT_NEAR(r.stopping["arms"][a.name]["half_width_pct"].get<double>(), ci.half_width_pct, 1e-9);
    }
}

// An unreachable target ends at the time cap and the run says it is not stable.
TEST(Stopping, TimeCapEndsAnUnreachableTargetAsNotStable) {
    const auto preset = itest::mlpPreset(
        kArms, {{"warmup_iters", 5}, {"iters", 20}, {"block_iters", 20}, {"target_ci_pct", 0.1},
                {"max_time_ms", 1500}});
    const auto r = itest::runPreset(preset);
    ASSERT_TRUE(r.allOk());
    EXPECT_FALSE(r.stopping.value("stable", true)) << r.stopping.dump();
    EXPECT_GE(r.stopping.value("measured_ms", 0.0), 1500.0);
    EXPECT_GT(r.arms[0].samples.size(), 20u);  // more rounds than the minimum were added
    const auto warnings = results::runWarnings(r);
    bool said = false;
    for (const auto& w : warnings) said |= w.find("not stable") != std::string::npos;
    EXPECT_TRUE(said);
    EXPECT_EQ(results::toResultsJson(r)["stopping"]["stable"], false);
}

// Timed mode: no target, run for max_time_ms.
TEST(Stopping, TimedRunLastsAtLeastTheCap) {
    const auto preset = itest::mlpPreset(
        kArms, {{"warmup_iters", 5}, {"iters", 20}, {"block_iters", 20}, {"max_time_ms", 1000}});
    const auto r = itest::runPreset(preset);
    ASSERT_TRUE(r.allOk());
    EXPECT_TRUE(r.stopping.value("stable", false));
    EXPECT_GE(r.stopping.value("measured_ms", 0.0), 1000.0);
}

TEST(Stopping, SweepWithAdaptiveStoppingIsRejected) {
    const json arms = json::array({{{"name", "A"}, {"knobs", {{"batch_size", {1, 2}}}}}});
    try {
        itest::mlpPreset(arms, {{"iters", 20}, {"target_ci_pct", 1}});
        FAIL() << "expected a SpecError";
    } catch (const spec::SpecError& e) {
        EXPECT_EQ(e.field(), "arms[0].knobs.batch_size");
    }
    try {
        itest::mlpPreset(kArms, {{"iters", 20}, {"target_ci_pct", 0}});
        FAIL() << "expected a SpecError";
    } catch (const spec::SpecError& e) {
        EXPECT_EQ(e.field(), "run.target_ci_pct");
    }
    try {
        itest::mlpPreset(kArms, {{"iters", 20}, {"min_time_ms", 500}, {"max_time_ms", 100}});
        FAIL() << "expected a SpecError";
    } catch (const spec::SpecError& e) {
        EXPECT_EQ(e.field(), "run.max_time_ms");
    }
}
