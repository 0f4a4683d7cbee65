// Engine construction, the environment manifest, input creation and the forward call.
#include "engine_impl.h"

#include <c10/core/impl/alloc_cpu.h>

#include <atomic>
#include <cmath>
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
    // CUDA availability is torch's answer, with the CUDA module (libtorch_cuda) loaded when the
    // worker loaded it at start (a CUDA arm, or an NVIDIA driver present). A CPU arm's worker on
    // a machine without a driver does not load it: torch's answer there is "no device" either
    // way, and the module's ~40 % of the start-up is saved (docs/PERFORMANCE.md).
    const bool available = torch::cuda::is_available();
    m["cuda_available"] = available;
    m["cuda_devices"] = available ? torch::cuda::device_count() : 0;
    m["mkldnn"] = at::hasMKLDNN();
    m["mkl"] = at::hasMKL();
    // What this worker was built with, device or none: the CUDA module (libtorch_cuda), the
    // CUDA runtime and cuDNN versions, and Kineto (the profiler of `profile`).
    m["cuda_build"] = cuda::compiledIn();
    if (cuda::compiledIn()) {
        m["cuda_versions"] = cuda::versionsWithoutModule();  // the module's own when it is loaded
        m["cuda_module_loaded"] = cuda::loaded() != nullptr;
    }
    m["kineto"] = at::show_config().find("USE_KINETO") != std::string::npos;
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
            // batch_dim false: the shape is the whole tensor's (the spec keeps batch_size 1).
            const auto& dims = in.shapes.empty() ? in.shape : in.shapes[v % in.shapes.size()];
            std::vector<std::int64_t> shape;
            shape.reserve(dims.size() + 1);
            if (in.batch_dim) shape.push_back(batch);
            for (const auto d : dims) shape.push_back(d);  // not insert(): GCC 12's -Wstringop-overflow misfires on it at -O2
            const auto dtype = scalarType(in.dtype);
            at::Tensor t;
            const std::size_t index = std::size_t(&in - inputSpecs.data());
            if (in.example)
                t = exampleTensor(index, batch);
            else if (dtype == at::kBool)
                t = torch::randint(0, 2, shape, torch::TensorOptions().dtype(at::kLong)).to(at::kBool);
            else if (!at::isFloatingType(dtype))  // ids in [low, high) (the spec's default [0, 100))
                t = torch::randint(in.low.value_or(spec::kDefaultIntLow), in.high.value_or(spec::kDefaultIntHigh), shape,
                                   torch::TensorOptions().dtype(dtype));
            else
                t = torch::randn(shape).to(dtype);
            if (knobs.precision == spec::Precision::Half && t.is_floating_point()) t = t.to(at::kHalf);
            if (knobs.memory_format == spec::MemoryFormat::ChannelsLast && t.dim() == 4)
                t = t.contiguous(at::MemoryFormat::ChannelsLast);
            if (onHost && device.is_cuda()) t = t.pin_memory();
            out[v].push_back(t.to(target));
        }
    }
    return out;
}

c10::IValue Engine::Impl::forward(const std::vector<c10::IValue>& in) {
    if (program) return runExported(in);
    if (package) {
        auto outs = runPackage(in);
        if (outs.size() == 1) return outs.front();
        return c10::List<at::Tensor>(outs);
    }
    if (knobs.input_on_host && device.is_cuda()) {
        std::vector<c10::IValue> moved;
        moved.reserve(in.size());
        for (const auto& v : in) moved.emplace_back(v.toTensor().to(device, /*non_blocking=*/true));
        return module.forward(std::move(moved));
    }
    return module.forward(in);
}

