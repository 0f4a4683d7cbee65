// Descriptive statistics, Mann-Whitney U, distribution helpers and noise warnings.
#include "pitlane/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <utility>

namespace pitlane::stats {

namespace {

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, a, b, c);
    return buf;
}

// Median of an unsorted buffer (reordered in place). Even n: mean of the two middle values,
// like numpy.median.
double medianInPlace(std::vector<double>& v) {
    if (v.empty()) return 0;
    const std::size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const double hi = v[mid];
    if (v.size() % 2 == 1) return hi;
    const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lo + hi) / 2;
}

// Regularized incomplete beta I_x(a, b) by Lentz's continued fraction (Numerical Recipes 6.4).
double betaContinuedFraction(double a, double b, double x) {
    const double tiny = 1e-300;
    const double eps = 1e-16;
    double c = 1;
    double d = 1 - (a + b) * x / (a + 1);
    if (std::fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 10000; ++m) {
        const double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + aa * d;
        if (std::fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (std::fabs(c) < tiny) c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + aa * d;
        if (std::fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (std::fabs(c) < tiny) c = tiny;
        d = 1 / d;
        const double del = d * c;
        h *= del;
        if (std::fabs(del - 1) < eps) break;
    }
    return h;
}

double regularizedBeta(double a, double b, double x) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    const double lbt =
        std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
    const double bt = std::exp(lbt);
    if (x < (a + 1) / (a + b + 2)) return bt * betaContinuedFraction(a, b, x) / a;
    return 1 - bt * betaContinuedFraction(b, a, 1 - x) / b;
}

// P(T > t) for t >= 0, Student's t with df degrees of freedom.
double studentTSfPositive(double t, double df) {
    return 0.5 * regularizedBeta(df / 2, 0.5, df / (df + t * t));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Percentiles and summary

double percentileSorted(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0;
    if (std::isnan(q)) return std::numeric_limits<double>::quiet_NaN();
    const std::size_t n = sorted.size();
    q = std::clamp(q, 0.0, 100.0) / 100.0;  // numpy divides by 100 first
    const double virtualIndex = static_cast<double>(n - 1) * q;
    const double prevIndex = std::floor(virtualIndex);
    const double gamma = virtualIndex - prevIndex;
    const std::size_t lo = std::min(static_cast<std::size_t>(prevIndex), n - 1);
    const std::size_t hi = std::min(lo + 1, n - 1);
    const double a = sorted[lo];
    const double b = sorted[hi];
    // numpy's _lerp: a + (b-a)*t, evaluated from the upper end when t >= 0.5.
    const double diff = b - a;
    return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

double percentile(std::vector<double> values, double q) {
    std::sort(values.begin(), values.end());
    return percentileSorted(values, q);
}

double median(std::vector<double> values) {
    return medianInPlace(values);
}

Summary summarize(const std::vector<double>& latencies_ns, int batch_size) {
    if (latencies_ns.empty()) return {};
    std::vector<double> sorted = latencies_ns;
    std::sort(sorted.begin(), sorted.end());
    return summarizeSorted(sorted, batch_size);
}

Summary summarizeSorted(const std::vector<double>& sorted, int batch_size) {
    Summary s;
    s.n = sorted.size();
    if (s.n == 0) return s;
    const double sum = std::accumulate(sorted.begin(), sorted.end(), 0.0);
    s.mean = sum / static_cast<double>(s.n);
    if (s.n > 1) {
        double ss = 0;
        for (double v : sorted) ss += (v - s.mean) * (v - s.mean);
        s.sd = std::sqrt(ss / static_cast<double>(s.n - 1));
    }
    s.cov = s.mean != 0 ? s.sd / s.mean : 0;
    s.min = sorted.front();
    s.max = sorted.back();
    const std::size_t mid = s.n / 2;
    s.median = s.n % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    s.p90 = percentileSorted(sorted, 90);
    s.p95 = percentileSorted(sorted, 95);
    s.p99 = percentileSorted(sorted, 99);
    s.p999 = percentileSorted(sorted, 99.9);
    if (sum > 0) {
        s.throughput_per_s = static_cast<double>(s.n) * batch_size * 1e9 / sum;
    }
    return s;
}

std::vector<double> BlockedSamples::pooled() const {
    std::size_t total = 0;
    for (const auto& b : blocks) total += b.size();
    std::vector<double> out;
    out.reserve(total);
    for (const auto& b : blocks) out.insert(out.end(), b.begin(), b.end());
    return out;
}

std::size_t BlockedSamples::processCount() const {
    std::vector<int> seen;
    for (std::size_t i = 0; i < blocks.size(); ++i)
        if (!blocks[i].empty()) seen.push_back(processOf(i));
    std::sort(seen.begin(), seen.end());
    return static_cast<std::size_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
}

VarianceShares varianceShares(const BlockedSamples& samples) {
    VarianceShares v;
    // Per process: its blocks' (n, sum of logs); per block: n, sum of logs, sum of squared logs.
    struct Acc {
        double n = 0, sum = 0;
    };
    std::vector<std::pair<int, std::size_t>> order;  // (process, block index)
    double grandN = 0, grandSum = 0;
    std::vector<Acc> blockAcc(samples.blocks.size());
    std::vector<double> ssWithinBlock(samples.blocks.size(), 0);
    std::vector<double> logs;  // of the block's positive samples: each log taken once
    for (std::size_t i = 0; i < samples.blocks.size(); ++i) {
        const auto& b = samples.blocks[i];
        if (b.empty()) continue;
        Acc& acc = blockAcc[i];
        logs.clear();
        for (double x : b) {
            if (!(x > 0)) continue;
            logs.push_back(std::log(x));
            acc.n += 1;
            acc.sum += logs.back();
        }
        if (acc.n == 0) continue;
        const double mean = acc.sum / acc.n;
        for (double l : logs) ssWithinBlock[i] += (l - mean) * (l - mean);
        order.emplace_back(samples.processOf(i), i);
        grandN += acc.n;
        grandSum += acc.sum;
    }
    if (grandN < 2) return v;
    const double grandMean = grandSum / grandN;
    std::sort(order.begin(), order.end());
    double ssProc = 0, ssBlock = 0, ssWithin = 0;
    for (std::size_t s = 0; s < order.size();) {
        std::size_t e = s;
        Acc proc;
        while (e < order.size() && order[e].first == order[s].first) {
            proc.n += blockAcc[order[e].second].n;
            proc.sum += blockAcc[order[e].second].sum;
            ++e;
        }
        const double procMean = proc.sum / proc.n;
        ssProc += proc.n * (procMean - grandMean) * (procMean - grandMean);
        for (std::size_t i = s; i < e; ++i) {
            const Acc& b = blockAcc[order[i].second];
            const double bMean = b.sum / b.n;
            ssBlock += b.n * (bMean - procMean) * (bMean - procMean);
            ssWithin += ssWithinBlock[order[i].second];
        }
        ++v.processes;
        v.blocks += e - s;
        s = e;
    }
    v.n = static_cast<std::size_t>(grandN);
    const double total = ssProc + ssBlock + ssWithin;
    if (!(total > 0)) return v;
    v.computed = true;
    v.between_processes = ssProc / total;
    v.between_blocks = ssBlock / total;
    v.within_blocks = ssWithin / total;
    return v;
}

// ---------------------------------------------------------------------------------------------
// Distribution helpers

double normalSf(double z) {
    return 0.5 * std::erfc(z / std::sqrt(2.0));
}

double studentTQuantile(double p, double df) {
    if (!(p > 0 && p < 1) || !(df > 0)) return std::numeric_limits<double>::quiet_NaN();
    if (p == 0.5) return 0;
    if (p < 0.5) return -studentTQuantile(1 - p, df);
    const double tail = 1 - p;  // find t > 0 with P(T > t) = tail
    double lo = 0, hi = 1;
    while (studentTSfPositive(hi, df) > tail && hi < 1e300) hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        if (studentTSfPositive(mid, df) > tail) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return 0.5 * (lo + hi);
}

// ---------------------------------------------------------------------------------------------
// Mann-Whitney U (scipy.stats.mannwhitneyu, two-sided, asymptotic, continuity correction)

namespace {
// U, z and the two-sided p from x's rank sum and the tie term (sum over tie groups of t^3 - t):
// the normal approximation with the tie correction and a continuity correction of 0.5.
MannWhitney mannWhitneyFromRanks(std::size_t n1, std::size_t n2, double rankSumX, double tieTerm) {
    MannWhitney r;
    const double dn1 = static_cast<double>(n1);
    const double dn2 = static_cast<double>(n2);
    const double dn = dn1 + dn2;
    r.u = rankSumX - dn1 * (dn1 + 1) / 2;
    const double mu = dn1 * dn2 / 2;
    const double var = dn1 * dn2 / 12 * ((dn + 1) - tieTerm / (dn * (dn - 1)));
    const double sd = var > 0 ? std::sqrt(var) : 0;
    const double dev = r.u - mu;
    const double num = std::fabs(dev) - 0.5;  // continuity correction towards the mean
    if (sd <= 0 || num <= 0) {
        r.z = 0;
        r.p_value = 1;
        return r;
    }
    const double zAbs = num / sd;
    r.z = dev < 0 ? -zAbs : zAbs;
    r.p_value = std::min(1.0, 2 * normalSf(zAbs));
    return r;
}
}  // namespace

MannWhitney mannWhitneyU(const std::vector<double>& x, const std::vector<double>& y) {
    MannWhitney r;
    const std::size_t n1 = x.size();
    const std::size_t n2 = y.size();
    if (n1 == 0 || n2 == 0) return r;
    std::vector<std::pair<double, bool>> all;  // value, belongs to x
    all.reserve(n1 + n2);
    for (double v : x) all.emplace_back(v, true);
    for (double v : y) all.emplace_back(v, false);
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    double rankSumX = 0;
    double tieTerm = 0;  // sum over tie groups of t^3 - t
    const std::size_t n = all.size();
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i;
        while (j < n && all[j].first == all[i].first) ++j;
        const double t = static_cast<double>(j - i);
        const double avgRank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
        for (std::size_t k = i; k < j; ++k) {
            if (all[k].second) rankSumX += avgRank;
        }
        tieTerm += t * t * t - t;
        i = j;
    }
    return mannWhitneyFromRanks(n1, n2, rankSumX, tieTerm);
}

MannWhitney mannWhitneyUSorted(const std::vector<double>& x, const std::vector<double>& y) {
    MannWhitney r;
    const std::size_t n1 = x.size();
    const std::size_t n2 = y.size();
    if (n1 == 0 || n2 == 0) return r;
    // The tie groups in ascending order, as mannWhitneyU's sorted merge has them, each summed in
    // the same order: the same rounding, the same bits.
    double rankSumX = 0;
    double tieTerm = 0;
    std::size_t i = 0, j = 0, rank = 0;
    while (i < n1 || j < n2) {
        const double v = j == n2 || (i < n1 && x[i] < y[j]) ? x[i] : y[j];
        std::size_t cx = 0, cy = 0;
        while (i < n1 && x[i] == v) ++i, ++cx;
        while (j < n2 && y[j] == v) ++j, ++cy;
        const double t = static_cast<double>(cx + cy);
        const double avgRank = (static_cast<double>(rank + 1) + static_cast<double>(rank + cx + cy)) / 2;
        for (std::size_t k = 0; k < cx; ++k) rankSumX += avgRank;
        tieTerm += t * t * t - t;
        rank += cx + cy;
    }
    return mannWhitneyFromRanks(n1, n2, rankSumX, tieTerm);
}

// ---------------------------------------------------------------------------------------------
// Noise warnings

std::vector<std::string> noiseWarnings(const BlockedSamples& samples, double covThreshold) {
    return noiseWarnings(samples, summarize(samples.pooled()), covThreshold);
}

std::vector<std::string> noiseWarnings(const BlockedSamples& samples, const Summary& s,
                                       double covThreshold) {
    std::vector<std::string> out;
    if (s.n == 0) {
        out.push_back("no samples were measured");
        return out;
    }
    if (s.n < 20) {
        out.push_back(format(
            s.n == 1 ? "only %.0f sample (fewer than 20): the statistics are unreliable"
                     : "only %.0f samples (fewer than 20): the statistics are unreliable",
            static_cast<double>(s.n)));
    }
    if (s.cov > covThreshold) {
        out.push_back(format("latency CoV %.1f%% is above %.0f%%: results are noisy", s.cov * 100,
                             covThreshold * 100));
    }
    std::vector<const std::vector<double>*> blocks;
    for (const auto& b : samples.blocks) {
        if (!b.empty()) blocks.push_back(&b);
    }
    if (blocks.size() >= 2) {
        std::vector<double> medians;
        for (const auto* b : blocks) medians.push_back(median(*b));
        const auto [mn, mx] = std::minmax_element(medians.begin(), medians.end());
        if (*mn > 0 && *mx / *mn > 1.10) {
            out.push_back(format(
                "block medians drift by %.1f%% between blocks (slowest / fastest = %.2f, above "
                "1.10): the machine state changed during the run",
                (*mx / *mn - 1) * 100, *mx / *mn));
        }
        std::vector<double> rest;
        for (std::size_t i = 1; i < blocks.size(); ++i) {
            rest.insert(rest.end(), blocks[i]->begin(), blocks[i]->end());
        }
        const double restMedian = medianInPlace(rest);
        if (restMedian > 0 && medians.front() > 1.25 * restMedian) {
            out.push_back(format(
                "the first block is %.2fx slower than the rest (median): warmup was probably too "
                "short",
                medians.front() / restMedian));
        }
    }
    return out;
}

std::vector<std::string> noiseWarnings(const std::string& name, const BlockedSamples& samples,
                                       double covThreshold) {
    std::vector<std::string> out = noiseWarnings(samples, covThreshold);
    for (auto& w : out) w = name + ": " + w;
    return out;
}

}  // namespace pitlane::stats
