// The worker's sandbox (sandbox.h): no new privileges, Landlock for writes, a seccomp filter for
// sockets, RLIMIT_DATA for memory; every part read back.
#include "pitlane/engine/sandbox.h"
#include "sandbox_internal.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <new>
#include <sstream>
#include <vector>

namespace pitlane::engine {

namespace sandbox_detail {

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

}  // namespace sandbox_detail

namespace {

using namespace sandbox_detail;

using json = nlohmann::json;

std::mutex gMutex;
json gReport;           // what applySandbox did

#ifdef __linux__
// ---- Landlock (constants of the stable kernel ABI; Debian 12's headers stop at ABI 2) --------
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
constexpr std::uint64_t kFsExecute = 1ULL << 0;
constexpr std::uint64_t kFsWriteFile = 1ULL << 1;
constexpr std::uint64_t kFsReadFile = 1ULL << 2;
constexpr std::uint64_t kFsReadDir = 1ULL << 3;
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

// What a worker reads besides the model: the system's libraries and data, /proc, /sys and /dev,
// a few files of /etc (never the whole of it: /etc/shadow), and the folders of every library
// already mapped (libtorch's wheel: its CUDA libraries are loaded later, from beside it).
std::vector<std::string> readablePaths() {
    std::vector<std::string> paths{"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/opt",
                                   "/proc", "/sys", "/dev",
                                   "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                                   "/etc/localtime", "/etc/timezone", "/etc/nsswitch.conf", "/etc/passwd",
                                   "/etc/group", "/etc/os-release", "/etc/lsb-release", "/etc/debian_version",
                                   "/etc/alternatives", "/etc/nvidia", "/etc/OpenCL", "/etc/vulkan",
                                   "/etc/ssl/openssl.cnf"};
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) paths.push_back(exe.parent_path().string());  // the worker's folder (bundled models)
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        const auto slash = line.find('/');
        if (slash == std::string::npos) continue;
        std::filesystem::path lib(line.substr(slash));
        // A wheel's library: the whole site-packages (torch/lib loads nvidia/*/lib at run time).
        std::filesystem::path dir = lib.parent_path();
        for (auto p = dir; !p.empty() && p != p.root_path(); p = p.parent_path())
            if (p.filename() == "site-packages" || p.filename() == "dist-packages") {
                dir = p;
                break;
            }
        paths.push_back(dir.string());
    }
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    return paths;
}

