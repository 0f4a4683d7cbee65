// "Where the time goes": the operator tables of the arms' profiles (ArmResult::profile) side by
// side, as self time per profiled iteration; and an arm's profile as a Chrome trace file.
#include "pitlane/results/run_result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

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

namespace {
long intOf(const json& e, const char* key, long dflt) {
    const auto it = e.find(key);
    return it != e.end() && it->is_number_integer() ? it->get<long>() : dflt;
}

// A trace's events sorted out: its complete events (spans) in order of start, the longer first
// at equal starts; the rest as they came; the threads its spans ran on and those it names; the
// worker's pid (that of its CPU spans, else `pid`).
struct TraceParts {
    std::vector<const json*> spans, other;
    std::set<std::pair<long, long>> threads, namedThreads;
    long pid = 0;
};

TraceParts traceParts(const json& in, long pid) {
    TraceParts t;
    t.pid = pid;
    bool pidFromSpans = false;
    for (const auto& e : in) {
        if (!e.is_object()) continue;
        const auto ph = e.find("ph");
        if (ph == e.end() || !ph->is_string()) continue;  // a hand-edited results JSON
        const auto ts = e.find("ts"), dur = e.find("dur");
        if (*ph == "X") {
            if (ts == e.end() || !ts->is_number() || dur == e.end() || !dur->is_number()) continue;
            const auto tid = e.find("tid");
            // The worker's process: the (integer) pid of its CPU spans (Kineto's cpu_op and
            // user_annotation, the legacy profiler's cpu_op / iteration or uncategorised ones),
            // never a GPU's.
            const std::string cat = e.value("cat", std::string());
            if (!pidFromSpans && intOf(e, "pid", -1) >= 0 &&
                (cat.empty() || cat == "cpu_op" || cat == "iteration" || cat == "user_annotation")) {
                t.pid = intOf(e, "pid", t.pid);
                pidFromSpans = true;
            }
            if (tid != e.end() && tid->is_number_integer() && intOf(e, "pid", -1) >= 0)
                t.threads.insert({intOf(e, "pid", 0), tid->get<long>()});
            t.spans.push_back(&e);
            continue;
        }
        if (*ph == "M" && e.value("name", std::string()) == "thread_name")
            t.namedThreads.insert({intOf(e, "pid", 0), intOf(e, "tid", 0)});
        t.other.push_back(&e);
    }
    std::stable_sort(t.spans.begin(), t.spans.end(), [](const json* a, const json* b) {
        return std::make_tuple((*a)["ts"].get<double>(), -(*a)["dur"].get<double>()) <
               std::make_tuple((*b)["ts"].get<double>(), -(*b)["dur"].get<double>());
    });
    return t;
}
}  // namespace

std::string profileTraceJson(const ArmResult& arm) {
    const json& p = arm.profile;
    if (!p.is_object() || !p.contains("trace") || !p["trace"].is_object()) return {};
    const json& in = p["trace"].value("traceEvents", json::array());
    if (!in.is_array()) return {};
    // The trace as the worker's profiler wrote it (Kineto's, since issue 25: CPU operators,
    // user annotations, on CUDA the kernels, memcpys and their flow arrows; the legacy profiler's
    // of a stored older run), with the worker's process named after the arm. Complete events are
    // put in order of start, the longer first at equal starts (a parent before its children, as
    // viewers nest them); everything else is kept as it came, in its order, before them. Kineto
    // names the process by the executable ("pitlane-worker"): that one process_name / labels
    // event is replaced.
    const TraceParts t = traceParts(in, arm.pid);
    const long pid = t.pid;
    const int iters = p.value("iters", 0);
    const std::string labels =
        "batch size " + std::to_string(p.value("batch_size", arm.batch_size)) + ", " +
        std::to_string(iters) + " profiled iteration" + (iters == 1 ? "" : "s") +
        " (after the measured blocks, not timed), " +
        p.value("profiler", std::string("libtorch profiler"));
    json events = json::array();
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"name", arm.name}}}});
    events.push_back({{"name", "process_labels"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"labels", labels}}}});
    for (const json* e : t.other) {
        const std::string name = (*e).value("name", std::string());
        if ((*e)["ph"] == "M" && (name == "process_name" || name == "process_labels") &&
            intOf(*e, "pid", -1) == pid)
            continue;
        events.push_back(*e);
    }
    for (const auto& [tpid, tid] : t.threads)
        if (!t.namedThreads.count({tpid, tid}))
            events.push_back({{"name", "thread_name"},
                              {"ph", "M"},
                              {"pid", tpid},
                              {"tid", tid},
                              {"args", {{"name", "libtorch thread " + std::to_string(tid)}}}});
    for (const json* e : t.spans) events.push_back(*e);
    json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
    // Kineto's top-level fields (schemaVersion, deviceProperties, baseTimeNanoseconds, ...) stay.
    for (const auto& [key, value] : p["trace"].items())
        if (key != "traceEvents" && key != "displayTimeUnit" && key != "otherData" && key != "traceName")
            doc[key] = value;
    doc["otherData"] = {{"pitlane_arm", arm.name},
                        {"iters", iters},
                        {"batch_size", p.value("batch_size", arm.batch_size)},
                        {"wall_ms", p.value("wall_ms", 0.0)},
                        {"profiler", p.value("profiler", std::string())}};
    return doc.dump();
}

}  // namespace pitlane::results
