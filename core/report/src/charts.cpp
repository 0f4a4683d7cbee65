#include "charts.h"

#include "pitlane/report/report.h"
#include "pitlane/results/cpu_rates.h"
#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pitlane::report::detail {

Unit latencyUnit(double typicalNs) {
    if (typicalNs < 1e3) return {1, QStringLiteral("ns")};
    if (typicalNs < 1e6) return {1e3, QStringLiteral("µs")};
    if (typicalNs < 1e9) return {1e6, QStringLiteral("ms")};
    return {1e9, QStringLiteral("s")};
}

namespace {

using results::RunResult;

constexpr int kWidth = 1000;

std::vector<double> sorted(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v;
}

// stats::percentileSorted(sorted(v), q) for each of `qs` (ascending), by nth_element.
std::vector<double> ranksOf(std::vector<double>& v, std::initializer_list<double> qs) {
    std::vector<double> out;
    const std::size_t n = v.size();
    std::size_t from = 0;
    for (double q : qs) {
        const double virtualIndex = static_cast<double>(n - 1) * (q / 100.0);
        const double prevIndex = std::floor(virtualIndex);
        const double gamma = virtualIndex - prevIndex;
        const std::size_t lo = std::min(static_cast<std::size_t>(prevIndex), n - 1);
        const std::size_t hi = std::min(lo + 1, n - 1);
        std::nth_element(v.begin() + long(std::min(from, lo)), v.begin() + long(lo), v.end());
        const double a = v[lo];
        const double b = hi == lo ? a : *std::min_element(v.begin() + long(hi), v.end());
        out.push_back(gamma >= 0.5 ? b - (b - a) * (1 - gamma) : a + (b - a) * gamma);
        from = lo + 1;
    }
    return out;
}

struct ArmData {
    int index;
    QString name;
    std::vector<double> lat;     // the arm's first batch size only, as summarize() counts
    std::vector<double> sorted;  // lat, ascending
    std::vector<double> other;   // every sample, when the arm has other batch sizes
    // Every sample in arrival order (the timeline): lat itself when it has one batch size.
    const std::vector<double>& all() const { return other.empty() ? lat : other; }
};

std::vector<ArmData> armsWithSamples(const RunResult& run) {
    std::vector<ArmData> out;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        if (a.samples.empty()) continue;
        ArmData d{int(i), QString::fromStdString(a.name), a.latencies(), {}, {}};
        if (d.lat.empty()) continue;
        if (d.lat.size() != a.samples.size())
            a.samples.forEachSpan([&](const auto&, std::size_t, const std::int64_t* ns, std::size_t n) {
                for (std::size_t k = 0; k < n; ++k) d.other.push_back(double(ns[k]));
            });
        d.sorted = sorted(d.lat);
        out.push_back(std::move(d));
    }
    return out;
}

void addLegend(SvgChart& c, const std::vector<ArmData>& arms) {
    armLegend(c, arms, armColor);
}

Unit unitFor(const std::vector<ArmData>& arms) {
    double typical = 0;
    for (const auto& a : arms) typical = std::max(typical, stats::percentileSorted(a.sorted, 50));
    return latencyUnit(typical);
}