// Restricts writes to `scratch`, reads to readablePaths(), scratch and `readable` (the model), and
// TCP, signals, abstract sockets where the ABI allows. Returns the mechanism in words, or "" with
// `error` set.
std::string applyLandlock(const std::string& scratch, const std::vector<std::string>& readable, bool processes,
                          std::string& error) {
    const int abi = landlockAbi();
    if (abi < 1) {
        error = "filesystem: Landlock is not available in this kernel (" + errnoText(errno) +
                "): writes are not confined";
        return {};
    }
    std::uint64_t fs = kFsWriteV1 | (abi >= 2 ? kFsRefer : 0) | (abi >= 3 ? kFsTruncate : 0);
    constexpr std::uint64_t kRead = kFsReadFile | kFsReadDir;
    RulesetAttr attr;
    attr.handledFs = fs | kRead;
    std::size_t size = sizeof(std::uint64_t);
    if (abi >= 4) attr.handledNet = kNetBindConnectTcp, size += sizeof(std::uint64_t);
    if (abi >= 6) attr.scoped = kScopeAbstractUnixAndSignal, size += sizeof(std::uint64_t);
    const int ruleset = int(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
    if (ruleset < 0) {
        error = "filesystem: landlock_create_ruleset failed: " + errnoText(errno);
        return {};
    }
    std::string devices;
    bool ok = scratch.empty() || allowBeneath(ruleset, scratch, fs | kRead);
    if (!ok) error = "filesystem: cannot allow the scratch directory " + scratch + ": " + errnoText(errno);
    // Reads: a path that does not exist here is skipped; one given (the model) must be allowed.
    std::vector<std::string> readAllowed;
    for (const auto& path : readablePaths()) {
        struct stat st {};
        if (!ok || stat(path.c_str(), &st) != 0) continue;
        if (allowBeneath(ruleset, path, S_ISDIR(st.st_mode) ? kRead : kFsReadFile)) readAllowed.push_back(path);
    }
    for (const auto& path : readable) {
        struct stat st {};
        if (!ok) break;
        if (stat(path.c_str(), &st) != 0 ||
            !allowBeneath(ruleset, path, S_ISDIR(st.st_mode) ? kRead : kFsReadFile)) {
            error = "filesystem: cannot allow reading " + path + ": " + errnoText(errno);
            ok = false;
        }
    }
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
    text += processes ? "; reads only" : "; reads only the model";
    for (const auto& path : readable) text += " " + path;
    text += std::string(processes && readable.empty() ? " " : ", ") + "the scratch folder and the system's libraries, /proc, /sys, /dev and a few files of /etc (" +
            std::to_string(readAllowed.size()) + " paths)";
    if (abi >= 4) text += "; TCP bind/connect refused";
    if (abi >= 6) text += "; no signals or abstract UNIX sockets outside the sandbox";
    return text;
}

// ---- seccomp: threads but no processes, no exec, AF_UNIX sockets without connect ------------
#if defined(__x86_64__)
constexpr std::uint32_t kNativeArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
#else
constexpr std::uint32_t kNativeArch = 0;
#endif

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

// The filter, built as a list: "this syscall number: that answer", then the few that look at an
// argument. Everything else is allowed.
struct FilterBuilder {
    std::vector<sock_filter> code;
    static constexpr std::uint32_t kArgLow =
        offsetof(seccomp_data, args) + (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4);
    void loadNr() { code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr))); }
    // nr == n: return `ret`.
    void deny(long nr, std::uint32_t ret) {
        if (nr < 0) return;
        code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, std::uint32_t(nr), 0, 1));
        code.push_back(BPF_STMT(BPF_RET | BPF_K, ret));
    }
    // nr == n: look at arg0's low word (equal to `value`, or with any of `value`'s bits set):
    // a match is allowed and the rest get `ret` (allowOnMatch), or the other way round. Other
    // numbers jump past it with nr still loaded.
    void argRule(long nr, bool bits, std::uint32_t value, std::uint32_t ret, bool allowOnMatch) {
        code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, std::uint32_t(nr), 0, 4));
        code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArgLow));
        code.push_back(BPF_JUMP(BPF_JMP | (bits ? BPF_JSET : BPF_JEQ) | BPF_K, value, 0, 1));
        code.push_back(BPF_STMT(BPF_RET | BPF_K, allowOnMatch ? SECCOMP_RET_ALLOW : ret));
        code.push_back(BPF_STMT(BPF_RET | BPF_K, allowOnMatch ? ret : SECCOMP_RET_ALLOW));
    }
};

