#pragma once
// The worker's JSON-lines protocol (DESIGN.md "Worker protocol"). One JSON object per line, each
// with "v" (protocol version) and "type". A local worker speaks it on a socket pair handed to it
// as fd 3 (`--channel-fd 3`): a socket cannot be reopened through /proc/self/fd, so a model's
// forward cannot write into it (a pipe can). A worker behind ssh speaks it on stdin and its
// (moved-aside) stdout. No Qt, no torch.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pitlane::protocol {

using json = nlohmann::json;

constexpr int kVersion = 1;

// Event types.
inline constexpr const char* kHello = "hello";
inline constexpr const char* kApplied = "applied";
inline constexpr const char* kLoaded = "loaded";
inline constexpr const char* kSamples = "samples";
inline constexpr const char* kMetrics = "metrics";
inline constexpr const char* kBlockDone = "block_done";
inline constexpr const char* kWarning = "warning";
inline constexpr const char* kError = "error";
inline constexpr const char* kBye = "bye";
inline constexpr const char* kServeBatches = "serve_batches";  // a serving level's batches so far
inline constexpr const char* kProfile = "profile";  // an operator profile (and its trace)

// Command names ("cmd" field).
inline constexpr const char* kConfigure = "configure";
inline constexpr const char* kRun = "run";
inline constexpr const char* kQuit = "quit";
inline constexpr const char* kServe = "serve";  // one serving level (docs/ARCHITECTURE.md)
// {"cmd": "profile", "iters": n, "batch_size": bs}: n iterations under libtorch's profiler, after
// the measured blocks; answered by a "profile" event (ops table, Chrome trace).
inline constexpr const char* kProfileCmd = "profile";

// Stable error codes.
namespace code {
inline constexpr const char* kBadCommand = "bad_command";
inline constexpr const char* kBadKnob = "bad_knob";
inline constexpr const char* kModelNotFound = "model_not_found";
inline constexpr const char* kModelLoadFailed = "model_load_failed";
inline constexpr const char* kDeviceUnavailable = "device_unavailable";
inline constexpr const char* kAffinityFailed = "affinity_failed";
inline constexpr const char* kJitFailed = "jit_failed";
inline constexpr const char* kForwardFailed = "forward_failed";
inline constexpr const char* kInputMismatch = "input_mismatch";
inline constexpr const char* kUnsupportedDtype = "unsupported_dtype";
inline constexpr const char* kOutOfMemory = "out_of_memory";
inline constexpr const char* kNotConfigured = "not_configured";
inline constexpr const char* kInternal = "internal";
// Said by the session, never by a worker: an event that does not fit what the worker was told
// (a block it was not sent, more samples than iterations, a second hello, a malformed line).
inline constexpr const char* kProtocolViolation = "protocol_violation";
}  // namespace code

json makeEvent(const char* type);
json makeCommand(const char* cmd);
// One line, no trailing newline.
std::string encode(const json& message);

// Parse one line. Returns nullopt and sets `error` for malformed JSON, a non-object, a missing or
// non-string "type"/"cmd", or a protocol version this build does not speak.
enum class Kind { Event, Command };
std::optional<json> decode(const std::string& line, Kind kind, std::string* error);

// Typed views of the events the orchestrator reads most.
struct Samples {
    int block = -1;         // -1 = warmup
    std::string phase;      // "warmup" | "measure"
    int first_iter = 0;     // index of latency_ns[0] within the block
    int batch_size = 1;
    std::vector<std::int64_t> latency_ns;
};
json toJson(const Samples& s);
Samples samplesFromJson(const json& j);  // throws std::exception on bad fields

struct Error {
    std::string code, message;
    json detail;
};
json toJson(const Error& e);
Error errorFromJson(const json& j);

// Incremental line splitter for a byte stream, linear in the bytes fed. A line longer than
// `maxLine` keeps its first maxLine bytes and counts the rest as cut: a model printing a 50 MB
// line costs its reader maxLine bytes, not a copy of the line per chunk.
class LineBuffer {
public:
    explicit LineBuffer(std::size_t maxLine = std::string::npos) : max_(maxLine) {}
    struct Line {
        std::string text;     // without '\n' (and a trailing '\r')
        std::size_t cut = 0;  // bytes dropped beyond maxLine
    };
    // Appends bytes; returns every complete, non-empty line.
    std::vector<Line> feedLines(const char* data, std::size_t n);
    // The same, a cut line ending in " … [N bytes cut]".
    std::vector<std::string> feed(const char* data, std::size_t n);
    std::size_t pendingBytes() const { return pending_.size(); }

private:
    std::size_t max_;
    std::string pending_;
    std::size_t cut_ = 0;
};

// `text` fit for a terminal, a log line or a report: every control character (C0 but tab, DEL,
// and the C1 controls U+0080-U+009F as UTF-8) becomes '?', so an escape sequence, a carriage
// return or a NUL a model printed cannot move the cursor, fake a progress line or cut a string.
std::string printable(const std::string& text);

}  // namespace pitlane::protocol
