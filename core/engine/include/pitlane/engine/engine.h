#pragma once
// The benchmark engine: loads a TorchScript model or an AOTInductor package, applies an arm's knobs, reads them back and
// times forwards. This header is torch-free; torch lives in src/engine.cpp only.
#include "pitlane/engine/event_sink.h"

#include <nlohmann/json.hpp>

#include <memory>

namespace pitlane::engine {

class Engine {
public:
    explicit Engine(EventSink& sink);
    ~Engine();

    // The torch half of the environment manifest (versions, build config, threading backend).
    nlohmann::json torchManifest() const;

    // Handles {"cmd": "configure", "arm": {...}}: applies knobs, loads, runs the first forward,
    // emits "loaded" and "applied". Emits an error event and returns false on failure.
    bool configure(const nlohmann::json& cmd);

    // Handles {"cmd": "run", "block": b, "phase": "warmup"|"measure", "iters": n | "time_ms": t,
    // "batch_size": bs}: streams "samples" events and ends with "block_done".
    bool runBlock(const nlohmann::json& cmd);
    // One level of a serving experiment (serving::runLevel with the real clock and the model):
    // serve_batches events as batches complete, then block_done with the level's counts.
    bool serveLevel(const nlohmann::json& cmd);
    // {"cmd": "profile", "iters": n, "batch_size": bs} (engine_profile.cpp): n iterations under
    // libtorch's profiler, never timed; one "profile" event with the operator table and a
    // Chrome trace.
    bool profileBlock(const nlohmann::json& cmd);

    // Before the worker exits (it leaves by _Exit, which runs no destructor): releases what must
    // not outlive it — a package's extracted files when no scratch folder holds them.
    void finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Loads the CUDA module (libtorch_cuda and the CUDA libraries it needs) when `cudaArm` or when an
// NVIDIA driver is present; a no-op in a build without CUDA. The worker calls it at start, before
// its sandbox and before anything asks torch about CUDA. False when it was not loaded (a
// configure on a CUDA device then says why).
bool loadCudaModuleIfUseful(bool cudaArm);

}  // namespace pitlane::engine
