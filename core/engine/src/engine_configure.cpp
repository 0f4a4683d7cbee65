// configure: apply every knob in the order torch requires, then read each one back.
#include "engine_impl.h"

#include <ATen/record_function.h>

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

// The bad_knob message when malloc comes from another library than the allocator knob names.
std::string allocatorMismatch(spec::Allocator requested, const std::string& mappedName,
                              const std::string& path, const char* preload) {
    std::string msg =
        "allocator \"" + choiceName(requested) + "\" requested, but malloc in this worker comes from " +
        (path.empty() ? std::string("an unknown library") : path) + " (" + mappedName + "): ";
    if (requested == spec::Allocator::System)
        msg += "another allocator was preloaded from outside (LD_PRELOAD=" +
               std::string(preload ? preload : "") +
               "); unset LD_PRELOAD or set the allocator knob to what you preload";
    else
        msg += "the worker must be started with " +
               std::string(requested == spec::Allocator::Jemalloc ? "libjemalloc.so.2"
                                                   : "libtcmalloc_minimal.so.4") +
               " preloaded (LD_PRELOAD); pitlane does that when it starts the worker for "
               "this knob";
    return msg;
}

// The floating dtypes of the first outputs of the ATen operators one forward runs, counted by a
// RecordFunction observer on this thread (an extra, unmeasured forward of autocast arms).
thread_local std::map<std::string, int>* tCensus = nullptr;
void censusOutput(const at::RecordFunction& fn, at::ObserverContext*) {
    if (!tCensus) return;
    const auto& outs = fn.outputs();
    if (outs.empty() || !outs.front().isTensor()) return;
    const auto& t = outs.front().toTensor();
    if (t.defined() && t.is_floating_point()) ++(*tCensus)[dtypeName(t.scalar_type())];
}

}  // namespace

bool Engine::configure(const json& cmd) {
    auto& d = *impl_;
    if (d.configured)
        return d.sink.error(code::kBadCommand,
                            "configure was already called: one worker process runs one arm"),
               false;
    ConfigureState s;
    if (!d.parseArm(cmd, s)) return false;           // knobs, inputs, model path, seed
    if (!d.checkAllocator(s)) return false;          // 0. allocator (chosen at process start)
    if (!d.checkSandbox(s)) return false;            //    sandbox (applied at process start)
    if (!d.selectDevice()) return false;             // 1. device
    if (!d.applyAffinity(s)) return false;           // 2. affinity, before torch's thread pools
    if (!d.applyThreads(s)) return false;            // 3. intra / inter-op threads
    d.applyJitExecutor();                            // 4. JIT executor and fuser
    d.applyCudnnFlags();                             // 5. cuDNN / TF32 flags
    d.applyFlushDenormal();                          //    flush denormals, every intra-op thread
    if (!d.loadModel(s)) return false;               // 6. load
    if (!d.applyModePrecisionFormat(s)) return false;  // 7. mode, precision, memory format
    if (!d.applyWorkload()) return false;            //    workload: what a train step updates
    if (!d.freezeOptimize(s)) return false;          // 8. freeze / optimize_for_inference
    if (!d.makeFirstInputs(s)) return false;         // 9. seeded inputs
    if (!d.firstForward(s)) return false;            // 10. first forward (cold cost)
    if (!d.captureCudaGraph()) return false;         //     cuda_graph knob
    d.installCudaMetricsHook();
    d.setUpEnergy(s);                                //     energy counters, idle draw
    d.sink.emit(s.loaded);
    d.emitApplied(s);                                // 11. read back everything
    d.configured = true;
    return true;
}

bool Engine::Impl::parseArm(const json& cmd, ConfigureState& s) {
    s.arm = cmd.value("arm", json::object());
    try {
        knobs = spec::parseKnobs(s.arm.value("knobs", json::object()), "<configure>", "knobs");
        inputSpecs = spec::parseInputs(s.arm.value("input", json()), "<configure>", "input");
        // The range integer ids are drawn from, written out (read back in loaded.input).
        for (auto& in : inputSpecs)
            if (!in.example && !at::isFloatingType(scalarType(in.dtype)) && in.dtype != "bool") {
                if (!in.low) in.low = spec::kDefaultIntLow;
                if (!in.high) in.high = spec::kDefaultIntHigh;
            }
        // A whole shape has no batch dimension to put batch_size in (the preset refuses it too).
        for (std::size_t i = 0; i < inputSpecs.size(); ++i)
            if (!inputSpecs[i].batch_dim && knobs.batch_size != std::vector<int>{1})
                throw spec::SpecError("<configure>", "knobs.batch_size",
                                      "must be 1: input[" + std::to_string(i) +
                                          "] gives its whole shape (batch_dim false)");
    } catch (const spec::SpecError& e) {
        sink.error(code::kBadKnob, e.what(), {{"field", e.field()}, {"reason", e.reason()}});
        return false;
    }
    modelPath = s.arm.value("model_path", std::string());
    s.seed = s.arm.value("seed", std::uint64_t{0});
    return true;
}

