// The JSON-lines protocol: what is encoded decodes to the same values, malformed lines are
// rejected with a reason (never an exception), and the line splitter survives any chunking.
#include "pitlane/protocol/protocol.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace {

namespace P = pitlane::protocol;
using P::json;

TEST(Protocol, SamplesRoundTrip) {
    P::Samples s;
    s.block = 3;
    s.phase = "measure";
    s.first_iter = 40;
    s.batch_size = 8;
    s.latency_ns = {1, 215'000, 37'759'100, std::numeric_limits<std::int64_t>::max()};
    const std::string line = P::encode(P::toJson(s));
    EXPECT_EQ(line.find('\n'), std::string::npos);

    std::string why;
    const auto ev = P::decode(line, P::Kind::Event, &why);
    ASSERT_TRUE(ev) << why;
    EXPECT_EQ((*ev)["type"], P::kSamples);
    EXPECT_EQ((*ev)["v"], P::kVersion);
    const auto back = P::samplesFromJson(*ev);
    EXPECT_EQ(back.block, 3);
    EXPECT_EQ(back.phase, "measure");
    EXPECT_EQ(back.first_iter, 40);
    EXPECT_EQ(back.batch_size, 8);
    EXPECT_EQ(back.latency_ns, s.latency_ns);
}

TEST(Protocol, WarmupSamplesKeepBlockMinusOne) {
    P::Samples s;
    s.phase = "warmup";
    s.latency_ns = {5, 6};
    const auto back =
        P::samplesFromJson(*P::decode(P::encode(P::toJson(s)), P::Kind::Event, nullptr));
    EXPECT_EQ(back.block, -1);
    EXPECT_EQ(back.phase, "warmup");
}

TEST(Protocol, SamplesFromJsonRejectsMissingFields) {
    auto j = P::toJson(P::Samples{0, "measure", 0, 1, {1, 2}});
    j.erase("latency_ns");
    EXPECT_ANY_THROW(P::samplesFromJson(j));
    auto k = P::toJson(P::Samples{0, "measure", 0, 1, {1, 2}});
    k["latency_ns"] = "fast";
    EXPECT_ANY_THROW(P::samplesFromJson(k));
}

TEST(Protocol, ErrorEventRoundTrip) {
    P::Error e{P::code::kInputMismatch,
               "forward failed with input [1, 7] float32: mat1 and mat2 shapes",
               json{{"torch", "line 1\nline 2"}, {"knob", "input"}}};
    const std::string line = P::encode(P::toJson(e));
    EXPECT_EQ(line.find('\n'), std::string::npos) << "a newline in a message must stay escaped";
    std::string why;
    const auto ev = P::decode(line, P::Kind::Event, &why);
    ASSERT_TRUE(ev) << why;
    EXPECT_EQ((*ev)["type"], P::kError);
    const auto back = P::errorFromJson(*ev);
    EXPECT_EQ(back.code, e.code);
    EXPECT_EQ(back.message, e.message);
    EXPECT_EQ(back.detail, e.detail);
}

TEST(Protocol, ErrorWithoutCodeIsInternal) {
    const auto back = P::errorFromJson(P::makeEvent(P::kError));
    EXPECT_EQ(back.code, P::code::kInternal);
}

TEST(Protocol, InvalidUtf8IsReplacedNotThrown) {
    auto ev = P::makeEvent(P::kWarning);
    ev["message"] = std::string("model printed \xff\xfe bytes");
    std::string line;
    ASSERT_NO_THROW(line = P::encode(ev));
    EXPECT_TRUE(P::decode(line, P::Kind::Event, nullptr));
}

TEST(Protocol, CommandRoundTrip) {
    auto cmd = P::makeCommand(P::kRun);
    cmd["block"] = 2;
    cmd["iters"] = 10;
    std::string why;
    const auto back = P::decode(P::encode(cmd), P::Kind::Command, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(*back, cmd);
    // A command is not an event (no "type") and vice versa.
    EXPECT_FALSE(P::decode(P::encode(cmd), P::Kind::Event, &why));
    EXPECT_FALSE(P::decode(P::encode(P::makeEvent(P::kBye)), P::Kind::Command, &why));
}

TEST(Protocol, UnknownFieldsAreKept) {
    auto ev = P::makeEvent(P::kMetrics);
    ev["from_the_future"] = {{"x", 1}};
    const auto back = P::decode(P::encode(ev), P::Kind::Event, nullptr);
    ASSERT_TRUE(back);
    EXPECT_EQ((*back)["from_the_future"]["x"], 1);
}

struct Malformed {
    const char* line;
    const char* reason;  // part of the reason decode() must give
};

class MalformedLine : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedLine, IsRejectedWithAReasonAndNeverThrows) {
    const auto& m = GetParam();
    std::string why;
    std::optional<json> ev;
    ASSERT_NO_THROW(ev = P::decode(m.line, P::Kind::Event, &why));
    EXPECT_FALSE(ev) << m.line;
    EXPECT_NE(why.find(m.reason), std::string::npos) << "reason: \"" << why << "\"";
    // The reason pointer is optional.
    ASSERT_NO_THROW(ev = P::decode(m.line, P::Kind::Event, nullptr));
    EXPECT_FALSE(ev);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, MalformedLine,
    ::testing::Values(
        Malformed{"", "not valid JSON"}, Malformed{"torch warning: something", "not valid JSON"},
        Malformed{R"({"v": 1, "type": "sampl)", "not valid JSON"},
        Malformed{R"({"v": 1, "type": "hello"} trailing)", "not valid JSON"},
        Malformed{"[1, 2, 3]", "not a JSON object"}, Malformed{"42", "not a JSON object"},
        Malformed{R"("hello")", "not a JSON object"},
        Malformed{"{}", "missing string field \"type\""},
        Malformed{R"({"v": 1})", "missing string field \"type\""},
        Malformed{R"({"v": 1, "type": 7})", "missing string field \"type\""},
        Malformed{R"({"type": "hello"})", "missing protocol version"},
        Malformed{R"({"v": "1", "type": "hello"})", "missing protocol version"},
        Malformed{R"({"v": 2, "type": "hello"})", "protocol version 2"},
        Malformed{R"({"v": 0, "type": "samples", "latency_ns": [1]})", "protocol version 0"}));

TEST(LineBuffer, SplitsLinesAcrossPartialChunks) {
    P::LineBuffer buf;
    const std::string stream = "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n";
    std::vector<std::string> lines;
    for (char c : stream) {  // worst case: one byte per read
        for (auto& l : buf.feed(&c, 1)) lines.push_back(l);
    }
    EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
    EXPECT_EQ(buf.pendingBytes(), 0u);
}

TEST(LineBuffer, KeepsAnUnfinishedLineUntilItsNewline) {
    P::LineBuffer buf;
    auto out = buf.feed("first\nsec", 9);
    EXPECT_EQ(out, std::vector<std::string>{"first"});
    EXPECT_EQ(buf.pendingBytes(), 3u);
    out = buf.feed("ond", 3);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(buf.pendingBytes(), 6u);
    out = buf.feed("\nthird\nfou", 10);
    EXPECT_EQ(out, (std::vector<std::string>{"second", "third"}));
    EXPECT_EQ(buf.pendingBytes(), 3u);
}

TEST(LineBuffer, StripsCarriageReturnsAndSkipsEmptyLines) {
    P::LineBuffer buf;
    const std::string chunk = "one\r\n\r\n\ntwo\r";
    auto out = buf.feed(chunk.data(), chunk.size());
    EXPECT_EQ(out, (std::vector<std::string>{"one"}));
    // "\r" then "\n" arriving in separate chunks still makes one CRLF.
    out = buf.feed("\n", 1);
    EXPECT_EQ(out, (std::vector<std::string>{"two"}));
    EXPECT_EQ(buf.pendingBytes(), 0u);
}

TEST(LineBuffer, ALineLongerThanItsMaximumKeepsItsStartAndCountsTheRest) {
    P::LineBuffer buf(8);
    std::vector<P::LineBuffer::Line> lines;
    const std::string huge(100000, 'x');
    for (std::size_t at = 0; at < huge.size(); at += 999) {  // arriving in pieces
        auto got = buf.feedLines(huge.data() + at, std::min<std::size_t>(999, huge.size() - at));
        lines.insert(lines.end(), got.begin(), got.end());
        EXPECT_LE(buf.pendingBytes(), 8u) << "the buffer holds more than the maximum";
    }
    auto got = buf.feedLines("\nshort\n", 7);
    lines.insert(lines.end(), got.begin(), got.end());
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].text, "xxxxxxxx");
    EXPECT_EQ(lines[0].cut, 100000u - 8u);
    EXPECT_EQ(lines[1].text, "short");
    EXPECT_EQ(lines[1].cut, 0u);
    // feed() says what was cut.
    P::LineBuffer words(5);
    EXPECT_EQ(words.feed("abcdefgh\n", 9), std::vector<std::string>{"abcde \u2026 [3 bytes cut]"});
}

