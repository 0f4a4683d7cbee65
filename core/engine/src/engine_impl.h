#pragma once
// Internal to the engine: the torch-side state shared by engine.cpp, engine_configure.cpp,
// engine_run.cpp, engine_profile.cpp and engine_package.cpp. These files (and the CUDA module)
// are the only ones that include torch.
#include "pitlane/engine/energy.h"
#include "pitlane/engine/engine.h"

#include "pitlane/engine/sampler.h"
#include "pitlane/engine/sandbox.h"
#include "pitlane/engine/system.h"
#include "pitlane/protocol/protocol.h"
#include "pitlane/spec/preset.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <c10/core/CPUAllocator.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>

#include <map>

#include "cuda_support.h"

namespace torch::inductor {
class AOTIModelPackageLoader;  // engine_package.cpp
}
namespace torch::nativert {
class ModelRunnerHandle;  // engine_exported.cpp
}

namespace pitlane::engine {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace code = protocol::code;

namespace detail {

inline double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline c10::ScalarType scalarType(const std::string& dtype) {
    if (dtype == "float64") return at::kDouble;
    if (dtype == "float16") return at::kHalf;
    if (dtype == "bfloat16") return at::kBFloat16;
    if (dtype == "int64") return at::kLong;
    if (dtype == "int32") return at::kInt;
    if (dtype == "int16") return at::kShort;
    if (dtype == "int8") return at::kChar;
    if (dtype == "uint8") return at::kByte;
    if (dtype == "bool") return at::kBool;
    return at::kFloat;
}

inline std::string dtypeName(c10::ScalarType t) {
    switch (t) {
        case at::kFloat: return "float32";
        case at::kDouble: return "float64";
        case at::kHalf: return "float16";
        case at::kBFloat16: return "bfloat16";
        case at::kLong: return "int64";
        case at::kInt: return "int32";
        case at::kShort: return "int16";
        case at::kChar: return "int8";
        case at::kByte: return "uint8";
        case at::kBool: return "bool";
        default: return c10::toString(t);
    }
}

// The first line with something on it ("" when there is none): some of torch's messages start
// with an empty line, and an empty reason was printed for them.
inline std::string firstLine(const std::string& s) {
    std::istringstream is(s);
    std::string line;
    while (std::getline(is, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
    return {};
}

// Torch's error text is long (it carries a TorchScript traceback); keep the informative line.
// NativeRT wraps an operator's error: "Exception while executing node: %x = op(...)", "with
// args:", one line per argument, a blank line, then the operator's own reason: that reason, and
// the node it came from.
inline std::string nativertReason(const std::string& what) {
    const std::string marker = "Exception while executing node: ";
    if (what.rfind(marker, 0) != 0) return {};
    std::istringstream is(what);
    std::string node, line;
    std::getline(is, node);
    bool pastArgs = false;
    while (std::getline(is, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) {
            pastArgs = true;
            continue;
        }
        if (pastArgs && line.rfind("Exception raised from", 0) != 0 && line.rfind("frame #", 0) != 0)
            return line + " (in node " + node.substr(marker.size()) + ")";
    }
    return {};
}

inline std::string torchReason(const std::exception& e) {
    const std::string what = e.what();
    if (std::string native = nativertReason(what); !native.empty()) return native;
    std::istringstream is(what);
    std::string line, best;
    while (std::getline(is, line)) {
        if (line.find("RuntimeError:") != std::string::npos ||
            line.find("not implemented for") != std::string::npos ||
            line.find("Expected") != std::string::npos || line.find("shape") != std::string::npos)
            best = line;
    }
    if (best.empty()) best = firstLine(what);
    const auto p = best.find("RuntimeError: ");
    if (p != std::string::npos) best = best.substr(p + 14);
    // TorchScript marks the failing call of its serialized traceback with "~~~~ <--- HERE"
    // under the code line: name that op, the innermost (last) one.
    std::istringstream again(what);
    std::string prev, op;
    while (std::getline(again, line)) {
        if (line.find("<--- HERE") != std::string::npos) {
            const auto a = line.find('~'), b = line.rfind('~');
            if (a != std::string::npos && b < prev.size()) {
                std::string call = prev.substr(a, b - a + 1);
                const auto paren = call.find('(');
                if (paren != std::string::npos) call = call.substr(0, paren);
                if (!call.empty()) op = call;
            }
        }
        prev = line;
    }
    if (!op.empty() && best.find(op) == std::string::npos) best += " (in op " + op + ")";
    return best.empty() ? std::string("libtorch gave no reason (an exception with an empty message)") : best;
}

inline std::string classifyForwardError(const std::string& reason) {
    if (reason.find("not implemented for") != std::string::npos ||
        reason.find("BFloat16") != std::string::npos || reason.find("Half") != std::string::npos)
        return code::kUnsupportedDtype;
    if (reason.find("out of memory") != std::string::npos ||
        reason.find("DefaultCPUAllocator: can't allocate") != std::string::npos)
        return code::kOutOfMemory;
    if (reason.find("shape") != std::string::npos || reason.find("size") != std::string::npos ||
        reason.find("dimension") != std::string::npos || reason.find("Expected") != std::string::npos)
        return code::kInputMismatch;
    return code::kForwardFailed;
}

// The memory limit said after an out_of_memory message (sandbox.h), nothing after others.
inline std::string oomNote(const std::string& errorCode) {
    return errorCode == code::kOutOfMemory ? memoryLimitNote() : std::string();
}

inline void countNodes(torch::jit::Block* block, int& total, int& getattr, int& mkldnn) {
    for (auto* node : block->nodes()) {
        ++total;
        const std::string kind = node->kind().toQualString();
        if (node->kind() == c10::prim::GetAttr) ++getattr;
        if (kind.find("mkldnn") != std::string::npos) ++mkldnn;
        for (auto* sub : node->blocks()) countNodes(sub, total, getattr, mkldnn);
    }
}

// The grad-mode knob as an RAII scope around every forward (thread-local in torch).
class GradScope {
public:
    explicit GradScope(spec::Grad grad) {
        if (grad == spec::Grad::NoGrad) noGrad_ = std::make_unique<torch::NoGradGuard>();
        if (grad == spec::Grad::InferenceMode) inference_ = std::make_unique<c10::InferenceMode>(true);
    }

private:
    std::unique_ptr<torch::NoGradGuard> noGrad_;
    std::unique_ptr<c10::InferenceMode> inference_;
};

// The autocast state of one device type. libtorch 2.4 replaced the per-device functions
// (is_cpu_enabled, set_autocast_gpu_dtype, ...) by ones taking the device type, and the old ones
// warn at run time since; 1.13 (Debian 12) has only the old ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
inline bool autocastEnabled(bool cuda) { return at::autocast::is_autocast_enabled(cuda ? at::kCUDA : at::kCPU); }
inline at::ScalarType autocastDtype(bool cuda) { return at::autocast::get_autocast_dtype(cuda ? at::kCUDA : at::kCPU); }
inline void setAutocast(bool cuda, bool enabled, at::ScalarType dtype) {
    at::autocast::set_autocast_dtype(cuda ? at::kCUDA : at::kCPU, dtype);
    at::autocast::set_autocast_enabled(cuda ? at::kCUDA : at::kCPU, enabled);
}
#else
inline bool autocastEnabled(bool cuda) { return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled(); }
inline at::ScalarType autocastDtype(bool cuda) {
    return cuda ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
inline void setAutocast(bool cuda, bool enabled, at::ScalarType dtype) {
    if (cuda) {
        at::autocast::set_autocast_gpu_dtype(dtype);
        at::autocast::set_enabled(enabled);
    } else {
        at::autocast::set_autocast_cpu_dtype(dtype);
        at::autocast::set_cpu_enabled(enabled);
    }
}
#endif

// Autocast around every forward: the autocast of the device the model runs on (CPU autocast
// does nothing to CUDA tensors, CUDA autocast nothing to CPU ones). autocast_bf16 is bf16 on
// either device; autocast_fp16 is CUDA only (validation refuses it on cpu).
class AutocastScope {
public:
    AutocastScope(spec::Precision precision, bool cudaDevice) {
        if (precision == spec::Precision::AutocastBf16) enter(cudaDevice, at::kBFloat16);
        else if (precision == spec::Precision::AutocastFp16) enter(true, at::kHalf);
    }
    ~AutocastScope() {
        if (!active_) return;
        setAutocast(cuda_, prevEnabled_, prevDtype_);
        at::autocast::clear_cache();
    }

private:
    void enter(bool cuda, at::ScalarType dtype) {
        active_ = true;
        cuda_ = cuda;
        prevEnabled_ = autocastEnabled(cuda);
        prevDtype_ = autocastDtype(cuda);
        setAutocast(cuda, true, dtype);
    }
    bool active_ = false, cuda_ = false, prevEnabled_ = false;
    at::ScalarType prevDtype_ = at::kFloat;
};

inline at::Tensor firstTensor(const c10::IValue& v) {
    if (v.isTensor()) return v.toTensor();
    if (v.isTuple())
        for (const auto& e : v.toTupleRef().elements())
            if (auto t = firstTensor(e); t.defined()) return t;
    if (v.isList())
        for (const auto& e : v.toListRef())
            if (auto t = firstTensor(e); t.defined()) return t;
    if (v.isGenericDict())
        for (const auto& kv : v.toGenericDict())
            if (auto t = firstTensor(kv.value()); t.defined()) return t;
    return {};
}

// What one configure carries from step to step (Engine::configure, engine_configure.cpp).
struct ConfigureState {
    json arm;                 // the command's "arm" object
    std::uint64_t seed = 0;
    json allocator;           // mappedAllocator(): checked first, read back into "applied"
    json sandbox;             // sandboxState(): checked with the allocator, read back too
    int workerCount = 1, workerIndex = 0;
    int intra = 1;            // intra-op threads
    json loaded;              // the "loaded" event, filled in by load .. first forward
    bool training = false;    // module.is_training() right after the mode was set
    at::Tensor out;           // the first forward's first output tensor
    json grad, autocast;      // grad / autocast state seen inside the first forward
    json workload;            // workload_state: what the first iteration (a train step?) did
    json opDtypes;            // autocast arms: the floating dtypes ATen operators produced
    json energy;              // issue 46: the energy counters and the idle draw (applied.energy)
};

// The autocast state of this thread (read inside the forward's autocast scope).
inline json autocastState() {
    return {{"cpu_enabled", autocastEnabled(false)},
            {"cpu_dtype", dtypeName(autocastDtype(false))},
            {"cuda_enabled", autocastEnabled(true)},
            {"cuda_dtype", dtypeName(autocastDtype(true))}};
}

// workload train_step on a model whose output does not depend on anything that requires grad.
struct NoGradPath : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What one train step did, filled in for the first one (configure's read-back).
struct TrainStepReadBack {
    double loss = 0;
    std::int64_t keptBytes = 0;  // tensor bytes alive after the forward, minus before it
    int withGrad = 0;            // parameters with a .grad after backward
    int updated = 0;             // parameters whose value changed in the SGD step
    bool gradsCleared = true;    // every .grad set to None after the step
    json autocast;               // autocast state inside the forward
    double readBackMs = 0;       // time spent reading back (not part of the step's cold cost)
};

// The samples of one block and the flush of those not yet sent (engine_run.cpp).
class SampleBuffer;

}  // namespace detail


struct Engine::Impl {
    // Both in engine_package.cpp, where the package loader is a complete type.
    explicit Impl(EventSink& s);
    ~Impl();
    EventSink& sink;
    bool configured = false;
    spec::Knobs knobs;
    std::vector<spec::InputSpec> inputSpecs;
    std::string modelPath;
    torch::jit::Module module;
    // An AOTInductor package (engine_package.cpp) instead of `module`: set when the model file
    // is one; its read-back (metadata, call spec, where it was extracted) for "applied".
    std::unique_ptr<torch::inductor::AOTIModelPackageLoader> package;
    json packageInfo;
    // An exported program (engine_exported.cpp), run through NativeRT; its read-back.
    std::unique_ptr<torch::nativert::ModelRunnerHandle> program;
    json programInfo;
    // The example inputs of an exported program (flattened, on the CPU): fed where an input
    // spec says "example" (the program's own, or the archive a compiled package came from).
    std::vector<at::Tensor> exampleInputs;
    // Not a TorchScript module: a package or an exported program.
    bool compiledGraph() const { return package || program; }
    c10::Device device{c10::DeviceType::CPU};
    // Inputs per batch size; each entry holds one input list per shape variant.
    std::map<int, std::vector<std::vector<c10::IValue>>> inputs;
    std::unique_ptr<c10::Allocator> allocator;
    std::uint64_t seed = 0;
    // On a CUDA device (the CUDA module, loaded by selectDevice): the captured graph, the
    // device-side timer.
    std::unique_ptr<cuda::GraphRunner> graph;
    std::unique_ptr<cuda::EventTimer> eventTimer;

    // workload train_step: the parameters the SGD step updates (requires_grad), collected in
    // step 7; empty for inference.
    std::vector<at::Tensor> trainParams;
    static constexpr double kTrainLr = 1e-3;

    std::vector<std::vector<c10::IValue>> makeInputs(int batch, bool onHost);
    c10::IValue forward(const std::vector<c10::IValue>& in);
    bool trainStepWorkload() const { return knobs.workload == spec::Workload::TrainStep; }
    // One training step (engine.cpp): forward under the precision's autocast, loss = mean of the
    // first output tensor in float32, backward outside autocast, p -= lr * p.grad under
    // NoGradGuard, grads set to None. Throws when the output has no grad path. `rb` (the first
    // step only) records what happened.
    c10::IValue trainStep(const std::vector<c10::IValue>& in,
                          detail::TrainStepReadBack* rb = nullptr);
    // Configure's first iteration (engine.cpp): a forward, or one whole train step. Fills
    // s.autocast and s.workload; `readBackMs` is the time its read-back took (excluded from
    // first_forward_ms).
    c10::IValue firstIteration(const std::vector<c10::IValue>& in, detail::ConfigureState& s,
                               double& readBackMs);

    // The steps of configure, in the order Engine::configure calls them (engine_configure.cpp).
    // A step that returns false has emitted the error event; configure stops there.
    bool parseArm(const json& cmd, detail::ConfigureState& s);
    bool checkAllocator(detail::ConfigureState& s);
    bool checkSandbox(detail::ConfigureState& s);  // engine.cpp
    bool selectDevice();
    bool applyAffinity(detail::ConfigureState& s);
    bool applyThreads(const detail::ConfigureState& s);
    void applyJitExecutor();
    void applyCudnnFlags();
    void applyFlushDenormal();  // engine.cpp, with its read-back
    bool loadModel(detail::ConfigureState& s);
    bool loadPackage(detail::ConfigureState& s, const spec::ModelFormat& format);  // engine_package.cpp
    bool refuseKnobsForFormat(const detail::ConfigureState& s, const spec::ModelFormat& format);
    std::vector<at::Tensor> runPackage(const std::vector<c10::IValue>& in);
    bool loadExported(detail::ConfigureState& s, const spec::ModelFormat& format);  // engine_exported.cpp
    bool loadExampleInputs(const std::string& archive);
    at::Tensor exampleTensor(std::size_t i, int batch) const;
    c10::IValue runExported(const std::vector<c10::IValue>& in);
    void releaseProgram();
    std::string packageRefusal(const std::vector<c10::IValue>& in);
    void releasePackage();
    bool applyModePrecisionFormat(detail::ConfigureState& s);
    bool applyWorkload();  // engine.cpp: the parameters a train step updates
    bool freezeOptimize(detail::ConfigureState& s);
    bool makeFirstInputs(const detail::ConfigureState& s);
    bool firstForward(detail::ConfigureState& s);
    bool captureCudaGraph();
    void setUpEnergy(detail::ConfigureState& s);  // issue 46: which counters, the idle draw
    void installCudaMetricsHook();
    void emitApplied(const detail::ConfigureState& s);
    void readBackFlushDenormal(json& applied);
    void readBackWorkload(json& applied, const detail::ConfigureState& s);  // engine.cpp

    // The parts of runBlock (engine_run.cpp).
    const std::vector<std::vector<c10::IValue>>* inputsFor(int batchSize, bool anySize = false);
    bool timedLoop(int block, int iters, double timeMs, int batchSize,
                   const std::vector<std::vector<c10::IValue>>& variants,
                   detail::SampleBuffer& samples, Clock::time_point blockStart);
};

}  // namespace pitlane::engine
