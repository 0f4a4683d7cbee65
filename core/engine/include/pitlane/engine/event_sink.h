#pragma once
// The protocol's output channel: the socket the session handed over as a descriptor
// (`--channel-fd`), or the real stdout saved with dup() before anything else could print to it.
// Either way fd 1 then points at stderr. Thread-safe; one write() per event so lines never
// interleave.
#include <nlohmann/json.hpp>

#include <mutex>
#include <optional>
#include <string>

namespace pitlane::engine {

class EventSink {
public:
    // Saves fd 1 for the protocol and points fd 1 at stderr.
    static EventSink takeOverStdout();
    // Writes to the socket `fd` (refused, with the reason in `why`, when fd is not a socket: a
    // pipe could be reopened by the model through /proc/self/fd); points fd 1 at stderr.
    static std::optional<EventSink> onChannel(int fd, std::string& why);
    int fd() const { return fd_; }
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
