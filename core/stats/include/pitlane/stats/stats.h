#pragma once
// Latency statistics and A/B comparison. No Qt, no torch: plain C++17.
#include <cstdint>
#include <string>
#include <vector>

namespace pitlane::stats {

// Percentile estimator: linear interpolation between closest ranks, Hyndman & Fan type 7
// (numpy.percentile's default "linear" method). q in [0, 100]. `sorted` must be ascending.
double percentileSorted(const std::vector<double>& sorted, double q);
double percentile(std::vector<double> values, double q);
double median(std::vector<double> values);

struct Summary {
    std::size_t n = 0;
    double median = 0, mean = 0;
    double sd = 0;   // sample standard deviation (n - 1 denominator)
    double cov = 0;  // sd / mean
    double min = 0, max = 0;
    double p90 = 0, p95 = 0, p99 = 0, p999 = 0;  // type-7 percentiles
    // Items per second over the measured time: n * batch_size / sum(latency) (latency in ns).
    double throughput_per_s = 0;
};

// latencies in nanoseconds; batch_size = items per iteration.
Summary summarize(const std::vector<double>& latencies_ns, int batch_size = 1);
// The same of latencies already sorted ascending (summarize sorts a copy, then calls this: the
// same sums in the same order, the same bits).
Summary summarizeSorted(const std::vector<double>& sorted_ns, int batch_size = 1);

// Samples of one arm grouped by interleaving block (A B A B ...), in block order, and the blocks
// grouped by the worker process (replicate) that measured them: `process[i]` is the replicate of
// `blocks[i]`. Empty `process`: every block came from one process.
struct BlockedSamples {
    std::vector<std::vector<double>> blocks;
    std::vector<int> process;
    std::vector<double> pooled() const;
    int processOf(std::size_t block) const { return block < process.size() ? process[block] : 0; }
    // Distinct replicates that measured at least one sample.
    std::size_t processCount() const;
};

// How the variance of one arm's latencies splits over the levels of the design (Kalibera & Jones
// 2013): a nested ANOVA decomposition of the total sum of squares of log latency into between
// processes, between blocks of one process, and within blocks. The shares add up to 1. Log scale
// so that a ratio means the same at every latency; shares of squares, not variance-component
// estimates (each level's share also carries the sampling noise of the level below).
struct VarianceShares {
    bool computed = false;  // false: fewer than 2 samples or no spread at all
    double between_processes = 0, between_blocks = 0, within_blocks = 0;
    std::size_t processes = 0, blocks = 0, n = 0;
    static constexpr const char* kEstimator =
        "nested ANOVA sums of squares of log latency (process / block within process / sample "
        "within block), as shares of the total";
};
VarianceShares varianceShares(const BlockedSamples& samples);

struct MannWhitney {
    double u = 0;  // U statistic of the first sample
    double z = 0;
    double p_value = 1;  // two-sided; normal approximation, tie correction, continuity correction
    // z: sign of U1 - n1*n2/2, size max(0, |U1 - n1*n2/2| - 0.5) / sd (continuity-corrected),
    // so p_value = min(1, 2 * P(Z > |z|)).
};
// Equivalent to scipy.stats.mannwhitneyu(x, y, alternative='two-sided', method='asymptotic',
// use_continuity=True).
MannWhitney mannWhitneyU(const std::vector<double>& x, const std::vector<double>& y);
// The same test on samples already sorted ascending: the same figures to the last bit, without
// the 16 bytes per sample mannWhitneyU's merged copy takes.
MannWhitney mannWhitneyUSorted(const std::vector<double>& x, const std::vector<double>& y);

struct CompareOptions {
    int resamples = 2000;
    std::uint64_t seed = 0x5eed;  // fixed: the same data always gives the same CI
    double confidence = 0.95;
    double alpha = 0.05;
    // Pair blocks by index (arms interleaved in one run). Off for arms of different runs, whose
    // block numbers mean nothing to each other.
    bool paired = true;
};

struct Comparison {
    std::string baseline, arm;
    double ratio = 0;  // median(baseline) / median(arm): > 1 means the arm is faster
    double ci_low = 0, ci_high = 0;
    double p_value = 1;
    bool significant = false;  // CI excludes 1 and p < alpha
    std::string method;        // how the CI was computed, in words
    std::string verdict;       // "B is 1.42x faster (95% CI 1.38-1.46)" / "no significant ..."
    std::size_t units = 0;     // independent units behind the CI (processes, blocks or samples)
    std::string unit;          // "processes", "blocks" or "samples"
};

// Ratio of medians with a seeded hierarchical bootstrap CI (process, then block within the
// process, then sample within the block; paired by replicate and by block where the arms have the
// same counts), plus the Mann-Whitney U p-value on the pooled samples. See compare.cpp.
Comparison compare(const std::string& baselineName, const BlockedSamples& baseline,
                   const std::string& armName, const BlockedSamples& arm,
                   const CompareOptions& options = {});

// A p-value as every table writes it (the CLI, the window, the reports) and as the verdict
// quotes it: two significant digits ("0.077", "7.1e-12"), "< 1e-16" below what a double's
// normal tail resolves.
std::string pValueText(double p);

// An arm as compare() uses it, built one block at a time (a long run's arm need not be held as
// BlockedSamples): the blocks the bootstrap resamples (a block of more than 2000 samples is
// represented by 2000 of its quantiles) with their processes, and every sample, sorted.
// compare(name, prepareArm(b), ...) is compare(name, b, ...), to the last bit.
struct PreparedArm {
    BlockedSamples boot;
    bool thinned = false;        // a block was represented by its quantiles
    std::vector<double> sorted;  // every sample, ascending (after finish())
    // Appends one block (its samples in the order measured) of replicate `process`.
    void addBlock(std::vector<double> block, int process);
    void finish();
};
PreparedArm prepareArm(const BlockedSamples& samples);
Comparison compare(const std::string& baselineName, const PreparedArm& baseline,
                   const std::string& armName, const PreparedArm& arm,
                   const CompareOptions& options = {});

// The same comparison for arms that were not interleaved (arms of runs made at different times,
// `pitlane-cli compare`): unpaired at every level. Each arm's processes are drawn with
// replacement on their own, then blocks within each drawn process, then samples within each
// drawn block; no index is shared between the arms, because block k of one run has nothing to
// do with block k of another. The units of the CI are the processes when both arms have two or
// more (the process level is seen), else blocks, else samples. `options.paired` is ignored.
Comparison compareUnpaired(const std::string& baselineName, const BlockedSamples& baseline,
                           const std::string& armName, const BlockedSamples& arm,
                           const CompareOptions& options = {});

// Sequential replication (the runner adds rounds of fresh processes while a comparison is
// inconclusive): the interim looks use a stricter confidence to pay for looking more than once,
// and a comparison is conclusive when it is significant or its CI lies within 1/tight .. tight.
inline constexpr double kInterimConfidence = 0.975;
inline constexpr double kTightRatio = 1.1;
bool conclusive(const Comparison& interim, double tight = kTightRatio);

// CI of one arm's median (same hierarchical bootstrap and expanded interval as compare()), for
// adaptive stopping: stop when half_width_pct is within the target.
struct MedianCi {
    double median = 0, low = 0, high = 0;
    double half_width_pct = 100;  // largest distance from the median to a bound, in % of it
};
MedianCi medianCi(const BlockedSamples& samples, const CompareOptions& options = {});

// Plain-language noise warnings for one arm (high CoV, too few samples, drift between blocks,
// slow first block).
std::vector<std::string> noiseWarnings(const BlockedSamples& samples, double covThreshold = 0.10);
// The same with the summary of every sample already computed (summarize of them: its n and CoV).
std::vector<std::string> noiseWarnings(const BlockedSamples& samples, const Summary& pooled,
                                       double covThreshold = 0.10);
// Same, each sentence prefixed with "<name>: " (e.g. "A: latency CoV 14.2% is above 10%: ...").
std::vector<std::string> noiseWarnings(const std::string& name, const BlockedSamples& samples,
                                       double covThreshold = 0.10);

// Distribution helpers (exposed for tests). Standard normal upper tail P(Z > z) via std::erfc,
// and the p-quantile of Student's t with df degrees of freedom (df > 0; p in (0, 1)).
double normalSf(double z);
double studentTQuantile(double p, double df);

}  // namespace pitlane::stats

namespace pitlane::stats {

// When did warmup really end? `reference` is the steady-state median (the measured samples'
// median). Warmup has settled at the first index i from which every window of `window`
// consecutive samples has its median within `tolerance` of the reference.
struct SteadyState {
    bool settled = false;
    int index = -1;          // iterations of warmup before the steady state (-1: never)
    double reference = 0;    // ns
    std::string rule;        // the rule, in words
};
SteadyState detectSteadyState(const std::vector<double>& warmup, double reference,
                              double tolerance = 0.10, int window = 3);

}  // namespace pitlane::stats
