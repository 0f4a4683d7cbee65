// The advisor's rules (docs/ADVISOR.md): each reads one arm's read-back settings, environment,
// metrics, cold costs and operator profile, and appends advice when its evidence is over its
// threshold. The ranking, the suggested arms and the text are in advice.cpp.
#include "advice_rules.h"
#include "advice_helpers.h"

#include "pitlane/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

namespace pitlane::results::advice_detail {
namespace {

// The affinity read back as none, or not read back (a worker older than the read-back).
bool unpinned(const std::optional<std::string>& policy) {
    return spec::readBackOf(policy, spec::Affinity::None) == spec::Affinity::None;
}

// --- Latency: the time of one iteration -------------------------------------------------------

// Convolution, batch-norm and activation operators run one by one (and convolutions possibly on
// ATen's fallback instead of oneDNN): freezing folds batch-norm into the convolutions and
// optimize_for_inference fuses them on oneDNN with prepacked weights.
void fuseForInference(const ArmCtx& c, std::vector<Advice>& out) {
    if (!inference(c) || !c.hasProfile() || spec::readBackOf<spec::Jit>(c.applied().jit) == spec::Jit::FreezeOptimize) return;
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
    if (spec::readBackOf<spec::Mode>(c.applied().mode) != spec::Mode::Eval) a.change["mode"] = spec::Mode::Eval;  // freezing needs eval
    a.change["jit"] = "freeze_optimize";
    out.push_back(std::move(a));
}

// Train mode: batch-norm computes batch statistics and updates its running ones, dropout draws a
// mask, on every inference call.
void trainModeLayers(const ArmCtx& c, std::vector<Advice>& out) {
    if (!inference(c) || spec::readBackOf<spec::Mode>(c.applied().mode) != spec::Mode::Train) return;
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
    if (!inference(c) || spec::readBackOf<spec::Grad>(c.applied().grad) != spec::Grad::Enabled) return;
    const auto& gs = c.applied().grad_state;
    if (gs && gs->output_requires_grad == false) return;
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

// The OpenMP thread count compiled into an AOTInductor package's own kernels (applied.package.
// kernel_threads), when it is not the intra-op threads the arm runs: no knob of this arm reaches
// it, so pinning or fewer threads is not the advice; compiling with dynamic threads is.
int fixedPackageThreads(const ArmCtx& c) {
    const json& package = c.applied().extraField("package");
    if (!package.is_object() || !package.contains("kernel_threads") || !package["kernel_threads"].is_number_integer())
        return 0;
    const int compiled = package["kernel_threads"].get<int>();
    return compiled != c.intra_threads ? compiled : 0;
}

void packageFixedThreads(const ArmCtx& c, std::vector<Advice>& out) {
    const int compiled = fixedPackageThreads(c);
    if (compiled == 0) return;
    auto a = make(c, "package_fixed_threads", AdviceTier::Latency,
                  "Compile the package with dynamic threads (inductor.dynamic_threads = true)");
    a.metric = "kernel_threads";
    a.value = compiled;
    a.threshold = c.intra_threads;
    // A prior: what the extra threads cost depends on the other load (lesson 23 measured the
    // fixed package 1.6x to 6.9x slower on a busy machine, and about as fast on an idle one).
    a.share = 0.25;
    a.evidence = "the package's own kernels run " + std::to_string(compiled) +
                 " OpenMP threads compiled into them while the arm asks " + std::to_string(c.intra_threads) +
                 " intra-op thread" + (c.intra_threads == 1 ? "" : "s") +
                 ": intra_op_threads and affinity cannot reach them";
    const auto& k = c.arm().knobs;
    if (k.compile == spec::Compile::Aoti) {
        a.change["inductor"] = {{"freezing", k.inductor.freezing},
                                {"max_autotune", k.inductor.max_autotune},
                                {"dynamic_threads", true}};
    } else {
        a.action = "compile the package again with torch._inductor.config.cpp.dynamic_threads = True "
                   "(or give Pitlane the torch.export program with knob compile \"aoti\": it compiles "
                   "with dynamic threads by default)";
    }
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
    if (c.workers > 1 && unpinned(c.applied().affinity_policy)) a.change["affinity"] = spec::Affinity::Compact;
    out.push_back(std::move(a));
}

// Worker processes of one arm far apart while it runs several intra-op threads (issue 27: torch's
// default threads on a shared machine put processes 100x apart; one thread per arm fixed it).
// The CI counts processes, so nothing else the advisor says can be measured until this is.
void processesDisagreeOnThreads(const ArmCtx& c, std::vector<Advice>& out) {
    if (c.intra_threads <= 1 || fixedPackageThreads(c)) return;
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
    // A package's compiled-in threads move whatever the pinning: packageFixedThreads says it.
    if (!unpinned(c.applied().affinity_policy) || fixedPackageThreads(c)) return;
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
    if (c.applied().blas != "reference") return;
    auto a = make(c, "reference_blas", AdviceTier::Latency, "Use an optimized BLAS instead of the reference BLAS");
    a.metric = "profile_share";
    a.threshold = kAdviceBlasShare;
    a.evidence = "the worker loaded the reference BLAS (" + c.applied().blas_path.value_or("") + ")";
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
    if (faults < kFaultsPerIterWarn || spec::readBackOf(c.applied().allocator, spec::Allocator::System) != spec::Allocator::System) return;
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

}  // namespace

void applyRules(const ArmCtx& c, std::vector<Advice>& out) {
    packageFixedThreads(c, out);
    fuseForInference(c, out);
    trainModeLayers(c, out);
    autogradInInference(c, out);
    processesDisagreeOnThreads(c, out);
    threadsOversubscribed(c, out);
    unpinnedMigrations(c, out);
    referenceBlas(c, out);
    pageFaults(c, out);
    formatAndStartupRules(c, out);
}

}  // namespace pitlane::results::advice_detail
