// The advisor's rules (docs/ADVISOR.md): each reads one arm's read-back settings, environment,
// metrics, cold costs and operator profile, and appends advice when its evidence is over its
// threshold. The ranking, the suggested arms and the text are in advice.cpp.
#include "advice_rules.h"

#include "pitlane/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

namespace pitlane::results::advice_detail {
namespace {

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}
std::string pct(double share) { return fmt("%.0f %%", 100.0 * share); }
std::string ms(double v) { return fmt(v >= 10 ? "%.1f ms" : "%.2f ms", v); }

std::string str(const json& j, const char* key, const std::string& def = "") {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : def;
}
double num(const json& j, const char* key, double def = -1) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : def;
}
bool flag(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}

// Operators of the profile, in ms per profiled iteration.
struct OpSum {
    double total = 0;
    std::vector<std::pair<std::string, double>> ops;  // the matching operators, largest first
    std::string names(std::size_t n = 3) const {
        std::string s;
        for (std::size_t i = 0; i < ops.size() && i < n; ++i)
            s += (i ? ", " : "") + ops[i].first + " " + ms(ops[i].second);
        return s;
    }
};

OpSum opsMatching(const ArmCtx& c, const std::function<bool(const std::string&)>& pred) {
    OpSum sum;
    for (const auto& [name, v] : c.op_ms)
        if (pred(name)) {
            sum.total += v;
            sum.ops.emplace_back(name, v);
        }
    std::sort(sum.ops.begin(), sum.ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return sum;
}

bool in(const std::string& name, std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (name == n) return true;
    return false;
}

bool isConv(const std::string& n) {
    return in(n, {"aten::_slow_conv2d_forward", "aten::mkldnn_convolution", "aten::thnn_conv2d",
                  "aten::slow_conv_dilated2d", "aten::slow_conv3d_forward", "aten::_convolution",
                  "aten::convolution", "aten::conv1d", "aten::conv2d", "aten::conv3d",
                  "aten::_nnpack_spatial_convolution", "aten::cudnn_convolution"});
}
bool isBatchNorm(const std::string& n) {
    return in(n, {"aten::native_batch_norm", "aten::batch_norm", "aten::_batch_norm_impl_index",
                  "aten::_native_batch_norm_legit", "aten::cudnn_batch_norm"});
}
bool isDropout(const std::string& n) {
    return in(n, {"aten::dropout", "aten::dropout_", "aten::native_dropout", "aten::bernoulli_",
                  "aten::feature_dropout", "aten::alpha_dropout"});
}
bool isActivation(const std::string& n) {
    return in(n, {"aten::relu", "aten::relu_", "aten::clamp_min", "aten::clamp_min_",
                  "aten::hardtanh", "aten::hardtanh_", "aten::hardswish", "aten::hardswish_"});
}
bool isCopy(const std::string& n) {
    return in(n, {"aten::copy_", "aten::to", "aten::_to_copy", "aten::contiguous", "aten::clone",
                  "aten::_copy_from", "aten::_copy_from_and_resize"});
}
bool isBlas(const std::string& n) {
    return in(n, {"aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::addmv",
                  "aten::mv", "aten::dot", "aten::_slow_conv2d_forward", "aten::addbmm"});
}

Advice make(const ArmCtx& c, const char* rule, AdviceTier tier, std::string title) {
    Advice a;
    a.rule = rule;
    a.arm = c.index;
    a.tier = tier;
    a.title = std::move(title);
    return a;
}

bool inference(const ArmCtx& c) { return str(c.applied(), "workload", "inference") == "inference"; }

// --- Latency: the time of one iteration -------------------------------------------------------

// Convolution, batch-norm and activation operators run one by one (and convolutions possibly on
// ATen's fallback instead of oneDNN): freezing folds batch-norm into the convolutions and
// optimize_for_inference fuses them on oneDNN with prepacked weights.
void fuseForInference(const ArmCtx& c, std::vector<Advice>& out) {
    if (!inference(c) || !c.hasProfile() || str(c.applied(), "jit") == "freeze_optimize") return;
    const auto fusable = opsMatching(c, [](const std::string& n) {
        return isConv(n) || isBatchNorm(n) || isActivation(n);
    });
    const double share = fusable.total / c.profile_total_ms;
    if (share < kAdviceFusableShare) return;
    auto a = make(c, "fuse_for_inference", AdviceTier::Latency,
                  "Freeze and optimize the model for inference");
    a.metric = "profile_share";
    a.value = share;
    a.threshold = kAdviceFusableShare;
    a.share = share;
    a.measured = true;
    a.evidence = ms(fusable.total) + " of " + ms(c.profile_total_ms) + " per profiled iteration (" +
                 pct(share) + ") in convolution, batch-norm and activation operators run one by one (" +
                 fusable.names() + ")";
    const auto slow = opsMatching(c, [](const std::string& n) { return n == "aten::_slow_conv2d_forward"; });
    if (slow.total > 0)
        a.evidence += "; " + ms(slow.total) + " of it in aten::_slow_conv2d_forward, ATen's fallback that does not use oneDNN";
    a.evidence += ". torch.jit.freeze folds batch-norm into the convolutions; optimize_for_inference runs them fused on oneDNN with prepacked weights";
    if (str(c.applied(), "mode") != "eval") a.change["mode"] = "eval";  // freezing needs eval
    a.change["jit"] = "freeze_optimize";
    out.push_back(std::move(a));
}

// Train mode: batch-norm computes batch statistics and updates its running ones, dropout draws a
// mask, on every inference call.
void trainModeLayers(const ArmCtx& c, std::vector<Advice>& out) {
    if (!inference(c) || str(c.applied(), "mode") != "train") return;
    auto a = make(c, "train_mode_layers", AdviceTier::Latency, "Put the model in eval mode");
    a.change["mode"] = "eval";
    a.metric = "profile_share";
    a.threshold = 0;
    if (c.hasProfile()) {
        const auto layers = opsMatching(c, [](const std::string& n) { return isBatchNorm(n) || isDropout(n); });
        if (layers.ops.empty()) return;  // no batch-norm or dropout: train mode changes nothing
        a.value = a.share = layers.total / c.profile_total_ms;
        a.measured = true;
        a.evidence = "mode train read back in an inference run: " + ms(layers.total) + " of " +
                     ms(c.profile_total_ms) + " per profiled iteration (" + pct(a.share) +
                     ") in batch-norm and dropout operators (" + layers.names() +
                     "), which compute batch statistics and draw dropout masks in train mode";
    } else {
        a.value = a.share = 0.05;
        a.evidence = "mode train read back in an inference run (batch-norm uses batch statistics, dropout drops "
                     "activations); profile the run (--profile) to see their time";
    }
    out.push_back(std::move(a));
}

// Autograd records a graph on every inference call and keeps activations alive for it.
void autogradInInference(const ArmCtx& c, std::vector<Advice>& out) {
    if (!inference(c) || str(c.applied(), "grad") != "enabled") return;
    const auto gs = c.applied().value("grad_state", json::object());
    if (gs.is_object() && gs.contains("output_requires_grad") && !flag(gs, "output_requires_grad")) return;
    auto a = make(c, "autograd_in_inference", AdviceTier::Latency,
                  "Turn autograd off for inference (grad = inference_mode)");
    a.change["grad"] = "inference_mode";
    a.metric = "output_requires_grad";
    a.value = 1;
    a.threshold = 1;
    a.share = 0.05;  // prior: the graph's cost is spread over every operator (docs/ADVISOR.md)
    a.evidence = "grad enabled read back in an inference run, and the output requires grad: autograd records a "
                 "graph on every call and keeps the activations it needs alive";
    if (c.tensor_peak_bytes > 0) a.evidence += " (tensor memory peak " + formatBytes(c.tensor_peak_bytes) + ")";
    out.push_back(std::move(a));
}

// More threads than cores: they time-share the cores and wait on each other at every barrier.
void threadsOversubscribed(const ArmCtx& c, std::vector<Advice>& out) {
    if (c.threads <= 0 || c.allowed_cores <= 0 || c.threads <= c.allowed_cores) return;
    auto a = make(c, "threads_oversubscribed", AdviceTier::Latency,
                  "Fewer threads: no more than the cores the arm may use");
    a.metric = "threads_per_core";
    a.value = double(c.threads) / double(c.allowed_cores);
    a.threshold = 1;
    a.share = 1.0 - double(c.allowed_cores) / double(c.threads);
    a.measured = true;
    a.evidence = std::to_string(c.workers) + " worker process" + (c.workers > 1 ? "es" : "") + " x " +
                 std::to_string(c.intra_threads) + " intra-op threads = " + std::to_string(c.threads) +
                 " threads on " + std::to_string(c.allowed_cores) + " allowed cores";
    if (c.involuntary_per_iter >= 0)
        a.evidence += fmt("; %.1f involuntary context switches per iteration", c.involuntary_per_iter);
    a.change["intra_op_threads"] = std::max(1, c.allowed_cores / std::max(1, c.workers));
    if (c.workers > 1 && str(c.applied(), "affinity_policy", "none") == "none") a.change["affinity"] = "compact";
    out.push_back(std::move(a));
}

// Worker processes of one arm far apart while it runs several intra-op threads (issue 27: torch's
// default threads on a shared machine put processes 100x apart; one thread per arm fixed it).
// The CI counts processes, so nothing else the advisor says can be measured until this is.
void processesDisagreeOnThreads(const ArmCtx& c, std::vector<Advice>& out) {
    if (c.intra_threads <= 1) return;
    std::vector<ProcessSummary> measured;
    for (const auto& p : processSummaries(c.arm()))
        if (p.n > 0 && p.median_ns > 0) measured.push_back(p);
    if (measured.size() < 2) return;
    auto [mn, mx] = std::minmax_element(
        measured.begin(), measured.end(),
        [](const ProcessSummary& a, const ProcessSummary& b) { return a.median_ns < b.median_ns; });
    const double spread = mx->median_ns / mn->median_ns;
    if (spread <= kProcessSpreadWarn) return;
    auto a = make(c, "processes_disagree_threads", AdviceTier::Latency,
                  "One intra-op thread (intra_op_threads = 1): the worker processes disagree");
    a.change["intra_op_threads"] = 1;
    a.metric = "process_spread";
    a.value = spread;
    a.threshold = kProcessSpreadWarn;
    // What the slow processes lose against the fastest: ranked by it, it comes first when the
    // processes are far apart, as it must (no other change can be measured while they are).
    a.share = 1.0 - 1.0 / spread;
    a.measured = true;
    a.evidence = std::to_string(measured.size()) + " worker processes with medians from " +
                 formatDuration(mn->median_ns) + " to " + formatDuration(mx->median_ns) +
                 fmt(" (%.2fx apart)", spread) + " while each ran " +
                 std::to_string(c.intra_threads) + " intra-op threads on " +
                 std::to_string(c.allowed_cores) +
                 " allowed cores: threads that wait for each other at every barrier under other "
                 "load make each process's speed a matter of luck, and the CI, which counts "
                 "processes, stays wide";
    out.push_back(std::move(a));
}

// Unpinned threads moved between cores or preempted: caches go cold, barriers wait.
void unpinnedMigrations(const ArmCtx& c, std::vector<Advice>& out) {
    if (str(c.applied(), "affinity_policy", "none") != "none") return;
    // Migrations, not preemptions, are what pinning removes: a busy machine preempts pinned
    // threads too, so involuntary switches are only reported alongside.
    if (c.migrations_per_iter < kAdviceMigrationsPerIter) return;
    auto a = make(c, "unpinned_migrations", AdviceTier::Latency, "Pin the threads to cores (affinity = compact)");
    a.change["affinity"] = "compact";
    a.metric = "migrations_per_iter";
    a.value = c.migrations_per_iter;
    a.threshold = kAdviceMigrationsPerIter;
    a.share = 0.05;  // prior: what a migration costs depends on the cache footprint
    a.evidence = "threads not pinned (affinity none), and per measured iteration " +
                 fmt("%.2f CPU migrations", std::max(0.0, c.migrations_per_iter)) + " and " +
                 fmt("%.2f involuntary context switches", std::max(0.0, c.involuntary_per_iter)) +
                 " (threshold " + fmt("%.1f", kAdviceMigrationsPerIter) + " migrations)";
    out.push_back(std::move(a));
}

// Netlib's reference BLAS: 10-20x slower matrix products than an optimized one.
void referenceBlas(const ArmCtx& c, std::vector<Advice>& out) {
    if (str(c.applied(), "blas") != "reference") return;
    auto a = make(c, "reference_blas", AdviceTier::Latency, "Use an optimized BLAS instead of the reference BLAS");
    a.metric = "profile_share";
    a.threshold = kAdviceBlasShare;
    a.evidence = "the worker loaded the reference BLAS (" + str(c.applied(), "blas_path") + ")";
    if (c.hasProfile()) {
        const auto blas = opsMatching(c, isBlas);
        a.value = a.share = blas.total / c.profile_total_ms;
        if (a.share < kAdviceBlasShare) return;
        a.measured = true;
        a.evidence += "; " + ms(blas.total) + " of " + ms(c.profile_total_ms) + " per profiled iteration (" +
                      pct(a.share) + ") in operators that call it (" + blas.names() + ")";
    } else {
        a.value = a.share = 0.5;
        a.evidence += "; profile the run (--profile) to see the time in its operators";
    }
    a.action = "install libopenblas0-openmp, or point libblas.so.3 at an optimized BLAS "
               "(update-alternatives --config libblas.so.3-x86_64-linux-gnu); not a knob";
    out.push_back(std::move(a));
}

// glibc malloc hands big blocks back to the kernel and faults them in again every iteration.
void pageFaults(const ArmCtx& c, std::vector<Advice>& out) {
    const double faults = minorFaultsPerIter(c.arm());
    if (faults < kFaultsPerIterWarn || str(c.applied(), "allocator", "system") != "system") return;
    auto a = make(c, "page_faults", AdviceTier::Latency, "Use jemalloc (allocator = jemalloc)");
    a.change["allocator"] = "jemalloc";
    a.metric = "minor_faults_per_iter";
    a.value = faults;
    a.threshold = kFaultsPerIterWarn;
    a.evidence = fmt("%.0f minor page faults per measured iteration", faults) +
                 " with glibc malloc: freed blocks go back to the kernel and are faulted in (zeroed) again";
    // Measured: processes of this arm that fault against those that do not.
    std::vector<double> faulting, clean;
    for (const auto& p : processSummaries(c.arm())) {
        if (p.n == 0 || p.info.fault_iters == 0) continue;
        (p.info.minorFaultsPerIter() >= kFaultsPerIterWarn ? faulting : clean).push_back(p.median_ns);
    }
    if (!faulting.empty() && !clean.empty()) {
        const double slow = stats::median(faulting), fast = stats::median(clean);
        a.share = std::max(0.0, 1.0 - fast / slow);
        a.measured = true;
        a.evidence += "; its faulting processes' median " + formatDuration(slow) + " against " +
                      formatDuration(fast) + " for those that did not fault";
    } else {
        // Prior: about 2 us per fault (fault, zeroing a 4 KiB page, the mmap/munmap around it).
        a.share = std::min(0.9, faults * 2e3 / std::max(1.0, c.median_ns));
    }
    out.push_back(std::move(a));
}

// A sibling arm: the same requested knobs but `key` at `value` (a missing knob = its default).
const ArmResult* sibling(const RunResult& run, std::size_t self, const char* key, const char* value) {
    json mine = run.arms[self].knobs;
    mine.erase(key);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        if (i == self || run.arms[i].samples.empty()) continue;
        json theirs = run.arms[i].knobs;
        const auto v = theirs.contains(key) ? theirs[key] : json(value);
        if (v != json(value)) continue;
        theirs.erase(key);
        if (theirs == mine) return &run.arms[i];
    }
    return nullptr;
}

