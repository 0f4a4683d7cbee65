// session::protocolViolation (protocol_check.h) on fake event streams: what a worker was told,
// then the events it sends, with no process; session::readEvent on malformed event lines.
#include "pitlane/session/protocol_check.h"

#include "pitlane/protocol/protocol.h"

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

// A line from worker 1's event channel as the runner reads it: WorkerProcess parses it
// (protocol::decode; a line that is not an event is shown by protocol::printable, 200 bytes at
// most), then readEvent decodes its fields.
S::EventRead readLine(const std::string& line, bool checked = true) {
    std::string why;
    const auto ev = P::decode(line, P::Kind::Event, &why);
    if (!ev) return {std::nullopt, S::malformedLineViolation(1, why, P::printable(line.substr(0, 200))), ""};
    return S::readEvent(*ev, 1, checked);
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(ReadEvent, AWellFormedLineDecodes) {
    const auto r = readLine(
        R"({"v":1,"type":"samples","block":2,"phase":"measure","first_iter":0,"batch_size":1,"latency_ns":[100,200]})");
    ASSERT_TRUE(r.event);
    ASSERT_TRUE(std::holds_alternative<P::Samples>(*r.event));
    EXPECT_EQ(std::get<P::Samples>(*r.event).latency_ns, (std::vector<std::int64_t>{100, 200}));
    EXPECT_EQ(r.violation, "");
    EXPECT_EQ(r.warning, "");
}

TEST(ReadEvent, AnAnswerThatDoesNotDecodeBreaksTheProtocol) {
    // A field of the wrong type.
    auto r = readLine(R"({"v":1,"type":"samples","block":"three","phase":"measure","latency_ns":[1]})");
    EXPECT_FALSE(r.event);
    EXPECT_EQ(r.warning, "");
    EXPECT_TRUE(startsWith(r.violation, "worker 1 broke the protocol: a \"samples\" event that does not decode ("))
        << r.violation;
    EXPECT_NE(r.violation.find("type must be number, but is string"), std::string::npos) << r.violation;
    // A field a samples event requires, missing.
    r = readLine(R"({"v":1,"type":"samples","block":0,"phase":"measure"})");
    EXPECT_FALSE(r.event);
    EXPECT_NE(r.violation.find("latency_ns"), std::string::npos) << r.violation;
    r = readLine(R"({"v":1,"type":"hello","pid":"1234","protocol":1})");
    EXPECT_FALSE(r.event);
    EXPECT_TRUE(startsWith(r.violation, "worker 1 broke the protocol: a \"hello\" event that does not decode ("))
        << r.violation;
    r = readLine(R"({"v":1,"type":"block_done","block":0,"iters":[10]})");
    EXPECT_TRUE(startsWith(r.violation, "worker 1 broke the protocol: a \"block_done\" event")) << r.violation;
    // A hello's fields are optional: one left out keeps its default.
    r = readLine(R"({"v":1,"type":"hello","protocol":1})");
    ASSERT_TRUE(r.event);
    EXPECT_TRUE(std::holds_alternative<P::Hello>(*r.event));
    EXPECT_EQ(r.violation, "");
}

TEST(ReadEvent, OtherEventsThatDoNotDecodeAreIgnoredWithAWarning) {
    auto r = readLine(R"({"v":1,"type":"metrics","rss_bytes":"a lot"})");
    EXPECT_FALSE(r.event);
    EXPECT_EQ(r.violation, "");
    EXPECT_TRUE(startsWith(r.warning, "ignored a bad metrics event: [json.exception.type_error.302] type must be "
                                      "number, but is string"))
        << r.warning;
    r = readLine(R"({"v":1,"type":"warning","code":7,"message":"m"})");
    EXPECT_FALSE(r.event);
    EXPECT_EQ(r.violation, "");
    EXPECT_TRUE(startsWith(r.warning, "ignored a bad warning event: ")) << r.warning;
    // Once the arm is over, even an answer that does not decode is only a warning.
    r = readLine(R"({"v":1,"type":"samples","block":"three","phase":"measure","latency_ns":[1]})", false);
    EXPECT_EQ(r.violation, "");
    EXPECT_TRUE(startsWith(r.warning, "ignored a bad samples event: ")) << r.warning;
    // A type this build does not know: ignored, silently.
    r = readLine(R"({"v":1,"type":"telemetry","block":"x"})");
    EXPECT_FALSE(r.event);
    EXPECT_EQ(r.violation, "");
    EXPECT_EQ(r.warning, "");
}

TEST(ReadEvent, ALineThatIsNotAnEventBreaksTheProtocol) {
    EXPECT_EQ(readLine("Traceback (most recent call last):").violation,
              "worker 1 broke the protocol: a line that is not an event (not valid JSON): Traceback (most recent "
              "call last):");
    EXPECT_EQ(readLine("[1, 2]").violation,
              "worker 1 broke the protocol: a line that is not an event (not a JSON object): [1, 2]");
    EXPECT_EQ(readLine(R"({"v":1,"block":0})").violation,
              "worker 1 broke the protocol: a line that is not an event (missing string field \"type\"): "
              "{\"v\":1,\"block\":0}");
    EXPECT_EQ(readLine(R"({"v":2,"type":"hello"})").violation,
              "worker 1 broke the protocol: a line that is not an event (protocol version 2 (this build speaks 1)): "
              "{\"v\":2,\"type\":\"hello\"}");
    // At most 120 characters of the line are quoted; control bytes show as '?'.
    const auto r = readLine("\x1b[31m" + std::string(300, 'x'));
    EXPECT_FALSE(r.event);
    EXPECT_EQ(r.violation, "worker 1 broke the protocol: a line that is not an event (not valid JSON): ?[31m" +
                               std::string(115, 'x'));
}

}  // namespace
