#pragma once
// The `sandbox` and `memory_limit_mb` knobs, orchestrator side: the worker confines itself when
// it starts (engine/sandbox.h), so these knobs become its command line. QtCore only.
#include "pitlane/spec/preset.h"

#include <QString>
#include <QStringList>

#include <cstdint>

namespace pitlane::session {

// The memory all workers alive at once may take together: physical memory less a margin
// (max(2 GiB, 10 %), at most a quarter), split between them; a worker never gets more than 75 %
// of it. A cgroup limit (v1 or v2) below physical memory counts as physical memory.
// Two arms of a leaking model then fail their allocations (out_of_memory) before the machine
// runs out, instead of waking the kernel's OOM killer.
struct MemoryBudget {
    std::int64_t physicalMiB = 0;   // 0: unknown (then no budget); a cgroup's memory.max when lower
    bool cgroup = false;            // physicalMiB is the cgroup's limit
    std::int64_t totalMiB = 0;
    int workers = 1;
    std::int64_t perWorkerMiB = 0;  // 0: no budget
};
MemoryBudget memoryBudget(int workersAtOnce);

// The kernel's OOM kills in this process's cgroup so far (memory.events "oom_kill"; -1 when it
// cannot be read): a worker dead by SIGKILL while it went up was killed for memory.
std::int64_t oomKillCount();

// pitlane-worker's arguments for `knobs`: --sandbox on|off, --scratch DIR (only with the sandbox
// on: the one folder the worker may write, its $TMPDIR), --read FILE for each of `readable` (the
// model: with the sandbox on the worker reads nothing else outside the system's libraries), and
// --memory-limit-mb: the knob (at most the budget's share), else with the sandbox on and a CPU
// device the budget's share per worker (`auto`, 75 % of physical memory, when unknown), else none.
// The worker loads its CUDA module (libtorch.so, libtorch_cuda and the CUDA libraries: cuda_support.h)
// at start, before its sandbox, for an arm on a CUDA device and for an arm that loads an
// AOTInductor package (a package's own library links libtorch.so, which the worker itself no
// longer maps): PITLANE_WORKER_CUDA=preload in its environment.
bool preloadsTorchModule(const spec::ArmSpec& arm);

QStringList sandboxArguments(const spec::Knobs& knobs, const QString& scratch, const QStringList& readable = {},
                             const MemoryBudget& budget = {});

}  // namespace pitlane::session