// 0. Allocator: chosen when the process started (LD_PRELOAD), so only checked here. Never
// measure a different allocator than the arm asked for.
bool Engine::Impl::checkAllocator(ConfigureState& s) {
    const auto& k = knobs;
    s.allocator = mappedAllocator();
    const json& allocator = s.allocator;
    if (allocator["name"] == choiceName(k.allocator)) return true;
    const std::string mappedName = allocator["name"];
    const std::string path = allocator["path"];
    const char* preload = std::getenv("LD_PRELOAD");
    sink.error(code::kBadKnob, allocatorMismatch(k.allocator, mappedName, path, preload),
               {{"knob", "allocator"},
                {"field", "knobs.allocator"},
                {"requested", choiceName(k.allocator)},
                {"mapped", mappedName},
                {"path", path},
                {"ld_preload", preload ? preload : ""}});
    return false;
}

// 1. Device.
// Issue 46 (docs/ENERGY.md): the GPU whose energy counter the blocks read (the arm's cuda:N, or
// GPU 0 for a CPU arm: what the GPU drew meanwhile), and, when the configure asks for it
// (`energy_idle`: the runner asks one process of the run), the idle draw after a cool-down.
void Engine::Impl::setUpEnergy(detail::ConfigureState& s) {
    auto& meter = EnergyMeter::instance();
    meter.useGpu(device.is_cuda() ? int(device.index() < 0 ? 0 : device.index()) : 0);
    s.energy = meter.describe();
    const json idle = s.arm.value("energy_idle", json());
    if (idle.is_object() && meter.any()) {
        const int cooldown = std::clamp(idle.value("cooldown_ms", 0), 0, 600000);
        const int window = std::clamp(idle.value("window_ms", 0), 0, 600000);
        if (window > 0) s.energy["idle"] = meter.measureIdle(cooldown, window);
    }
}

bool Engine::Impl::selectDevice() {
    const auto& k = knobs;
    if (k.device == "cpu") return true;
    const int index = std::stoi(k.device.substr(5));
    // libtorch_cuda comes with the CUDA module, which the worker loads at start when it may be
    // needed (a CUDA arm: PITLANE_WORKER_CUDA=preload; or an NVIDIA driver present), never here:
    // libtorch_cpu's getCUDAHooks() keeps the first answer it gives, so once the hello's
    // show_config() asked without the module, CUDA stays off for this process. Without the
    // module and without a driver, torch's answer below is "no device", as when it was linked.
    std::string notLoaded;
    const cuda::Module* cudaModule = cuda::loaded();
    if (!cudaModule && cuda::attempted(&notLoaded)) {
        sink.error(code::kDeviceUnavailable,
                   "device \"" + k.device + "\" requested, but " + notLoaded + "; use \"cpu\"",
                   {{"knob", "device"}});
        return false;
    }
    if (!torch::cuda::is_available()) {
#ifdef PITLANE_WITH_CUDA
        // A CUDA build: what is missing is the device (or its driver), not CUDA in libtorch.
        const std::string driver = cuda::versionsWithoutModule().value("driver", "none");
        const std::string why = "this machine has no usable CUDA device (libtorch " + std::string(TORCH_VERSION) +
                                " is a CUDA build, but " +
                                (driver == "none" ? std::string("no NVIDIA driver is installed)")
                                                  : "the NVIDIA driver (CUDA " + driver + ") sees no device)");
#else
        const std::string why = "this libtorch has no CUDA (a CPU-only build)";
#endif
        sink.error(code::kDeviceUnavailable,
                   "device \"" + k.device + "\" requested, but " + why + "; use \"cpu\"",
                   {{"knob", "device"}});
        return false;
    }
    if (index >= static_cast<int>(torch::cuda::device_count())) {
        sink.error(code::kDeviceUnavailable,
                   "device \"" + k.device + "\" does not exist: " +
                       std::to_string(torch::cuda::device_count()) + " CUDA device(s)",
                   {{"knob", "device"}});
        return false;
    }
    device = c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
    if (cudaModule) eventTimer = cudaModule->eventTimer();
    return true;
}

