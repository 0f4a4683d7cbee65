// configure's last step (engine_configure.cpp applies the knobs): every knob read back from
// torch and the OS into the "applied" event.
#include "engine_impl.h"

namespace pitlane::engine {

using namespace detail;

namespace {

// Read-back of the JIT: what freeze really did to the forward graph, and the executor / fuser.
void readBackJit(json& a, torch::jit::Module& module, spec::Jit jitKnob) {
    int nodes = 0, getattr = 0, mkldnn = 0;
    countNodes(module.get_method("forward").graph()->block(), nodes, getattr, mkldnn);
    // Frozen means the weights became graph constants: no parameter is left on the module and the
    // (inlined) forward reads no attribute.
    std::int64_t remainingParams = 0;
    for (const auto& p : module.parameters()) remainingParams += p.numel();
    const bool frozen = jitKnob != spec::Jit::None && getattr == 0 && remainingParams == 0;
    a["jit"] = frozen ? jitKnob : spec::Jit::None;
    a["jit_state"] = {{"graph_nodes", nodes},
                      {"getattr_nodes", getattr},
                      {"mkldnn_nodes", mkldnn},
                      {"frozen", frozen},
                      {"remaining_parameters", remainingParams},
                      {"profiling_executor", torch::jit::getProfilingMode().load()},
                      {"fuser_nnc", torch::jit::tensorExprFuserEnabled()}};
}

// Read-back of the precision: whether autocast was on around the forward, and the evidence that
// it did something: the first output's dtype, or (autocast arms) the dtypes the forward's ATen
// operators produced. A model whose last operators run in float32 under autocast (LayerNorm of a
// transformer under PyTorch 2.x) returns float32 while its matrix products ran in bfloat16: the
// operators say so where the output cannot.
void readBackPrecision(json& a, const ConfigureState& s) {
    const std::string outDtype = s.out.defined() ? dtypeName(s.out.scalar_type()) : "none";
    std::string precision = "fp32";
    const bool cpuAc = s.autocast.value("cpu_enabled", false), cudaAc = s.autocast.value("cuda_enabled", false);
    const std::string cudaDtype = s.autocast.value("cuda_dtype", std::string());
    auto produced = [&](const char* dtype) {
        return outDtype == dtype || (s.opDtypes.is_object() && s.opDtypes.value(dtype, 0) > 0);
    };
    if ((cpuAc || (cudaAc && cudaDtype == "bfloat16")) && produced("bfloat16")) precision = "autocast_bf16";
    else if (cudaAc && cudaDtype == "float16" && produced("float16")) precision = "autocast_fp16";
    else if (outDtype == "float16") precision = "half";
    a["precision"] = precision;
    a["precision_state"] = {{"output_dtype", outDtype}, {"autocast", s.autocast}};
    if (s.opDtypes.is_object()) a["precision_state"]["op_output_dtypes"] = s.opDtypes;
}

// Read-back of the affinity: the union of every thread's mask, and whether all threads agree.
void readBackAffinity(json& a, spec::Affinity policy, const ConfigureState& s) {
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
    a["affinity_policy"] = policy;
    a["affinity_uniform"] = uniform;
    a["worker_index"] = s.workerIndex;
    a["worker_count"] = s.workerCount;
    a["process_threads"] = tids.size();
}

// Read-back of the heap allocator checked in step 0.
void readBackAllocator(json& a, const json& allocator) {
    a["allocator"] = allocator["name"];
    a["allocator_path"] = allocator["path"];
    a["allocator_conf"] = allocator["conf"];
    a["allocator_options"] = allocator["options"];
    a["allocator_mapped"] = allocator["mapped"];
}

}  // namespace

// 11. Read back everything into the "applied" event.
void Engine::Impl::emitApplied(const ConfigureState& s) {
    const auto& k = knobs;
    const int bs0 = k.batch_size.front();
    json a = protocol::makeEvent(protocol::kApplied);
    a["device"] = device.str();
    a["mode"] = s.training ? "train" : "eval";
    const bool inf = s.grad.value("inference_mode_enabled", false);
    const bool gradOn = s.grad.value("grad_mode_enabled", true);
    a["grad"] = inf ? "inference_mode" : (gradOn ? "enabled" : "no_grad");
    a["grad_state"] = s.grad;
    if (package) {
        a["jit"] = "none";  // AOTInductor compiled it; no TorchScript pass ran
        a["jit_state"] = {{"package", true}};
        a["model_format"] = spec::kFormatAoti;
        a["package"] = packageInfo;
    } else if (program) {
        a["jit"] = "none";  // NativeRT runs the exported graph; no TorchScript pass ran
        a["jit_state"] = {{"exported", true}};
        a["model_format"] = spec::kFormatExported;
        a["program"] = programInfo;
    } else {
        readBackJit(a, module, k.jit);
        a["model_format"] = spec::kFormatTorchScript;
    }
    readBackPrecision(a, s);
    a["intra_op_threads"] = at::get_num_threads();
    a["inter_op_threads"] = at::get_num_interop_threads();
    readBackAffinity(a, k.affinity, s);
    if (k.batch_size.size() == 1) a["batch_size"] = bs0;
    else a["batch_size"] = k.batch_size;
    const auto& firstIn = inputs[bs0].front().front().toTensor();
    a["memory_format"] = firstIn.dim() == 4 && firstIn.is_contiguous(at::MemoryFormat::ChannelsLast) &&
                                 k.memory_format == spec::MemoryFormat::ChannelsLast
                             ? "channels_last"
                             : "contiguous";
    a["input_shapes"] = json::array();
    for (const auto& v : inputs[bs0].front()) a["input_shapes"].push_back(v.toTensor().sizes().vec());
    a["input_variants"] = inputs[bs0].size();
    const auto blas = mappedBlas(at::hasMKL());
    a["blas"] = blas["name"];
    a["blas_path"] = blas["path"];
    readBackAllocator(a, s.allocator);
    a["sandbox"] = s.sandbox;
    readBackFlushDenormal(a);
    readBackWorkload(a, s);
    auto& ctx = at::globalContext();
    a["cudnn"] = {{"enabled", ctx.userEnabledCuDNN()},
                  {"benchmark", ctx.benchmarkCuDNN()},
                  {"deterministic", ctx.deterministicCuDNN()},
                  {"allow_tf32", ctx.allowTF32CuDNN()},
                  {"allow_tf32_cublas", ctx.allowTF32CuBLAS()}};
    a["parallel_info"] = at::get_parallel_info();
    a["host_sync_each_iter"] = k.host_sync_each_iter;
    // The batcher's settings as the serve command will use them (each level's block_done reports
    // what its loop ran with, and its batches show max_batch was never exceeded).
    a["max_batch"] = k.max_batch;
    a["max_wait_ms"] = k.max_wait_ms;
    a["cuda_graph"] = graph && graph->captured();
    a["input_on_host"] = k.input_on_host && device.is_cuda();
    // Where the input lives; on the host for a CUDA device, page-locked (non-blocking copies)?
    a["input_device"] = firstIn.device().str();
    a["input_pinned"] = firstIn.is_cpu() && device.is_cuda() && firstIn.is_pinned();
    if (blas["name"] == "reference")
        sink.warning("reference_blas",
                     "libtorch is using the reference BLAS (" + blas["path"].get<std::string>() +
                         "): linear layers run 10-20x slower; install libopenblas0-openmp");
    if (!s.energy.is_null()) a["energy"] = s.energy;
    sink.emit(a);
}

}  // namespace pitlane::engine
