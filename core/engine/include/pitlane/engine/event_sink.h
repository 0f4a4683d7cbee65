#pragma once
// The protocol's output channel: the real stdout, saved with dup() before anything else could
// print to it. Thread-safe; one write() per event so lines never interleave.
#include <nlohmann/json.hpp>

#include <mutex>

namespace pitlane::engine {

class EventSink {
public:
    // Saves fd 1 for the protocol and points fd 1 at stderr.
    static EventSink takeOverStdout();
    explicit EventSink(int fd) : fd_(fd) {}
    EventSink(EventSink&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

    // Returns false when the reader is gone (EPIPE): the worker should exit.
    bool emit(const nlohmann::json& event);
    bool warning(const std::string& code, const std::string& message);
    bool error(const std::string& code, const std::string& message,
               const nlohmann::json& detail = nullptr);

private:
    int fd_ = -1;
    std::mutex mutex_;
};

}  // namespace pitlane::engine
