// The CUDA module (cuda_support.h): libpitlane_cuda.so, the only part of the worker that links
// libtorch_cuda. The worker dlopens it (cuda_loader.cpp) for an arm on a CUDA device.
#include "cuda_support.h"

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cuda_runtime_api.h>

#include <stdexcept>

namespace pitlane::engine::cuda {
namespace {

class CudaEventTimer final : public EventTimer {
public:
    void start() override { begin_.record(); }
    double stopMs() override {
        end_.record();
        end_.synchronize();
        return begin_.elapsed_time(end_);
    }

private:
    at::cuda::CUDAEvent begin_{cudaEventDefault}, end_{cudaEventDefault};
};

class CudaGraphRunner final : public GraphRunner {
public:
    void capture(torch::jit::Module& module, const std::vector<c10::IValue>& inputs) override {
        // Capture must not happen on the default stream; warm up on the same side stream first
        // so lazy initialization (cuBLAS handles, cuDNN plans) is not captured.
        auto stream = c10::cuda::getStreamFromPool();
        {
            c10::cuda::CUDAStreamGuard guard(stream);
            for (int i = 0; i < 3; ++i) module.forward(inputs);
            stream.synchronize();
            graph_.capture_begin();
            output_ = module.forward(inputs);
            graph_.capture_end();
        }
        stream.synchronize();
        captured_ = true;
    }
    void replay() override { graph_.replay(); }
    bool captured() const override { return captured_; }
    const c10::IValue& output() const override { return output_; }

private:
    at::cuda::CUDAGraph graph_;
    bool captured_ = false;
    c10::IValue output_;  // keeps the graph's output buffers alive
};

class CudaModule final : public Module {
public:
    nlohmann::json versions() const override {
        auto text = [](int v) {  // 13000 -> "13.0"
            return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
        };
        int runtime = 0, driver = 0;
        if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
        if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
        const long cudnn = at::detail::getCUDAHooks().versionCuDNN();  // e.g. 91900
        return {{"runtime", runtime ? text(runtime) : "unknown"},
                {"driver", driver ? text(driver) : "none"},
                {"cudnn", cudnn ? std::to_string(cudnn / 10000) + "." + std::to_string((cudnn % 10000) / 100) +
                                      "." + std::to_string(cudnn % 100)
                                : "none"}};
    }
    std::unique_ptr<EventTimer> eventTimer() const override { return std::make_unique<CudaEventTimer>(); }
    std::unique_ptr<GraphRunner> graphRunner() const override { return std::make_unique<CudaGraphRunner>(); }
    nlohmann::json allocatorStats(int device) const override {
        const auto s = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
        constexpr std::size_t kAggregate = 0;  // StatType::AGGREGATE
        return {{"allocated_bytes", s.allocated_bytes[kAggregate].current},
                {"allocated_peak_bytes", s.allocated_bytes[kAggregate].peak},
                {"reserved_bytes", s.reserved_bytes[kAggregate].current},
                {"reserved_peak_bytes", s.reserved_bytes[kAggregate].peak},
                {"num_ooms", s.num_ooms}};
    }
};

}  // namespace
}  // namespace pitlane::engine::cuda

extern "C" __attribute__((visibility("default"))) const pitlane::engine::cuda::Module* pitlane_cuda_module() {
    static const pitlane::engine::cuda::CudaModule module;
    return &module;
}