// `processes`: the compiler's launcher, whose Python runs g++ and compile workers: execve, fork
// and setting PR_SET_PDEATHSIG stay allowed.
std::string applySeccomp(bool processes, std::string& error) {
    if (kNativeArch == 0) {
        error = "seccomp: no filter for this architecture: sockets, exec and fork are not confined";
        return {};
    }
    constexpr std::uint32_t kEperm = SECCOMP_RET_ERRNO | EPERM, kEacces = SECCOMP_RET_ERRNO | EACCES,
                            kEnosys = SECCOMP_RET_ERRNO | ENOSYS;
    FilterBuilder f;
    f.code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
    f.code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNativeArch, 1, 0));
    f.code.push_back(BPF_STMT(BPF_RET | BPF_K, kEnosys));  // another ABI (int 0x80)
    f.loadNr();
    f.code.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1));  // x32 numbers
    f.code.push_back(BPF_STMT(BPF_RET | BPF_K, kEnosys));
    // No new programs and no new processes: threads only (clone with CLONE_THREAD; clone3's
    // flags are behind a pointer, so it answers ENOSYS and glibc falls back to clone).
    if (!processes) {
        f.deny(__NR_execve, kEperm);
        f.deny(__NR_execveat, kEperm);
#ifdef __NR_fork
        f.deny(__NR_fork, kEperm);
        f.deny(__NR_vfork, kEperm);
#endif
        f.deny(__NR_clone3, kEnosys);
        f.argRule(__NR_clone, true, CLONE_THREAD, kEperm, true);
    }
    // Nothing reaches another process or undoes the sandbox.
    f.deny(__NR_ptrace, kEperm);
    f.deny(__NR_process_vm_readv, kEperm);
    f.deny(__NR_process_vm_writev, kEperm);
    f.deny(__NR_unshare, kEperm);
    f.deny(__NR_setns, kEperm);
    f.deny(__NR_mount, kEperm);
    f.deny(__NR_umount2, kEperm);
    f.deny(__NR_pivot_root, kEperm);
    f.deny(__NR_chroot, kEperm);
    f.deny(__NR_bpf, kEperm);
    f.deny(__NR_keyctl, kEperm);
    f.deny(__NR_add_key, kEperm);
    f.deny(__NR_request_key, kEperm);
    if (!processes) f.argRule(__NR_prctl, false, PR_SET_PDEATHSIG, kEperm, false);  // it dies with its parent
    // Metadata Landlock does not cover: mode, owner and times of files anywhere. The compiler's
    // launcher answers mode and time changes with success and changes nothing: Python's
    // shutil.copy (Inductor copies its kernels' metadata) and the linker set modes on the files
    // they write in their own folder, and a refusal there failed the compile; no file anywhere
    // gets a new mode or time either way.
    const std::uint32_t kModes = processes ? SECCOMP_RET_ERRNO | 0U : kEperm;
#ifdef __NR_chmod
    f.deny(__NR_chmod, kModes);
    f.deny(__NR_chown, kEperm);
    f.deny(__NR_lchown, kEperm);
    f.deny(__NR_utime, kModes);
    f.deny(__NR_utimes, kModes);
    f.deny(__NR_futimesat, kModes);
#endif
    f.deny(__NR_fchmod, kModes);
    f.deny(__NR_fchmodat, kModes);
    f.deny(__NR_fchmodat2, kModes);
    f.deny(__NR_fchown, kEperm);
    f.deny(__NR_fchownat, kEperm);
    f.deny(__NR_utimensat, kModes);
    // Network: no socket but AF_UNIX, and no connect() at all (a path socket: X11, D-Bus, a
    // container runtime's), no io_uring (it can open sockets too).
    f.deny(__NR_io_uring_setup, kEperm);
    f.deny(__NR_connect, kEacces);
    f.argRule(__NR_socket, false, AF_UNIX, kEacces, true);
    f.code.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    sock_fprog prog{static_cast<unsigned short>(f.code.size()), f.code.data()};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
        error = "seccomp: filter refused by the kernel: " + errnoText(errno);
        return {};
    }
    if (processes)
        return "seccomp filter on every thread and every process it starts: socket() refused (EACCES) "
               "for every family but AF_UNIX, connect() and io_uring refused; no ptrace, no "
               "process_vm_*, no namespaces or mounts, no chown, chmod and utimes answered without "
               "changing anything (exec and fork allowed: the compiler runs g++)";
    return "seccomp filter on every thread: socket() refused (EACCES) for every family but "
           "AF_UNIX, connect() and io_uring refused; no execve, no fork (threads only), no ptrace, "
           "no process_vm_*, no namespaces or mounts, no chmod/chown/utimes, PR_SET_PDEATHSIG "
           "cannot be cleared";
}

