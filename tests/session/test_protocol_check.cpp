// session::protocolViolation (protocol_check.h) on fake event streams: what a worker was told,
// then the events it sends, with no process.
#include "pitlane/session/protocol_check.h"

#include <gtest/gtest.h>

namespace {

namespace S = pitlane::session;
namespace P = pitlane::protocol;

S::Task block(int id, int iters, int batchSize = 1) {
    S::Task t{S::Task::Block, 0};
    t.block = id;
    t.iters = iters;
    t.batchSize = batchSize;
    return t;
}

P::Samples samples(int blockId, int first, int n, int batchSize = 1, const char* phase = "measure") {
    P::Samples s;
    s.block = blockId;
    s.phase = phase;
    s.first_iter = first;
    s.batch_size = batchSize;
    s.latency_ns.assign(std::size_t(n), 1000);
    return s;
}

P::BlockDone blockDone(int blockId, int iters) {
    P::BlockDone b;
    b.block = blockId;
    b.phase = "measure";
    b.iters = iters;
    return b;
}

// "" when it fits, else the reason; the check must find `part` in the reason.
void expectViolation(S::WorkerTold& told, const P::Event& e, const std::string& part) {
    const std::string why = S::protocolViolation(told, e);
    EXPECT_NE(why.find(part), std::string::npos) << "reason: \"" << why << "\", expected \"" << part << "\"";
}

TEST(ProtocolCheck, SamplesInOrderThenBlockDoneFit) {
    S::WorkerTold told;
    EXPECT_EQ(S::protocolViolation(told, P::Hello{}), "");
    S::tell(told, block(3, 10));
    EXPECT_EQ(S::protocolViolation(told, samples(3, 0, 4)), "");
    EXPECT_EQ(S::protocolViolation(told, samples(3, 4, 6)), "");
    EXPECT_EQ(told.samples, 10);
    EXPECT_EQ(S::protocolViolation(told, blockDone(3, 10)), "");
    EXPECT_FALSE(told.open);
    // Metrics, warnings, errors and bye come at any time.
    EXPECT_EQ(S::protocolViolation(told, P::Metrics{}), "");
    EXPECT_EQ(S::protocolViolation(told, P::Warning{"w", "text"}), "");
    EXPECT_EQ(S::protocolViolation(told, P::Bye{}), "");
    EXPECT_EQ(told.hellos, 1) << "tell() keeps the hello count";
}

TEST(ProtocolCheck, ASecondHelloBreaksIt) {
    S::WorkerTold told;
    EXPECT_EQ(S::protocolViolation(told, P::Hello{}), "");
    expectViolation(told, P::Hello{}, "a second hello");
}

TEST(ProtocolCheck, OutOfOrderAndForgedSamplesBreakIt) {
    S::WorkerTold told;
    S::tell(told, block(2, 10));
    ASSERT_EQ(S::protocolViolation(told, samples(2, 0, 4)), "");
    expectViolation(told, samples(2, 5, 1), "samples from iteration 5 of block 2 after 4 had come");
    expectViolation(told, samples(2, 0, 4), "samples from iteration 0");  // a replay
    expectViolation(told, samples(7, 4, 1), "samples of block 7 while block 2 ran");
    expectViolation(told, samples(2, 4, 1, 8), "samples at batch size 8 while 1 ran");
    expectViolation(told, samples(2, 4, 1, 1, "warmup"), "samples of phase \"warmup\" during a measure block");
    expectViolation(told, samples(2, 4, 7), "11 samples in block 2 of 10 iterations");
    EXPECT_EQ(told.samples, 4) << "what did not fit is not counted";
    expectViolation(told, blockDone(2, 10), "says 10 iterations; 4 samples came");
    // The block is answered: nothing is open any more.
    expectViolation(told, samples(2, 4, 1), "while the worker had no command open");
}

TEST(ProtocolCheck, AnswersMustMatchTheCommand) {
    S::WorkerTold told;
    expectViolation(told, samples(0, 0, 1), "a \"samples\" event while the worker had no command open");
    S::Task configure{S::Task::Configure, 0};
    S::tell(told, configure);
    expectViolation(told, samples(-1, 0, 1), "a \"samples\" event while the worker had been sent configure");
    EXPECT_EQ(S::protocolViolation(told, P::Loaded{}), "");
    EXPECT_EQ(S::protocolViolation(told, P::Applied{}), "");
    expectViolation(told, P::Applied{}, "a \"applied\" event while the worker had no command open");
    expectViolation(told, P::Profile{}, "a \"profile\" event");
    S::Task profile{S::Task::Profile, 0};
    S::tell(told, profile);
    EXPECT_EQ(S::protocolViolation(told, P::Profile{}), "");
}

TEST(ProtocolCheck, WarmupSamplesAreBlockMinusOne) {
    S::WorkerTold told;
    S::Task warmup{S::Task::Warmup, 0};
    warmup.block = 5;  // a warmup's samples are of block -1 whatever the task's id
    warmup.iters = 3;
    S::tell(told, warmup);
    EXPECT_EQ(S::protocolViolation(told, samples(-1, 0, 3, 1, "warmup")), "");
    expectViolation(told, samples(-1, 3, 1, 1, "warmup"), "4 samples in block -1 of 3 iterations");
}

TEST(ProtocolCheck, ServeBatchesOfTheLevelServed) {
    S::WorkerTold told;
    S::Task serve{S::Task::Serve, 0};
    serve.block = 4;
    S::tell(told, serve);
    P::ServeBatches sb;
    sb.block = 4;
    EXPECT_EQ(S::protocolViolation(told, sb), "");
    sb.block = 5;
    expectViolation(told, sb, "serve_batches of block 5 while block 4 was served");
    // A serving level's block_done carries no samples.
    EXPECT_EQ(S::protocolViolation(told, blockDone(4, 1234)), "");
}

TEST(ProtocolCheck, OnlyAnswersAndHelloMustDecode) {
    using T = P::EventType;
    for (T t : {T::Hello, T::Loaded, T::Applied, T::Samples, T::BlockDone, T::ServeBatches, T::Profile})
        EXPECT_TRUE(S::answersCommand(t)) << int(t);
    for (T t : {T::Metrics, T::Warning, T::Error, T::Bye, T::Unknown}) EXPECT_FALSE(S::answersCommand(t)) << int(t);
}

}  // namespace
