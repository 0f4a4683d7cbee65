// Engine construction, the environment manifest, input creation and the forward call.
#include "engine_impl.h"

#include <c10/core/impl/alloc_cpu.h>

#include <atomic>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define PITLANE_HAVE_MXCSR 1
#endif

namespace pitlane::engine {

using namespace detail;

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define PITLANE_ALLOCATE_CONST
#define PITLANE_NEW_ALLOCATOR_API 1
#else
#define PITLANE_ALLOCATE_CONST const
#define PITLANE_NEW_ALLOCATOR_API 0
#endif

namespace {
// Counts live and peak tensor bytes on the CPU. Each block carries its size in a 64-byte header
// in front of the data (keeping torch's 64-byte alignment), so the data pointer is also the
// deleter's context, as raw_allocate() requires.
class CountingAllocator final : public c10::Allocator {
public:
    static constexpr std::size_t kHeader = 64;

    c10::DataPtr allocate(size_t n) PITLANE_ALLOCATE_CONST override {
        auto* base = static_cast<char*>(c10::alloc_cpu(n + kHeader));
        *reinterpret_cast<std::size_t*>(base) = n;
        void* data = base + kHeader;
        auto& c = tensorCounters();
        const auto now = c.current.fetch_add(static_cast<std::int64_t>(n)) + std::int64_t(n);
        auto peak = c.peak.load();
        while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
        }
        return {data, data, &CountingAllocator::release, c10::Device(c10::DeviceType::CPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &CountingAllocator::release; }
#if PITLANE_NEW_ALLOCATOR_API
    void copy_data(void* dest, const void* src, std::size_t count) const override {
        std::memcpy(dest, src, count);
    }
#endif

private:
    static void release(void* data) {
        if (!data) return;
        char* base = static_cast<char*>(data) - kHeader;
        const auto n = *reinterpret_cast<std::size_t*>(base);
        tensorCounters().current.fetch_sub(static_cast<std::int64_t>(n));
        c10::free_cpu(base);
    }
};

}  // namespace

Engine::Engine(EventSink& sink) : impl_(std::make_unique<Impl>(sink)) {
    // Count tensor bytes from the first allocation on.
    impl_->allocator = std::make_unique<CountingAllocator>();
    c10::SetCPUAllocator(impl_->allocator.get(), /*priority=*/100);
    tensorCounters().installed = true;
}

Engine::~Engine() = default;

json Engine::torchManifest() const {
    json m;
    m["libtorch"] = std::to_string(TORCH_VERSION_MAJOR) + "." +
                    std::to_string(TORCH_VERSION_MINOR) + "." +
                    std::to_string(TORCH_VERSION_PATCH);
    m["cuda_available"] = torch::cuda::is_available();
    m["cuda_devices"] = torch::cuda::is_available() ? torch::cuda::device_count() : 0;
    m["mkldnn"] = at::hasMKLDNN();
    m["build_config"] = at::show_config();
    return m;
}

std::vector<std::vector<c10::IValue>> Engine::Impl::makeInputs(int batch, bool onHost) {
    std::size_t variants = 1;
    for (const auto& in : inputSpecs) variants = std::max(variants, std::max<std::size_t>(1, in.shapes.size()));
    std::vector<std::vector<c10::IValue>> out(variants);
    const auto target = onHost ? c10::Device(c10::DeviceType::CPU) : device;
    for (std::size_t v = 0; v < variants; ++v) {
        for (const auto& in : inputSpecs) {
            std::vector<std::int64_t> shape{batch};
            const auto& dims = in.shapes.empty() ? in.shape : in.shapes[v % in.shapes.size()];
            shape.insert(shape.end(), dims.begin(), dims.end());
            const auto dtype = scalarType(in.dtype);
            at::Tensor t;
            if (dtype == at::kLong || dtype == at::kInt)
                t = torch::randint(0, 100, shape, torch::TensorOptions().dtype(dtype));
            else
                t = torch::randn(shape).to(dtype);
            if (knobs.precision == "half" && t.is_floating_point()) t = t.to(at::kHalf);
            if (knobs.memory_format == "channels_last" && t.dim() == 4)
                t = t.contiguous(at::MemoryFormat::ChannelsLast);
            if (onHost && device.is_cuda()) t = t.pin_memory();
            out[v].push_back(t.to(target));
        }
    }
    return out;
}

c10::IValue Engine::Impl::forward(const std::vector<c10::IValue>& in) {
    if (knobs.input_on_host && device.is_cuda()) {
        std::vector<c10::IValue> moved;
        moved.reserve(in.size());
        for (const auto& v : in) moved.emplace_back(v.toTensor().to(device, /*non_blocking=*/true));
        return module.forward(std::move(moved));
    }
    return module.forward(in);
}

// flush_denormal: ATen sets the flag (MXCSR FTZ + DAZ on x86) of the calling thread only, so it
// is set on the main (timing) thread and once on each intra-op thread: a parallel_for with one
// item per thread gives every thread of the pool exactly one item.
void Engine::Impl::applyFlushDenormal() {
    if (!knobs.flush_denormal) return;
    const bool on = *knobs.flush_denormal;
    std::atomic<int> refused{at::globalContext().setFlushDenormal(on) ? 0 : 1};
    at::parallel_for(0, at::get_num_threads(), 1, [&](std::int64_t b, std::int64_t e) {
        for (auto i = b; i < e; ++i)
            if (!at::globalContext().setFlushDenormal(on)) ++refused;
    });
    if (on && refused > 0)
        sink.warning("flush_denormal_unsupported",
                     "flush_denormal: this CPU cannot flush denormals to zero "
                     "(setFlushDenormal returned false); denormals are kept");
}

// Read back from every thread that computes (main + intra-op pool), and the effect itself: a
// denormal multiplied by one through an ATen kernel is 0 only when denormals are flushed.
void Engine::Impl::readBackFlushDenormal(json& a) {
    const float tiny = 1e-39f;  // below FLT_MIN (1.18e-38): a denormal
    const float product = (torch::full({1}, tiny) * 1.0f).item<float>();
#ifdef PITLANE_HAVE_MXCSR
    const unsigned kFlush = 0x8000u | 0x0040u;  // FTZ | DAZ
    const int n = at::get_num_threads();
    std::vector<unsigned> csr(std::size_t(n) + 1, 0);
    csr[0] = _mm_getcsr();
    at::parallel_for(0, n, 1, [&](std::int64_t b, std::int64_t e) {
        for (auto i = b; i < e; ++i) csr[std::size_t(i) + 1] = _mm_getcsr();
    });
    int flushing = 0;
    for (unsigned c : csr) flushing += (c & kFlush) == kFlush ? 1 : 0;
    const bool all = flushing == int(csr.size());
    a["flush_denormal"] = all;
    a["flush_denormal_state"] = {{"threads_checked", csr.size()},
                                 {"threads_flushing", flushing},
                                 {"mxcsr_main", csr[0]},
                                 {"denormal_times_one", product}};
    if (knobs.flush_denormal && *knobs.flush_denormal != all)
        sink.warning("flush_denormal_partial",
                     "flush_denormal: " + std::to_string(flushing) + " of " +
                         std::to_string(csr.size()) + " threads flush denormals");
#else
    a["flush_denormal"] = product == 0.0f;
    a["flush_denormal_state"] = {{"readable", false}, {"denormal_times_one", product}};
#endif
}

}  // namespace pitlane::engine
