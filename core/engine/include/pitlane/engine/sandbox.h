#pragma once
// The worker's sandbox (the `sandbox` and `memory_limit_mb` knobs). A model is code: a scripted
// forward can call torch.save on any path, and PyTorch says there is no safe mode for
// torch.jit.load. So pitlane-worker confines itself before it loads anything, while it still has
// one thread (Landlock applies to the calling thread and the threads it creates later):
//
//   - no new privileges (PR_SET_NO_NEW_PRIVS): set-uid programs the model could reach gain nothing;
//   - filesystem: Landlock, where the kernel has it — writes (create, write, truncate, remove,
//     rename, link) only beneath the scratch directory (the session makes one per run; it
//     becomes the worker's $TMPDIR; without one nothing is writable) and to /dev/null,
//     /dev/zero, /dev/full and CUDA's /dev/nvidia* nodes; reads only beneath the scratch
//     directory, the files given (--read: the model), the system's libraries and data (/usr,
//     /lib, /opt), /proc, /sys, /dev, a few files of /etc and the folders of the libraries
//     already loaded (libtorch's wheel) — a forward cannot read /etc/shadow or a home folder;
//   - capabilities: all dropped (root keeps its uid, not its powers);
//   - a seccomp filter (all threads) refuses socket() for every family but AF_UNIX, connect(),
//     io_uring_setup (it can open sockets too), execve, fork (threads only), ptrace and
//     process_vm_*, namespaces and mounts, chmod/chown/utimes, and clearing PR_SET_PDEATHSIG;
//     with Landlock ABI >= 4 TCP bind/connect are also refused, with ABI >= 6 signals to
//     processes outside the sandbox and abstract UNIX sockets;
//   - memory: RLIMIT_DATA (private writable memory: every heap and tensor on the CPU), so a runaway
//     model fails its allocation (`out_of_memory`) instead of waking the system's OOM killer.
//
// What took effect is read back, never assumed: /proc/self/status (NoNewPrivs, Seccomp),
// getrlimit, and harmless probes (an unnamed O_TMPFILE beside the scratch directory and inside
// it, an AF_INET socket opened and closed). No Qt, no torch.
//
// The compile step (session/compile_step.h) runs its Python through the same code:
// `pitlane-worker --sandbox-exec --write DIR [--read PATH]... [--memory-limit-mb N] -- PROGRAM
// ARGS...` applies this sandbox with `processes` on, says what took effect as one JSON line
// {"sandbox": report} on stdout, and execs PROGRAM (sandboxExec).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pitlane::engine {

struct SandboxOptions {
    bool enabled = true;
    std::string scratch;                // the only writable folder; empty: none at all. $TMPDIR
                                        // points there, sandbox on or off (setTmpdir)
    std::int64_t memoryLimitBytes = 0;  // 0: none; -1: the default (75 % of physical memory)
    std::vector<std::string> readable;  // files (the model) readable besides the system's
    // The compiler's launcher (pitlane-worker --sandbox-exec): new programs and processes are
    // allowed (Python runs g++ and Inductor's compile workers), and PR_SET_PDEATHSIG may be set;
    // the rest (Landlock, sockets, capabilities, no_new_privs) is the worker's.
    bool processes = false;
    bool setTmpdir = true;  // $TMPDIR := scratch (the launcher keeps the one it was given)
};

// Applies `opts` to this process; call it first thing in main(), before any thread exists.
// Returns the report (also kept for sandboxState()): "enabled", "scratch", "filesystem",
// "network", "no_new_privs", "memory_limit_bytes", "threads_at_start", and "errors" (a mechanism
// that could not be applied, with the reason; the others still are).
nlohmann::json applySandbox(SandboxOptions opts);

// The report of applySandbox (null before it ran), with a fresh read-back ("read_back": probes
// and /proc/self/status) — what `applied.sandbox` carries.
nlohmann::json sandboxState();

// The launcher: applies `opts` (processes on, $TMPDIR kept), then RLIMIT_DATA = `memoryLimitBytes`
// (absolute: the program starts afresh; 0 none), writes {"sandbox": report} on stdout and execs
// argv[0] with argv. Returns only on failure: the exit code (127), the reason on stderr.
int sandboxExec(SandboxOptions opts, const std::vector<std::string>& argv);

// The default memory limit: 75 % of MemTotal from /proc/meminfo (0 when unknown).
std::int64_t defaultMemoryLimitBytes();

// " (the worker's memory limit is N MiB: knob memory_limit_mb)", or "" without a limit: said
// after every out_of_memory message.
std::string memoryLimitNote();
// The message of an allocation failure the engine did not catch itself: `what` and the note.
std::string outOfMemoryMessage(const std::string& what);

// True when `what` (an exception's message) is an allocation failure: std::bad_alloc, or
// c10's "can't allocate memory" from the CPU allocator.
bool isOutOfMemory(const std::string& what);

}  // namespace pitlane::engine
