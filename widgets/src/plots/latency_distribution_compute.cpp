// LatencyDistributionPlot::compute: what the distribution plot draws, from every sample. Runs on
// the plot's own thread (or the UI thread in settle()), touches no widget.
#include "pitlane/widgets/plots/latency_distribution_plot.h"

#include "pitlane/stats/stats.h"

#include <algorithm>
#include <cmath>

namespace pitlane::widgets {

namespace {
constexpr double kLogSpread = 4.0;
constexpr int kCdfPoints = 400;     // the CDF is drawn through this many quantiles at most
constexpr double kRowSpread = 0.2;  // dots of one arm spread over +-this much of their row

// The arm's latencies (ns) at its batch size, sorted: the new samples sorted and merged into
// those sorted before, or a stored run's memo.
const std::vector<double>& sortedLatencies(const results::ArmResult& a,
                                           LatencyDistributionPlot::Sorted::Arm& s) {
    if (auto memo = results::memoizedSortedLatencies(a)) {
        s.ns = {};
        s.upTo = 0;
        s.shared = std::move(memo);
        return *s.shared;
    }
    s.shared.reset();
    if (a.samples.size() < s.upTo) {  // not the samples sorted so far: start again
        s.ns.clear();
        s.upTo = 0;
    }
    const auto middle = std::ptrdiff_t(s.ns.size());
    a.samples.forEachSpan(
        [&](const results::SampleSeries::Run& r, std::size_t, const std::int64_t* ns, std::size_t n) {
            if (r.batch_size != a.batch_size) return;
            for (std::size_t k = 0; k < n; ++k) s.ns.push_back(double(ns[k]));
        },
        s.upTo);
    s.upTo = a.samples.size();
    std::sort(s.ns.begin() + middle, s.ns.end());
    std::inplace_merge(s.ns.begin(), s.ns.begin() + middle, s.ns.end());
    return s.ns;
}

// One dot per process that has measured samples: its median (processSummaries, the same figures
// as the results JSON and the process warnings).
void computeDots(const LatencyDistributionPlot::Input& in, LatencyDistributionPlot::Model& m) {
    m.dots = true;
    m.armDots.assign(in.arms.size(), {});
    m.dotLo = INFINITY;
    m.dotHi = -INFINITY;
    for (std::size_t i = 0; i < in.arms.size(); ++i) {
        const auto& a = in.arms[i];
        auto& s = m.armDots[i];
        for (const auto& p : a.processes) {
            s.replicates = std::max(s.replicates, p.replicate + 1);
            s.workers = std::max(s.workers, p.worker + 1);
        }
        m.anyProcess |= !a.processes.empty();
        m.manyProcesses |= a.processes.size() > 1;
        if (!a.processes.empty())
            for (auto& p : results::processSummaries(a))
                if (p.n > 0 && p.median_ns > 0) s.dots.push_back({std::move(p), double(i)});
        const std::size_t k = s.dots.size();
        for (std::size_t d = 0; d < k; ++d) {
            // Start order top to bottom within the arm's row: close medians stay apart.
            auto& dot = s.dots[d];
            if (k > 1) dot.y += -kRowSpread + 2 * kRowSpread * double(d) / double(k - 1);
            const double ms = toMs(dot.process.median_ns);
            m.dotLo = std::min(m.dotLo, ms);
            m.dotHi = std::max(m.dotHi, ms);
        }
    }
}

LatencyDistributionPlot::Model::Arm armCurves(const std::vector<double>& v,
                                              const LatencyDistributionPlot::Bins& grid) {
    LatencyDistributionPlot::Model::Arm out;
    if (v.empty()) return out;
    out.any = true;
    const auto counts = LatencyDistributionPlot::binCounts(v, grid);
    for (int bin = 0; bin < grid.count; ++bin) {
        const double centre = grid.from + (bin + 0.5) * grid.width();
        out.binKeys.push_back(grid.log ? std::exp2(centre) : centre);
        out.binValues.push_back(100.0 * double(counts[std::size_t(bin)]) / double(v.size()));
    }
    const int points = std::min<int>(int(v.size()), kCdfPoints);
    for (int p = 0; p < points; ++p) {
        const double q = points == 1 ? 100.0 : 100.0 * p / (points - 1);
        out.cdfKeys.push_back(toMs(stats::percentileSorted(v, q)));
        out.cdfValues.push_back(q);
    }
    out.medianMs = toMs(stats::percentileSorted(v, 50));
    out.p99Ms = toMs(stats::percentileSorted(v, 99));
    return out;
}
}  // namespace

LatencyDistributionPlot::Model LatencyDistributionPlot::compute(const Input& in, Sorted& sorted) {
    Model m;
    if (in.dots) computeDots(in, m);
    sorted.arms.resize(in.arms.size());
    // Sorted latencies (ns) per arm, and common bins: from the fastest sample to the largest
    // p99.5 so one outlier cannot squeeze every histogram into a single bin.
    std::vector<const std::vector<double>*> v(in.arms.size());
    double lo = INFINITY, hi = -INFINITY;
    std::size_t total = 0;
    for (std::size_t i = 0; i < in.arms.size(); ++i) {
        const auto& s = *(v[i] = &sortedLatencies(in.arms[i], sorted.arms[i]));
        if (s.empty()) continue;
        total += s.size();
        lo = std::min(lo, toMs(s.front()));
        hi = std::max(hi, toMs(stats::percentileSorted(s, 99.5)));
    }
    if (total == 0) return m;
    m.any = true;
    if (!(hi > lo)) hi = lo + std::max(lo * 0.01, 1e-6);
    const int bins = std::clamp(int(std::sqrt(double(total))), 10, 80);
    // Heavy tails (a few 10x spikes) would squeeze the bulk into one linear bin: beyond a 4x
    // spread the bins and the axis go logarithmic (base 2, so ticks read 8, 16, 32 ms).
    m.logScale = lo > 0 && hi / lo > kLogSpread;
    const Bins grid{m.logScale ? std::log2(lo) : lo, m.logScale ? std::log2(hi) : hi, bins, m.logScale};
    for (std::size_t i = 0; i < in.arms.size(); ++i) m.arms.push_back(armCurves(*v[i], grid));
    auto value = [&](double p) { return m.logScale ? std::exp2(p) : p; };
    m.view = QCPRange(value(grid.from - grid.width()), value(grid.to + grid.width()));
    return m;
}

}  // namespace pitlane::widgets
