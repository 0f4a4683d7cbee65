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

std::string profileTable(const RunResult& run, std::size_t rows) {
    std::vector<std::size_t> arms;
    for (std::size_t i = 0; i < run.arms.size(); ++i)
        if (run.arms[i].profile.is_object()) arms.push_back(i);
    if (arms.empty()) return {};
    std::vector<std::map<std::string, double>> self;
    std::set<std::string> names;
    for (std::size_t i : arms) {
        self.push_back(selfPerIter(run.arms[i].profile));
        for (const auto& [n, v] : self.back()) names.insert(n);
    }
    auto at = [&](std::size_t k, const std::string& n) {
        const auto it = self[k].find(n);
        return it == self[k].end() ? 0.0 : it->second;
    };
    // With one arm: the most time first. With several: the largest difference from the first
    // profiled arm first (what changed between the arms), then the most time.
    std::vector<std::pair<double, std::string>> order;
    for (const auto& n : names) {
        double key = at(0, n);
        if (arms.size() > 1) {
            key = 0;
            for (std::size_t k = 1; k < arms.size(); ++k) key = std::max(key, std::fabs(at(k, n) - at(0, n)));
        }
        order.push_back({key, n});
    }
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::ostringstream os;
    os << "Where the time goes (self time per profiled iteration, ms"
       << (arms.size() > 1 ? "; largest differences from " + run.arms[arms[0]].name + " first" : std::string())
       << "; profiled after the measured blocks, not timed):\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-34s", "operator");
    os << line;
    for (std::size_t i : arms) {
        std::snprintf(line, sizeof line, " %12s", run.arms[i].name.substr(0, 12).c_str());
        os << line;
    }
    os << "\n";
    for (std::size_t r = 0; r < order.size() && r < rows; ++r) {
        std::snprintf(line, sizeof line, "%-34s", order[r].second.substr(0, 34).c_str());
        os << line;
        for (std::size_t k = 0; k < arms.size(); ++k) {
            std::snprintf(line, sizeof line, " %12s", ms(at(k, order[r].second)).c_str());
            os << line;
        }
        os << "\n";
    }
    std::snprintf(line, sizeof line, "%-34s", "total (every operator's self time)");
    os << line;
    for (std::size_t k = 0; k < arms.size(); ++k) {
        double sum = 0;
        for (const auto& [n, v] : self[k]) sum += v;
        std::snprintf(line, sizeof line, " %12s", ms(sum).c_str());
        os << line;
    }
    os << "\n";
    return os.str();
}

}  // namespace pitlane::results
