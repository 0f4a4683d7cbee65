#include "cuda_support.h"

#ifdef PITLANE_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cuda_runtime_api.h>

#include <stdexcept>

namespace pitlane::engine::cuda {

bool compiledIn() { return true; }

nlohmann::json versions() {
    auto text = [](int v) {  // 13000 -> "13.0"
        return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
    };
    int runtime = 0, driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    const long cudnn = at::detail::getCUDAHooks().versionCuDNN();  // e.g. 91900
    return {{"runtime", runtime ? text(runtime) : "unknown"},
            {"driver", driver ? text(driver) : "none"},
            {"cudnn", cudnn ? std::to_string(cudnn / 10000) + "." + std::to_string((cudnn % 10000) / 100) + "." +
                                  std::to_string(cudnn % 100)
                            : "none"}};
}

struct EventTimer::Impl {
    at::cuda::CUDAEvent begin{cudaEventDefault}, end{cudaEventDefault};
};
EventTimer::EventTimer() : impl_(std::make_unique<Impl>()) {}
EventTimer::~EventTimer() = default;
void EventTimer::start() { impl_->begin.record(); }
double EventTimer::stopMs() {
    impl_->end.record();
    impl_->end.synchronize();
    return impl_->begin.elapsed_time(impl_->end);
}

struct GraphRunner::Impl {
    at::cuda::CUDAGraph graph;
    bool captured = false;
    c10::IValue output;  // keeps the graph's output buffers alive
};
GraphRunner::GraphRunner() : impl_(std::make_unique<Impl>()) {}
GraphRunner::~GraphRunner() = default;

void GraphRunner::capture(torch::jit::Module& module, const std::vector<c10::IValue>& inputs) {
    // Capture must not happen on the default stream; warm up on the same side stream first so
    // lazy initialization (cuBLAS handles, cuDNN plans) is not captured.
    auto stream = c10::cuda::getStreamFromPool();
    {
        c10::cuda::CUDAStreamGuard guard(stream);
        for (int i = 0; i < 3; ++i) module.forward(inputs);
        stream.synchronize();
        impl_->graph.capture_begin();
        impl_->output = module.forward(inputs);
        impl_->graph.capture_end();
    }
    stream.synchronize();
    impl_->captured = true;
}
void GraphRunner::replay() { impl_->graph.replay(); }
bool GraphRunner::captured() const { return impl_->captured; }
const c10::IValue& GraphRunner::output() const { return impl_->output; }

nlohmann::json allocatorStats(int device) {
    const auto s = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
    constexpr std::size_t kAggregate = 0;  // StatType::AGGREGATE
    return {{"allocated_bytes", s.allocated_bytes[kAggregate].current},
            {"allocated_peak_bytes", s.allocated_bytes[kAggregate].peak},
            {"reserved_bytes", s.reserved_bytes[kAggregate].current},
            {"reserved_peak_bytes", s.reserved_bytes[kAggregate].peak},
            {"num_ooms", s.num_ooms}};
}

}  // namespace pitlane::engine::cuda

#endif  // PITLANE_WITH_CUDA
