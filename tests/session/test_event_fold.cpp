// session::foldEvent (event_fold.h) on fake event streams: what each worker event does to an
// arm's result and what it asks of the runner, with no process.
#include "pitlane/session/event_fold.h"

#include <gtest/gtest.h>

namespace {

namespace S = pitlane::session;
namespace P = pitlane::protocol;
namespace R = pitlane::results;

R::ArmResult arm(std::vector<int> batchSizes = {1}, int workers = 1) {
    R::ArmResult a;
    a.name = "A";
    a.status = R::kPending;
    a.batch_size = batchSizes.front();
    a.batch_sizes = batchSizes;
    a.workers = workers;
    a.worker_pids.assign(std::size_t(workers), 0);
    a.worker_applied.assign(std::size_t(workers), pitlane::protocol::Applied{});
    for (int w = 0; w < workers; ++w) {
        a.processes.emplace_back();
        a.processes.back().worker = w;
    }
    return a;
}

S::Task task(S::Task::Kind kind, int block = 0, int iters = 10, int batchSize = 1) {
    S::Task t{kind, 0};
    t.block = block;
    t.iters = iters;
    t.batchSize = batchSize;
    return t;
}

P::Samples samples(int block, int first, std::vector<std::int64_t> ns, int batchSize = 1,
                   const char* phase = "measure") {
    P::Samples s;
    s.block = block;
    s.phase = phase;
    s.first_iter = first;
    s.batch_size = batchSize;
    s.latency_ns = std::move(ns);
    return s;
}

TEST(EventFold, SamplesAreAppendedInOrderWithWhereTheyCameFrom) {
    auto a = arm({1}, 2);
    const auto t = task(S::Task::Block, 4, 5);
    S::FoldSource from{1, 2, 1, &t, 0};
    auto fx = S::foldEvent(a, from, samples(4, 0, {100, 200, 300}));
    EXPECT_EQ(fx.samplesFirst, 0);
    EXPECT_EQ(fx.samplesCount, 3);
    fx = S::foldEvent(a, from, samples(4, 3, {400, 500}));
    EXPECT_EQ(fx.samplesFirst, 3);
    EXPECT_EQ(fx.samplesCount, 2);
    EXPECT_FALSE(fx.taskDone) << "samples do not end a block; its block_done does";
    ASSERT_EQ(a.samples.size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(a.samples[i].latency_ns, std::int64_t(100 * (i + 1)));
        EXPECT_EQ(a.samples[i].block, 4);
        EXPECT_EQ(a.samples[i].worker, 1);
        EXPECT_EQ(a.samples[i].process, 2);
    }
    EXPECT_TRUE(a.warmup_ns.empty());
    P::BlockDone done;
    done.block = 4;
    done.phase = "measure";
    done.iters = 5;
    EXPECT_TRUE(S::foldEvent(a, from, done).taskDone);
}

TEST(EventFold, TheWarmupCurveIsTheFirstWorkersOfTheFirstRoundAtTheFirstBatchSize) {
    auto a = arm({2, 8}, 2);
    const auto t = task(S::Task::Warmup, -1, 3, 2);
    auto fx = S::foldEvent(a, {0, 0, 0, &t, 0}, samples(-1, 0, {9, 8, 7}, 2, "warmup"));
    EXPECT_TRUE(fx.warmupAppended);
    EXPECT_EQ(fx.samplesCount, 0);
    EXPECT_FALSE(S::foldEvent(a, {1, 0, 1, &t, 0}, samples(-1, 0, {1}, 2, "warmup")).warmupAppended);
    EXPECT_FALSE(S::foldEvent(a, {0, 1, 0, &t, 0}, samples(-1, 0, {1}, 2, "warmup")).warmupAppended);
    EXPECT_FALSE(S::foldEvent(a, {0, 0, 0, &t, 0}, samples(-1, 0, {1}, 8, "warmup")).warmupAppended);
    EXPECT_EQ(a.warmup_ns, (std::vector<std::int64_t>{9, 8, 7}));
    EXPECT_EQ(a.samples.size(), 0u);
}

TEST(EventFold, AnOutOfMemoryErrorDuringABatchSweepKeepsTheSweepGoing) {
    auto a = arm({1, 64});
    const auto t = task(S::Task::Block, 2, 10, 64);
    S::FoldSource from{0, 0, 0, &t, 0};
    S::foldEvent(a, from, samples(2, 0, {5, 5, 5}, 64));
    const P::Error oom{P::code::kOutOfMemory, "CPU allocator: out of memory", nullptr};
    const auto fx = S::foldEvent(a, from, oom);
    EXPECT_FALSE(fx.failure) << "the arm goes on with its other batch sizes";
    EXPECT_TRUE(fx.taskDone);
    EXPECT_EQ(fx.unplan, 7) << "3 of the block's 10 iterations were measured and stay";
    ASSERT_EQ(a.sweep_failures.count(64), 1u);
    EXPECT_EQ(a.sweep_failures.at(64).message, oom.message);
    ASSERT_EQ(fx.warnings.size(), 1u);
    EXPECT_EQ(fx.warnings[0], "A: batch size 64 failed: CPU allocator: out of memory");
    EXPECT_EQ(a.samples.size(), 3u);
    EXPECT_EQ(a.status, R::kPending);
}

TEST(EventFold, AnOutOfMemoryErrorWithoutASweepFailsTheArm) {
    auto a = arm({1});
    const auto t = task(S::Task::Block);
    const auto fx = S::foldEvent(a, {0, 0, 0, &t, 0}, P::Error{P::code::kOutOfMemory, "out of memory", nullptr});
    ASSERT_TRUE(fx.failure);
    EXPECT_EQ(fx.failure->code, P::code::kOutOfMemory);
    EXPECT_EQ(fx.failure->message, "out of memory");
    EXPECT_FALSE(fx.taskDone);
    EXPECT_TRUE(a.sweep_failures.empty());
}

TEST(EventFold, AProfileErrorIsAWarningOnceAndTheMeasurementsStand) {
    auto a = arm({1}, 2);
    const auto t = task(S::Task::Profile, -1, 10);
    const P::Error e{"profile_failed", "Kineto is not available", nullptr};
    for (int w = 0; w < 2; ++w) {
        const auto fx = S::foldEvent(a, {w, 0, std::size_t(w), &t, 0}, e);
        EXPECT_FALSE(fx.failure);
        EXPECT_TRUE(fx.taskDone);
        EXPECT_EQ(fx.warnings.size(), w == 0 ? 1u : 0u) << "worker " << w << ": said once per arm";
    }
    EXPECT_EQ(a.warnings, std::vector<std::string>{"profile not taken: Kineto is not available"});
}

TEST(EventFold, DuplicateWarningsAreKeptOnceWithoutControlCharacters) {
    auto a = arm({1}, 2);
    auto fx = S::foldEvent(a, {0, 0, 0, nullptr, 0}, P::Warning{"w", "slow\x1b[31m first run"});
    ASSERT_EQ(a.warnings.size(), 1u);
    EXPECT_EQ(a.warnings[0].find('\x1b'), std::string::npos) << a.warnings[0];
    ASSERT_EQ(fx.warnings.size(), 1u);
    EXPECT_EQ(fx.warnings[0], "A: " + a.warnings[0]);
    fx = S::foldEvent(a, {1, 0, 1, nullptr, 0}, P::Warning{"w", "slow\x1b[31m first run"});
    EXPECT_TRUE(fx.warnings.empty());
    S::foldEvent(a, {1, 0, 1, nullptr, 0}, P::Warning{"w", "another"});
    EXPECT_EQ(a.warnings.size(), 2u);
}

TEST(EventFold, MetricsAndByeKeepThePeakRss) {
    auto a = arm();
    P::Metrics m;
    m.rss_bytes = 100;
    m.peak_rss_bytes = 500;
    auto fx = S::foldEvent(a, {0, 1, 0, nullptr, 1234.5}, m);
    EXPECT_TRUE(fx.metricsAppended);
    m.peak_rss_bytes = 300;  // a later process of the arm, smaller
    S::foldEvent(a, {0, 1, 0, nullptr, 2000}, m);
    EXPECT_EQ(a.peak_rss_bytes, 500);
    ASSERT_EQ(a.metrics.size(), 2u);
    EXPECT_DOUBLE_EQ(a.metrics[0].t_ms, 1234.5);
    EXPECT_EQ(a.metrics[0].process, 1);
    P::Bye bye;
    bye.peak_rss_bytes = 900;
    S::foldEvent(a, {0, 1, 0, nullptr, 0}, bye);
    EXPECT_EQ(a.peak_rss_bytes, 900);
}

TEST(EventFold, HelloLoadedAndAppliedFillTheFirstRoundAndCheckLaterOnes) {
    auto a = arm({1}, 2);
    const auto configure = task(S::Task::Configure);
    P::Hello hello;
    hello.pid = 4242;
    hello.environment = {{"cpu", "x"}};
    EXPECT_TRUE(S::foldEvent(a, {1, 0, 1, nullptr, 0}, hello).helloSeen);
    EXPECT_EQ(a.processes[1].pid, 4242);
    EXPECT_EQ(a.worker_pids[1], 4242);
    EXPECT_TRUE(a.environment.is_null() || a.environment.empty()) << "worker 1's environment is not the arm's";
    P::Loaded loaded;
    loaded.load_ms = 12;
    loaded.fields = {{"load_ms", 12}};
    S::foldEvent(a, {0, 0, 0, &configure, 0}, loaded);
    EXPECT_DOUBLE_EQ(a.processes[0].load_ms, 12);
    EXPECT_EQ(a.loaded, loaded.fields);
    P::Applied applied;
    applied.intra_op_threads = 1;
    auto fx = S::foldEvent(a, {0, 0, 0, &configure, 0}, applied);
    EXPECT_TRUE(fx.taskDone);
    EXPECT_FALSE(fx.checkApplied);
    EXPECT_EQ(a.applied, applied);
    EXPECT_EQ(a.worker_applied[0], applied);
    fx = S::foldEvent(a, {0, 1, 0, &configure, 0}, applied);
    ASSERT_TRUE(fx.checkApplied) << "a later round's read-back is checked against the first's";
    EXPECT_EQ(*fx.checkApplied, P::appliedFields(applied));
    EXPECT_EQ((*fx.checkApplied)["intra_op_threads"], 1);
}

TEST(EventFold, AnErrorWithoutAMessageTakesTheFirstLineOfItsDetail) {
    auto a = arm();
    const auto t = task(S::Task::Block);
    const auto fx = S::foldEvent(a, {0, 0, 0, &t, 0},
                                 P::Error{"model_error", "", {{"torch", "\n  \nRuntimeError: bad shape\nat line 3"}}});
    ASSERT_TRUE(fx.failure);
    EXPECT_EQ(fx.failure->message, "RuntimeError: bad shape");
    EXPECT_EQ(S::errorReason(P::Error{"x", "", nullptr}), "the worker gave no reason (error code x)");
}

TEST(EventFold, AProtocolViolationDiscardsWhatTheArmReceived) {
    auto a = arm();
    const auto t = task(S::Task::Block);
    S::foldEvent(a, {0, 0, 0, &t, 0}, samples(0, 0, {1, 2, 3}));
    a.warmup_ns = {7, 7};
    EXPECT_EQ(S::discardMeasurements(a), 5u);
    EXPECT_EQ(a.samples.size(), 0u);
    EXPECT_TRUE(a.warmup_ns.empty());
}

}  // namespace
