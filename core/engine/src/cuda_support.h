#pragma once
// The CUDA module: compiled and linked into the worker whenever Torch has CUDA (CMake:
// if(CAFFE2_USE_CUDA) defines PITLANE_WITH_CUDA and adds cuda_support.cpp), which the pinned
// PyTorch wheel always has; the engine calls it under #ifdef PITLANE_WITH_CUDA. On a machine
// without a GPU it is linked but idle (test cuda_module_linked); tools/gpu_check.sh runs it on a
// GPU (docs/GPU.md). Kept small and plain on purpose.
#include <torch/script.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <vector>

namespace pitlane::engine::cuda {

bool compiledIn();

// The CUDA versions of this build, no device needed: runtime (cudaRuntimeGetVersion), driver
// (cudaDriverGetVersion: 0 without a driver), cuDNN libtorch was built with, e.g.
// {"runtime": "13.0", "driver": "0", "cudnn": "9.19.0"}.
nlohmann::json versions();

// Device-side time of one iteration, measured with a pair of CUDA events on the current stream.
class EventTimer {
public:
    EventTimer();
    ~EventTimer();
    void start();
    double stopMs();  // synchronizes on the end event

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The forward captured once into a CUDA graph, then replayed with the same (static) inputs.
class GraphRunner {
public:
    GraphRunner();
    ~GraphRunner();
    // Warms up on a side stream, then captures. Throws std::runtime_error with torch's reason.
    void capture(torch::jit::Module& module, const std::vector<c10::IValue>& inputs);
    void replay();
    bool captured() const;
    // The captured forward's output: its buffers are rewritten by every replay.
    const c10::IValue& output() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Caching-allocator statistics: current / peak allocated and reserved bytes, OOM count.
nlohmann::json allocatorStats(int device);

}  // namespace pitlane::engine::cuda
