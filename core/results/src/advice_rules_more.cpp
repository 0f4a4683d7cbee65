// The advisor's rules on formats, host copies, throughput and start-up (docs/ADVISOR.md); the
// latency rules and applyRules are in advice_rules.cpp.
#include "advice_helpers.h"

#include "pitlane/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace pitlane::results::advice_detail {

namespace {

// A sibling arm: the same requested knobs but `key` at `value`.
const ArmResult* sibling(const RunResult& run, std::size_t self, const char* key, const char* value) {
    const spec::KnobInfo* knob = spec::findKnob(key);
    if (!knob) return nullptr;
    spec::Knobs mine = run.arms[self].knobs;
    knob->set(mine, json(value));
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        if (i == self || run.arms[i].samples.empty()) continue;
        if (knob->get(run.arms[i].knobs) == json(value) && spec::sameKnobs(run.arms[i].knobs, mine))
            return &run.arms[i];
    }
    return nullptr;
}

// bf16 / half / channels_last measured slower than fp32 / contiguous; or bf16 on a CPU without
// native bf16 instructions.
template <class E>
void slowerFormat(const ArmCtx& c, const std::optional<std::string>& applied, E goodValue, std::vector<Advice>& out) {
    if (spec::readBackOf(applied, goodValue) == goodValue || c.median_ns <= 0) return;
    const char* key = spec::ChoiceKnob<E>::knob;
    const std::string& good = spec::choiceName(goodValue);
    const std::string mine = *applied;
    const bool bf16 = spec::readBackOf<spec::Precision>(applied) == spec::Precision::AutocastBf16;
    const auto flags = c.environment().value("cpu_flags", json::array());
    const bool cpu = c.applied().device.value_or("cpu") == "cpu";
    const bool knownFlags = flags.is_array() && !flags.empty();
    bool nativeBf16 = false;
    for (const auto& f : flags)
        if (f == "avx512_bf16" || f == "amx_bf16") nativeBf16 = true;
    auto a = make(c, std::string(key) == "precision" ? "slower_than_fp32" : "slower_than_contiguous",
                  AdviceTier::Latency,
                  std::string("Go back to ") + key + " = " + good);
    a.change[key] = goodValue;
    if (const auto* sib = sibling(*c.run, c.index, key, good.c_str())) {
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
    const auto precision = spec::readBackOf(ap.precision, spec::Precision::Fp32);
    if (ap.input_on_host.value_or(false)) {
        a.title = "Create the input on the device (input_on_host = false)";
        a.change["input_on_host"] = false;
        a.evidence += ": the input is copied to the device every iteration";
    } else if (ap.host_sync_each_iter.value_or(false)) {
        a.title = "Stop copying the output to the host every iteration (host_sync_each_iter = false)";
        a.change["host_sync_each_iter"] = false;
    } else if (precision == spec::Precision::AutocastBf16 || precision == spec::Precision::AutocastFp16) {
        // The casts autocast makes every call; not worth undoing when the arm is measured faster
        // than its fp32 sibling.
        if (const auto* sib = sibling(*c.run, c.index, "precision", "fp32"))
            if (c.median_ns < stats::median(sib->latencies(sib->batch_size))) return;
        a.title = "Try fp32: autocast casts weights and activations every call";
        a.change["precision"] = spec::Precision::Fp32;
        a.evidence += ": autocast " + *ap.precision + " casts every weight and activation on every call";
    } else if (spec::readBackOf<spec::MemoryFormat>(ap.memory_format) == spec::MemoryFormat::ChannelsLast) {
        a.title = "Try the contiguous memory format";
        a.change["memory_format"] = spec::MemoryFormat::Contiguous;
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
    const double first = num(c.arm().loaded, "first_forward_ms");
    if (!profilingExecutor(c) || spec::readBackOf(c.applied().jit, spec::Jit::None) != spec::Jit::None || first <= 0 ||
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
    const int variants = c.applied().input_variants.value_or(1);
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
    const auto& cudnn = c.applied().cudnn;
    if (c.applied().device.value_or("cpu") != "cpu" && cudnn && cudnn->benchmark.value_or(false)) {
        a.change["cudnn_benchmark"] = false;
        a.evidence += ", with cudnn.benchmark autotuning each new shape";
    } else if (profilingExecutor(c)) {
        a.change["profiling_executor"] = false;
        a.evidence += ", with TorchScript's profiling executor guarding its graph on the shapes it saw";
    }
    a.action = "pad or bucket the inputs to a few fixed shapes";
    out.push_back(std::move(a));
}

}  // namespace

void formatAndStartupRules(const ArmCtx& c, std::vector<Advice>& out) {
    slowerFormat(c, c.applied().precision, spec::Precision::Fp32, out);
    slowerFormat(c, c.applied().memory_format, spec::MemoryFormat::Contiguous, out);
    hostCopies(c, out);
    batchOneLowCoreUse(c, out);
    coldStartProfiling(c, out);
    variableShapes(c, out);
}

}  // namespace pitlane::results::advice_detail