// Drops every capability: the bounding set (when we hold CAP_SETPCAP, as root does), the
// ambient set, then the effective, permitted and inheritable sets. Root without capabilities
// cannot raise the memory limit, override file permissions or load modules.
std::string dropCapabilities(std::string& error) {
    int last = 40;
    std::ifstream("/proc/sys/kernel/cap_last_cap") >> last;
    for (int c = 0; c <= last; ++c) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);  // EPERM without CAP_SETPCAP
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct {
        std::uint32_t version;
        int pid;
    } header{0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
    struct {
        std::uint32_t effective, permitted, inheritable;
    } data[2] = {};
    if (syscall(SYS_capset, &header, data) != 0) {
        error = "capabilities: capset failed: " + errnoText(errno);
        return {};
    }
    return "no capabilities (effective, permitted, inheritable, ambient" +
           std::string(procStatus("CapBnd") == "0000000000000000" ? ", bounding)" : "; the bounding set kept: no CAP_SETPCAP)");
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
    std::string error;
    const std::string scratch = checkScratch(opts.scratch, error);
    if (!error.empty()) errors.push_back(error);
    report["scratch"] = scratch.empty() ? json() : json(scratch);
    // $TMPDIR points there, sandbox on or off: what the worker extracts or writes for a moment
    // (an AOTInductor package's files, a profile's trace) goes with the folder, which the run
    // removes once the worker has exited, however it exited. The working directory stays
    // (relative model paths keep working).
    if (!scratch.empty() && opts.setTmpdir) setenv("TMPDIR", scratch.c_str(), 1);
    if (!opts.enabled) {
        report["filesystem"] = "not confined (sandbox off)";
        report["network"] = "not confined (sandbox off)";
        gReport = report;
        return report;
    }
#ifdef __linux__
    if (report["threads_at_start"].get<int>() > 1)
        errors.push_back("filesystem: " + report["threads_at_start"].dump() +
                         " threads existed before the sandbox; Landlock covers only the main thread "
                         "and the threads it starts");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        errors.push_back("no_new_privs: " + errnoText(errno));
    error.clear();
    std::vector<std::string> readable;
    for (const auto& path : opts.readable) {
        std::error_code ec;
        const auto canonical = std::filesystem::weakly_canonical(path, ec);
        readable.push_back(ec ? path : canonical.string());
    }
    const std::string fs = applyLandlock(scratch, readable, opts.processes, error);
    if (!error.empty()) errors.push_back(error);
    report["filesystem"] = fs.empty() ? "not confined" : fs;
    report["readable"] = readable;
    error.clear();
    const std::string caps = dropCapabilities(error);
    if (!error.empty()) errors.push_back(error);
    report["capabilities"] = caps.empty() ? "kept" : caps;
    error.clear();
    const std::string net = applySeccomp(opts.processes, error);
    if (!error.empty()) errors.push_back(error);
    report["network"] = net.empty() ? "not confined" : net;
#else
    errors.push_back("the sandbox exists only on Linux");
#endif
    gReport = report;
    return report;
}

int sandboxExec(SandboxOptions opts, const std::vector<std::string>& argv) {
    if (argv.empty()) {
        std::fprintf(stderr, "pitlane-worker --sandbox-exec: no program to run\n");
        return 127;
    }
    const std::int64_t limit = opts.memoryLimitBytes == -1 ? defaultMemoryLimitBytes() : opts.memoryLimitBytes;
    opts.memoryLimitBytes = 0;
    opts.processes = true;
    opts.setTmpdir = false;
    json report = applySandbox(opts);
    report["program"] = argv[0];
    // Absolute: the program starts afresh, with none of this process's mappings (libtorch's).
    report["memory_limit_bytes"] = nullptr;
    if (limit > 0) {
        struct rlimit rl {rlim_t(limit), rlim_t(limit)};
        if (setrlimit(RLIMIT_DATA, &rl) == 0)
            report["memory_limit_bytes"] = limit;
        else
            report["errors"].push_back("memory: setrlimit(RLIMIT_DATA, " + std::to_string(limit) +
                                       ") failed: " + errnoText(errno));
    }
    const std::string line = json{{"sandbox", report}}.dump() + "\n";
    for (std::size_t done = 0; done < line.size();) {
        const ssize_t n = write(STDOUT_FILENO, line.data() + done, line.size() - done);
        if (n <= 0 && errno != EINTR) break;
        if (n > 0) done += std::size_t(n);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "pitlane-worker --sandbox-exec: cannot run %s: %s\n", argv[0].c_str(),
                 errnoText(errno).c_str());
    return 127;
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