QString fmtNum(double v) {
    const double a = std::fabs(v);
    return QString::number(v, 'f', a >= 100 || v == 0 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

Chart timeline(const RunResult& run, const std::vector<ArmData>& arms) {
    const Unit u = unitFor(arms);
    // The top of the chart shows the bulk of the iterations: rare slow ones (a preempted core)
    // would otherwise squash every arm into a flat line at the bottom. They are drawn on the
    // edge and counted in the caption.
    double top = 0;
    std::size_t n = 0;
    for (const auto& a : arms) {
        std::vector<double> otherSorted;
        if (!a.other.empty()) otherSorted = sorted(a.other);
        const auto& all = a.other.empty() ? a.sorted : otherSorted;
        top = std::max(top, std::min(stats::percentileSorted(all, 99.5),
                                     2.5 * stats::percentileSorted(all, 90)));
        n = std::max(n, a.all().size());
    }
    top = top * 1.15 / u.div;
    SvgChart c(kWidth, 360, QStringLiteral("Latency per iteration"));
    c.setX(0, double(n),
           QStringLiteral("measured iteration of each arm (arms ran in interleaved "
                          "blocks; dashed lines: block boundaries)"));
    c.setY(0, top, QStringLiteral("latency (%1)").arg(u.name));
    // Block boundaries of the first arm (every arm runs the same block sizes).
    const auto& first = run.arms[std::size_t(arms.front().index)];
    std::vector<int> starts = {0};
    const auto& runs = first.samples.runs();  // a block changes only where a run starts
    for (std::size_t r = 1; r < runs.size(); ++r)
        if (runs[r].block != runs[r - 1].block) starts.push_back(int(runs[r].start));
    starts.push_back(int(first.samples.size()));
    const std::size_t blocks = starts.size() - 1;
    if (blocks <= 200)
        for (std::size_t k = 1; k < blocks; ++k)
            c.vline(starts[k], QColor(0xaa, 0xaa, 0xaa), QStringLiteral("4,4"));
    if (blocks <= 12)  // names in the middle of each block
        for (std::size_t k = 0; k < blocks; ++k)
            c.text(c.px((starts[k] + starts[k + 1]) / 2.0), c.plotTop() + 13,
                   QStringLiteral("block %1").arg(k + 1), 10, QStringLiteral("middle"),
                   QColor(0x88, 0x88, 0x88));
    std::size_t clipped = 0;
    for (const auto& a : arms) {
        const QColor col = armColor(a.index);
        const auto& all = a.all();
        for (double v : all) clipped += v / u.div > top;
        if (all.size() <= 1500) {
            std::vector<QPointF> pts;
            for (std::size_t i = 0; i < all.size(); ++i)
                pts.emplace_back(double(i), all[i] / u.div);
            c.polyline(pts, col, 1.2);
            continue;
        }
        // Long runs: the median of each bucket as a line, its 10th-90th percentile as a band.
        const std::size_t bucket = (all.size() + 599) / 600;
        std::vector<QPointF> mid, lo, hi;
        for (std::size_t s = 0; s < all.size(); s += bucket) {
            std::vector<double> b(all.begin() + long(s),
                                  all.begin() + long(std::min(all.size(), s + bucket)));
            const auto q = ranksOf(b, {10, 50, 90});  // what sorting b would give, cheaper
            const double x = double(s) + double(b.size()) / 2;
            mid.emplace_back(x, q[1] / u.div);
            lo.emplace_back(x, q[0] / u.div);
            hi.emplace_back(x, q[2] / u.div);
        }
        c.band(lo, hi, col, 0.18);
        c.polyline(mid, col, 1.4);
    }
    addLegend(c, arms);
    QString cap = QStringLiteral("y axis starts at 0");
    if (clipped)
        cap += QStringLiteral("; %1 slow iteration(s) above the top are drawn on the edge")
                   .arg(clipped);
    if (n > 1500)
        cap += QStringLiteral(
            "; long arms: line = median of each group of iterations, band = 10th-90th percentile");
    c.caption(cap);
    return {QStringLiteral("timeline"), QStringLiteral("Latency timeline"), c.svg(false),
            QStringLiteral("Every measured iteration in order. A drift or a step shows up as a "
                           "slope or a jump; a slow first block is the warmup leaking in.")};
}

// The histogram's x range: the bulk of every arm, up to Tukey's far fence (p75 + 3 IQR) or the
// 99.5th percentile, whichever is lower. The tail beyond is counted; the CDF shows it.
std::pair<double, double> bulkRange(const std::vector<ArmData>& arms) {
    double lo = INFINITY, hi = 0;
    for (const auto& a : arms) {
        const double q1 = stats::percentileSorted(a.sorted, 25);
        const double q3 = stats::percentileSorted(a.sorted, 75);
        lo = std::min(lo, stats::percentileSorted(a.sorted, 0.5));
        hi = std::max(hi, std::min(stats::percentileSorted(a.sorted, 99.5), q3 + 3 * (q3 - q1)));
    }
    const double pad = std::max((hi - lo) * 0.05, hi * 0.01);
    return {std::max(0.0, lo - pad), hi + pad};
}

Chart histogram(const std::vector<ArmData>& arms) {
    const Unit u = unitFor(arms);
    auto [lo, hi] = bulkRange(arms);
    const int bins = 50;
    const double w = (hi - lo) / bins;
    SvgChart c(kWidth, 340, QStringLiteral("Latency distribution"));
    std::vector<std::vector<double>> frac;
    double top = 0;
    std::size_t beyond = 0;
    for (const auto& a : arms) {
        beyond += std::size_t(
            std::count_if(a.lat.begin(), a.lat.end(), [&](double v) { return v >= hi; }));
        std::vector<double> f(bins, 0);
        for (double v : a.lat) {
            const int b = int((v - lo) / w);
            if (b >= 0 && b < bins) f[std::size_t(b)] += 1.0 / double(a.lat.size());
        }
        top = std::max(top, *std::max_element(f.begin(), f.end()));
        frac.push_back(std::move(f));
    }
    c.setX(lo / u.div, hi / u.div, QStringLiteral("latency (%1)").arg(u.name));
    c.setY(0, top * 100 * 1.1, QStringLiteral("share of iterations (%)"));
    for (std::size_t k = 0; k < arms.size(); ++k) {
        const QColor col = armColor(arms[k].index);
        std::vector<QPointF> step, base;
        for (int b = 0; b < bins; ++b) {
            const double x0 = (lo + b * w) / u.div, x1 = (lo + (b + 1) * w) / u.div;
            const double y = frac[k][std::size_t(b)] * 100;
            step.emplace_back(x0, y);
            step.emplace_back(x1, y);
            base.emplace_back(x0, 0);
            base.emplace_back(x1, 0);
        }
        c.band(base, step, col, 0.16);
        c.polyline(step, col, 1.6);
        const double med = stats::percentileSorted(arms[k].sorted, 50) / u.div;
        c.vline(med, col, QStringLiteral("6,3"));
    }
    addLegend(c, arms);
    QString cap = QStringLiteral("%1 bins; dashed lines: medians").arg(bins);
    if (beyond)
        cap += QStringLiteral(
                   "; %1 slower iteration(s) lie beyond the right edge (see the "
                   "cumulative chart)")
                   .arg(beyond);
    c.caption(cap);
    return {QStringLiteral("histogram"), QStringLiteral("Latency distribution (histogram)"),
            c.svg(false),
            QStringLiteral("Where the iterations fall. Two humps in one arm mean two behaviours "
                           "(e.g. a cache effect or a contended core).")};
}

Chart cdf(const std::vector<ArmData>& arms) {
    const Unit u = unitFor(arms);
    double lo = INFINITY, hi = 0;
    for (const auto& a : arms) {
        lo = std::min(lo, a.sorted.front());
        hi = std::max(hi, a.sorted.back());
    }
    SvgChart c(kWidth, 340, QStringLiteral("Cumulative distribution"));
    // Log scale: the bulk and a tail ten times slower both stay readable.
    c.setXLog(lo / u.div * 0.95, hi / u.div * 1.05,
              QStringLiteral("latency (%1, log scale)").arg(u.name));
    c.setY(0, 100, QStringLiteral("iterations at or below (%)"));
    for (const auto& a : arms) {
        std::vector<QPointF> pts;
        const std::size_t n = a.sorted.size();
        const std::size_t stride = std::max<std::size_t>(1, n / 800);
        for (std::size_t i = 0; i < n; i += stride)
            pts.emplace_back(a.sorted[i] / u.div, 100.0 * double(i + 1) / double(n));
        pts.emplace_back(a.sorted.back() / u.div, 100.0);
        c.polyline(pts, armColor(a.index), 2);
    }
    addLegend(c, arms);
    c.caption(
        QStringLiteral("every iteration, fastest to slowest; a curve further left is "
                       "faster; the flat top right is the tail"));
    return {QStringLiteral("cdf"), QStringLiteral("Latency distribution (cumulative)"),
            c.svg(false),
            QStringLiteral("Read a percentile off the y axis: the curve's x at 50 % is the median, "
                           "at 99 % the p99.")};
}

Chart throughput(const RunResult& run, const std::vector<ArmData>& arms) {
    QStringList names;
    std::vector<QColor> colors;
    std::vector<double> value, bmin, bmax;
    for (const auto& d : arms) {
        const auto& a = run.arms[std::size_t(d.index)];
        names << d.name;
        colors.push_back(armColor(d.index));
        value.push_back(results::armThroughput(a, results::summarize(a)));
        double mn = INFINITY, mx = 0;
        for (const auto& [n, sum] : results::blockTotals(a)) {
            if (sum <= 0) continue;
            const double t = double(n) * a.batch_size / (sum / 1e9);
            mn = std::min(mn, t);
            mx = std::max(mx, t);
        }
        bmin.push_back(std::isfinite(mn) ? mn : value.back());
        bmax.push_back(mx > 0 ? mx : value.back());
    }
    const double top = *std::max_element(bmax.begin(), bmax.end()) * 1.22;
    int longest = 0;
    for (const auto& n : names) longest = std::max(longest, int(n.size()));
    SvgChart c(kWidth, 70 + 46 * int(arms.size()) + 60, QStringLiteral("Throughput"));
    c.setLeftMargin(std::clamp(longest * 9 + 20, 60, 300));
    c.setX(0, top, QStringLiteral("items per second (batch size x iterations / measured time)"));
    c.setYCategories(names, colors);
    for (std::size_t i = 0; i < arms.size(); ++i) {
        const double yc = double(arms.size() - i) - 0.5;
        c.rect(0, yc - 0.3, value[i], yc + 0.3, colors[i]);
        // Whisker: the slowest and fastest block.
        const double y = c.py(yc);
        c.text(c.px(std::max(value[i], bmax[i])) + 8, y + 5,
               fmtNum(value[i]) + QStringLiteral("/s"), 13, QStringLiteral("start"),
               QColor(0x22, 0x22, 0x22), true);
        c.polyline({QPointF(bmin[i], yc), QPointF(bmax[i], yc)}, QColor(0x33, 0x33, 0x33), 1.5);
        c.polyline({QPointF(bmin[i], yc - 0.12), QPointF(bmin[i], yc + 0.12)},
                   QColor(0x33, 0x33, 0x33), 1.5);
        c.polyline({QPointF(bmax[i], yc - 0.12), QPointF(bmax[i], yc + 0.12)},
                   QColor(0x33, 0x33, 0x33), 1.5);
    }
    c.caption(QStringLiteral("bars: whole arm; black whiskers: slowest to fastest block"));
    return {QStringLiteral("throughput"), QStringLiteral("Throughput"), c.svg(false),
            QStringLiteral("Longer is better. Whiskers that overlap between arms mean the blocks "
                           "themselves overlap.")};
}

// Seconds since the run started covered by metric ticks.
std::pair<double, double> tickSpan(const RunResult& run) {
    double lo = INFINITY, hi = 0;
    for (const auto& a : run.arms)
        for (const auto& m : a.metrics) {
            lo = std::min(lo, m.t_ms);
            hi = std::max(hi, m.t_ms);
        }
    if (!std::isfinite(lo)) lo = 0;
    return {lo / 1000, std::max(hi, lo + 1) / 1000};
}

Chart memory(const RunResult& run) {
    SvgChart c(kWidth, 340, QStringLiteral("Memory over time"));
    double top = 0;
    bool tensors = false;
    for (const auto& a : run.arms)
        for (const auto& m : a.metrics) {
            top = std::max({top, double(m.rss_bytes), double(m.tensor_bytes)});
            tensors |= m.tensor_bytes >= 0;
        }
    const double MiB = 1024.0 * 1024;
    const auto [t0, t1] = tickSpan(run);
    c.setX(t0, t1, QStringLiteral("time since the run started (s)"));
    c.setY(0, top / MiB * 1.15, QStringLiteral("MiB"));
    QStringList names;
    std::vector<QColor> colors;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        if (a.metrics.empty()) continue;
        std::vector<QPointF> rss, tb;
        for (const auto& m : a.metrics) {
            rss.emplace_back(m.t_ms / 1000, double(m.rss_bytes) / MiB);
            if (m.tensor_bytes >= 0) tb.emplace_back(m.t_ms / 1000, double(m.tensor_bytes) / MiB);
        }
        c.polyline(rss, armColor(int(i)), 2);
        c.polyline(tb, armColor(int(i)), 1.5, QStringLiteral("5,4"));
        names << QString::fromStdString(a.name);
        colors.push_back(armColor(int(i)));
    }
    c.legend(names, colors);
    c.caption(tensors ? QStringLiteral("solid: resident set size (RSS) of the worker process; "
                                       "dashed: bytes held by live CPU tensors")
                      : QStringLiteral("resident set size (RSS) of each worker process"));
    return {QStringLiteral("memory"), QStringLiteral("Memory"), c.svg(false),
            QStringLiteral("Each arm is its own process. A line that keeps climbing is a leak or "
                           "a growing cache.")};
}

}  // namespace

