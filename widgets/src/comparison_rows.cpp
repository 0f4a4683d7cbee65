#include "pitlane/widgets/comparison_rows.h"

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
        const auto s = results::summarize(a);
        r.n = s.n;
        r.median_ns = s.median;
        r.p90_ns = s.p90;
        r.p99_ns = s.p99;
        r.throughput_per_s = s.throughput_per_s;
        r.peak_rss_bytes = a.peak_rss_bytes;
        r.baseline = i == 0;
        for (const auto& c : comparisons)
            if (!r.baseline && c.arm == a.name) r.comparison = c;
        rows.push_back(std::move(r));
    }
    return rows;
}

results::RunResult verdictSnapshot(const results::RunResult& run) {
    results::RunResult s;
    s.arms.reserve(run.arms.size());
    for (const auto& a : run.arms) {
        results::ArmResult c;
        c.name = a.name;
        c.status = a.status;
        c.error = a.error;
        c.batch_size = a.batch_size;
        c.samples = a.samples;
        c.peak_rss_bytes = a.peak_rss_bytes;
        s.arms.push_back(std::move(c));
    }
    return s;
}

}  // namespace pitlane::widgets