namespace {

// One element of parameter `p` where its gradient `g` is largest in magnitude, as a view (read it
// before and after the update). No copy of either when both have the same dense layout.
at::Tensor largestGradElement(const at::Tensor& p, const at::Tensor& g) {
    if (p.numel() == 0 || g.sizes() != p.sizes()) return {};
    at::Tensor gv, pv;
    if (p.strides() == g.strides() && g.is_non_overlapping_and_dense()) {
        gv = g.as_strided({g.numel()}, {1}, g.storage_offset());  // storage order
        pv = p.as_strided({p.numel()}, {1}, p.storage_offset());
    } else {
        gv = g.reshape(-1);  // logical order; p is walked by index below
    }
    const auto hi = gv.argmax().item<std::int64_t>(), lo = gv.argmin().item<std::int64_t>();
    const bool useHi = std::abs(gv[hi].item<double>()) >= std::abs(gv[lo].item<double>());
    std::int64_t flat = useHi ? hi : lo;
    if (pv.defined()) return pv[flat];
    std::vector<std::int64_t> idx(std::size_t(p.dim()));
    for (auto d = p.dim() - 1; d >= 0; --d) {
        idx[std::size_t(d)] = flat % p.size(d);
        flat /= p.size(d);
    }
    at::Tensor e = p;
    for (auto i : idx) e = e.select(0, i);
    return e;
}

bool differs(double a, double b) { return a != b && !(std::isnan(a) && std::isnan(b)); }

// The first element of every parameter: reading it touches one cache line per parameter, so the
// cold first forward stays cold.
std::vector<double> firstElements(torch::jit::Module& m) {
    torch::NoGradGuard ng;
    std::vector<double> v;
    for (const auto& p : m.parameters()) {
        if (p.numel() == 0) {
            v.push_back(0.0);
            continue;
        }
        at::Tensor e = p;
        while (e.dim() > 0) e = e.select(0, 0);
        v.push_back(e.item<double>());
    }
    return v;
}

}  // namespace

// workload train_step: forward under the precision's autocast (the forward only, as torch
// recommends), loss = mean of the first output tensor in float32, backward outside autocast,
// then plain SGD (p -= lr * p.grad) under NoGradGuard and every grad set to None.
c10::IValue Engine::Impl::trainStep(const std::vector<c10::IValue>& in, TrainStepReadBack* rb) {
    const auto bytes0 = tensorCounters().current.load();
    c10::IValue out;
    {
        AutocastScope ac(knobs.precision, device.is_cuda());
        out = forward(in);
        if (rb) rb->autocast = autocastState();
    }
    const at::Tensor y = firstTensor(out);
    if (!y.defined() || !y.requires_grad())
        throw NoGradPath(std::string("the model's output ") +
                         (y.defined() ? "does not require grad" : "holds no tensor") +
                         ": nothing that requires grad reaches it, so there is nothing to "
                         "backpropagate");
    const at::Tensor loss = y.to(at::kFloat).mean();
    Clock::time_point r0;
    if (rb) {
        r0 = Clock::now();
        rb->keptBytes = tensorCounters().current.load() - bytes0;
        rb->loss = loss.item<double>();
        rb->readBackMs += msSince(r0);
    }
    loss.backward();
    torch::NoGradGuard noGrad;
    for (auto& p : trainParams) {
        at::Tensor& g = p.mutable_grad();
        if (!g.defined()) continue;
        if (!rb) {
            p.sub_(g, kTrainLr);
            g = at::Tensor();  // set to None: the next backward allocates it afresh
            continue;
        }
        r0 = Clock::now();
        ++rb->withGrad;
        const at::Tensor e = largestGradElement(p, g);
        const double before = e.defined() ? e.item<double>() : 0.0;
        rb->readBackMs += msSince(r0);
        p.sub_(g, kTrainLr);
        r0 = Clock::now();
        if (e.defined() && differs(e.item<double>(), before)) ++rb->updated;
        rb->readBackMs += msSince(r0);
        g = at::Tensor();
    }
    if (rb)
        for (const auto& p : trainParams)
            rb->gradsCleared = rb->gradsCleared && !p.grad().defined();
    return out;
}

// Step 7 for the workload knob: a train step updates the parameters that require grad.
bool Engine::Impl::applyWorkload() {
    trainParams.clear();
    if (!trainStepWorkload()) return true;
    const json knob = {{"knob", "workload"}, {"field", "knobs.workload"}};
    if (knobs.cuda_graph)
        return sink.error(code::kBadKnob,
                          "workload \"train_step\" cannot run under cuda_graph: the graph "
                          "replays the captured forward only",
                          knob),
               false;
    for (const auto& p : module.parameters())
        if (p.requires_grad()) trainParams.push_back(p);
    if (trainParams.empty())
        return sink.error(code::kBadKnob,
                          "workload \"train_step\": this model has no parameter that requires "
                          "grad, so a training step has nothing to update",
                          knob),
               false;
    return true;
}