// 2. Affinity before torch creates its thread pools (they inherit the mask).
bool Engine::Impl::applyAffinity(ConfigureState& s) {
    const auto& k = knobs;
    const auto allowed = allowedCores();
    // K concurrent workers of one arm share the machine: by default each gets cores / K threads
    // and, under compact / spread / a core list, its own slice of cores.
    const int workerCount = s.workerCount = std::max(1, s.arm.value("worker_count", 1));
    const int workerIndex = s.workerIndex =
        std::clamp(s.arm.value("worker_index", 0), 0, workerCount - 1);
    const int intra = s.intra = k.intra_op_threads.value_or(
        std::max(1, static_cast<int>(allowed.size()) / workerCount));
    std::vector<int> pin;
    if (k.affinity == spec::Affinity::List) {
        for (int c : k.affinity_cores)
            if (std::find(allowed.begin(), allowed.end(), c) == allowed.end()) {
                std::ostringstream os;
                os << "affinity: core " << c << " is not available to this process (allowed:";
                for (int a : allowed) os << ' ' << a;
                os << ')';
                sink.error(code::kAffinityFailed, os.str(), {{"knob", "affinity"}});
                return false;
            }
        pin = k.affinity_cores;
        if (workerCount > 1 && int(pin.size()) >= workerCount) {
            const std::size_t per = pin.size() / std::size_t(workerCount);
            pin = std::vector<int>(pin.begin() + long(per * workerIndex),
                                   pin.begin() + long(per * (workerIndex + 1)));
        }
    } else if (k.affinity == spec::Affinity::Compact || k.affinity == spec::Affinity::Spread) {
        const auto all = coresForPolicy(k.affinity == spec::Affinity::Compact ? Placement::Compact : Placement::Spread,
                                        intra * workerCount, allowed);
        if (int(all.size()) >= intra * workerCount)
            pin.assign(all.begin() + intra * workerIndex, all.begin() + intra * (workerIndex + 1));
        else
            pin = all;  // fewer cores than workers x threads: they share (warned below)
    }
    if (!pin.empty()) {
        if (auto err = pinProcess(pin); !err.empty()) {
            sink.error(code::kAffinityFailed, err, {{"knob", "affinity"}});
            return false;
        }
    }
    if (intra > static_cast<int>((pin.empty() ? allowed : pin).size()))
        sink.warning("oversubscribed",
                     std::to_string(intra) + " intra-op threads on " +
                         std::to_string((pin.empty() ? allowed : pin).size()) +
                         " core(s): threads will time-share cores");
    return true;
}

// 3. Threads. The inter-op pool can be sized once per process, before first use.
bool Engine::Impl::applyThreads(const ConfigureState& s) {
    at::set_num_threads(s.intra);
    try {
        at::set_num_interop_threads(knobs.inter_op_threads);
    } catch (const std::exception& e) {
        sink.error(code::kBadKnob, std::string("inter_op_threads: ") + torchReason(e),
                   {{"knob", "inter_op_threads"}});
        return false;
    }
    return true;
}

// 4. JIT executor and fuser, process-global.
void Engine::Impl::applyJitExecutor() {
    const auto& k = knobs;
    if (k.profiling_executor) {
        torch::jit::getProfilingMode() = *k.profiling_executor;
        torch::jit::getExecutorMode() = *k.profiling_executor;
    }
    if (k.fuser) torch::jit::setTensorExprFuserEnabled(*k.fuser);
}

// 5. cuDNN / TF32 flags (global context; only CUDA convolutions read them).
void Engine::Impl::applyCudnnFlags() {
    const auto& k = knobs;
    auto& ctx = at::globalContext();
    if (k.cudnn_enabled) ctx.setUserEnabledCuDNN(*k.cudnn_enabled);
    if (k.cudnn_benchmark) ctx.setBenchmarkCuDNN(*k.cudnn_benchmark);
    if (k.cudnn_deterministic) ctx.setDeterministicCuDNN(*k.cudnn_deterministic);
    if (k.allow_tf32) {
        ctx.setAllowTF32CuDNN(*k.allow_tf32);
        ctx.setAllowTF32CuBLAS(*k.allow_tf32);
    }
    if ((k.cudnn_enabled || k.cudnn_benchmark || k.cudnn_deterministic || k.allow_tf32) && !device.is_cuda())
        sink.warning("cuda_only_knob",
                     "cuDNN / TF32 knobs are applied and read back, but only CUDA kernels read "
                     "them: on device cpu they change nothing");
    if (k.input_on_host && !device.is_cuda())
        sink.warning("cuda_only_knob",
                     "input_on_host: the input already lives on the host for device cpu; "
                     "nothing is copied");
}

