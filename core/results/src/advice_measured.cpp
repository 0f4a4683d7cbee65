// The advisor never estimates a change the same run measured (issue 44: the resnet50 run measured
// inference_mode 1.12x faster than grad enabled while the advice for the grad-enabled arm said
// "grad=inference_mode, 5 % estimated"): an arm whose knobs are the advised arm's with the change
// applied, on the same model, measured it, and the advice cites that comparison.
#include "advice_rules.h"
#include "advice_helpers.h"

#include "pitlane/spec/knob_table.h"
#include "pitlane/stats/stats.h"

namespace pitlane::results::advice_detail {

namespace {

bool measuredSamples(const ArmResult& a) {
    return !a.samples.empty() && a.status != kFailed && a.status != kCrashed && a.status != kKilled &&
           a.status != kTimeout;
}

bool sameModel(const ArmResult& a, const ArmResult& b) {
    if (a.model != b.model) return false;
    return a.model_sha256.empty() || b.model_sha256.empty() || a.model_sha256 == b.model_sha256;
}

// The arm of the run that measured `change` on arm `self`: its knobs are self's with each
// changed knob at its advised value and no other difference. nullptr when none did.
const ArmResult* armMeasuring(const RunResult& run, std::size_t self, const json& change) {
    spec::Knobs target = run.arms[self].knobs;
    for (auto it = change.begin(); it != change.end(); ++it) {
        const spec::KnobInfo* knob = spec::findKnob(it.key());
        if (!knob) return nullptr;
        try {
            knob->set(target, it.value());
        } catch (const std::exception&) {
            return nullptr;
        }
    }
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const ArmResult& other = run.arms[i];
        if (i == self || !measuredSamples(other) || other.batch_size != run.arms[self].batch_size ||
            !sameModel(other, run.arms[self]))
            continue;
        if (spec::sameKnobs(other.knobs, target)) return &other;
    }
    return nullptr;
}

// `to` against `from` (> 1: `to` is faster): the verdict's comparison where one of the two is the
// baseline, else the same bootstrap on the pair.
MeasuredChange measure(const RunResult& run, const ArmResult& from, const ArmResult& to) {
    MeasuredChange m;
    m.arm = to.name;
    const ArmResult& base = run.arms.front();
    std::optional<stats::Comparison> c;
    if (&from == &base || &to == &base) {
        const std::string& other = &from == &base ? to.name : from.name;
        for (const auto& cmp : compareArms(run))
            if (cmp.arm == other) c = cmp;
    }
    if (!c) {
        stats::CompareOptions options;
        options.paired = run.interleaved;
        c = stats::compare(from.name, from.blocked(), to.name, to.blocked(), options);
    }
    m.p_value = c->p_value;
    if (c->baseline == from.name) {  // ratio = median(from) / median(to)
        m.ratio = c->ratio;
        m.ci_low = c->ci_low;
        m.ci_high = c->ci_high;
    } else {  // the baseline is `to`: the other way round
        m.ratio = 1 / c->ratio;
        m.ci_low = 1 / c->ci_high;
        m.ci_high = 1 / c->ci_low;
    }
    return m;
}

}  // namespace

bool citeMeasuredChange(const RunResult& run, Advice& a) {
    // A rule that already compared the arm with its sibling cites that measurement itself. The
    // comparison is of the time per call: what latency advice improves (throughput advice raises
    // items/s at a longer call, start-up advice the first calls).
    if (a.tier != AdviceTier::Latency || a.change.empty() || a.arm_knobs.is_null() ||
        a.metric == "ratio_to_sibling")
        return true;
    const ArmResult* other = armMeasuring(run, a.arm, a.change);
    if (!other) return true;
    const MeasuredChange m = measure(run, run.arms[a.arm], *other);
    // Significant as the verdict calls it: the CI excludes 1 and p < 0.05 (stats::compare).
    const bool faster = m.ci_low > 1 && m.p_value < stats::CompareOptions{}.alpha;
    if (!faster) return false;
    a.measured_in_run = m;
    a.measured = true;
    a.metric = "measured_ratio";
    a.value = m.ratio;
    a.threshold = 1;
    a.share = 1.0 - 1.0 / m.ratio;
    a.evidence = "measured in this run: " + changeText(a.change) + fmt(" %.2fx faster", m.ratio) + " (arm " +
                 other->name + ", otherwise the same knobs, against " + run.arms[a.arm].name + "), 95 % CI " +
                 fmt("%.2f", m.ci_low) + fmt("-%.2fx", m.ci_high) + ", p " + (m.p_value < 1e-16 ? "" : "= ") + stats::pValueText(m.p_value) +
                 ". " + a.evidence;
    return true;
}

}  // namespace pitlane::results::advice_detail