// bf16 / half / channels_last measured slower than fp32 / contiguous; or bf16 on a CPU without
// native bf16 instructions.
void slowerFormat(const ArmCtx& c, const char* key, const char* good, std::vector<Advice>& out) {
    const std::string mine = str(c.applied(), key, good);
    if (mine == good || c.median_ns <= 0) return;
    const bool bf16 = mine.find("bf16") != std::string::npos;
    const auto flags = c.environment().value("cpu_flags", json::array());
    const bool cpu = str(c.applied(), "device", "cpu") == "cpu";
    const bool knownFlags = flags.is_array() && !flags.empty();
    bool nativeBf16 = false;
    for (const auto& f : flags)
        if (f == "avx512_bf16" || f == "amx_bf16") nativeBf16 = true;
    auto a = make(c, std::string(key) == "precision" ? "slower_than_fp32" : "slower_than_contiguous",
                  AdviceTier::Latency,
                  std::string("Go back to ") + key + " = " + good);
    a.change[key] = good;
    if (const auto* sib = sibling(*c.run, c.index, key, good)) {
        const double other = stats::median(sib->latencies(sib->batch_size));
        const double ratio = c.median_ns / other;
        if (!(ratio >= kAdviceSlowerRatio)) return;
        // Every process of this arm slower than the sibling's median: not one unlucky process.
        for (const auto& p : processSummaries(c.arm()))
            if (p.n > 0 && p.median_ns <= other) return;
        a.metric = "ratio_to_sibling";
        a.value = ratio;
        a.threshold = kAdviceSlowerRatio;
        a.share = 1.0 - 1.0 / ratio;
        a.measured = true;
        a.evidence = std::string(key) + " " + mine + " measured " + fmt("%.2fx", ratio) + " slower than arm " +
                     sib->name + " (" + key + " " + good + ", otherwise the same knobs): " +
                     formatDuration(c.median_ns) + " against " + formatDuration(other) + " per call";
        if (bf16 && cpu && knownFlags)
            a.evidence += nativeBf16 ? " (this CPU has native bf16 instructions, but the casts around them cost more here)"
                                     : " (this CPU has no avx512_bf16 or amx_bf16: bf16 is converted in software)";
    } else {
        if (!bf16 || !cpu || !knownFlags || nativeBf16) return;
        a.metric = "native_bf16";
        a.value = 0;
        a.threshold = 1;
        a.share = 0.3;  // prior: emulated bf16 is usually slower than fp32 (docs/ADVISOR.md)
        a.evidence = std::string(key) + " " + mine + " on a CPU without avx512_bf16 or amx_bf16 (cpu flags: " +
                     flags.dump() + "): bf16 arithmetic is converted in software; no fp32 arm in this run to compare with";
    }
    out.push_back(std::move(a));
}

