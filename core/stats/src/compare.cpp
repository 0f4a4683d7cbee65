// A/B comparison: ratio of medians, seeded hierarchical bootstrap CI, Mann-Whitney p-value.
//
// CI method. The design has three levels (Kalibera & Jones, "Rigorous benchmarking in reasonable
// time", ISMM 2013): worker processes (replicates: a fresh process per arm and round, because a
// process carries state no knob names -- measured here, glibc malloc made the same model run
// 0.45 ms in one process and 4 ms in the next), interleaved blocks within a process, samples
// within a block. Each resample draws process indices with replacement (the same replicate
// indices for both arms when they have as many processes: replicate r of every arm ran in the
// same round), then block indices within each drawn process (shared by a pair of processes with
// as many blocks, so drift shared by interleaved blocks cancels), then samples within each
// drawn block; pools them and takes the ratio of the two medians.
//
// With few units at the top level the plain percentile interval is too narrow (the bootstrap
// spread is biased low by (k-1)/k and ignores that k values carry only k-1 degrees of freedom),
// which makes A/A tests fail far more often than 5 %. We use Hesterberg's "expanded percentile"
// interval: the tail probability is taken as P(Z > sqrt(k/(k-1)) * t_{k-1}) instead of
// (1 - confidence) / 2, where k is the number of independent units (processes when every arm has
// two or more, else blocks, else samples). For k = 5 and 95 % that reads the 0.10th and 99.90th
// percentiles of the resampled ratios. Where that tail lies beyond what the replicates can show
// (few processes), the interval is widened to its log-normal equivalent (bootInterval below).
//
// Random indices come from std::mt19937_64 with our own unbiased Lemire draw, so the same data
// and seed give the same CI with every standard library.
//
// The method and the verdict in words are written by compare_text.cpp.
#include "pitlane/stats/stats.h"

#include "compare_text.h"

#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdint>
#include <limits>
#include <map>
#include <random>

