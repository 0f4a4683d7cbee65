// The worker's sandbox (sandbox.h): no new privileges, Landlock for writes, a seccomp filter for
// sockets, RLIMIT_DATA for memory; every part read back.
#include "pitlane/engine/sandbox.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <new>
#include <sstream>

namespace pitlane::engine {

namespace {

using json = nlohmann::json;

std::mutex gMutex;
json gReport;           // what applySandbox did

std::string errnoText(int e) { return std::string(std::strerror(e)) + " (errno " + std::to_string(e) + ")"; }

// One "Name:\tvalue" line of /proc/self/status ("" when absent).
std::string procStatus(const std::string& name) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(name + ":", 0) == 0) {
            auto v = line.substr(name.size() + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            return v;
        }
    return {};
}

#ifdef __linux__
// ---- Landlock (constants of the stable kernel ABI; Debian 12's headers stop at ABI 2) --------
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
constexpr std::uint64_t kFsWriteFile = 1ULL << 1;
constexpr std::uint64_t kFsWriteV1 = kFsWriteFile | (1ULL << 4) | (1ULL << 5) | (1ULL << 6) |
                                     (1ULL << 7) | (1ULL << 8) | (1ULL << 9) | (1ULL << 10) |
                                     (1ULL << 11) | (1ULL << 12);  // write, remove, make *
constexpr std::uint64_t kFsRefer = 1ULL << 13;                   // ABI 2: rename / link across
constexpr std::uint64_t kFsTruncate = 1ULL << 14;                // ABI 3
constexpr std::uint64_t kNetBindConnectTcp = 3;                  // ABI 4
constexpr std::uint64_t kScopeAbstractUnixAndSignal = 3;         // ABI 6
constexpr int kRulePathBeneath = 1;

struct RulesetAttr {
    std::uint64_t handledFs = 0, handledNet = 0, scoped = 0;
};
struct __attribute__((packed)) PathBeneathAttr {
    std::uint64_t allowed = 0;
    std::int32_t parentFd = -1;
};

int landlockAbi() {
    const long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U /* VERSION */);
    return v < 0 ? 0 : int(v);
}

// Allows `access` beneath `path` (a directory, or one file). False (errno set) on failure.
bool allowBeneath(int ruleset, const std::string& path, std::uint64_t access) {
    const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return false;
    PathBeneathAttr attr;
    attr.allowed = access;
    attr.parentFd = fd;
    const long rc = syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0);
    const int saved = errno;
    close(fd);
    errno = saved;
    return rc == 0;
}

// The device nodes a worker may write: the null devices and CUDA's.
std::vector<std::string> writableDevices() {
    std::vector<std::string> devices{"/dev/null", "/dev/zero", "/dev/full"};
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/dev", ec))
        if (e.path().filename().string().rfind("nvidia", 0) == 0) devices.push_back(e.path().string());
    return devices;
}

// Restricts writes to `scratch` (and TCP, signals, abstract sockets where the ABI allows).
// Returns the mechanism in words, or "" with `error` set.
std::string applyLandlock(const std::string& scratch, std::string& error) {
    const int abi = landlockAbi();
    if (abi < 1) {
        error = "filesystem: Landlock is not available in this kernel (" + errnoText(errno) +
                "): writes are not confined";
        return {};
    }
    std::uint64_t fs = kFsWriteV1 | (abi >= 2 ? kFsRefer : 0) | (abi >= 3 ? kFsTruncate : 0);
    RulesetAttr attr;
    attr.handledFs = fs;
    std::size_t size = sizeof(std::uint64_t);
    if (abi >= 4) attr.handledNet = kNetBindConnectTcp, size += sizeof(std::uint64_t);
    if (abi >= 6) attr.scoped = kScopeAbstractUnixAndSignal, size += sizeof(std::uint64_t);
    const int ruleset = int(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
    if (ruleset < 0) {
        error = "filesystem: landlock_create_ruleset failed: " + errnoText(errno);
        return {};
    }
    std::string devices;
    bool ok = scratch.empty() || allowBeneath(ruleset, scratch, fs);
    if (!ok) error = "filesystem: cannot allow the scratch directory " + scratch + ": " + errnoText(errno);
    for (const auto& d : writableDevices())
        if (ok && allowBeneath(ruleset, d, kFsWriteFile | (abi >= 3 ? kFsTruncate : 0)))
            devices += (devices.empty() ? "" : ", ") + d;
    // The process's own threads' files (/proc/self/task/<tid>/comm): the CUDA driver names its
    // threads there, and cuInit fails with error 304 ("OS call failed") when it cannot (seen on
    // an H100 with driver 580: CUDA unavailable under the sandbox, available without it).
    // Writable only for this process's own threads.
    if (ok && allowBeneath(ruleset, "/proc/self/task", kFsWriteFile | (abi >= 3 ? kFsTruncate : 0)))
        devices += (devices.empty() ? "" : ", ") + std::string("/proc/self/task (thread names)");
    if (ok && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        error = "filesystem: landlock_restrict_self failed: " + errnoText(errno);
        ok = false;
    }
    close(ruleset);
    if (!ok) return {};
    std::string text = "landlock ABI " + std::to_string(abi) + ": writes only " +
                       (scratch.empty() ? std::string("to ") : "beneath " + scratch + " and to ") + devices;
    if (abi >= 4) text += "; TCP bind/connect refused";
    if (abi >= 6) text += "; no signals or abstract UNIX sockets outside the sandbox";
    return text;
}

// ---- seccomp: socket() only for AF_UNIX, no io_uring ----------------------------------------
#if defined(__x86_64__)
constexpr std::uint32_t kNativeArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
#else
constexpr std::uint32_t kNativeArch = 0;
#endif

std::string applySeccomp(std::string& error) {
    if (kNativeArch == 0) {
        error = "network: no seccomp filter for this architecture: sockets are not confined";
        return {};
    }
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
    constexpr std::uint32_t kArgLow =
        offsetof(seccomp_data, args) + (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4);
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNativeArch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),  // another ABI (int 0x80)
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1),  // x32 numbers
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArgLow),  // socket(domain, …)
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
        error = "network: seccomp filter refused by the kernel: " + errnoText(errno);
        return {};
    }
    return "seccomp filter on every thread: socket() refused (EACCES) for every family but "
           "AF_UNIX, io_uring refused";
}
#endif  // __linux__

