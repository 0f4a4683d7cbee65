// A comparison in words: the method sentence (the bootstrap's design, the interval) and the
// verdict. The numbers come from compare() in compare.cpp.
#include "compare_text.h"

#include <cstdarg>
#include <cstdio>

namespace pitlane::stats::detail {

namespace {

std::string sformat(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    va_list copy;
    va_copy(copy, args);
    const int len = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    std::string out(len > 0 ? static_cast<std::size_t>(len) : 0, '\0');
    if (len > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, args);
    va_end(args);
    return out;
}

// How the resamples were drawn: three levels, or blocks and samples of one process per arm.
std::string designText(const MethodFacts& f) {
    const std::size_t kA = f.blocksA, kB = f.blocksB;
    if (f.processesA > 1 || f.processesB > 1) {
        return sformat(
            "three-level hierarchical bootstrap, %s (%zu vs %zu worker processes, %zu vs %zu "
            "blocks: processes drawn with replacement%s, then blocks with replacement within each "
            "drawn process, then samples with replacement within each block)",
            f.pairedProcesses ? "paired by replicate" : "unpaired", f.processesA, f.processesB, kA,
            kB,
            f.pairedProcesses ? " (the same replicate indices for both arms)"
                              : " independently per arm");
    }
    if (kA == 1 && kB == 1) {
        return "plain iid bootstrap (one block per arm, so samples are treated as independent; "
               "autocorrelated samples make this CI too narrow)";
    }
    if (f.pairedProcesses && kA == kB) {
        return sformat(
            "hierarchical bootstrap paired by block (one process per arm, %zu blocks per arm: the "
            "same block indices are drawn with replacement for both arms, then samples with "
            "replacement within each block; the process level is not seen: run.processes > 1 "
            "lets the CI see it)",
            kA);
    }
    return sformat(
        "hierarchical bootstrap, unpaired (one process per arm, %zu vs %zu blocks: block "
        "indices drawn with replacement independently per arm, then samples with replacement "
        "within each block)",
        kA, kB);
}

// Which resampled ratios bound the interval, and for how many units it was expanded.
std::string intervalText(const MethodFacts& f) {
    // Below one resample's worth of tail the percentiles are the extremes.
    const std::string which = f.tail * f.resamples < 0.5
                                  ? std::string("the smallest and largest resampled ratios")
                                  : sformat("percentiles %.3g and %.5g of the resampled ratios",
                                            100 * f.tail, 100 * (1 - f.tail));
    if (f.units < 2) return which;
    return sformat(
        "expanded percentile interval for %zu independent %s (Student t, %zu df): %s%s", f.units,
        f.unit, f.units - 1, which.c_str(),
        f.widened ? ", widened to exp(log ratio +- sqrt(k/(k-1)) t sd(log resampled "
                    "ratio)) because so few units cannot show that tail"
                  : "");
}

}  // namespace

std::string confidenceLabel(double confidence) {
    return sformat("%g%%", confidence * 100);
}

std::string noSamplesVerdict(const std::string& baseline, const std::string& arm,
                             std::size_t baselineSamples, std::size_t armSamples) {
    return sformat("not enough samples to compare %s and %s (%s: %zu, %s: %zu)", baseline.c_str(),
                   arm.c_str(), baseline.c_str(), baselineSamples, arm.c_str(), armSamples);
}

std::string nonPositiveMedianVerdict(const std::string& baseline, const std::string& arm,
                                     double baselineMedian, double armMedian) {
    const bool baselineBad = !(baselineMedian > 0);
    return sformat("cannot compare %s and %s: the median latency of %s is %g ns", baseline.c_str(),
                   arm.c_str(), baselineBad ? baseline.c_str() : arm.c_str(),
                   baselineBad ? baselineMedian : armMedian);
}

std::string methodText(const MethodFacts& f) {
    const std::string design = designText(f);
    const std::string interval = intervalText(f);
    std::string method = sformat(
        "ratio of pooled medians (baseline / arm); %s CI: %s, %d resamples, seed %llu; %s. "
        "p-value: Mann-Whitney U on the pooled samples (two-sided, normal approximation with tie "
        "and continuity correction). Significant when the CI excludes 1 and p < %g.",
        f.level.c_str(), design.c_str(), f.resamples, static_cast<unsigned long long>(f.seed),
        interval.c_str(), f.alpha);
    if (f.thinnedTo > 0)
        method += sformat(
            " Blocks of more than %zu samples enter the bootstrap as %zu of their quantiles "
            "(a slightly wider, conservative CI).",
            f.thinnedTo, f.thinnedTo);
    return method;
}

std::string verdictText(const Comparison& c, bool faster, bool slower, const std::string& level,
                        double alpha) {
    const std::string& A = c.baseline;
    const std::string& B = c.arm;
    if (c.significant && faster)
        return sformat("%s is %.2fx faster (%s CI %.2f-%.2f)", B.c_str(), c.ratio, level.c_str(),
                       c.ci_low, c.ci_high);
    if (c.significant && slower)
        return sformat("%s is %.2fx slower (%s CI %.2f-%.2f)", B.c_str(), 1 / c.ratio,
                       level.c_str(), 1 / c.ci_high, 1 / c.ci_low);
    std::string verdict = sformat(
        "no significant difference between %s and %s (ratio %.2f, %s CI "
        "%.2f-%.2f)",
        A.c_str(), B.c_str(), c.ratio, level.c_str(), c.ci_low, c.ci_high);
    // The two tests disagree: say which said what, and why that is no contradiction.
    const std::string p = c.p_value < 1e-16 ? pValueText(c.p_value) : "= " + pValueText(c.p_value);
    if (faster || slower)  // the CI excludes 1, so the rank test is the one that did not agree
        verdict += sformat(
            ": the medians differ (the CI excludes 1) but the rank test does not (Mann-Whitney "
            "p %s): the distributions overlap (a shift of the middle only); not called "
            "significant, which needs both",
            p.c_str());
    else if (c.p_value < alpha && c.unit == "processes")
        verdict += sformat(
            "; the samples differ (Mann-Whitney p %s) but not consistently from process "
            "to process: the worker processes of one arm differ as much as the arms do, so "
            "the state of a process can explain it",
            p.c_str());
    else if (c.p_value < alpha)
        verdict += sformat(
            "; the samples differ (Mann-Whitney p %s) but not consistently from block "
            "to block, so machine drift can explain it",
            p.c_str());
    return verdict;
}

}  // namespace pitlane::stats::detail

namespace pitlane::stats {

std::string pValueText(double p) { return p < 1e-16 ? std::string("< 1e-16") : detail::sformat("%.2g", p); }

}  // namespace pitlane::stats