// The first iteration at configure. Inference: one forward, and whether it touched a parameter
// (each one's first element before and after). train_step: one whole step (its cold cost
// includes backward and the update), read back as it runs.
c10::IValue Engine::Impl::firstIteration(const std::vector<c10::IValue>& in, ConfigureState& s,
                                         double& readBackMs) {
    auto& w = s.workload;
    w = json::object();
    if (trainStepWorkload()) {
        TrainStepReadBack rb;
        auto out = trainStep(in, &rb);
        readBackMs = rb.readBackMs;
        s.autocast = rb.autocast;
        w["parameters"] = trainParams.size();
        w["parameters_with_grad"] = rb.withGrad;
        w["parameters_updated"] = rb.updated;
        w["grads_cleared"] = rb.gradsCleared;
        w["loss"] = "mean of the first output tensor, float32";
        w["loss_first"] = rb.loss;
        w["lr"] = kTrainLr;
        w["forward_kept_bytes"] = rb.keptBytes;
        return out;
    }
    // A package's weights are constants of its compiled graph: no parameter to watch.
    auto r0 = Clock::now();
    const auto probe0 = compiledGraph() ? std::vector<double>{} : firstElements(module);
    readBackMs = msSince(r0);
    const auto bytes0 = tensorCounters().current.load();
    c10::IValue out;
    {
        AutocastScope ac(knobs.precision, device.is_cuda());
        out = forward(in);
        s.autocast = autocastState();
    }
    const auto kept = tensorCounters().current.load() - bytes0;
    r0 = Clock::now();
    const auto probe1 = compiledGraph() ? std::vector<double>{} : firstElements(module);
    int withGrad = 0, updated = 0;
    if (!compiledGraph())
        for (const auto& p : module.parameters()) withGrad += p.grad().defined() ? 1 : 0;
    for (std::size_t i = 0; i < probe0.size() && i < probe1.size(); ++i)
        updated += differs(probe0[i], probe1[i]) ? 1 : 0;
    readBackMs += msSince(r0);
    w["parameters"] = probe0.size();
    w["parameters_with_grad"] = withGrad;
    w["parameters_updated"] = updated;
    w["loss"] = nullptr;
    w["loss_first"] = nullptr;
    w["forward_kept_bytes"] = kept;
    return out;
}

// workload read back from what the first iteration did: a train step ran when grads existed and
// the SGD step changed parameters; the process's tensor peak so far shows what backward kept.
void Engine::Impl::readBackWorkload(json& a, const ConfigureState& s) {
    json w = s.workload;
    const bool trained = w.value("parameters_with_grad", 0) > 0 &&
                         w.value("parameters_updated", 0) > 0 && w.value("grads_cleared", false);
    a["workload"] = trained ? "train_step" : "inference";
    w["tensor_peak_bytes"] = tensorCounters().peak.load();
    a["workload_state"] = w;
    if (a["workload"] != choiceName(knobs.workload))
        sink.warning("workload_not_applied",
                     "workload \"" + choiceName(knobs.workload) + "\" requested, but the first iteration read "
                     "back as \"" + a["workload"].get<std::string>() + "\" (" + w.dump() + ")");
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

// The sandbox and memory limit are applied when the worker starts (worker_main.cpp, from the
// command line the session built from these knobs): a worker started otherwise would measure
// another configuration than the arm asked for. What could not be applied is a warning.
bool Engine::Impl::checkSandbox(ConfigureState& s) {
    s.sandbox = sandboxState();
    const bool on = s.sandbox.is_object() && s.sandbox.value("enabled", false);
    const json limit = s.sandbox.is_object() ? s.sandbox.value("memory_limit_bytes", json()) : json();
    std::string why;
    if (on != (knobs.sandbox == spec::Sandbox::On))
        why = "the worker was started with the sandbox " + std::string(on ? "on" : "off") +
              " but the arm asks \"" + choiceName(knobs.sandbox) + "\" (start it with --sandbox " + choiceName(knobs.sandbox) + ")";
    // A limit below the knob is the session's memory budget: its share when several workers
    // run at once (the arm carries that warning); above it, or none, is another configuration.
    else if (knobs.memory_limit_mb &&
             (!limit.is_number() || limit.get<std::int64_t>() > std::int64_t(*knobs.memory_limit_mb) << 20))
        why = "the arm asks memory_limit_mb " + std::to_string(*knobs.memory_limit_mb) +
              " but the worker's limit is " + (limit.is_number() ? limit.dump() + " bytes" : std::string("none")) +
              " (start it with --memory-limit-mb " + std::to_string(*knobs.memory_limit_mb) + ")";
    if (!why.empty()) {
        const std::string knob = on != (knobs.sandbox == spec::Sandbox::On) ? "sandbox" : "memory_limit_mb";
        sink.error(code::kBadKnob, "knob " + knob + ": " + why, {{"knob", knob}, {"field", "knobs." + knob}});
        return false;
    }
    if (on)
        for (const auto& e : s.sandbox["errors"])
            sink.warning("sandbox_incomplete", "sandbox: " + e.get<std::string>());
    return true;
}

}  // namespace pitlane::engine
