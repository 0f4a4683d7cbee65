// Knobs that shape a whole arm rather than one forward — a batch-size sweep, input shapes that
// vary per iteration, K concurrent workers — run through the real ExperimentRunner and checked in
// the results JSON (CONTRACT.md) and in the effect on the measured latencies.
#include "knob_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace {

using namespace pitlane::knobtest;
using pitlane::itest::allowedCores;
using pitlane::itest::runPreset;
namespace R = pitlane::results;

std::string why(const R::ArmResult& a) { return a.error ? a.error->code + ": " + a.error->message : ""; }

TEST(KnobRunner, BatchSizeSweepGivesOnePointPerSizeAndLatencyGrowsWithBatch) {
    const json run = {{"warmup_iters", 3}, {"iters", 20}, {"block_iters", 10}};
    const auto preset = knobPreset(
        "mlp", json::array({arm("sweep", {{"batch_size", {1, 64}}, {"intra_op_threads", 1}})}), run);
    const auto result = runPreset(preset);
    ASSERT_EQ(result.arms.size(), 1u);
    const auto& a = result.arms[0];
    ASSERT_EQ(a.status, R::kOk) << why(a);
    EXPECT_EQ(a.applied["batch_size"], json::array({1, 64}));

    // Every sample says which size it measured: 20 per size.
    std::map<int, int> perSize;
    for (const auto& s : a.samples) ++perSize[s.batch_size];
    EXPECT_EQ(perSize, (std::map<int, int>{{1, 20}, {64, 20}}));

    const json j = R::toResultsJson(result)["arms"][0];
    ASSERT_TRUE(j.contains("sweep")) << j.dump().substr(0, 2000);
    ASSERT_EQ(j["sweep"].size(), 2u);
    EXPECT_EQ(j["sweep"][0]["batch_size"], 1);
    EXPECT_EQ(j["sweep"][1]["batch_size"], 64);
    for (const auto& point : j["sweep"]) {
        EXPECT_EQ(point["status"], "ok");
        EXPECT_EQ(point["summary"]["n"], 20);
    }
    EXPECT_EQ(j["sample_batch_size"].size(), a.samples.size());
    // The top-level summary is the first size's.
    EXPECT_EQ(j["summary"]["n"], 20);
    EXPECT_EQ(j["summary"]["median_ns"], j["sweep"][0]["summary"]["median_ns"]);
    // 64 rows cost more than one (the effect, not just the label).
    const double m1 = j["sweep"][0]["summary"]["median_ns"], m64 = j["sweep"][1]["summary"]["median_ns"];
    EXPECT_GT(m64, 1.5 * m1) << "median latency at batch 1: " << m1 << " ns, at 64: " << m64;
}

// Two sequence lengths, alternating: the short one runs at even iterations of every block, the
// long one at odd ones, and the latencies show it.
TEST(KnobRunner, VaryingInputShapesAlternatePerIteration) {
    const json input = json::array({{{"shapes", {{8, 64}, {64, 64}}}, {"dtype", "float32"}}});
    const json run = {{"warmup_iters", 4}, {"iters", 40}, {"block_iters", 20}};
    const auto preset = knobPreset(
        "lstm", json::array({arm("dynamic", {{"intra_op_threads", 1}, {"grad", "no_grad"}})}), run,
        input);
    const auto result = runPreset(preset);
    ASSERT_EQ(result.arms.size(), 1u);
    const auto& a = result.arms[0];
    ASSERT_EQ(a.status, R::kOk) << why(a);
    EXPECT_EQ(a.applied["input_variants"], 2);
    EXPECT_EQ(a.applied["input_shapes"], json::array({{1, 8, 64}}));  // the first variant's
    ASSERT_EQ(a.samples.size(), 40u);

    // Iteration i of a block uses shape i % 2: split by parity within the block.
    std::vector<double> shortSeq, longSeq;
    std::map<int, int> indexInBlock;
    int shorterPairs = 0, pairs = 0;
    double previous = 0;
    for (const auto& s : a.samples) {
        const int i = indexInBlock[s.block]++;
        (i % 2 == 0 ? shortSeq : longSeq).push_back(double(s.latency_ns));
        if (i % 2 == 1) {
            ++pairs;
            if (previous < double(s.latency_ns)) ++shorterPairs;
        }
        previous = double(s.latency_ns);
    }
    const double mShort = median(shortSeq), mLong = median(longSeq);
    EXPECT_GT(mLong, 2.0 * mShort) << "median at seq 8: " << mShort << " ns, at seq 64: " << mLong;
    // Most (short, long) neighbours are ordered that way: the shapes alternate, not just differ.
    EXPECT_GE(shorterPairs, pairs * 3 / 4) << shorterPairs << " of " << pairs;
}

TEST(KnobRunner, TwoCompactWorkersRunConcurrentlyOnDisjointCores) {
    const json run = {{"warmup_iters", 2}, {"iters", 20}, {"block_iters", 10}};
    const auto preset = knobPreset(
        "mlp",
        json::array({arm("pair", {{"workers", 2}, {"affinity", "compact"}, {"intra_op_threads", 1}})}),
        run);
    const auto result = runPreset(preset);
    ASSERT_EQ(result.arms.size(), 1u);
    const auto& a = result.arms[0];
    ASSERT_EQ(a.status, R::kOk) << why(a);
    const json j = R::toResultsJson(result)["arms"][0];
    ASSERT_TRUE(j.contains("workers")) << j.dump().substr(0, 2000);
    ASSERT_EQ(j["workers"].size(), 2u);
    std::set<long> pids;
    std::vector<std::vector<int>> masks;
    double sum = 0;
    for (int w = 0; w < 2; ++w) {
        const auto& wj = j["workers"][w];
        EXPECT_EQ(wj["summary"]["n"], 20) << "each worker measures every iteration of the arm";
        EXPECT_GT(wj["summary"]["throughput_per_s"].get<double>(), 0);
        sum += wj["summary"]["throughput_per_s"].get<double>();
        ASSERT_TRUE(wj.contains("applied"));
        EXPECT_EQ(wj["applied"]["worker_index"], w);
        EXPECT_EQ(wj["applied"]["worker_count"], 2);
        EXPECT_EQ(wj["applied"]["affinity_policy"], "compact");
        masks.push_back(wj["applied"]["affinity"].get<std::vector<int>>());
        pids.insert(wj.value("pid", 0L));
    }
    EXPECT_EQ(pids.size(), 2u) << "two processes";
    EXPECT_GT(j["aggregate_throughput_per_s"].get<double>(), 0);
    EXPECT_NEAR(j["aggregate_throughput_per_s"].get<double>(), sum, 1e-6 * sum);
    EXPECT_EQ(a.samples.size(), 40u);
    if (allowedCores().size() < 2) GTEST_SKIP() << "one allowed core: the workers must share it";
    // compact with 1 thread each: one core per worker, not the same one.
    ASSERT_EQ(masks[0].size(), 1u);
    ASSERT_EQ(masks[1].size(), 1u);
    EXPECT_NE(masks[0], masks[1]);
}

}  // namespace
