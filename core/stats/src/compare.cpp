// A/B comparison: ratio of medians, seeded hierarchical bootstrap CI, Mann-Whitney p-value.
//
// CI method. Each resample draws block indices with replacement (the same indices for both arms
// when they have the same number of blocks, so drift shared by interleaved blocks cancels), then
// resamples the samples of every drawn block with replacement, pools them, and takes the ratio of
// the two medians. With few blocks the plain percentile interval is too narrow (the bootstrap
// spread is biased low by (k-1)/k and ignores that k block values carry only k-1 degrees of
// freedom), which makes A/A tests fail far more often than 5 %. We therefore use Hesterberg's
// "expanded percentile" interval: the tail probability is taken as P(Z > sqrt(k/(k-1)) * t_{k-1})
// instead of (1 - confidence) / 2, where k is the number of independent units (blocks, or samples
// when an arm has a single block). For k = 5 blocks and 95 % that reads the 0.10th and 99.90th
// percentiles of the resampled ratios.
//
// Random indices come from std::mt19937_64 with our own unbiased Lemire draw, so the same data
// and seed give the same CI with every standard library.
#include "pitlane/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <random>

namespace pitlane::stats {

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

// High and low 64-bit halves of a * b. The portable branch gives the same bits as the native one.
void mul64(std::uint64_t a, std::uint64_t b, std::uint64_t& hi, std::uint64_t& lo) {
#ifdef __SIZEOF_INT128__
    __extension__ using u128 = unsigned __int128;
    const u128 m = static_cast<u128>(a) * b;
    hi = static_cast<std::uint64_t>(m >> 64);
    lo = static_cast<std::uint64_t>(m);
#else
    const std::uint64_t aLo = a & 0xffffffffu, aHi = a >> 32;
    const std::uint64_t bLo = b & 0xffffffffu, bHi = b >> 32;
    const std::uint64_t ll = aLo * bLo, lh = aLo * bHi, hl = aHi * bLo, hh = aHi * bHi;
    const std::uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    lo = (mid << 32) | (ll & 0xffffffffu);
#endif
}

// Uniform index in [0, n), n >= 1: Lemire's multiply-shift with rejection (unbiased, rarely
// divides). Our own code rather than std::uniform_int_distribution, whose algorithm differs
// between standard libraries.
std::size_t drawIndex(std::mt19937_64& rng, std::size_t n) {
    const std::uint64_t bound = n;
    std::uint64_t hi, lo;
    mul64(rng(), bound, hi, lo);
    if (lo < bound) {
        const std::uint64_t threshold = (std::uint64_t{0} - bound) % bound;  // 2^64 mod n
        while (lo < threshold) mul64(rng(), bound, hi, lo);
    }
    return static_cast<std::size_t>(hi);
}

double medianInPlace(std::vector<double>& v) {
    if (v.empty()) return 0;
    const std::size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const double hi = v[mid];
    if (v.size() % 2 == 1) return hi;
    const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lo + hi) / 2;
}

double safeRatio(double num, double den) {
    if (den > 0) return num / den;
    if (num > 0) return std::numeric_limits<double>::infinity();
    return 1;  // both zero: no difference
}

struct Arm {
    std::vector<const std::vector<double>*> blocks;  // non-empty blocks only
    std::size_t total = 0;
    std::size_t maxPooled = 0;  // largest pooled resample: k * largest block
};

Arm collect(const BlockedSamples& s) {
    Arm a;
    std::size_t largest = 0;
    for (const auto& b : s.blocks) {
        if (b.empty()) continue;
        a.blocks.push_back(&b);
        a.total += b.size();
        largest = std::max(largest, b.size());
    }
    a.maxPooled = largest * a.blocks.size();
    return a;
}

// One hierarchical resample of an arm into buf (cleared first), given drawn block indices.
void resampleArm(const Arm& arm, const std::vector<std::size_t>& blockIdx, std::mt19937_64& rng,
                 std::vector<double>& buf) {
    buf.clear();
    for (std::size_t bi : blockIdx) {
        const std::vector<double>& block = *arm.blocks[bi];
        const std::size_t m = block.size();
        for (std::size_t j = 0; j < m; ++j) buf.push_back(block[drawIndex(rng, m)]);
    }
}

// Blocks larger than this are represented by this many of their quantiles in the bootstrap (not
// in the summaries). Resampling m quantile representatives instead of n > m raw samples widens
// the within-block spread of the resampled median by about sqrt(n / m): conservative, and it
// keeps a 200 000-sample run's CI at well under a second.
constexpr std::size_t kMaxBootstrapBlock = 2000;