// 6. Load.
bool Engine::Impl::loadModel(ConfigureState& s) {
    json& loaded = s.loaded = protocol::makeEvent(protocol::kLoaded);
    std::error_code fsErr;
    if (!std::filesystem::is_regular_file(modelPath, fsErr)) {
        sink.error(code::kModelNotFound, "model file not found: " + modelPath,
                   {{"path", modelPath}});
        return false;
    }
    loaded["file_size_bytes"] = std::filesystem::file_size(modelPath, fsErr);
    loaded["model_path"] = modelPath;
    // The format from the file, not its name: an AOTInductor package is loaded by its own
    // loader, with the knobs a package takes (inference_mode when grad is left out).
    const spec::ModelFormat format = spec::readModelFormat(modelPath);
    // The example inputs: of the program itself, or of the archive a compiled package came from.
    const std::string examples = s.arm.value("example_inputs", format.format == spec::kFormatExported ? modelPath : std::string());
    const bool wantExamples = std::any_of(inputSpecs.begin(), inputSpecs.end(), [](const spec::InputSpec& in) { return in.example; });
    if (wantExamples && examples.empty()) {
        sink.error(code::kBadKnob, "input: \"example\" inputs are an exported program's own, and " + modelPath +
                                       " is not one (give the input's shape and dtype instead)",
                   {{"field", "input"}});
        return false;
    }
    if (format.format == spec::kFormatAoti || format.format == spec::kFormatExported) {
        spec::applyFormatDefaults(knobs, s.arm.value("knobs", json::object()), format.format);
        const bool ok = format.format == spec::kFormatAoti ? loadPackage(s, format) : loadExported(s, format);
        if (ok && wantExamples) {
            if (!loadExampleInputs(examples)) return false;
            s.loaded["example_inputs"] = examples;
            // What was read, so that a test (and a user) can tell the values are the file's.
            json values = json::array();
            for (const auto& t : exampleInputs) {
                const auto d = t.to(at::kDouble);
                values.push_back({{"shape", t.sizes().vec()}, {"dtype", dtypeName(t.scalar_type())},
                                  {"min", t.numel() ? d.min().item<double>() : 0.0},
                                  {"max", t.numel() ? d.max().item<double>() : 0.0},
                                  {"sum", d.sum().item<double>()}});
            }
            s.loaded["example_values"] = values;
        }
        return ok;
    }
    if (wantExamples) {
        sink.error(code::kBadKnob, "input: \"example\" inputs are an exported program's own; " + modelPath +
                                       " is TorchScript (give the input's shape and dtype instead)",
                   {{"field", "input"}});
        return false;
    }
    loaded["format"] = spec::kFormatTorchScript;
    const auto t0 = Clock::now();
    try {
        module = torch::jit::load(modelPath, device);
    } catch (const std::exception& e) {
        // An operator this libtorch does not know: the file was written by another PyTorch.
        // Name the operator and this libtorch, and say what to do.
        const std::string what = e.what();
        const std::string marker = "Unknown builtin op: ";
        std::string hint;
        json detail = {{"path", modelPath}, {"torch", what.substr(0, 2000)}};
        if (const auto at = what.find(marker); at != std::string::npos) {
            const auto start = at + marker.size();
            const auto colons = what.find("::", start);
            const auto end = what.find_first_of(".\n \t", colons == std::string::npos ? start : colons + 2);
            const std::string op = what.substr(start, end == std::string::npos ? std::string::npos : end - start);
            detail["operator"] = op;
            hint = " — this worker's libtorch " + std::string(TORCH_VERSION) + " has no operator " + op +
                   ": the file was saved by a PyTorch that has it (a newer one, or one with an extension "
                   "loaded); re-export it with PyTorch " + std::string(TORCH_VERSION) +
                   " (the project's .venv/bin/python)";
        }
        sink.error(code::kModelLoadFailed, "cannot load " + modelPath + " as TorchScript: " + torchReason(e) + hint,
                   detail);
        return false;
    }
    loaded["load_ms"] = msSince(t0);
    std::int64_t params = 0;
    for (const auto& p : module.parameters()) params += p.numel();
    loaded["parameters"] = params;
    return true;
}