TEST(Printable, ControlCharactersCannotReachATerminal) {
    // Escape sequences, carriage returns, NUL, DEL, a C1 CSI (U+009B) and a raw 8-bit CSI byte.
    const std::string in = std::string("ok\x1b[2K\rdone") + '\0' + "x\x7f\xc2\x9b" + "1m\x9b" + "end\tTab";
    const std::string out = P::printable(in);
    EXPECT_EQ(out, "ok?[2K?done?x???1m?end\tTab");
    for (unsigned char c : out) EXPECT_TRUE(c >= 0x20 || c == '\t') << int(c);
    // Well-formed UTF-8 stays as it is.
    EXPECT_EQ(P::printable("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80");
}

TEST(LineBuffer, DecodesEventsSplitAnywhere) {
    // Every split point of a two-event stream gives the same two events.
    P::Samples s{1, "measure", 0, 1, {100, 200, 300}};
    const std::string stream =
        P::encode(P::toJson(s)) + "\r\n" + P::encode(P::makeEvent(P::kBye)) + "\n";
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        P::LineBuffer buf;
        auto lines = buf.feed(stream.data(), cut);
        auto rest = buf.feed(stream.data() + cut, stream.size() - cut);
        lines.insert(lines.end(), rest.begin(), rest.end());
        ASSERT_EQ(lines.size(), 2u) << "cut at " << cut;
        const auto first = P::decode(lines[0], P::Kind::Event, nullptr);
        ASSERT_TRUE(first) << "cut at " << cut;
        EXPECT_EQ(P::samplesFromJson(*first).latency_ns, s.latency_ns);
        EXPECT_TRUE(P::decode(lines[1], P::Kind::Event, nullptr));
    }
}

}  // namespace
