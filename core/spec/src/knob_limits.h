#pragma once
// Internal to spec/src: what a worker needs under knob memory_limit_mb (issue 28: 64-256 MiB
// passed validation, then the worker aborted, SIGABRT "std::system_error: Resource temporarily
// unavailable", or hung until its event timeout).
//
// Measured with pitlane-worker (PyTorch 2.11 wheel, sandbox on) on the mlp, 2-core machine,
// memory_limit_mb counted beyond what the worker maps at start (sandbox.cpp): every thread the
// worker starts (its intra-op pool, its inter-op pool) costs about 16 MiB of RLIMIT_DATA (its
// stack and its share of the allocator's arenas): intra_op_threads 16 failed at 224 MiB and ran at
// 256, 32 failed at 448 and ran at 512, 64 failed at 960 and ran at 1024; with 1 or 2 threads the
// mlp ran at 64 and resnet18 at 128 (96 fails, its weights alone are 45 MiB). Below, thread
// creation fails (libgomp "Thread creation failed", std::thread's system_error) or the worker hangs.
#include <string>

namespace pitlane::spec::detail {

// The floor: any preset, any model, up to 16 threads (the measured 256 MiB at 16 threads).
inline constexpr int kMinMemoryLimitMb = 256;
// The rule for more threads: this per thread (intra-op + inter-op), plus this margin for the
// worker and its model: 16 threads need 400, 64 need 1168 (1024 measured).
inline constexpr int kMemoryPerThreadMb = 16;
inline constexpr int kMemoryMarginMb = 128;

inline std::string memoryLimitMinimumWhy() {
    return "a worker needs at least " + std::to_string(kMinMemoryLimitMb) +
           " MiB to start libtorch and its threads (about " + std::to_string(kMemoryPerThreadMb) +
           " MiB per thread; below that, thread creation fails and the worker aborts or hangs)";
}

}  // namespace pitlane::spec::detail