namespace pitlane::stats {

namespace {

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

// One arm as the bootstrap sees it: processes (replicates), each a list of non-empty blocks.
struct Proc {
    std::vector<const std::vector<double>*> blocks;
    std::size_t total = 0;
};
struct Arm {
    std::vector<Proc> procs;
    std::size_t total = 0;
    std::size_t blocks = 0;
    std::size_t maxPooled = 0;  // largest pooled resample: processes * largest process
};

Arm collect(const BlockedSamples& s) {
    Arm a;
    std::map<int, std::size_t> slot;  // replicate id -> index in procs, ascending ids
    for (std::size_t i = 0; i < s.blocks.size(); ++i)
        if (!s.blocks[i].empty()) slot.emplace(s.processOf(i), 0);
    std::size_t n = 0;
    for (auto& [id, idx] : slot) idx = n++;
    a.procs.resize(n);
    for (std::size_t i = 0; i < s.blocks.size(); ++i) {
        const auto& b = s.blocks[i];
        if (b.empty()) continue;
        Proc& p = a.procs[slot[s.processOf(i)]];
        p.blocks.push_back(&b);
        p.total += b.size();
        a.total += b.size();
        ++a.blocks;
    }
    std::size_t largest = 0;
    for (const auto& p : a.procs) largest = std::max(largest, p.total);
    a.maxPooled = largest * a.procs.size();
    return a;
}

// Indices drawn with replacement: n draws from [0, n). A level of one unit draws nothing (the
// only choice is 0), so a one-process arm consumes the generator exactly as a plain block
// bootstrap does.
void drawLevel(std::mt19937_64& rng, std::size_t n, std::vector<std::size_t>& out) {
    out.resize(n);
    if (n == 1) {
        out[0] = 0;
        return;
    }
    for (auto& i : out) i = drawIndex(rng, n);
}

// One level-two draw of an arm: for each drawn process, the drawn blocks (pointers).
using BlockDraw = std::vector<const std::vector<double>*>;

// Draw processes, then blocks within each drawn process, for one arm or for a pair of arms.
// Paired: the same process indices for both arms when they have as many processes, and within a
// pair of processes the same block indices when those have as many blocks (interleaved blocks of
// one round share the machine's drift).
struct Scratch {
    std::vector<std::size_t> procA, procB, blockA, blockB;
};
void drawBlocks(const Arm& a, const Arm* b, bool paired, std::mt19937_64& rng, Scratch& s,
                BlockDraw& outA, BlockDraw& outB) {
    outA.clear();
    outB.clear();
    drawLevel(rng, a.procs.size(), s.procA);
    const bool pairProcs = b && paired && b->procs.size() == a.procs.size();
    if (b) {
        if (pairProcs) s.procB = s.procA;
        else drawLevel(rng, b->procs.size(), s.procB);
    }
    for (std::size_t j = 0; j < s.procA.size(); ++j) {
        const Proc& pa = a.procs[s.procA[j]];
        drawLevel(rng, pa.blocks.size(), s.blockA);
        for (std::size_t bi : s.blockA) outA.push_back(pa.blocks[bi]);
        if (!pairProcs) continue;
        const Proc& pb = b->procs[s.procB[j]];
        if (pb.blocks.size() == pa.blocks.size()) s.blockB = s.blockA;
        else drawLevel(rng, pb.blocks.size(), s.blockB);
        for (std::size_t bi : s.blockB) outB.push_back(pb.blocks[bi]);
    }
    if (b && !pairProcs) {
        for (std::size_t j = 0; j < s.procB.size(); ++j) {
            const Proc& pb = b->procs[s.procB[j]];
            drawLevel(rng, pb.blocks.size(), s.blockB);
            for (std::size_t bi : s.blockB) outB.push_back(pb.blocks[bi]);
        }
    }
}

// Samples with replacement within every drawn block, pooled into buf (cleared first).
void resampleSamples(const BlockDraw& blocks, std::mt19937_64& rng, std::vector<double>& buf) {
    buf.clear();
    for (const auto* block : blocks) {
        const std::size_t m = block->size();
        for (std::size_t j = 0; j < m; ++j) buf.push_back((*block)[drawIndex(rng, m)]);
    }
}

// The independent units behind a CI: processes when every arm has at least two, else blocks,
// else samples. `count` is the smallest count of that level over the arms.
struct Units {
    std::size_t count = 0;
    const char* name = "samples";
};
Units unitsOf(const std::vector<const Arm*>& arms) {
    std::size_t procs = SIZE_MAX, blocks = SIZE_MAX, samples = SIZE_MAX;
    for (const Arm* a : arms) {
        procs = std::min(procs, a->procs.size());
        blocks = std::min(blocks, a->blocks);
        samples = std::min(samples, a->total);
    }
    if (procs >= 2) return {procs, "processes"};
    if (blocks >= 2) return {blocks, "blocks"};
    return {samples, "samples"};
}

// Tail probability of the expanded percentile interval for k units (Hesterberg): the percentile
// bootstrap is too narrow with few units, by sqrt((k-1)/k) in spread and by using z instead of
// t_{k-1}; reading the percentiles at P(Z > sqrt(k/(k-1)) * t_{k-1}) corrects both.
double expandedTail(std::size_t k, double confidence) {
    double tail = (1 - confidence) / 2;
    if (k >= 2 && confidence > 0 && confidence < 1) {
        const double kk = static_cast<double>(k);
        tail = normalSf(std::sqrt(kk / (kk - 1)) * studentTQuantile(1 - tail, kk - 1));
    }
    return tail;
}

// The interval from sorted bootstrap replicates of a positive statistic: the expanded percentile
// interval, widened to its normal-theory equivalent on the log scale,
//   exp(log(point) +- sqrt(k/(k-1)) * t_{k-1} * sd(log replicates)),
// where the expanded tail lies beyond what k units can show. The most extreme resample (every
// draw the same unit) has probability k^(1-k); with a tail smaller than that (k <= 5 at 95 %:
// 3 processes ask for a tail of 7e-8, while their draws take at most 10 distinct values whose
// range covers the true ratio only 75 % of the time) the percentiles are just the extremes and
// far too narrow, and the log-normal form keeps the t interval's coverage. From k = 6 on the
// percentiles are used as they are.
struct Interval {
    double low = 0, high = 0;
    bool widened = false;
};
Interval bootInterval(const std::vector<double>& sorted, double point, std::size_t k,
                      double confidence, double tail) {
    Interval iv;
    iv.low = percentileSorted(sorted, 100 * tail);
    iv.high = percentileSorted(sorted, 100 * (1 - tail));
    if (k < 2 || !(point > 0) || !std::isfinite(point) || !(confidence > 0 && confidence < 1))
        return iv;
    const double kk0 = static_cast<double>(k);
    if (tail >= std::pow(kk0, 1 - kk0)) return iv;  // the percentiles can show this tail
    double sum = 0, sum2 = 0;
    std::size_t n = 0;
    for (double v : sorted) {
        if (!(v > 0) || !std::isfinite(v)) continue;
        const double l = std::log(v);
        sum += l;
        sum2 += l * l;
        ++n;
    }
    if (n < 2) return iv;
    const double mean = sum / double(n);
    const double sd = std::sqrt(std::max(0.0, (sum2 - double(n) * mean * mean) / double(n - 1)));
    const double kk = static_cast<double>(k);
    const double half =
        std::sqrt(kk / (kk - 1)) * studentTQuantile(1 - (1 - confidence) / 2, kk - 1) * sd;
    const double lo = point * std::exp(-half), hi = point * std::exp(half);
    if (lo < iv.low) {
        iv.low = lo;
        iv.widened = true;
    }
    if (hi > iv.high) {
        iv.high = hi;
        iv.widened = true;
    }
    return iv;
}

// Blocks larger than this are represented by this many of their quantiles in the bootstrap (not
// in the summaries). Resampling m quantile representatives instead of n > m raw samples widens
// the within-block spread of the resampled median by about sqrt(n / m): conservative, and it
// keeps a 200 000-sample run's CI at well under a second.
constexpr std::size_t kMaxBootstrapBlock = 2000;

// The quantile representatives of a block of more than kMaxBootstrapBlock samples.
std::vector<double> representatives(std::vector<double> block) {
    std::sort(block.begin(), block.end());
    std::vector<double> reps(kMaxBootstrapBlock);
    for (std::size_t i = 0; i < kMaxBootstrapBlock; ++i)
        reps[i] = percentileSorted(block, 100.0 * (double(i) + 0.5) / double(kMaxBootstrapBlock));
    return reps;
}

BlockedSamples thinned(const BlockedSamples& s, bool* changed) {
    BlockedSamples out;
    out.process = s.process;
    for (const auto& b : s.blocks) {
        if (b.size() <= kMaxBootstrapBlock) {
            out.blocks.push_back(b);
            continue;
        }
        *changed = true;
        out.blocks.push_back(representatives(b));
    }
    return out;
}

// The median of sorted values, as medianInPlace finds it.
double medianSorted(const std::vector<double>& v) {
    if (v.empty()) return 0;
    const std::size_t mid = v.size() / 2;
    return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Sorted ratios of resampled baseline and arm medians: processes and blocks drawn for the pair
// (paired by replicate) or for each arm on its own, then samples within every drawn block.
std::vector<double> bootstrapRatios(const Arm& a, const Arm& b, bool pairedProcs, int resamples,
                                    std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<double> ratios(static_cast<std::size_t>(resamples));
    std::vector<double> bufA, bufB;
    bufA.reserve(a.maxPooled);
    bufB.reserve(b.maxPooled);
    Scratch scratch;
    BlockDraw drawA, drawB, ignored;
    for (int r = 0; r < resamples; ++r) {
        if (pairedProcs) {
            drawBlocks(a, &b, true, rng, scratch, drawA, drawB);
        } else {
            drawBlocks(a, nullptr, false, rng, scratch, drawA, ignored);
            drawBlocks(b, nullptr, false, rng, scratch, drawB, ignored);
        }
        resampleSamples(drawA, rng, bufA);
        resampleSamples(drawB, rng, bufB);
        ratios[static_cast<std::size_t>(r)] = safeRatio(medianInPlace(bufA), medianInPlace(bufB));
    }
    std::sort(ratios.begin(), ratios.end());
    return ratios;
}

}  // namespace

void PreparedArm::addBlock(std::vector<double> block, int process) {
    sorted.insert(sorted.end(), block.begin(), block.end());
    boot.process.push_back(process);
    if (block.size() > kMaxBootstrapBlock) {
        thinned = true;
        boot.blocks.push_back(representatives(std::move(block)));
    } else {
        boot.blocks.push_back(std::move(block));
    }
}

void PreparedArm::finish() { std::sort(sorted.begin(), sorted.end()); }

PreparedArm prepareArm(const BlockedSamples& samples) {
    PreparedArm p;
    for (std::size_t i = 0; i < samples.blocks.size(); ++i)
        p.addBlock(samples.blocks[i], samples.processOf(i));
    p.finish();
    return p;
}

Comparison compare(const std::string& baselineName, const BlockedSamples& baseline,
                   const std::string& armName, const BlockedSamples& arm,
                   const CompareOptions& options) {
    return compare(baselineName, prepareArm(baseline), armName, prepareArm(arm), options);
}

Comparison compare(const std::string& baselineName, const PreparedArm& baseline,
                   const std::string& armName, const PreparedArm& arm,
                   const CompareOptions& options) {
    Comparison c;
    c.baseline = baselineName;
    c.arm = armName;
    const bool thinnedAny = baseline.thinned || arm.thinned;
    const Arm a = collect(baseline.boot);
    const Arm b = collect(arm.boot);

    if (a.total == 0 || b.total == 0) {
        c.method = "not computed: an arm has no samples";
        c.verdict = detail::noSamplesVerdict(baselineName, armName, a.total, b.total);
        return c;
    }

    c.p_value = mannWhitneyUSorted(baseline.sorted, arm.sorted).p_value;
    const double medA = medianSorted(baseline.sorted);
    const double medB = medianSorted(arm.sorted);
    if (!(medA > 0) || !(medB > 0)) {
        c.ratio = safeRatio(medA, medB);
        c.ci_low = c.ci_high = c.ratio;
        c.method = "not computed: a median latency is not positive";
        c.verdict = detail::nonPositiveMedianVerdict(baselineName, armName, medA, medB);
        return c;
    }
    c.ratio = medA / medB;

    const Units units = unitsOf({&a, &b});
    c.units = units.count;
    c.unit = units.name;
    const bool pairedProcs = options.paired && a.procs.size() == b.procs.size();
    const double confidence = std::clamp(options.confidence, 0.0, 1.0);
    const double tail = expandedTail(units.count, confidence);
    const int resamples = std::max(1, options.resamples);
    const std::vector<double> ratios = bootstrapRatios(a, b, pairedProcs, resamples, options.seed);
    const Interval iv = bootInterval(ratios, c.ratio, units.count, confidence, tail);
    c.ci_low = iv.low;
    c.ci_high = iv.high;

    const bool faster = c.ratio > 1 && c.ci_low > 1;
    const bool slower = c.ratio < 1 && c.ci_high < 1;
    c.significant = (faster || slower) && c.p_value < options.alpha;

    detail::MethodFacts facts;
    facts.processesA = a.procs.size();
    facts.processesB = b.procs.size();
    facts.blocksA = a.blocks;
    facts.blocksB = b.blocks;
    facts.pairedProcesses = pairedProcs;
    facts.units = units.count;
    facts.unit = units.name;
    facts.tail = tail;
    facts.widened = iv.widened;
    facts.level = detail::confidenceLabel(confidence);
    facts.resamples = resamples;
    facts.seed = options.seed;
    facts.alpha = options.alpha;
    facts.thinnedTo = thinnedAny ? kMaxBootstrapBlock : 0;
    c.method = detail::methodText(facts);
    c.verdict = detail::verdictText(c, faster, slower, facts.level, options.alpha);
    return c;
}

Comparison compareUnpaired(const std::string& baselineName, const BlockedSamples& baseline,
                           const std::string& armName, const BlockedSamples& arm,
                           const CompareOptions& options) {
    CompareOptions unpaired = options;
    unpaired.paired = false;
    return compare(baselineName, baseline, armName, arm, unpaired);
}

bool conclusive(const Comparison& c, double tight) {
    return c.significant || (c.ci_low >= 1 / tight && c.ci_high <= tight);
}

MedianCi medianCi(const BlockedSamples& samples, const CompareOptions& options) {
    MedianCi ci;
    bool thinnedAny = false;
    const BlockedSamples boot = thinned(samples, &thinnedAny);
    const Arm arm = collect(boot);
    if (arm.total == 0) return ci;
    std::vector<double> pooled = samples.pooled();
    ci.median = medianInPlace(pooled);
    const Units units = unitsOf({&arm});
    const double confidence = std::clamp(options.confidence, 0.0, 1.0);
    const double tail = expandedTail(units.count, confidence);  // the same interval as compare
    const int resamples = std::max(1, options.resamples);
    std::mt19937_64 rng(options.seed);
    std::vector<double> medians(static_cast<std::size_t>(resamples));
    std::vector<double> buf;
    buf.reserve(arm.maxPooled);
    Scratch scratch;
    BlockDraw draw, ignored;
    for (int r = 0; r < resamples; ++r) {
        drawBlocks(arm, nullptr, false, rng, scratch, draw, ignored);
        resampleSamples(draw, rng, buf);
        medians[static_cast<std::size_t>(r)] = medianInPlace(buf);
    }
    std::sort(medians.begin(), medians.end());
    const Interval iv = bootInterval(medians, ci.median, units.count, confidence, tail);
    ci.low = iv.low;
    ci.high = iv.high;
    if (ci.median > 0)
        ci.half_width_pct = 100 * std::max(ci.median - ci.low, ci.high - ci.median) / ci.median;
    return ci;
}

}  // namespace pitlane::stats
