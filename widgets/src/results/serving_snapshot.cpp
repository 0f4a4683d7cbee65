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
        s.arms.push_back(std::move(a));
    }
    s.verdict = results::servingVerdict(run);
    std::istringstream lines(results::servingTable(run));
    for (std::string line; std::getline(lines, line);)
        if (std::find(s.verdict.begin(), s.verdict.end(), line) == s.verdict.end())
            s.table += line + "\n";
    return s;
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
