#pragma once
// What the worker reads from the OS: affinity, topology, /proc counters, the environment
// manifest. No torch, no Qt.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pitlane::engine {

using json = nlohmann::json;

std::vector<int> allowedCores();  // sched_getaffinity of the calling thread, ascending
std::vector<int> threadAffinity(int tid);  // one thread's mask (tid 0 = calling thread)
std::vector<int> taskIds();                // every thread of this process (/proc/self/task)

struct CoreInfo {
    int cpu = 0, package = 0, core = 0;
};
std::vector<CoreInfo> topology(const std::vector<int>& cpus);

// Cores for an affinity placement (the affinity knob's compact / spread): Compact fills physical
// cores one package at a time (SMT siblings adjacent); Spread alternates packages and puts SMT
// siblings last.
enum class Placement { Compact, Spread };
std::vector<int> coresForPolicy(Placement policy, int count, const std::vector<int>& allowed);

// Pins every existing thread of this process (threads created later inherit the mask).
// Returns "" on success, else the reason.
std::string pinProcess(const std::vector<int>& cores);

struct ProcMemory {
    std::int64_t rss_bytes = 0, peak_rss_bytes = 0;
};
ProcMemory readMemory();

// getrusage(RUSAGE_SELF): the whole process so far, every thread (the metrics ticks, and the
// counters of block_done around each timed loop).
struct ProcCpu {
    double user_s = 0, sys_s = 0;
    std::int64_t voluntary_ctx = 0, involuntary_ctx = 0;
    std::int64_t minor_faults = 0, major_faults = 0;  // cumulative, the whole process
};
ProcCpu readCpu();

// Per-core busy/total jiffies from /proc/stat ("cpuN" lines).
struct CoreTimes {
    int cpu = 0;
    std::uint64_t busy = 0, total = 0;
};
std::vector<CoreTimes> readCoreTimes();

// Sum of se.nr_migrations over this process's threads (-1 when the kernel does not expose it).
std::int64_t readMigrations();

// Which BLAS is mapped into this process: {"name": "openblas"|"reference"|"mkl"|..., "path"}.
// `torchHasMkl` (at::hasMKL(), known only to the engine's torch side): the PyTorch wheel links
// MKL statically into libtorch_cpu, so sgemm_ resolving there is MKL.
json mappedBlas(bool torchHasMkl = false);

// jemalloc's background threads (MALLOC_CONF background_thread:true, which the runner sets for
// the jemalloc allocator knob) start before main, so the worker would confine itself with two
// threads and Landlock would not cover the second. `setJemallocBackgroundThreads(false)` stops
// (joins) them and returns whether they were running; `true` starts them again: the worker does
// both around applySandbox, so they run confined, as the arm's settings ask. A no-op without
// jemalloc.
bool setJemallocBackgroundThreads(bool on);

// Which heap allocator serves this process's malloc, read back from the process itself: the
// library that defines the `malloc` the program's calls resolve to (dlsym + dladdr), named by
// its path in /proc/self/maps.
//   name:    "jemalloc" | "tcmalloc" | "system" (glibc) | "other"
//   path:    that library's path as mapped (for "system" the libc path)
//   mapped:  every allocator library mapped into the process (jemalloc, tcmalloc, mimalloc, libc)
//   conf:    the environment that configures it, name -> value, whichever are set: MALLOC_CONF
//            (jemalloc), TCMALLOC_* (tcmalloc), MALLOC_* and GLIBC_TUNABLES (system)
//   options: what the allocator reports of itself (jemalloc: version and opt.* through mallctl,
//            so a MALLOC_CONF it did not take shows; tcmalloc: version; glibc: version)
json mappedAllocator();

// SIGTERM / SIGINT ask the worker to stop: the timing loop flushes what it measured, the worker
// says bye and exits 0. (SIGKILL is the orchestrator's last resort.)
void installStopHandler();
bool stopRequested();

// The OS half of the environment manifest (CPU model, cores, SMT, governor, memory, kernel).
json systemManifest();

}  // namespace pitlane::engine
