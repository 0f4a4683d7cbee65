// configure: apply every knob in the order torch requires, then read each one back.
#include "engine_impl.h"

namespace pitlane::engine {

using namespace detail;

namespace {

json gradReadback(const at::Tensor& out) {
    json g;
    g["grad_mode_enabled"] = at::GradMode::is_enabled();
    g["inference_mode_enabled"] = c10::InferenceMode::is_enabled();
    g["output_requires_grad"] = out.defined() && out.requires_grad();
    g["output_is_inference"] = out.defined() && out.is_inference();
    return g;
}

}  // namespace

bool Engine::configure(const json& cmd) {
    auto& d = *impl_;
    if (d.configured)
        return d.sink.error(code::kBadCommand,
                            "configure was already called: one worker process runs one arm"),
               false;
    const json arm = cmd.value("arm", json::object());
    try {
        d.knobs = spec::parseKnobs(arm.value("knobs", json::object()), "<configure>", "knobs");
        d.inputSpecs = spec::parseInputs(arm.value("input", json()), "<configure>", "input");
    } catch (const spec::SpecError& e) {
        d.sink.error(code::kBadKnob, e.what(), {{"field", e.field()}, {"reason", e.reason()}});
        return false;
    }
    d.modelPath = arm.value("model_path", std::string());
    const auto seed = arm.value("seed", std::uint64_t{0});
    auto& k = d.knobs;

    // 0. Allocator: chosen when the process started (LD_PRELOAD), so only checked here. Never
    // measure a different allocator than the arm asked for.
    const json allocator = mappedAllocator();
    if (allocator["name"] != k.allocator) {
        const std::string mappedName = allocator["name"];
        const std::string path = allocator["path"];
        const char* preload = std::getenv("LD_PRELOAD");
        std::string msg =
            "allocator \"" + k.allocator + "\" requested, but malloc in this worker comes from " +
            (path.empty() ? std::string("an unknown library") : path) + " (" + mappedName + "): ";
        if (k.allocator == "system")
            msg += "another allocator was preloaded from outside (LD_PRELOAD=" +
                   std::string(preload ? preload : "") +
                   "); unset LD_PRELOAD or set the allocator knob to what you preload";
        else
            msg += "the worker must be started with " +
                   std::string(k.allocator == "jemalloc" ? "libjemalloc.so.2"
                                                         : "libtcmalloc_minimal.so.4") +
                   " preloaded (LD_PRELOAD); pitlane does that when it starts the worker for "
                   "this knob";
        d.sink.error(code::kBadKnob, msg,
                     {{"knob", "allocator"},
                      {"field", "knobs.allocator"},
                      {"requested", k.allocator},
                      {"mapped", mappedName},
                      {"path", path},
                      {"ld_preload", preload ? preload : ""}});
        return false;
    }

    // 1. Device.
    if (k.device != "cpu") {
        const int index = std::stoi(k.device.substr(5));
        if (!torch::cuda::is_available()) {
            d.sink.error(code::kDeviceUnavailable,
                         "device \"" + k.device +
                             "\" requested, but this libtorch has no usable CUDA (CPU-only build "
                             "or no GPU/driver); use \"cpu\"",
                         {{"knob", "device"}});
            return false;
        }
        if (index >= static_cast<int>(torch::cuda::device_count())) {
            d.sink.error(code::kDeviceUnavailable,
                         "device \"" + k.device + "\" does not exist: " +
                             std::to_string(torch::cuda::device_count()) + " CUDA device(s)",
                         {{"knob", "device"}});
            return false;
        }
        d.device = c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
    }

    // 2. Affinity before torch creates its thread pools (they inherit the mask).
    const auto allowed = allowedCores();
    // K concurrent workers of one arm share the machine: by default each gets cores / K threads
    // and, under compact / spread / a core list, its own slice of cores.
    const int workerCount = std::max(1, arm.value("worker_count", 1));
    const int workerIndex = std::clamp(arm.value("worker_index", 0), 0, workerCount - 1);
    const int intra = k.intra_op_threads.value_or(
        std::max(1, static_cast<int>(allowed.size()) / workerCount));
    std::vector<int> pin;
    if (k.affinity == "list") {
        for (int c : k.affinity_cores)
            if (std::find(allowed.begin(), allowed.end(), c) == allowed.end()) {
                std::ostringstream os;
                os << "affinity: core " << c << " is not available to this process (allowed:";
                for (int a : allowed) os << ' ' << a;
                os << ')';
                d.sink.error(code::kAffinityFailed, os.str(), {{"knob", "affinity"}});
                return false;
            }
        pin = k.affinity_cores;
        if (workerCount > 1 && int(pin.size()) >= workerCount) {
            const std::size_t per = pin.size() / std::size_t(workerCount);
            pin = std::vector<int>(pin.begin() + long(per * workerIndex),
                                   pin.begin() + long(per * (workerIndex + 1)));
        }
    } else if (k.affinity == "compact" || k.affinity == "spread") {
        const auto all = coresForPolicy(k.affinity, intra * workerCount, allowed);
        if (int(all.size()) >= intra * workerCount)
            pin.assign(all.begin() + intra * workerIndex, all.begin() + intra * (workerIndex + 1));
        else
            pin = all;  // fewer cores than workers x threads: they share (warned below)
    }
    if (!pin.empty()) {
        if (auto err = pinProcess(pin); !err.empty()) {
            d.sink.error(code::kAffinityFailed, err, {{"knob", "affinity"}});
            return false;
        }
    }
    if (intra > static_cast<int>((pin.empty() ? allowed : pin).size()))
        d.sink.warning("oversubscribed",
                       std::to_string(intra) + " intra-op threads on " +
                           std::to_string((pin.empty() ? allowed : pin).size()) +
                           " core(s): threads will time-share cores");

    // 3. Threads. The inter-op pool can be sized once per process, before first use.
    at::set_num_threads(intra);
    try {
        at::set_num_interop_threads(k.inter_op_threads);
    } catch (const std::exception& e) {
        d.sink.error(code::kBadKnob, std::string("inter_op_threads: ") + torchReason(e),
                     {{"knob", "inter_op_threads"}});
        return false;
    }

    // 4. JIT executor and fuser, process-global.
    if (k.profiling_executor) {
        torch::jit::getProfilingMode() = *k.profiling_executor;
        torch::jit::getExecutorMode() = *k.profiling_executor;
    }
    if (k.fuser) torch::jit::setTensorExprFuserEnabled(*k.fuser);

    // 5. cuDNN / TF32 flags (global context; only CUDA convolutions read them).
    auto& ctx = at::globalContext();
    if (k.cudnn_enabled) ctx.setUserEnabledCuDNN(*k.cudnn_enabled);
    if (k.cudnn_benchmark) ctx.setBenchmarkCuDNN(*k.cudnn_benchmark);
    if (k.cudnn_deterministic) ctx.setDeterministicCuDNN(*k.cudnn_deterministic);
    if (k.allow_tf32) {
        ctx.setAllowTF32CuDNN(*k.allow_tf32);
        ctx.setAllowTF32CuBLAS(*k.allow_tf32);
    }
    if ((k.cudnn_enabled || k.cudnn_benchmark || k.cudnn_deterministic || k.allow_tf32) &&
        !d.device.is_cuda())
        d.sink.warning("cuda_only_knob",
                       "cuDNN / TF32 knobs are applied and read back, but only CUDA kernels read "
                       "them: on device cpu they change nothing");
    if (k.input_on_host && !d.device.is_cuda())
        d.sink.warning("cuda_only_knob",
                       "input_on_host: the input already lives on the host for device cpu; "
                       "nothing is copied");

    // 6. Load.
    json loaded = protocol::makeEvent(protocol::kLoaded);
    std::error_code fsErr;
    if (!std::filesystem::is_regular_file(d.modelPath, fsErr)) {
        d.sink.error(code::kModelNotFound, "model file not found: " + d.modelPath,
                     {{"path", d.modelPath}});
        return false;
    }
    loaded["file_size_bytes"] = std::filesystem::file_size(d.modelPath, fsErr);
    loaded["model_path"] = d.modelPath;
    auto t0 = Clock::now();
    try {
        d.module = torch::jit::load(d.modelPath, d.device);
    } catch (const std::exception& e) {
        d.sink.error(code::kModelLoadFailed,
                     "cannot load " + d.modelPath + " as TorchScript: " + torchReason(e),
                     {{"path", d.modelPath}, {"torch", std::string(e.what()).substr(0, 2000)}});
        return false;
    }
    loaded["load_ms"] = msSince(t0);
    std::int64_t params = 0;
    for (const auto& p : d.module.parameters()) params += p.numel();
    loaded["parameters"] = params;

    // 7. Mode, precision, memory format.
    d.module.train(k.mode == "train");
    const bool training = d.module.is_training();
    try {
        if (k.precision == "half") d.module.to(at::kHalf);
        if (k.memory_format == "channels_last") {
            torch::NoGradGuard ng;
            for (auto p : d.module.parameters())
                if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
        }
    } catch (const std::exception& e) {
        d.sink.error(code::kUnsupportedDtype, "converting the model: " + torchReason(e));
        return false;
    }

    // 8. JIT freeze / optimize_for_inference.
    if (k.jit != "none") {
        t0 = Clock::now();
        try {
            d.module = torch::jit::freeze(d.module);
            loaded["freeze_ms"] = msSince(t0);
            if (k.jit == "freeze_optimize") {
                t0 = Clock::now();
                d.module = torch::jit::optimize_for_inference(d.module);
                loaded["optimize_ms"] = msSince(t0);
            }
        } catch (const std::exception& e) {
            d.sink.error(code::kJitFailed, "jit \"" + k.jit + "\" failed: " + torchReason(e),
                         {{"knob", "jit"}});
            return false;
        }
    }

    // 9. Inputs (seeded) for every batch size of the sweep.
    // Only the first size now: the other sizes of a sweep are built when their turn comes, so one
    // that does not fit in memory fails alone (runBlock).
    d.seed = seed;
    try {
        torch::manual_seed(seed);
        d.inputs[k.batch_size.front()] = d.makeInputs(k.batch_size.front(), k.input_on_host);
    } catch (const std::exception& e) {
        const auto reason = torchReason(e);
        d.sink.error(classifyForwardError(reason), "creating the input: " + reason);
        return false;
    }
    {
        bool any4d = false;
        for (const auto& in : d.inputSpecs) any4d |= in.shape.size() + 1 == 4;
        if (k.memory_format == "channels_last" && !any4d)
            d.sink.warning("knob_not_applicable",
                           "memory_format channels_last applies to 4-D (NCHW) inputs only; this "
                           "model's input is not 4-D, so it stays contiguous");
    }

    // 10. First forward: the cold cost, and the read-back of what actually happened.
    const int bs0 = k.batch_size.front();
    at::Tensor out;
    json grad;
    json autocast;
    t0 = Clock::now();
    try {
        GradScope g(k.grad);
        AutocastScope ac(k.precision);
        auto result = d.forward(d.inputs[bs0].front());
        if (d.device.is_cuda()) torch::cuda::synchronize();
        loaded["first_forward_ms"] = msSince(t0);
        out = firstTensor(result);
        grad = gradReadback(out);
        autocast = {{"cpu_enabled", at::autocast::is_cpu_enabled()},
                    {"cpu_dtype", dtypeName(at::autocast::get_autocast_cpu_dtype())},
                    {"cuda_enabled", at::autocast::is_enabled()}};
    } catch (const std::exception& e) {
        const auto reason = torchReason(e);
        std::ostringstream shapes;
        for (const auto& v : d.inputs[bs0].front()) shapes << v.toTensor().sizes() << ' '
                                                       << dtypeName(v.toTensor().scalar_type()) << ' ';
        d.sink.error(classifyForwardError(reason),
                     "forward failed with input " + shapes.str() + "(precision " + k.precision +
                         "): " + reason,
                     {{"torch", std::string(e.what()).substr(0, 4000)}});
        return false;
    }
    if (out.defined()) {
        loaded["output"] = {{"shape", out.sizes().vec()}, {"dtype", dtypeName(out.scalar_type())}};
    }
    loaded["input"] = spec::inputsToJson(d.inputSpecs);
    if (k.cuda_graph) {
#ifdef PITLANE_WITH_CUDA
        try {
            GradScope g(k.grad);
            d.graph = std::make_unique<cuda::GraphRunner>();
            d.graph->capture(d.module, d.inputs[bs0].front());
        } catch (const std::exception& e) {
            d.sink.error(code::kBadKnob, "cuda_graph: capture failed: " + torchReason(e),
                         {{"knob", "cuda_graph"}});
            return false;
        }
#else
        d.sink.error(code::kBadKnob, "cuda_graph: this libtorch was built without CUDA",
                     {{"knob", "cuda_graph"}});
        return false;
#endif
    }
#ifdef PITLANE_WITH_CUDA
    if (d.device.is_cuda()) {
        const int dev = d.device.index();
        setMetricsHook([dev](json& e) { e["cuda_allocator"] = cuda::allocatorStats(dev); });
    }
#endif
    d.sink.emit(loaded);

    // 11. Read back everything.
    json a = protocol::makeEvent(protocol::kApplied);
    a["device"] = d.device.str();
    a["mode"] = training ? "train" : "eval";
    const bool inf = grad.value("inference_mode_enabled", false);
    const bool gradOn = grad.value("grad_mode_enabled", true);
    a["grad"] = inf ? "inference_mode" : (gradOn ? "enabled" : "no_grad");
    a["grad_state"] = grad;
    int nodes = 0, getattr = 0, mkldnn = 0;
    countNodes(d.module.get_method("forward").graph()->block(), nodes, getattr, mkldnn);
    // Frozen means the weights became graph constants: no parameter is left on the module and the
    // (inlined) forward reads no attribute.
    std::int64_t remainingParams = 0;
    for (const auto& p : d.module.parameters()) remainingParams += p.numel();
    const bool frozen = k.jit != "none" && getattr == 0 && remainingParams == 0;
    a["jit"] = !frozen ? "none" : (k.jit == "freeze_optimize" ? "freeze_optimize" : "freeze");
    a["jit_state"] = {{"graph_nodes", nodes},
                      {"getattr_nodes", getattr},
                      {"mkldnn_nodes", mkldnn},
                      {"frozen", frozen},
                      {"remaining_parameters", remainingParams},
                      {"profiling_executor", torch::jit::getProfilingMode().load()},
                      {"fuser_nnc", torch::jit::tensorExprFuserEnabled()}};
    const std::string outDtype = out.defined() ? dtypeName(out.scalar_type()) : "none";
    std::string precision = "fp32";
    if (autocast.value("cpu_enabled", false) && outDtype == "bfloat16") precision = "autocast_bf16";
    else if (autocast.value("cuda_enabled", false) && outDtype == "float16") precision = "autocast_fp16";
    else if (outDtype == "float16") precision = "half";
    a["precision"] = precision;
    a["precision_state"] = {{"output_dtype", outDtype}, {"autocast", autocast}};
    a["intra_op_threads"] = at::get_num_threads();
    a["inter_op_threads"] = at::get_num_interop_threads();
    std::set<int> unionMask;
    bool uniform = true;
    std::vector<int> first;
    const auto tids = taskIds();
    for (int tid : tids) {
        auto m = threadAffinity(tid);
        if (first.empty()) first = m;
        else if (m != first) uniform = false;
        unionMask.insert(m.begin(), m.end());
    }
    a["affinity"] = std::vector<int>(unionMask.begin(), unionMask.end());
    a["affinity_policy"] = k.affinity;
    a["affinity_uniform"] = uniform;
    a["worker_index"] = workerIndex;
    a["worker_count"] = workerCount;
    a["process_threads"] = tids.size();
    if (k.batch_size.size() == 1) a["batch_size"] = bs0;
    else a["batch_size"] = k.batch_size;
    const auto& firstIn = d.inputs[bs0].front().front().toTensor();
    a["memory_format"] = firstIn.dim() == 4 && firstIn.is_contiguous(at::MemoryFormat::ChannelsLast) &&
                                 k.memory_format == "channels_last"
                             ? "channels_last"
                             : "contiguous";
    a["input_shapes"] = json::array();
    for (const auto& v : d.inputs[bs0].front()) a["input_shapes"].push_back(v.toTensor().sizes().vec());
    a["input_variants"] = d.inputs[bs0].size();
    const auto blas = mappedBlas();
    a["blas"] = blas["name"];
    a["blas_path"] = blas["path"];
    a["allocator"] = allocator["name"];
    a["allocator_path"] = allocator["path"];
    a["allocator_conf"] = allocator["conf"];
    a["allocator_options"] = allocator["options"];
    a["allocator_mapped"] = allocator["mapped"];
    a["cudnn"] = {{"enabled", ctx.userEnabledCuDNN()},
                  {"benchmark", ctx.benchmarkCuDNN()},
                  {"deterministic", ctx.deterministicCuDNN()},
                  {"allow_tf32", ctx.allowTF32CuDNN()}};
    a["parallel_info"] = at::get_parallel_info();
    a["host_sync_each_iter"] = k.host_sync_each_iter;
#ifdef PITLANE_WITH_CUDA
    a["cuda_graph"] = d.graph && d.graph->captured();
#else
    a["cuda_graph"] = false;
#endif
    a["input_on_host"] = k.input_on_host && d.device.is_cuda();
    if (blas["name"] == "reference")
        d.sink.warning("reference_blas",
                       "libtorch is using the reference BLAS (" + blas["path"].get<std::string>() +
                           "): linear layers run 10-20x slower; install libopenblas0-openmp");
    d.sink.emit(a);
    d.configured = true;
    return true;
}

}  // namespace pitlane::engine
