// The worker's metrics against known loads: a model that allocates exactly 4 MiB per forward
// (tensor bytes), a busy loop pinned to one core (per-core utilization, migrations), and the
// counters and manifest every metrics / hello event must carry.
#include "knob_harness.h"

#include "pitlane/protocol/events.h"
#include "pitlane/protocol/protocol.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>

namespace {

using namespace pitlane::knobtest;
using pitlane::itest::allowedCores;
using pitlane::itest::spinUntil;

constexpr std::int64_t kMiB = 1024 * 1024;

// Index of "cpuN" among the per-core lines of /proc/stat: the worker's core_util_pct has one
// entry per such line, in that order.
int procStatIndex(int cpu) {
    std::ifstream f("/proc/stat");
    std::string line;
    int index = 0;
    while (std::getline(f, line)) {
        if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !isdigit(line[3])) continue;
        if (std::stoi(line.substr(3)) == cpu) return index;
        ++index;
    }
    return -1;
}

// Events of `type` with index in [from, to) of the worker's stream.
std::vector<json> between(const WorkerDriver& w, const std::string& type, std::size_t from,
                          std::size_t to) {
    std::vector<json> out;
    const auto& evs = w.events();
    for (std::size_t i = from; i < std::min(to, evs.size()); ++i)
        if (evs[i].value("type", "") == type) out.push_back(evs[i]);
    return out;
}

std::size_t indexOf(const WorkerDriver& w, const json& ev) {
    const auto& evs = w.events();
    return std::size_t(std::find(evs.begin(), evs.end(), ev) - evs.begin());
}

// Runs a block of `timeMs` and waits for the metrics tick the worker sends after it. Returns
// [index of the run's first event, index of that tick] in the worker's stream.
std::pair<std::size_t, std::size_t> measuredSpan(WorkerDriver& w, double timeMs) {
    const auto from = w.events().size();
    const json done = runForMs(w, 0, timeMs);
    EXPECT_EQ(done.value("type", ""), "block_done") << done.dump();
    const auto doneAt = indexOf(w, done);
    spinUntil([&] { return !between(w, "metrics", doneAt, w.events().size()).empty(); }, 5000);
    const auto after = between(w, "metrics", doneAt, w.events().size());
    return {from, after.empty() ? w.events().size() : indexOf(w, after.front()) + 1};
}

class KnobMetrics : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        const auto cores = allowedCores();
        const int pinCore = std::find(cores.begin(), cores.end(), 1) != cores.end() ? 1 : -1;
        std::vector<WorkerRequest> requests = {
            {"alloc", "alloc_probe", {{"intra_op_threads", 1}, {"grad", "no_grad"}}}};
        if (cores.size() >= 2 && pinCore >= 0)
            requests.push_back({"pinned",
                                "mlp",
                                {{"affinity", {pinCore}},
                                 {"intra_op_threads", 1},
                                 {"inter_op_threads", 1},
                                 {"grad", "no_grad"}}});
        pool_ = new std::map<std::string, ConfiguredWorker>(configureAll(requests));
    }
    static void TearDownTestSuite() {
        for (auto& [label, w] : *pool_) w.driver->quit();
        delete pool_;
        pool_ = nullptr;
    }
    static std::map<std::string, ConfiguredWorker>* pool_;
};

std::map<std::string, ConfiguredWorker>* KnobMetrics::pool_ = nullptr;

TEST_F(KnobMetrics, TensorBytesSeeTheFourMiBOfEveryForward) {
    auto& w = pool_->at("alloc");
    ASSERT_TRUE(w.ok()) << w.reply.dump();
    const auto [from, to] = measuredSpan(*w.driver, 1000);
    const auto ticks = between(*w.driver, "metrics", from, to);
    ASSERT_GE(ticks.size(), 3u) << "a 1 s block at a 100 ms metrics period";
    std::int64_t caught = 0;
    for (const auto& t : ticks) {
        ASSERT_TRUE(t.contains("tensor_bytes") && t.contains("tensor_peak_bytes")) << t.dump();
        caught = std::max(caught, t["tensor_bytes"].get<std::int64_t>());
        EXPECT_GE(t["tensor_peak_bytes"].get<std::int64_t>(), 4 * kMiB);
        EXPECT_LT(t["tensor_peak_bytes"].get<std::int64_t>(), 64 * kMiB);
    }
    // After the block nothing of the forward is live: the 4 MiB went back.
    const std::int64_t idle = ticks.back()["tensor_bytes"];
    EXPECT_LT(idle, 4 * kMiB);
    // A tick that landed inside a forward saw exactly the 4 MiB buffer on top of the idle bytes.
    EXPECT_GE(caught - idle, 4 * kMiB) << "no tick caught a forward's buffer live";
    EXPECT_LT(caught - idle, 5 * kMiB);
}

