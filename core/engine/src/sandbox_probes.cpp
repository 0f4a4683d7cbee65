// The sandbox's read-back (sandbox.h): each mechanism probed from inside the worker once it is
// applied, by trying something harmless and telling the sandbox's answer from the kernel's.
#include "sandbox_internal.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace pitlane::engine::sandbox_detail {

using json = nlohmann::json;

namespace {

// Where a write outside the sandbox is tried: the scratch directory's parent, else $TMPDIR or /tmp.
std::string outsideDir(const std::string& scratch) {
    if (!scratch.empty()) return std::filesystem::path(scratch).parent_path().string();
    const char* tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

// Opens an unnamed temporary file in `dir` and closes it: nothing is left behind either way.
std::string probeWrite(const std::string& dir) {
    const int fd = open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) return "refused: " + errnoText(errno);
    close(fd);
    return "allowed";
}

std::string probeSocket(int family) {
    const int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return "refused: " + errnoText(errno);
    close(fd);
    return "allowed";
}

// The probes of what the seccomp filter refuses: each tries something harmless (a path that
// does not exist, a signal already set) and tells the filter's answer from the kernel's.
std::string probeErrno(int rc, int refusedErrno) {
    if (rc == 0) return "allowed";
    return errno == refusedErrno ? "refused: " + errnoText(errno) : "allowed (" + errnoText(errno) + ")";
}

std::string probeExec() {
    char* argv[] = {const_cast<char*>("pitlane-probe"), nullptr};
    return probeErrno(execve("/nonexistent-pitlane-probe/sh", argv, environ), EPERM);
}

std::string probeFork() {
    const long pid = syscall(SYS_clone, long(SIGCHLD), 0L, 0L, 0L, 0L);
    if (pid == 0) _exit(0);
    if (pid > 0) {
        waitpid(pid_t(pid), nullptr, 0);
        return "allowed";
    }
    return probeErrno(-1, EPERM);
}

std::string probeConnect() {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return "refused: " + errnoText(errno);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, "/nonexistent-pitlane-probe/socket", sizeof addr.sun_path - 1);
    const int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    const int saved = errno;
    close(fd);
    errno = saved;
    return probeErrno(rc, EACCES);
}

std::string probeRead(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "refused: " + errnoText(errno);
    close(fd);
    return "allowed";
}

}  // namespace

json readBack(const std::string& scratch) {
    json r;
    r["capabilities_effective"] = procStatus("CapEff");
    r["capabilities_permitted"] = procStatus("CapPrm");
    r["capabilities_bounding"] = procStatus("CapBnd");
    r["exec"] = probeExec();
    r["fork"] = probeFork();
    r["connect_unix_path"] = probeConnect();
    r["chmod"] = probeErrno(chmod("/nonexistent-pitlane-probe", 0600), EPERM);
    r["clear_pdeathsig"] = probeErrno(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), EPERM);
    r["read_etc"] = probeRead("/etc");
    r["no_new_privs"] = procStatus("NoNewPrivs") == "1";
    r["seccomp_mode"] = procStatus("Seccomp");  // 0 none, 1 strict, 2 filter
    r["seccomp_filters"] = procStatus("Seccomp_filters");
    struct rlimit rl {};
    getrlimit(RLIMIT_DATA, &rl);
    r["rlimit_data_bytes"] = rl.rlim_cur == RLIM_INFINITY ? json() : json(std::int64_t(rl.rlim_cur));
    r["socket_inet"] = probeSocket(AF_INET);
    r["socket_unix"] = probeSocket(AF_UNIX);
    if (!scratch.empty()) r["write_scratch"] = probeWrite(scratch);
    r["write_outside"] = probeWrite(outsideDir(scratch));
    return r;
}

}  // namespace pitlane::engine::sandbox_detail