std::vector<CpuLine> cpuChartLines(const RunResult& run) {
    std::vector<CpuLine> lines;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        std::map<std::pair<int, int>, std::vector<QPointF>> perProcess;
        for (const auto& r : results::processCpuRates(run.arms[i].metrics))
            perProcess[{r.worker, r.process}].emplace_back((r.t_ms - r.window_ms / 2) / 1000, r.pct);
        for (auto& [key, points] : perProcess)
            lines.push_back({int(i), key.first, key.second, std::move(points)});
    }
    return lines;
}

namespace {

Chart cpu(const RunResult& run) {
    SvgChart c(kWidth, 340, QStringLiteral("CPU utilization"));
    // Each process's own rates, a line each, in the arm's colour.
    const auto lines = cpuChartLines(run);
    std::vector<QPointF> machine;
    double top = 100;
    for (const auto& line : lines)
        for (const auto& p : line.points) top = std::max(top, p.y());
    int cores = 0;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& m = run.arms[i].metrics;
        if (machine.empty())
            for (const auto& t : m)
                if (!t.core_util_pct.empty()) {
                    double sum = 0;
                    for (double v : t.core_util_pct) sum += v;
                    cores = int(t.core_util_pct.size());
                    machine.emplace_back(t.t_ms / 1000, sum / cores);
                }
    }
    const auto [t0, t1] = tickSpan(run);
    c.setX(t0, t1, QStringLiteral("time since the run started (s)"));
    c.setY(0, top * 1.1, QStringLiteral("CPU (% of one core)"));
    QStringList names;
    std::vector<QColor> colors;
    if (!machine.empty()) {
        c.polyline(machine, QColor(0x88, 0x88, 0x88), 1.5, QStringLiteral("3,3"));
        names << QStringLiteral("machine, mean of %1 cores").arg(cores);
        colors.push_back(QColor(0x88, 0x88, 0x88));
    }
    int named = -1;
    for (const auto& line : lines) {
        const int i = line.arm;
        c.polyline(line.points, armColor(i), 2);
        if (i == named) continue;  // the arm's other processes: named once
        named = i;
        names << QString::fromStdString(run.arms[std::size_t(i)].name);
        colors.push_back(armColor(i));
    }
    c.legend(names, colors);
    c.caption(
        QStringLiteral("per arm: each worker process's CPU time per second of its own clock "
                       "(200% = two cores busy; a line per process); grey: whole machine"));
    return {QStringLiteral("cpu"), QStringLiteral("CPU utilization"), c.svg(false),
            QStringLiteral("Arms take turns (interleaved blocks), so each arm's line drops while "
                           "the other runs. Grey above the arms' sum means something else used "
                           "the machine.")};
}

}  // namespace

