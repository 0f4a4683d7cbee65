#pragma once
// The worker's JSON-lines protocol (DESIGN.md "Worker protocol"). One JSON object per line, each
// with "v" (protocol version) and "type". Commands go to the worker's stdin, events come back on
// its (moved-aside) stdout. No Qt, no torch.
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

// Incremental line splitter for a byte stream; counts malformed lines instead of failing.
class LineBuffer {
public:
    // Appends bytes; returns every complete line (without '\n').
    std::vector<std::string> feed(const char* data, std::size_t n);
    std::size_t pendingBytes() const { return pending_.size(); }

private:
    std::string pending_;
};

}  // namespace pitlane::protocol
