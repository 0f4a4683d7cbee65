#include "pitlane/widgets/results/serving_snapshot.h"

#include <cstdio>

#include <algorithm>
#include <sstream>

namespace pitlane::widgets {

ServingSnapshot servingSnapshot(const results::RunResult& run, bool live) {
    ServingSnapshot s;
    if (!run.preset.serving.enabled) return s;
    s.closedLoop = run.preset.serving.arrival == "closed";
    s.slo_ms = run.preset.serving.slo_p99_ms;
    s.live = live;
    const auto comparisons = results::compareServing(run);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        ServingSnapshot::Arm a;
        a.name = run.arms[i].name;
        a.points = results::servingPoints(run, i);
        a.capacity = results::sloCapacity(a.points);
        for (const auto& l : run.arms[i].serving) {
            if (!l.complete) continue;
            ++a.levels;
            a.served += l.record.served();
        }
        for (const auto& c : comparisons)
            if (c.arm == i) a.comparisons.push_back(c.text);
        a.headline = servingHeadline(a.points, a.capacity, s.slo_ms, comparisons, i);
        s.arms.push_back(std::move(a));
    }
    s.verdict = results::servingVerdict(run);
    std::istringstream lines(results::servingTable(run));
    for (std::string line; std::getline(lines, line);)
        if (std::find(s.verdict.begin(), s.verdict.end(), line) == s.verdict.end())
            s.table += line + "\n";
    return s;
}

ServingHeadline servingHeadline(const std::vector<results::ServingPoint>& points,
                                const results::SloCapacity& capacity, double slo_ms,
                                const std::vector<results::ServingComparison>& comparisons, std::size_t arm) {
    ServingHeadline h;
    const results::ServingPoint* at = nullptr;
    char buf[160];
    if (slo_ms > 0 && capacity.max_rate_per_s > 0) {
        for (const auto& p : points)
            if (p.rate_per_s == capacity.max_rate_per_s && p.meetsSlo()) at = &p;
        std::snprintf(buf, sizeof buf, "the highest rate within the SLO (p99 <= %.4g ms)", slo_ms);
        h.why = buf;
    }
    if (!at) {
        for (const auto& p : points)
            if (!p.search && !p.pooled.saturated) at = &p;  // increasing: the last one kept up
        if (at) {
            h.why = slo_ms > 0 ? "missed the SLO at every rate; the highest level it kept up with"
                               : "the highest level it kept up with (no SLO set)";
        } else if (!points.empty()) {
            at = &points.front();
            h.why = "saturated at every level; its lowest";
        }
    }
    if (!at) return h;
    h.known = true;
    h.level = servingLevelName(at->rate_per_s, at->clients);
    h.p50_ms = at->pooled.p50_ms;
    h.p90_ms = at->pooled.p90_ms;
    h.p99_ms = at->pooled.p99_ms;
    h.p999_ms = at->pooled.p999_ms;
    h.achieved_per_s = at->pooled.achieved_per_s;
    h.saturated = at->pooled.saturated;
    for (const auto& c : comparisons)
        if (c.arm == arm && c.rate_per_s == at->rate_per_s && c.clients == at->clients) {
            h.compared = true;
            h.p99_ratio = c.p99_ratio;
            h.p99_lo = c.p99_lo;
            h.p99_hi = c.p99_hi;
            h.significant = c.significant;
        }
    return h;
}

std::string servingEmptyText(const results::RunResult& run, const std::string& waiting) {
    if (!run.preset.serving.enabled) return {};
    for (const auto& a : run.arms)
        if (!a.finished()) return waiting;
    return "no serving level recorded for this run";
}

std::string servingLevelName(double rate, int clients) {
    if (clients > 0) return std::to_string(clients) + (clients == 1 ? " client" : " clients");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g req/s", rate);
    return buf;
}

}  // namespace pitlane::widgets