BlockedSamples thinned(const BlockedSamples& s, bool* changed) {
    BlockedSamples out;
    for (const auto& b : s.blocks) {
        if (b.size() <= kMaxBootstrapBlock) {
            out.blocks.push_back(b);
            continue;
        }
        *changed = true;
        std::vector<double> sorted = b;
        std::sort(sorted.begin(), sorted.end());
        std::vector<double> reps(kMaxBootstrapBlock);
        for (std::size_t i = 0; i < kMaxBootstrapBlock; ++i)
            reps[i] = percentileSorted(sorted, 100.0 * (double(i) + 0.5) / double(kMaxBootstrapBlock));
        out.blocks.push_back(std::move(reps));
    }
    return out;
}

std::string confidenceLabel(double confidence) {
    return sformat("%g%%", confidence * 100);
}

}  // namespace

Comparison compare(const std::string& baselineName, const BlockedSamples& baseline,
                   const std::string& armName, const BlockedSamples& arm,
                   const CompareOptions& options) {
    Comparison c;
    c.baseline = baselineName;
    c.arm = armName;
    bool thinnedAny = false;
    const BlockedSamples baseBoot = thinned(baseline, &thinnedAny);
    const BlockedSamples armBoot = thinned(arm, &thinnedAny);
    const Arm a = collect(baseBoot);
    const Arm b = collect(armBoot);
    const std::string& A = baselineName;
    const std::string& B = armName;

    if (a.total == 0 || b.total == 0) {
        c.method = "not computed: an arm has no samples";
        c.verdict = sformat("not enough samples to compare %s and %s (%s: %zu, %s: %zu)", A.c_str(),
                            B.c_str(), A.c_str(), a.total, B.c_str(), b.total);
        return c;
    }

    std::vector<double> pooledA = baseline.pooled();
    std::vector<double> pooledB = arm.pooled();
    c.p_value = mannWhitneyU(pooledA, pooledB).p_value;
    const double medA = medianInPlace(pooledA);
    const double medB = medianInPlace(pooledB);
    if (!(medA > 0) || !(medB > 0)) {
        c.ratio = safeRatio(medA, medB);
        c.ci_low = c.ci_high = c.ratio;
        c.method = "not computed: a median latency is not positive";
        c.verdict =
            sformat("cannot compare %s and %s: the median latency of %s is %g ns", A.c_str(),
                    B.c_str(), !(medA > 0) ? A.c_str() : B.c_str(), !(medA > 0) ? medA : medB);
        return c;
    }
    c.ratio = medA / medB;

    const std::size_t kA = a.blocks.size();
    const std::size_t kB = b.blocks.size();
    const bool paired = options.paired && kA == kB;
    const std::size_t kMin = std::min(kA, kB);
    // Independent units behind the CI: blocks, or samples when an arm is a single block.
    const std::size_t units = kMin >= 2 ? kMin : std::min(a.total, b.total);
    const double confidence = std::clamp(options.confidence, 0.0, 1.0);
    double tail = (1 - confidence) / 2;
    if (units >= 2 && confidence > 0 && confidence < 1) {
        const double k = static_cast<double>(units);
        const double t = studentTQuantile(1 - tail, k - 1);
        tail = normalSf(std::sqrt(k / (k - 1)) * t);
    }

    const int resamples = std::max(1, options.resamples);
    std::mt19937_64 rng(options.seed);
    std::vector<double> ratios(static_cast<std::size_t>(resamples));
    std::vector<double> bufA, bufB;
    bufA.reserve(a.maxPooled);
    bufB.reserve(b.maxPooled);
    std::vector<std::size_t> idxA(kA), idxB(kB);
    for (int r = 0; r < resamples; ++r) {
        for (auto& i : idxA) i = drawIndex(rng, kA);
        if (paired) {
            idxB = idxA;
        } else {
            for (auto& i : idxB) i = drawIndex(rng, kB);
        }
        resampleArm(a, idxA, rng, bufA);
        resampleArm(b, idxB, rng, bufB);
        ratios[static_cast<std::size_t>(r)] = safeRatio(medianInPlace(bufA), medianInPlace(bufB));
    }
    std::sort(ratios.begin(), ratios.end());
    c.ci_low = percentileSorted(ratios, 100 * tail);
    c.ci_high = percentileSorted(ratios, 100 * (1 - tail));

    const bool faster = c.ratio > 1 && c.ci_low > 1;
    const bool slower = c.ratio < 1 && c.ci_high < 1;
    c.significant = (faster || slower) && c.p_value < options.alpha;

    // Method, in words.
    std::string design;
    if (kA == 1 && kB == 1) {
        design =
            "plain iid bootstrap (one block per arm, so samples are treated as independent; "
            "autocorrelated samples make this CI too narrow)";
    } else if (paired) {
        design = sformat(
            "hierarchical bootstrap paired by block (%zu blocks per arm: the same block indices "
            "are drawn with replacement for both arms, then samples with replacement within each "
            "block)",
            kA);
    } else {
        design = sformat(
            "hierarchical bootstrap, unpaired (%zu vs %zu blocks: block indices drawn with "
            "replacement independently per arm, then samples with replacement within each block)",
            kA, kB);
    }
    const std::string level = confidenceLabel(confidence);
    // Below one resample's worth of tail the percentiles are the extremes.
    const std::string which = tail * resamples < 0.5
                                  ? std::string("the smallest and largest resampled ratios")
                                  : sformat("percentiles %.3g and %.5g of the resampled ratios",
                                            100 * tail, 100 * (1 - tail));
    std::string interval = which;
    if (units >= 2) {
        interval = sformat(
            "expanded percentile interval for %zu independent %s (Student t, %zu "
            "df): %s",
            units, kMin >= 2 ? "blocks" : "samples", units - 1, which.c_str());
    }
    c.method = sformat(
        "ratio of pooled medians (baseline / arm); %s CI: %s, %d resamples, seed %llu; %s. "
        "p-value: Mann-Whitney U on the pooled samples (two-sided, normal approximation with tie "
        "and continuity correction). Significant when the CI excludes 1 and p < %g.",
        level.c_str(), design.c_str(), resamples, static_cast<unsigned long long>(options.seed),
        interval.c_str(), options.alpha);
    if (thinnedAny)
        c.method += sformat(
            " Blocks of more than %zu samples enter the bootstrap as %zu of their quantiles "
            "(a slightly wider, conservative CI).",
            kMaxBootstrapBlock, kMaxBootstrapBlock);

    if (c.significant && faster) {
        c.verdict = sformat("%s is %.2fx faster (%s CI %.2f-%.2f)", B.c_str(), c.ratio,
                            level.c_str(), c.ci_low, c.ci_high);
    } else if (c.significant && slower) {
        c.verdict = sformat("%s is %.2fx slower (%s CI %.2f-%.2f)", B.c_str(), 1 / c.ratio,
                            level.c_str(), 1 / c.ci_high, 1 / c.ci_low);
    } else {
        c.verdict = sformat(
            "no significant difference between %s and %s (ratio %.2f, %s CI "
            "%.2f-%.2f)",
            A.c_str(), B.c_str(), c.ratio, level.c_str(), c.ci_low, c.ci_high);
        // A tiny pooled p-value next to a CI containing 1 looks like a contradiction: say why.
        if (c.p_value < options.alpha)
            c.verdict += sformat(
                "; the samples differ (Mann-Whitney p %s) but not consistently from block "
                "to block, so machine drift can explain it",
                c.p_value < 1e-16 ? "< 1e-16" : sformat("= %.2g", c.p_value).c_str());
    }
    return c;
}

