#include "pitlane/engine/event_sink.h"

#include "pitlane/protocol/protocol.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace pitlane::engine {

EventSink EventSink::takeOverStdout() {
    std::fflush(stdout);
    const int fd = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    return EventSink(fd);
}

std::optional<EventSink> EventSink::onChannel(int fd, std::string& why) {
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        why = "fd " + std::to_string(fd) + " is not open (" + std::strerror(errno) + ")";
        return std::nullopt;
    }
    if (!S_ISSOCK(st.st_mode)) {
        why = "fd " + std::to_string(fd) + " is not a socket";
        return std::nullopt;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    std::fflush(stdout);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    return EventSink(fd);
}

bool EventSink::emit(const nlohmann::json& event) {
    std::string line = protocol::encode(event);
    line.push_back('\n');
    std::lock_guard<std::mutex> lock(mutex_);
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        const ssize_t n = ::write(fd_, p, left);  // send() would need MSG_NOSIGNAL; SIGPIPE is ignored
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return true;
}

bool EventSink::warning(const std::string& code, const std::string& message) {
    auto e = protocol::makeEvent(protocol::kWarning);
    e["code"] = code;
    e["message"] = message;
    return emit(e);
}

bool EventSink::error(const std::string& code, const std::string& message,
                      const nlohmann::json& detail) {
    return emit(protocol::toJson(protocol::Error{code, message, detail}));
}

}  // namespace pitlane::engine