// 7. Mode, precision, memory format.
bool Engine::Impl::applyModePrecisionFormat(ConfigureState& s) {
    const auto& k = knobs;
    if (compiledGraph()) {  // eval mode, dtypes and layouts fixed when compiled / exported (knobs refused otherwise)
        s.training = false;
        return true;
    }
    module.train(k.mode == spec::Mode::Train);
    s.training = module.is_training();
    try {
        if (k.precision == spec::Precision::Half) module.to(at::kHalf);
        if (k.memory_format == spec::MemoryFormat::ChannelsLast) {
            torch::NoGradGuard ng;
            for (auto p : module.parameters())
                if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
        }
    } catch (const std::exception& e) {
        sink.error(code::kUnsupportedDtype, "converting the model: " + torchReason(e));
        return false;
    }
    return true;
}

// 8. JIT freeze / optimize_for_inference.
bool Engine::Impl::freezeOptimize(ConfigureState& s) {
    const auto& k = knobs;
    if (k.jit == spec::Jit::None) return true;
    auto t0 = Clock::now();
    try {
        module = torch::jit::freeze(module);
        s.loaded["freeze_ms"] = msSince(t0);
        if (k.jit == spec::Jit::FreezeOptimize) {
            t0 = Clock::now();
            module = torch::jit::optimize_for_inference(module);
            s.loaded["optimize_ms"] = msSince(t0);
        }
    } catch (const std::exception& e) {
        sink.error(code::kJitFailed, "jit \"" + choiceName(k.jit) + "\" failed: " + torchReason(e),
                   {{"knob", "jit"}});
        return false;
    }
    return true;
}

// 9. Inputs (seeded) for every batch size of the sweep.
// Only the first size now: the other sizes of a sweep are built when their turn comes, so one
// that does not fit in memory fails alone (runBlock).
bool Engine::Impl::makeFirstInputs(const ConfigureState& s) {
    const auto& k = knobs;
    seed = s.seed;
    try {
        torch::manual_seed(s.seed);
        inputs[k.batch_size.front()] = makeInputs(k.batch_size.front(), k.input_on_host);
    } catch (const std::exception& e) {
        const auto reason = torchReason(e);
        sink.error(classifyForwardError(reason), "creating the input: " + reason);
        return false;
    }
    bool any4d = false;
    for (const auto& in : inputSpecs) any4d |= in.shape.size() + (in.batch_dim ? 1 : 0) == 4;
    if (k.memory_format == spec::MemoryFormat::ChannelsLast && !any4d)
        sink.warning("knob_not_applicable",
                     "memory_format channels_last applies to 4-D (NCHW) inputs only; this "
                     "model's input is not 4-D, so it stays contiguous");
    return true;
}

namespace {
// What to change when a forward failed on the input's values or dtype (issue 41): an index out of
// range names each integer input and the range its ids were drawn from; an integer expected
// where a float was given says how to ask for integers.
std::string inputHintFor(const std::string& reason, const std::vector<spec::InputSpec>& specs) {
    std::string ints;
    for (std::size_t i = 0; i < specs.size(); ++i)
        if (specs[i].low && specs[i].high)
            ints += (ints.empty() ? "" : ", ") + std::string("input[") + std::to_string(i) + "] " + specs[i].dtype +
                    " drawn from [" + std::to_string(*specs[i].low) + ", " + std::to_string(*specs[i].high) + ")";
    if (reason.find("out of range") != std::string::npos && !ints.empty())
        return " — the ids fed: " + ints + "; give the model's range with --input \"16:int64[0,50)\" or "
               "\"low\" / \"high\" in the preset's input";
    if ((reason.find("Long, Int") != std::string::npos || reason.find("scalar type Long") != std::string::npos) &&
        std::any_of(specs.begin(), specs.end(), [](const spec::InputSpec& in) { return in.dtype == "float32"; }))
        return " — the model expects integer ids: give the input an integer dtype, e.g. --input \"16:int64[0,50)\" or "
               "\"dtype\": \"int64\" in the preset";
    return {};
}
}  // namespace