TEST_F(KnobMetrics, PinnedBusyCoreShowsAndDoesNotMigrate) {
    if (!pool_->count("pinned")) GTEST_SKIP() << "needs core 1 and at least 2 allowed cores";
    auto& w = pool_->at("pinned");
    ASSERT_TRUE(w.ok()) << w.reply.dump();
    ASSERT_EQ(w.reply["affinity"], json::array({1}));
    const int column = procStatIndex(1);
    ASSERT_GE(column, 0);
    const auto appliedAt = indexOf(*w.driver, w.reply);
    const auto [from, to] = measuredSpan(*w.driver, 1500);
    auto ticks = between(*w.driver, "metrics", from, to);
    ASSERT_GE(ticks.size(), 5u);
    // The first tick's window began before the block.
    std::vector<double> util;
    for (std::size_t i = 1; i < ticks.size(); ++i) {
        const auto pct = ticks[i]["core_util_pct"].get<std::vector<double>>();
        ASSERT_GT(int(pct.size()), column);
        util.push_back(pct[std::size_t(column)]);
    }
    EXPECT_GE(median(util), 80.0) << "core 1 under a pinned busy loop";
    // Pinned to one core, no thread of the worker can move after configure.
    const auto afterPin = between(*w.driver, "metrics", appliedAt, to);
    ASSERT_FALSE(afterPin.empty());
    const std::int64_t first = afterPin.front()["migrations"], last = afterPin.back()["migrations"];
    EXPECT_GE(first, 0) << "the kernel exposes se.nr_migrations";
    EXPECT_EQ(last, first) << "migrations grew after pinning";
}

TEST_F(KnobMetrics, EveryTickCarriesMemoryContextSwitchesAndAnHonestGpuStatus) {
    auto& w = pool_->at("alloc");
    ASSERT_TRUE(w.ok());
    const auto ticks = w.events(pitlane::protocol::kMetrics);
    ASSERT_FALSE(ticks.empty());
    const json gpu = w.hello["environment"]["gpu"];
    const bool noNvml = gpu.value("status", "").rfind("no NVML", 0) == 0;
    std::int64_t voluntary = 0;
    for (const auto& t : ticks) {
        EXPECT_GT(t["rss_bytes"].get<std::int64_t>(), 0);
        EXPECT_GE(t["peak_rss_bytes"].get<std::int64_t>(), t["rss_bytes"].get<std::int64_t>());
        ASSERT_TRUE(t["ctx_voluntary"].is_number_integer()) << t.dump();
        ASSERT_TRUE(t["ctx_involuntary"].is_number_integer()) << t.dump();
        EXPECT_GE(t["ctx_voluntary"].get<std::int64_t>(), voluntary) << "a counter";
        voluntary = t["ctx_voluntary"];
        EXPECT_FALSE(t["core_util_pct"].empty());
        if (noNvml) {
            // Without NVML the tick says so and carries no GPU numbers (never zeros).
            EXPECT_EQ(t.value("gpu_status", "").rfind("no NVML", 0), 0u) << t.dump();
            EXPECT_FALSE(t.contains("gpu")) << t.dump();
        } else {
            EXPECT_TRUE(t["gpu"].is_array() || t["gpu"].is_object()) << t.dump();
        }
    }
}

// block_done's counters of its timed loop (protocol/loop_counters.h), read by getrusage just
// before and after it: a 500 ms block of one intra-op thread. The process gives up the CPU at
// least at each of the sampler's 100 ms sleeps (voluntary_switches), and no more often than the
// whole process did between the metrics ticks around the block (the same getrusage field,
// cumulative).
TEST_F(KnobMetrics, BlockDoneCountsTheTimedLoopsVoluntarySwitches) {
    auto& w = pool_->at("alloc");
    ASSERT_TRUE(w.ok());
    spinUntil([&] { return !w.events(pitlane::protocol::kMetrics).empty(); }, 5000);
    const auto before = w.events(pitlane::protocol::kMetrics);
    ASSERT_FALSE(before.empty());
    const std::int64_t v0 = before.back()["ctx_voluntary"];
    const auto [from, to] = measuredSpan(*w.driver, 500);
    const auto done = between(*w.driver, "block_done", from, to);
    ASSERT_EQ(done.size(), 1u);
    const auto e = pitlane::protocol::blockDoneFromJson(done.front());
    ASSERT_TRUE(e.voluntary_switches && e.involuntary_switches && e.cpu_ms) << done.front().dump();
    const auto after = between(*w.driver, "metrics", from, to);
    ASSERT_FALSE(after.empty());
    const std::int64_t v1 = after.back()["ctx_voluntary"];
    EXPECT_GE(*e.voluntary_switches, 3) << done.front().dump();
    EXPECT_LE(*e.voluntary_switches, v1 - v0) << done.front().dump();
    EXPECT_GE(*e.involuntary_switches, 0);
}

TEST_F(KnobMetrics, HelloCarriesTheEnvironmentManifest) {
    const json env = pool_->at("alloc").hello["environment"];
    EXPECT_TRUE(std::regex_match(env.value("libtorch", ""), std::regex(R"(\d+\.\d+\.\d+)")))
        << env.value("libtorch", "");
    EXPECT_FALSE(env.value("cpu", "").empty());
    EXPECT_GE(env.value("cores", 0), 1);
    EXPECT_EQ(env["allowed_cores"].get<std::vector<int>>(), allowedCores()) << "inherited mask";
    EXPECT_FALSE(env.value("governor", "").empty());
    EXPECT_NE(env.value("kernel", "").find("Linux"), std::string::npos);
    EXPECT_GT(env.value("memory_bytes", std::int64_t{0}), 0);
    EXPECT_NE(env.value("build_config", "").find("PyTorch built with"), std::string::npos);
    ASSERT_TRUE(env.contains("gpu"));
    EXPECT_TRUE(env["gpu"].is_object());
}

}  // namespace
