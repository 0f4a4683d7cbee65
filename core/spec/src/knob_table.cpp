// The knob table (knob_table.h): one row per knob. Limits and allowed values are written here
// and nowhere else.
#include "pitlane/spec/knob_table.h"
#include "knob_limits.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

namespace pitlane::spec {

namespace {

// Binding a row to its field of spec::Knobs: optional fields are absent (null) when unset.
template <class T>
void assign(T& field, const json& v) {
    field = v.get<T>();
}
template <class T>
void assign(std::optional<T>& field, const json& v) {
    if (v.is_null())
        field.reset();
    else
        field = v.get<T>();
}
template <class T>
json valueOf(const T& field) {
    return field;
}
template <class T>
json valueOf(const std::optional<T>& field) {
    return field ? json(*field) : json();
}
template <auto Member>
void setField(Knobs& k, const json& v) {
    assign(k.*Member, v);
}
template <auto Member>
json getField(const Knobs& k) {
    return valueOf(k.*Member);
}

// A batch size, or a list of them: one value is written as a number.
void setBatch(Knobs& k, const json& v) {
    k.batch_size = v.is_array() ? v.get<std::vector<int>>() : std::vector<int>{v.get<int>()};
}
json getBatch(const Knobs& k) {
    return k.batch_size.size() == 1 ? json(k.batch_size.front()) : json(k.batch_size);
}
// A placement name, or a list of core ids ("list").
void setAffinity(Knobs& k, const json& v) {
    k.affinity_cores.clear();
    if (v.is_array()) {
        k.affinity = Affinity::List;
        k.affinity_cores = v.get<std::vector<int>>();
    } else {
        k.affinity = v.get<Affinity>();
    }
}
json getAffinity(const Knobs& k) {
    return k.affinity == Affinity::List ? json(k.affinity_cores) : json(k.affinity);
}

const std::string kNeedsCuda = "Changes nothing without a CUDA device.";

using K = KnobKind;
const char* const exec = "Execution";
const char* const threads = "Batch and threads";
const char* const script = "TorchScript executor";
const char* const cuda = "CUDA";
const char* const serve = "Serving";
const char* const compiler = "Compiler";

// clang-format off
void executionRows(std::vector<KnobInfo>& t) {
    auto row = [&t](KnobInfo info) { t.push_back(std::move(info)); };
    row({"device", K::Device, {"cpu", "cuda:0"}, {"cuda:0"}, 0, 0, "cpu", "\"cpu\"", "", exec,
         false, "Device", "Where the model runs: torch::jit::load onto the device, inputs created there",
         "", &setField<&Knobs::device>, &getField<&Knobs::device>});
    row({"mode", K::Choice, {"train", "eval"}, {}, 0, 0, "eval", "\"eval\"", "", exec, false,
         "Mode", "module.train() or module.eval(): dropout, batch-norm statistics", "",
         &setField<&Knobs::mode>, &getField<&Knobs::mode>});
    row({"grad", K::Choice, {"enabled", "no_grad", "inference_mode"}, {}, 0, 0, "enabled",
         "\"enabled\"", "", exec, false, "Grad mode",
         "Autograd: record the graph (enabled), torch::NoGradGuard, or c10::InferenceMode", "",
         &setField<&Knobs::grad>, &getField<&Knobs::grad>});
    row({"jit", K::Choice, {"none", "freeze", "freeze_optimize"}, {}, 0, 0, "none", "\"none\"", "",
         exec, false, "JIT",
         "TorchScript as loaded, torch::jit::freeze, or freeze + optimize_for_inference (needs eval mode)",
         "", &setField<&Knobs::jit>, &getField<&Knobs::jit>});
    row({"precision", K::Choice, {"fp32", "autocast_bf16", "autocast_fp16", "half"},
         {"autocast_fp16"}, 0, 0, "fp32", "\"fp32\"", "", exec, false, "Precision",
         "Numeric precision: fp32, autocast to bf16 (CPU or CUDA) or fp16 (CUDA), or the whole model in half",
         "autocast_fp16 is a CUDA autocast.", &setField<&Knobs::precision>,
         &getField<&Knobs::precision>});
    row({"memory_format", K::Choice, {"contiguous", "channels_last"}, {}, 0, 0, "contiguous",
         "\"contiguous\"", "", exec, false, "Memory format",
         "Memory layout of 4-D inputs (and the model)", "", &setField<&Knobs::memory_format>,
         &getField<&Knobs::memory_format>});
    row({"allocator", K::Choice, {"system", "jemalloc", "tcmalloc"}, {}, 0, 0, "system",
         "\"system\"", "", exec, false, "Allocator",
         "Heap allocator of the worker process: glibc malloc (system), or jemalloc / tcmalloc "
         "preloaded (LD_PRELOAD) when the worker starts", "", &setField<&Knobs::allocator>,
         &getField<&Knobs::allocator>});
    row({"sandbox", K::Choice, {"on", "off"}, {}, 0, 0, "on", "\"on\"", "", exec, false,
         "Sandbox",
         "Confine the worker (a model is code): writes only to the run's scratch folder "
         "(Landlock), no sockets but AF_UNIX (seccomp), no new privileges, a memory limit",
         "", &setField<&Knobs::sandbox>, &getField<&Knobs::sandbox>});
    row({"memory_limit_mb", K::OptionalCount, {}, {}, detail::kMinMemoryLimitMb, 1 << 24, json(),
         "75 % of physical memory (sandbox on, CPU); none otherwise", "MiB", exec, false,
         "Memory limit",
         "RLIMIT_DATA of the worker: an allocation above it fails the arm with out_of_memory "
         "instead of waking the system's OOM killer", "", &setField<&Knobs::memory_limit_mb>,
         &getField<&Knobs::memory_limit_mb>});
    row({"flush_denormal", K::TorchBool, {}, {}, 0, 0, json(), "torch's default (off)", "", exec,
         false, "Flush denormals",
         "at::globalContext().setFlushDenormal on every intra-op thread: denormal floats become "
         "zero (x86 FTZ + DAZ), so a model whose activations decay into denormals stops crawling",
         "", &setField<&Knobs::flush_denormal>, &getField<&Knobs::flush_denormal>});
    row({"workload", K::Choice, {"inference", "train_step"}, {}, 0, 0, "inference",
         "\"inference\"", "", exec, false, "Workload",
         "What one iteration is: a forward (inference), or a training step (train_step: forward, "
         "loss = mean of the output, backward, SGD lr 1e-3 on every parameter; needs grad enabled)",
         "", &setField<&Knobs::workload>, &getField<&Knobs::workload>});
}

void threadRows(std::vector<KnobInfo>& t) {
    auto row = [&t](KnobInfo info) { t.push_back(std::move(info)); };
    row({"batch_size", K::CountOrList, {}, {}, 1, 1 << 20, 1, "1", "samples", threads, false,
         "Batch size", "Batch size, or a list to sweep (e.g. 1, 8, 32); prepended to every input shape",
         "", &setBatch, &getBatch});
    row({"intra_op_threads", K::OptionalCount, {}, {}, 1, 4096, json(), "all allowed cores",
         "threads", threads, false, "Intra-op threads",
         "at::set_num_threads: intra-op threads (default: every core the worker may run on)", "",
         &setField<&Knobs::intra_op_threads>, &getField<&Knobs::intra_op_threads>});
    row({"inter_op_threads", K::Count, {}, {}, 1, 4096, 1, "1", "threads", threads, false,
         "Inter-op threads", "at::set_num_interop_threads: inter-op threads", "",
         &setField<&Knobs::inter_op_threads>, &getField<&Knobs::inter_op_threads>});
    row({"affinity", K::ChoiceOrCores, {"none", "compact", "spread"}, {}, 0, 4095, "none",
         "\"none\"", "", threads, false, "Affinity",
         "CPU pinning: none, compact (neighbouring cores), spread (one per physical core first), "
         "or a list of core ids", "", &setAffinity, &getAffinity});
    row({"workers", K::Count, {}, {}, 1, 64, 1, "1", "processes", threads, false, "Workers",
         "Concurrent worker processes for this arm, each with its share of the cores", "",
         &setField<&Knobs::workers>, &getField<&Knobs::workers>});
    row({"host_sync_each_iter", K::Bool, {}, {}, 0, 0, false, "false", "", threads, false, "Sync",
         "Copy the output to the host (.cpu()) every iteration, inside the timed region", "",
         &setField<&Knobs::host_sync_each_iter>, &getField<&Knobs::host_sync_each_iter>});
}

void executorAndCudaRows(std::vector<KnobInfo>& t) {
    auto row = [&t](KnobInfo info) { t.push_back(std::move(info)); };
    row({"profiling_executor", K::TorchBool, {}, {}, 0, 0, json(), "torch's default", "", script,
         false, "Profiling executor", "torch::jit::getProfilingMode(): the profiling executor", "",
         &setField<&Knobs::profiling_executor>, &getField<&Knobs::profiling_executor>});
    row({"fuser", K::TorchBool, {}, {}, 0, 0, json(), "torch's default", "", script, false,
         "Fuser", "The NNC (TensorExpr) fuser: torch::jit::setTensorExprFuserEnabled", "",
         &setField<&Knobs::fuser>, &getField<&Knobs::fuser>});
    row({"cudnn_enabled", K::TorchBool, {}, {}, 0, 0, json(), "torch's default", "", cuda, true,
         "cuDNN enabled", "at::globalContext().setUserEnabledCuDNN", kNeedsCuda,
         &setField<&Knobs::cudnn_enabled>, &getField<&Knobs::cudnn_enabled>});
    row({"cudnn_benchmark", K::TorchBool, {}, {}, 0, 0, json(), "torch's default", "", cuda, true,
         "cuDNN benchmark", "cuDNN benchmark mode (autotuning per input shape)", kNeedsCuda,
         &setField<&Knobs::cudnn_benchmark>, &getField<&Knobs::cudnn_benchmark>});
    row({"cudnn_deterministic", K::TorchBool, {}, {}, 0, 0, json(), "torch's default", "", cuda,
         true, "cuDNN deterministic", "cuDNN deterministic algorithms only", kNeedsCuda,
         &setField<&Knobs::cudnn_deterministic>, &getField<&Knobs::cudnn_deterministic>});
    row({"allow_tf32", K::TorchBool, {}, {}, 0, 0, json(), "torch's default", "", cuda, true,
         "Allow TF32", "TF32 tensor cores for fp32 matmul / convolution", kNeedsCuda,
         &setField<&Knobs::allow_tf32>, &getField<&Knobs::allow_tf32>});
    row({"input_on_host", K::Bool, {}, {}, 0, 0, false, "false", "", cuda, true, "Input on host",
         "Create the input on the host and copy it to the device every iteration (pinned, "
         "non-blocking)", kNeedsCuda, &setField<&Knobs::input_on_host>,
         &getField<&Knobs::input_on_host>});
    row({"cuda_graph", K::Bool, {}, {}, 0, 0, false, "false", "", cuda, true, "CUDA graph",
         "Capture the forward once as a CUDA graph and replay it every iteration",
         "CUDA graphs need a CUDA device.", &setField<&Knobs::cuda_graph>,
         &getField<&Knobs::cuda_graph>});
}
void servingRows(std::vector<KnobInfo>& t) {
    auto row = [&t](KnobInfo info) { t.push_back(std::move(info)); };
    row({"max_batch", K::Count, {}, {}, 1, 1024, 1, "1", "requests", serve, false, "Max batch",
         "Serving presets: the dynamic batcher dispatches a batch of at most this many queued "
         "requests (one forward); 1 serves every request alone", "",
         &setField<&Knobs::max_batch>, &getField<&Knobs::max_batch>});
    row({"max_wait_ms", K::Count, {}, {}, 0, 60000, 0, "0", "ms", serve, false, "Max wait",
         "Serving presets: how long the oldest queued request may wait for the batch to fill "
         "before a smaller batch is dispatched (TorchServe's max_batch_delay)", "",
         &setField<&Knobs::max_wait_ms>, &getField<&Knobs::max_wait_ms>});
}
void compilerRows(std::vector<KnobInfo>& t) {
    auto row = [&t](KnobInfo info) { t.push_back(std::move(info)); };
    row({"compile", K::Choice, {"none", "aoti"}, {}, 0, 0, "none", "\"none\"", "", compiler, false,
         "Compile", "An exported program (torch.export.save): run it as exported through libtorch's "
         "NativeRT (none), or compile it first into an AOTInductor package (aoti: "
         "aoti_compile_and_package with the project's Python, cached)",
         "Only an exported program (torch.export.save archive) can be compiled.",
         &setField<&Knobs::compile>, &getField<&Knobs::compile>});
    row({"inductor", K::Flags, {"freezing", "max_autotune", "dynamic_threads"}, {}, 0, 0,
         json(InductorOptions{}), "{\"dynamic_threads\": true}", "", compiler, false, "Inductor",
         "With compile aoti: torch._inductor.config freezing (constant-fold the weights), "
         "max_autotune (benchmark kernel choices while compiling), cpp.dynamic_threads (the "
         "kernels ask OpenMP for their thread count, so intra_op_threads reaches them)",
         "Inductor options apply to an exported program compiled with compile aoti.",
         &setField<&Knobs::inductor>, &getField<&Knobs::inductor>});
}
// clang-format on

std::vector<KnobInfo> makeTable() {
    std::vector<KnobInfo> t;
    executionRows(t);
    threadRows(t);
    servingRows(t);
    executorAndCudaRows(t);
    compilerRows(t);
    return t;
}

}  // namespace

const std::vector<KnobInfo>& knobTable() {
    static const std::vector<KnobInfo> table = makeTable();
    return table;
}

const KnobInfo* findKnob(const std::string& name) {
    for (const auto& k : knobTable())
        if (k.name == name) return &k;
    return nullptr;
}

namespace detail {

namespace {
// Each choice knob's names in enum order (knob_choices.h): the row's choices, and "list" after
// affinity's placements.
const std::vector<std::string>& choiceNames(const char* knob, int count) {
    static const std::map<std::string, std::vector<std::string>> names = [] {
        std::map<std::string, std::vector<std::string>> m;
        for (const auto& k : knobTable())
            if (k.kind == KnobKind::Choice || k.kind == KnobKind::ChoiceOrCores) m[k.name] = k.choices;
        m["affinity"].push_back("list");
        return m;
    }();
    const auto it = names.find(knob);
    if (it == names.end() || int(it->second.size()) != count)
        throw std::logic_error(std::string("knob_choices.h: the enum of knob \"") + knob +
                               "\" does not match its row of the knob table");
    return it->second;
}
}  // namespace

const std::string& choiceName(const char* knob, int index, int count) {
    const auto& n = choiceNames(knob, count);
    if (index < 0 || index >= count)
        throw std::logic_error(std::string("knob \"") + knob + "\": no value " + std::to_string(index));
    return n[std::size_t(index)];
}

std::optional<int> choiceIndex(const char* knob, const std::string& name, int count) {
    const auto& n = choiceNames(knob, count);
    const auto it = std::find(n.begin(), n.end(), name);
    if (it == n.end()) return std::nullopt;
    return int(it - n.begin());
}

}  // namespace detail

const std::vector<std::string>& knobGroups() {
    static const std::vector<std::string> groups = [] {
        std::vector<std::string> g;
        for (const auto& k : knobTable())
            if (g.empty() || g.back() != k.group) g.push_back(k.group);
        return g;
    }();
    return groups;
}

}  // namespace pitlane::spec