Chart processChart(const RunResult& run) {
    struct Row {
        int index;
        QString name;
        std::vector<double> medians;  // run order
        double pooled;
    };
    std::vector<Row> rows;
    double lo = INFINITY, hi = 0;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        Row r{int(i), QString::fromStdString(a.name), {}, results::summarize(a).median};
        for (const auto& p : results::processSummaries(a))
            if (p.n > 0 && p.median_ns > 0) {
                r.medians.push_back(p.median_ns);
                lo = std::min(lo, p.median_ns);
                hi = std::max(hi, p.median_ns);
            }
        if (!r.medians.empty()) rows.push_back(std::move(r));
    }
    Chart chart{QStringLiteral("processes"), QStringLiteral("Worker processes"), {},
                QStringLiteral("Each dot is one fresh worker process's median. Dots of one arm far "
                               "apart mean its processes disagree: the CI, whose units are the "
                               "processes, stays wide until they agree or there are more of them.")};
    if (rows.empty()) return chart;
    const Unit u = latencyUnit(hi);
    const double pad = std::max((hi - lo) * 0.08, hi * 0.03);
    int longest = 0;
    QStringList names;
    std::vector<QColor> colors;
    for (const auto& r : rows) {
        names << r.name;
        colors.push_back(armColor(r.index));
        longest = std::max(longest, int(r.name.size()));
    }
    SvgChart c(kWidth, 70 + 46 * int(rows.size()) + 60,
               QStringLiteral("Median of each worker process"));
    c.setLeftMargin(std::clamp(longest * 9 + 20, 60, 300));
    c.setX(std::max(0.0, lo - pad) / u.div, (hi + pad) / u.div,
           QStringLiteral("median latency of the process (%1)").arg(u.name));
    c.setYCategories(names, colors);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const double yc = double(rows.size() - i) - 0.5;
        // The arm's median over every process: a dark tick behind its dots.
        if (rows[i].pooled > 0)
            c.polyline({QPointF(rows[i].pooled / u.div, yc - 0.32),
                        QPointF(rows[i].pooled / u.div, yc + 0.32)},
                       QColor(0x33, 0x33, 0x33), 2);
        // Processes with equal medians must not hide each other: a small vertical offset each.
        for (std::size_t k = 0; k < rows[i].medians.size(); ++k)
            c.dot(rows[i].medians[k] / u.div, yc + 0.09 * (double(k % 5) - 2),
                  colors[i], 5.5);
    }
    c.caption(QStringLiteral("one dot per worker process (its median at the arm's first batch "
                             "size); dark tick: the arm's median over all its processes"));
    chart.svg = c.svg(false);
    return chart;
}

std::vector<Chart> runCharts(const RunResult& run) {
    std::vector<Chart> out;
    const auto arms = armsWithSamples(run);
    if (!arms.empty()) {
        out.push_back(timeline(run, arms));
        out.push_back(histogram(arms));
        out.push_back(cdf(arms));
        out.push_back(throughput(run, arms));
    }
    bool metrics = false;
    for (const auto& a : run.arms) metrics |= a.metrics.size() > 1;
    if (metrics) {
        out.push_back(memory(run));
        out.push_back(cpu(run));
    }
    return out;
}

QString withNamespace(const QString& svg) {
    QString s = svg;
    if (s.startsWith(QLatin1String("<svg ")) && !s.contains(QLatin1String("xmlns=")))
        s.insert(5, QStringLiteral("xmlns=\"http://www.w3.org/2000/svg\" "));
    return s;
}

}  // namespace pitlane::report::detail
