#pragma once
// What a worker process's timed loops cost it: counters of the whole process read by getrusage
// just before and just after each timed loop (block_done), summed over a process's measured
// blocks (results::ProcessInfo: the results JSON's processes[], the history's processes rows).
//
// The one list of them. Adding a counter is a line here and the worker measuring it
// (core/engine/src/engine_run.cpp, blockDone): the block_done field, the ProcessInfo member, its
// results JSON field, its history column (added to existing files when they are opened) and its
// read-back all follow from this line.
#include "pitlane/protocol/record.h"

#include <cstdint>
#include <tuple>

// X(type, name): name is the member, the JSON key and the SQLite column.
#define PITLANE_LOOP_COUNTERS(X)                                                              \
    X(std::int64_t, minor_faults)          /* page faults served without I/O */               \
    X(std::int64_t, major_faults)          /* page faults that needed I/O */                  \
    X(double, cpu_ms)                      /* CPU time of the process (every thread) */        \
    X(std::int64_t, involuntary_switches)  /* the process preempted */                        \
    X(std::int64_t, voluntary_switches)    /* the process gave up the CPU (waited, slept) */ \
    /* Energy (issue 46, engine/energy.h): counters read just outside the getrusage pair. */  \
    X(std::int64_t, energy_blocks)         /* blocks whose energy counters were read */       \
    X(std::int64_t, energy_inferences)     /* their iterations x batch size */                \
    X(double, energy_window_ms)            /* steady-clock time between those reads */        \
    X(double, gpu_energy_mj)               /* NVML energy of the arm's GPU (or GPU 0) */      \
    X(double, cpu_energy_mj)               /* RAPL: the CPU packages */                       \
    X(double, dram_energy_mj)              /* RAPL: DRAM, where the packages have it */       \
    X(std::int64_t, energy_stalls)         /* blocks in which a counter stalled or failed */

namespace pitlane::protocol {

// The counters' fields of a record S that has them as members (record.h).
template <class S>
auto loopCounterFields() {
#define PITLANE_LOOP_COUNTER_FIELD(T, name) std::make_tuple(record::field(#name, &S::name)),
    return std::tuple_cat(PITLANE_LOOP_COUNTERS(PITLANE_LOOP_COUNTER_FIELD) std::tuple<>());
#undef PITLANE_LOOP_COUNTER_FIELD
}

}  // namespace pitlane::protocol