// Copies and conversions: host-device copies, dtype casts, layout changes.
void hostCopies(const ArmCtx& c, std::vector<Advice>& out) {
    if (!c.hasProfile()) return;
    const auto copies = opsMatching(c, isCopy);
    const double share = copies.total / c.profile_total_ms;
    if (share < kAdviceCopyShare) return;
    auto a = make(c, "copies", AdviceTier::Latency, "Remove the copies and conversions");
    a.metric = "profile_share";
    a.value = a.share = share;
    a.threshold = kAdviceCopyShare;
    a.measured = true;
    a.evidence = ms(copies.total) + " of " + ms(c.profile_total_ms) + " per profiled iteration (" + pct(share) +
                 ") in copy and conversion operators (" + copies.names() + ")";
    const auto& ap = c.applied();
    const std::string precision = str(ap, "precision", "fp32");
    if (flag(ap, "input_on_host")) {
        a.title = "Create the input on the device (input_on_host = false)";
        a.change["input_on_host"] = false;
        a.evidence += ": the input is copied to the device every iteration";
    } else if (flag(ap, "host_sync_each_iter")) {
        a.title = "Stop copying the output to the host every iteration (host_sync_each_iter = false)";
        a.change["host_sync_each_iter"] = false;
    } else if (precision.rfind("autocast", 0) == 0) {
        // The casts autocast makes every call; not worth undoing when the arm is measured faster
        // than its fp32 sibling.
        if (const auto* sib = sibling(*c.run, c.index, "precision", "fp32"))
            if (c.median_ns < stats::median(sib->latencies(sib->batch_size))) return;
        a.title = "Try fp32: autocast casts weights and activations every call";
        a.change["precision"] = "fp32";
        a.evidence += ": autocast " + precision + " casts every weight and activation on every call";
    } else if (str(ap, "memory_format") == "channels_last") {
        a.title = "Try the contiguous memory format";
        a.change["memory_format"] = "contiguous";
    } else {
        a.action = "the arm's trace (--trace) shows which calls copy; a model that converts its input on every "
                   "call (.to(), .contiguous()) should get it in the right form";
    }
    out.push_back(std::move(a));
}