MedianCi medianCi(const BlockedSamples& samples, const CompareOptions& options) {
    MedianCi ci;
    bool thinnedAny = false;
    const BlockedSamples boot = thinned(samples, &thinnedAny);
    const Arm arm = collect(boot);
    if (arm.total == 0) return ci;
    std::vector<double> pooled = samples.pooled();
    ci.median = medianInPlace(pooled);
    const std::size_t k = arm.blocks.size();
    const std::size_t units = k >= 2 ? k : arm.total;
    const double confidence = std::clamp(options.confidence, 0.0, 1.0);
    double tail = (1 - confidence) / 2;
    if (units >= 2 && confidence > 0 && confidence < 1) {  // the same expanded interval as compare
        const double kk = static_cast<double>(units);
        tail = normalSf(std::sqrt(kk / (kk - 1)) * studentTQuantile(1 - tail, kk - 1));
    }
    const int resamples = std::max(1, options.resamples);
    std::mt19937_64 rng(options.seed);
    std::vector<double> medians(static_cast<std::size_t>(resamples));
    std::vector<double> buf;
    buf.reserve(arm.maxPooled);
    std::vector<std::size_t> idx(k);
    for (int r = 0; r < resamples; ++r) {
        for (auto& i : idx) i = drawIndex(rng, k);
        resampleArm(arm, idx, rng, buf);
        medians[static_cast<std::size_t>(r)] = medianInPlace(buf);
    }
    std::sort(medians.begin(), medians.end());
    ci.low = percentileSorted(medians, 100 * tail);
    ci.high = percentileSorted(medians, 100 * (1 - tail));
    if (ci.median > 0)
        ci.half_width_pct = 100 * std::max(ci.median - ci.low, ci.high - ci.median) / ci.median;
    return ci;
}

}  // namespace pitlane::stats