// The scratch directory given to the worker, made absolute ("" when none: then nothing is writable).
std::string checkScratch(const std::string& given, std::string& error) {
    if (given.empty()) return {};
    struct stat st {};
    if (stat(given.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        error = "scratch: " + given + " is not a directory";
        return {};
    }
    return std::filesystem::absolute(given).lexically_normal().string();
}

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

json readBack(const std::string& scratch) {
    json r;
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

// The limit is what the worker may allocate beyond what it has mapped when it starts: RLIMIT_DATA
// counts every private writable mapping, the libraries' data included, and libtorch's differ by
// build (the PyTorch 2.11 wheel with its CUDA libraries maps ~600 MiB before anything runs, Debian's
// 1.13 far less): a limit of 512 MiB set as the absolute RLIMIT_DATA left the 2.11 worker unable
// to start. So memory_limit_mb means the memory the model and its run may take.
void applyMemoryLimit(std::int64_t bytes, json& report, json& errors) {
    if (bytes == -1) bytes = defaultMemoryLimitBytes();
    if (bytes <= 0) {
        report["memory_limit_bytes"] = nullptr;
        return;
    }
    const std::int64_t baseline = std::atoll(procStatus("VmData").c_str()) * 1024;  // "601012 kB"
    const std::int64_t total = baseline + bytes;
    struct rlimit rl {rlim_t(total), rlim_t(total)};
    if (setrlimit(RLIMIT_DATA, &rl) != 0) {
        errors.push_back("memory: setrlimit(RLIMIT_DATA, " + std::to_string(total) + ") failed: " +
                         errnoText(errno));
        report["memory_limit_bytes"] = nullptr;
        return;
    }
    report["memory_limit_bytes"] = bytes;
    report["data_at_start_bytes"] = baseline;
}

}  // namespace

std::int64_t defaultMemoryLimitBytes() {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    std::int64_t kib = 0;
    while (in >> key >> kib >> unit)
        if (key == "MemTotal:") return kib * 1024 / 4 * 3;
    return 0;
}

std::string memoryLimitNote() {
    std::lock_guard<std::mutex> lock(gMutex);
    const json limit = gReport.is_object() ? gReport.value("memory_limit_bytes", json()) : json();
    if (!limit.is_number()) return {};
    return " (the worker's memory limit is " + std::to_string(limit.get<std::int64_t>() >> 20) +
           " MiB: knob memory_limit_mb)";
}

std::string outOfMemoryMessage(const std::string& what) {
    return "out of memory: " + what + memoryLimitNote();
}

bool isOutOfMemory(const std::string& what) {
    return what.find("can't allocate memory") != std::string::npos ||
           what.find("std::bad_alloc") != std::string::npos ||
           what.find("Cannot allocate memory") != std::string::npos;
}

json applySandbox(SandboxOptions opts) {
    std::lock_guard<std::mutex> lock(gMutex);
    json report{{"enabled", opts.enabled}, {"errors", json::array()}};
    json& errors = report["errors"];
    report["threads_at_start"] = std::atoi(procStatus("Threads").c_str());
    applyMemoryLimit(opts.enabled || opts.memoryLimitBytes > 0 ? opts.memoryLimitBytes : 0, report,
                     errors);
    if (!opts.enabled) {
        report["filesystem"] = "not confined (sandbox off)";
        report["network"] = "not confined (sandbox off)";
        gReport = report;
        return report;
    }
    std::string error;
    const std::string scratch = checkScratch(opts.scratch, error);
    if (!error.empty()) errors.push_back(error);
    report["scratch"] = scratch.empty() ? json() : json(scratch);
    // $TMPDIR points there; the working directory stays (relative model paths keep working).
    if (!scratch.empty()) setenv("TMPDIR", scratch.c_str(), 1);
#ifdef __linux__
    if (report["threads_at_start"].get<int>() > 1)
        errors.push_back("filesystem: " + report["threads_at_start"].dump() +
                         " threads existed before the sandbox; Landlock covers only the main thread "
                         "and the threads it starts");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        errors.push_back("no_new_privs: " + errnoText(errno));
    error.clear();
    const std::string fs = applyLandlock(scratch, error);
    if (!error.empty()) errors.push_back(error);
    report["filesystem"] = fs.empty() ? "not confined" : fs;
    error.clear();
    const std::string net = applySeccomp(error);
    if (!error.empty()) errors.push_back(error);
    report["network"] = net.empty() ? "not confined" : net;
#else
    errors.push_back("the sandbox exists only on Linux");
#endif
    gReport = report;
    return report;
}

json sandboxState() {
    std::lock_guard<std::mutex> lock(gMutex);
    if (gReport.is_null()) return nullptr;
    json state = gReport;
    const json& scratch = gReport["scratch"];
    state["read_back"] = readBack(scratch.is_string() ? scratch.get<std::string>() : std::string());
    return state;
}

}  // namespace pitlane::engine
