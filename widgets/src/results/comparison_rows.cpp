#include "pitlane/widgets/results/comparison_rows.h"

#include <algorithm>
#include <cstdio>

namespace pitlane::widgets {

std::vector<ComparisonRow> comparisonRows(const results::RunResult& run, bool withComparisons) {
    std::vector<ComparisonRow> rows;
    std::vector<stats::Comparison> comparisons;
    if (withComparisons) comparisons = results::compareArms(run);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        ComparisonRow r;
        r.arm = a.name;
        r.status = a.status;
        if (a.error) r.error = a.error->code + ": " + a.error->message;
        if (a.compile) r.compile = results::compileLine(*a.compile) + "\npackage " + a.compile->package;
        const auto s = results::summarize(a);
        r.n = s.n;
        r.median_ns = s.median;
        r.p90_ns = s.p90;
        r.p99_ns = s.p99;
        r.p999_ns = s.p999;
        r.throughput_per_s = results::armThroughput(a, s);
        r.peak_rss_bytes = a.peak_rss_bytes;
        r.baseline = i == 0;
        r.minor_faults_per_iter = results::minorFaultsPerIter(a);
        r.major_faults_per_iter = results::majorFaultsPerIter(a);
        if (!a.processes.empty()) {
            r.processes = results::processSummaries(a);
            double lo = 0, hi = 0;
            for (const auto& p : r.processes) {
                if (p.n == 0 || !(p.median_ns > 0)) continue;
                lo = r.measured_processes == 0 ? p.median_ns : std::min(lo, p.median_ns);
                hi = std::max(hi, p.median_ns);
                ++r.measured_processes;
            }
            if (r.measured_processes >= 2) r.process_spread = hi / lo;
            r.variance = results::varianceShares(a);
        }
        for (const auto& c : comparisons)
            if (!r.baseline && c.arm == a.name) {
                r.comparison = c;
                r.caveats = results::comparisonCaveats(run, c);
            }
        if (withComparisons) r.not_compared = results::notComparedReason(run, i);
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string formatPerIter(double v) {
    if (v < 0) return {};
    if (v == 0) return "0";
    if (v < 0.01) return "< 0.01";
    char buf[32];
    std::snprintf(buf, sizeof buf, v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f", v);
    return buf;
}

}  // namespace pitlane::widgets