// 10. First forward: the cold cost, and the read-back of what actually happened.
bool Engine::Impl::firstForward(ConfigureState& s) {
    const auto& k = knobs;
    const int bs0 = k.batch_size.front();
    const auto t0 = Clock::now();
    try {
        GradScope g(k.grad);
        double readBackMs = 0;  // reading back inside the iteration is not its cold cost
        auto result = firstIteration(inputs[bs0].front(), s, readBackMs);
        if (device.is_cuda()) torch::cuda::synchronize();
        s.loaded["first_forward_ms"] = msSince(t0) - readBackMs;
        s.out = firstTensor(result);
        s.grad = gradReadback(s.out);
    } catch (const NoGradPath& e) {
        sink.error(code::kBadKnob, std::string("workload \"train_step\": ") + e.what(),
                   {{"knob", "workload"}, {"field", "knobs.workload"}});
        return false;
    } catch (const std::exception& e) {
        std::string reason = torchReason(e);
        if (package)
            if (const std::string says = packageRefusal(inputs[bs0].front()); !says.empty())
                reason = "the package refused it: " + says +
                         " (an AOTInductor package checks each input's rank, sizes, strides, dtype and device "
                         "against what it was compiled for" +
                         (packageInfo["metadata"].contains("input")
                              ? "; it says its input is " + packageInfo["metadata"]["input"].get<std::string>()
                              : std::string()) +
                         ")";
        std::ostringstream shapes;
        for (const auto& v : inputs[bs0].front()) shapes << v.toTensor().sizes() << ' '
                                                     << dtypeName(v.toTensor().scalar_type()) << ' ';
        reason += inputHintFor(reason, inputSpecs);
        const std::string errorCode = classifyForwardError(reason);
        sink.error(errorCode,
                   std::string(trainStepWorkload() ? "train step" : "forward") +
                       " failed with input " + shapes.str() + "(precision " + choiceName(k.precision) +
                       "): " + reason + oomNote(errorCode),
                   {{"torch", std::string(e.what()).substr(0, 4000)}});
        return false;
    }
    if (s.out.defined()) {
        s.loaded["output"] = {{"shape", s.out.sizes().vec()},
                              {"dtype", dtypeName(s.out.scalar_type())}};
    }
    s.loaded["input"] = spec::inputsToJson(inputSpecs);
    if (k.precision == spec::Precision::AutocastBf16 || k.precision == spec::Precision::AutocastFp16) {
        // After the first forward (its cold cost is measured without the observer).
        std::map<std::string, int> census;
        tCensus = &census;
        const auto handle = at::addThreadLocalCallback(
            at::RecordFunctionCallback(nullptr, censusOutput).needsOutputs(true).scopes({at::RecordScope::FUNCTION}));
        try {
            GradScope g(k.grad);
            AutocastScope ac(k.precision, device.is_cuda());
            forward(inputs[bs0].front());
            if (device.is_cuda()) torch::cuda::synchronize();
        } catch (const std::exception&) {
            // The first forward ran; the census only reads back what it can.
        }
        at::removeCallback(handle);
        tCensus = nullptr;
        s.opDtypes = json::object();
        for (const auto& [dtype, n] : census) s.opDtypes[dtype] = n;
    }
    return true;
}

// The cuda_graph knob: capture the forward once, after the first forward.
bool Engine::Impl::captureCudaGraph() {
    const auto& k = knobs;
    if (!k.cuda_graph) return true;
    const cuda::Module* cudaModule = cuda::loaded();
    if (!cudaModule || !device.is_cuda()) {  // the spec refuses cuda_graph on "cpu" already
        sink.error(code::kBadKnob,
                   cuda::compiledIn() ? "cuda_graph: the arm's device is not a CUDA device"
                                      : "cuda_graph: this libtorch was built without CUDA",
                   {{"knob", "cuda_graph"}});
        return false;
    }
    try {
        GradScope g(k.grad);
        graph = cudaModule->graphRunner();
        graph->capture(module, inputs[k.batch_size.front()].front());
    } catch (const std::exception& e) {
        sink.error(code::kBadKnob, "cuda_graph: capture failed: " + torchReason(e),
                   {{"knob", "cuda_graph"}});
        return false;
    }
    return true;
}

// On CUDA, every metrics event carries the caching allocator's statistics.
void Engine::Impl::installCudaMetricsHook() {
    if (const cuda::Module* cudaModule = cuda::loaded(); cudaModule && device.is_cuda()) {
        const int dev = device.index();
        setMetricsHook([cudaModule, dev](json& e) { e["cuda_allocator"] = cudaModule->allocatorStats(dev); });
    }
}

}  // namespace pitlane::engine
