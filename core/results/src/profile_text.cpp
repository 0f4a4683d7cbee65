// "Where the time goes": the operator tables of the arms' profiles (ArmResult::profile) side by
// side, as self time per profiled iteration.
#include "pitlane/results/run_result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace pitlane::results {

namespace {

// Operator -> self time per iteration (ms) of one arm's profile.
std::map<std::string, double> selfPerIter(const json& profile) {
    std::map<std::string, double> out;
    const double iters = std::max(1, profile.value("iters", 1));
    for (const auto& o : profile.value("ops", json::array()))
        out[o.value("name", std::string())] += o.value("self_us", 0.0) / iters / 1e3;
    return out;
}

std::string ms(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.3f", v);
    return buf;
}

}  // namespace

ProfileRows profileRows(const RunResult& run, std::size_t rows) {
    ProfileRows out;
    for (std::size_t i = 0; i < run.arms.size(); ++i)
        if (run.arms[i].profile.is_object()) out.arms.push_back(i);
    if (out.arms.empty()) return out;
    std::vector<std::map<std::string, double>> self;
    std::set<std::string> names;
    for (std::size_t i : out.arms) {
        self.push_back(selfPerIter(run.arms[i].profile));
        double total = 0;
        for (const auto& [n, v] : self.back()) {
            names.insert(n);
            total += v;
        }
        out.totals.push_back(total);
    }
    auto at = [&](std::size_t k, const std::string& n) {
        const auto it = self[k].find(n);
        return it == self[k].end() ? 0.0 : it->second;
    };
    // With one arm: the most time first. With several: the largest difference from the first
    // profiled arm first (what changed between the arms).
    std::vector<std::pair<double, std::string>> order;
    for (const auto& n : names) {
        double key = at(0, n);
        if (out.arms.size() > 1) {
            key = 0;
            for (std::size_t k = 1; k < out.arms.size(); ++k) key = std::max(key, std::fabs(at(k, n) - at(0, n)));
        }
        order.push_back({key, n});
    }
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (std::size_t r = 0; r < order.size() && r < rows; ++r) {
        std::vector<double> v;
        for (std::size_t k = 0; k < out.arms.size(); ++k) v.push_back(at(k, order[r].second));
        out.ops.push_back({order[r].second, std::move(v)});
    }
    return out;
}

std::string profileTable(const RunResult& run, std::size_t rows) {
    const ProfileRows p = profileRows(run, rows);
    if (p.empty()) return {};
    std::ostringstream os;
    os << "Where the time goes (self time per profiled iteration, ms"
       << (p.arms.size() > 1 ? "; largest differences from " + run.arms[p.arms[0]].name + " first" : std::string())
       << "; profiled after the measured blocks, not timed):\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-34s", "operator");
    os << line;
    for (std::size_t i : p.arms) {
        std::snprintf(line, sizeof line, " %12s", run.arms[i].name.substr(0, 12).c_str());
        os << line;
    }
    os << "\n";
    auto row = [&](const std::string& name, const std::vector<double>& v) {
        std::snprintf(line, sizeof line, "%-34s", name.substr(0, 34).c_str());
        os << line;
        for (double x : v) {
            std::snprintf(line, sizeof line, " %12s", ms(x).c_str());
            os << line;
        }
        os << "\n";
    };
    for (const auto& [name, v] : p.ops) row(name, v);
    row("total (every operator's self time)", p.totals);
    return os.str();
}

std::string profileTraceJson(const ArmResult& arm) {
    if (!arm.profile.is_object()) return {};
    const auto it = arm.profile.find("trace");
    if (it == arm.profile.end() || !it->is_object()) return {};
    return it->dump();
}

}  // namespace pitlane::results