// --- Throughput --------------------------------------------------------------------------------

// Batch 1 leaves cores idle: a batch feeds every core.
void batchOneLowCoreUse(const ArmCtx& c, std::vector<Advice>& out) {
    if (!inference(c) || c.run->preset.serving.enabled || c.arm().batch_sizes.size() != 1 ||
        c.arm().batch_size != 1 || c.core_use < 0 || c.allowed_cores <= 1 || c.core_use >= kAdviceLowCoreUse)
        return;
    // Fewer threads than cores: the idle cores are the thread count's doing, not the batch's (a
    // batch gives one thread no more cores to use; issue 27).
    if (c.threads > 0 && c.threads < c.allowed_cores) return;
    auto a = make(c, "batch_one_idle_cores", AdviceTier::Throughput,
                  "Batch the inputs (batch_size = 8) for throughput");
    a.change["batch_size"] = 8;
    a.metric = "core_use";
    a.value = c.core_use;
    a.threshold = kAdviceLowCoreUse;
    a.share = 1.0 - c.core_use;
    a.measured = true;
    a.evidence = "batch 1, and the worker processes used " + fmt("%.0f %%", 100 * c.core_use) + " of the " +
                 std::to_string(c.allowed_cores) +
                 " cores they may run on while measuring: a batch gives every core work per call (items/s rise; "
                 "the latency per call rises too)";
    out.push_back(std::move(a));
}

