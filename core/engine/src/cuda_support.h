#pragma once
// The CUDA module: core/engine/src/cuda_module.cpp, built as its own shared library
// (libpitlane_cuda.so, beside pitlane-worker) whenever Torch has CUDA (CMake: if(CAFFE2_USE_CUDA)
// defines PITLANE_WITH_CUDA), which the pinned PyTorch wheel always has. It alone links
// libtorch_cuda (and with it cuDNN, cuBLAS, NCCL ...); the worker links libtorch_cpu only and
// loads the module with dlopen (cuda_loader.cpp) for an arm on a CUDA device, or to answer the
// hello's CUDA availability on a machine with an NVIDIA driver: a CPU arm's worker on a machine
// without one never maps a CUDA library it does not need (issue 43: 30 libraries and ~300 ms to
// hello before, docs/PERFORMANCE.md). Loading it registers libtorch_cuda's kernels and hooks, so
// torch::cuda::is_available() and .to(cuda) work as if it had been linked. Kept small and plain.
#include <torch/script.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace pitlane::engine::cuda {

// Device-side time of one iteration, measured with a pair of CUDA events on the current stream.
class EventTimer {
public:
    virtual ~EventTimer() = default;
    virtual void start() = 0;
    virtual double stopMs() = 0;  // synchronizes on the end event
};

// The forward captured once into a CUDA graph, then replayed with the same (static) inputs.
class GraphRunner {
public:
    virtual ~GraphRunner() = default;
    // Warms up on a side stream, then captures. Throws std::runtime_error with torch's reason.
    virtual void capture(torch::jit::Module& module, const std::vector<c10::IValue>& inputs) = 0;
    virtual void replay() = 0;
    virtual bool captured() const = 0;
    // The captured forward's output: its buffers are rewritten by every replay.
    virtual const c10::IValue& output() const = 0;
};

// What the module offers; one instance, alive for the rest of the process.
class Module {
public:
    virtual ~Module() = default;
    // The CUDA versions of this build, no device needed: runtime (cudaRuntimeGetVersion), driver
    // (cudaDriverGetVersion: 0 without a driver), cuDNN libtorch was built with, e.g.
    // {"runtime": "13.0", "driver": "none", "cudnn": "9.19.0"}.
    virtual nlohmann::json versions() const = 0;
    virtual std::unique_ptr<EventTimer> eventTimer() const = 0;
    virtual std::unique_ptr<GraphRunner> graphRunner() const = 0;
    // Caching-allocator statistics: current / peak allocated and reserved bytes, OOM count.
    virtual nlohmann::json allocatorStats(int device) const = 0;
};

// The module's one C entry point (cuda_module.cpp), looked up by the loader with dlsym.
#define PITLANE_CUDA_MODULE_ENTRY "pitlane_cuda_module"
using ModuleEntry = const Module* (*)();

// ---- the loader (cuda_loader.cpp, in the worker) -----------------------------------------

// True when this worker was built with the CUDA module (PITLANE_WITH_CUDA).
bool compiledIn();

// The module, loaded on first call (dlopen RTLD_NOW | RTLD_GLOBAL of libpitlane_cuda.so beside
// the worker, which loads libtorch_cuda and registers its kernels); later calls return the same.
// Must come before anything asks libtorch_cpu for its CUDA hooks (at::show_config(),
// torch::cuda::*): getCUDAHooks() keeps its first answer for the life of the process, so the
// worker calls it at start (worker_main.cpp), before the sandbox, or never.
// nullptr when not compiled in or when loading failed: `why` says what dlopen said.
const Module* load(std::string* why = nullptr);
// The module if it is loaded already, else nullptr; loads nothing.
const Module* loaded();
// Whether load() was called; `why` gets its failure (empty when it loaded).
bool attempted(std::string* why);

// Whether an NVIDIA driver (libcuda.so.1) can be loaded here: without one torch::cuda reports no
// device, so the hello need not load the module to say so. Loads libcuda.so.1 when it exists.
bool driverPresent();

// The versions without the module: the CUDA runtime libtorch_cpu maps anyway
// (cudaRuntimeGetVersion / cudaDriverGetVersion, found with dlsym) and the cuDNN the wheel ships
// (cudnnGetVersion of libcudnn.so.9, a 130 KB front library, loaded for the question). Same keys
// and formats as Module::versions().
nlohmann::json versionsWithoutModule();

}  // namespace pitlane::engine::cuda