// --- Start-up ----------------------------------------------------------------------------------

// The profiling executor profiles the first calls, then optimizes: a first call far above steady.
void coldStartProfiling(const ArmCtx& c, std::vector<Advice>& out) {
    const auto js = c.applied().value("jit_state", json::object());
    const double first = num(c.arm().loaded, "first_forward_ms");
    if (!flag(js, "profiling_executor") || str(c.applied(), "jit", "none") != "none" || first <= 0 ||
        c.median_ns <= 0)
        return;
    const double ratio = first * 1e6 / c.median_ns;
    if (ratio < kAdviceColdRatio) return;
    auto a = make(c, "cold_start_profiling_executor", AdviceTier::Startup,
                  "Turn the profiling executor off for a faster first call (profiling_executor = false)");
    a.change["profiling_executor"] = false;
    a.metric = "first_forward_ratio";
    a.value = ratio;
    a.threshold = kAdviceColdRatio;
    a.share = 1.0 - 1.0 / ratio;
    a.measured = true;
    a.evidence = "first forward " + ms(first) + fmt(" = %.0fx", ratio) + " the steady median (" +
                 formatDuration(c.median_ns) +
                 ") with TorchScript's profiling executor on: it profiles the first calls and then optimizes";
    out.push_back(std::move(a));
}

// Each new input shape pays again: the profiling executor re-specialises, cuDNN autotunes.
void variableShapes(const ArmCtx& c, std::vector<Advice>& out) {
    const int variants = int(num(c.applied(), "input_variants", 1));
    const auto& warm = c.arm().warmup_ns;
    if (variants < 2 || warm.size() < std::size_t(variants)) return;
    // Steady median per variant: within a block the worker cycles the variants from 0.
    std::vector<std::vector<double>> per{std::size_t(variants)};
    std::map<std::pair<int, int>, int> pos;
    for (const auto& s : c.arm().samples)
        if (s.batch_size == c.arm().batch_size)
            per[std::size_t(pos[{s.process * 100000 + s.worker, s.block}]++ % variants)].push_back(double(s.latency_ns));
    // The warmup loop also starts at variant 0, after the first forward (variant 0): its first
    // `variants` iterations are each shape's first timed call, shape 0's second.
    double worst = 0, excess = 0, firstCalls = 0;
    for (int v = 1; v < variants; ++v) {
        if (per[std::size_t(v)].empty()) return;
        const double steady = stats::median(per[std::size_t(v)]);
        const double w = double(warm[std::size_t(v)]);
        worst = std::max(worst, w / steady);
        excess += std::max(0.0, w - steady);
        firstCalls += w;
    }
    if (worst < kAdviceNewShapeRatio) return;
    auto a = make(c, "variable_shapes", AdviceTier::Startup, "Stop re-specialising on every new input shape");
    a.metric = "new_shape_ratio";
    a.value = worst;
    a.threshold = kAdviceNewShapeRatio;
    a.share = firstCalls > 0 ? excess / firstCalls : 0;
    a.measured = true;
    a.evidence = std::to_string(variants) + " input shapes: the first call with a new shape took up to " +
                 fmt("%.1fx", worst) + " that shape's steady median";
    const auto cudnn = c.applied().value("cudnn", json::object());
    if (str(c.applied(), "device", "cpu") != "cpu" && flag(cudnn, "benchmark")) {
        a.change["cudnn_benchmark"] = false;
        a.evidence += ", with cudnn.benchmark autotuning each new shape";
    } else if (flag(c.applied().value("jit_state", json::object()), "profiling_executor")) {
        a.change["profiling_executor"] = false;
        a.evidence += ", with TorchScript's profiling executor guarding its graph on the shapes it saw";
    }
    a.action = "pad or bucket the inputs to a few fixed shapes";
    out.push_back(std::move(a));
}

}  // namespace

void applyRules(const ArmCtx& c, std::vector<Advice>& out) {
    fuseForInference(c, out);
    trainModeLayers(c, out);
    autogradInInference(c, out);
    processesDisagreeOnThreads(c, out);
    threadsOversubscribed(c, out);
    unpinnedMigrations(c, out);
    referenceBlas(c, out);
    pageFaults(c, out);
    slowerFormat(c, "precision", "fp32", out);
    slowerFormat(c, "memory_format", "contiguous", out);
    hostCopies(c, out);
    batchOneLowCoreUse(c, out);
    coldStartProfiling(c, out);
    variableShapes(c, out);
}

}  // namespace pitlane::results::advice_detail
