// The advisor's frame: what the rules read of each arm (computed once), the ranking, the
// suggested arms (validated as a preset's would be), the JSON and the CLI text. The rules are in
// advice_rules.cpp.
#include "advice_rules.h"

#include "pitlane/spec/preset.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace pitlane::results {

using advice_detail::ArmCtx;

const char* tierName(AdviceTier t) {
    switch (t) {
        case AdviceTier::Latency: return "latency";
        case AdviceTier::Throughput: return "throughput";
        case AdviceTier::Startup: return "start-up";
    }
    return "latency";
}

namespace {

int intOf(const json& j, const char* key, int def) {
    return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<int>() : def;
}

ArmCtx context(const RunResult& run, std::size_t i) {
    ArmCtx c;
    c.run = &run;
    c.index = i;
    const auto& a = run.arms[i];
    const auto lat = a.latencies(a.batch_size);
    c.median_ns = lat.empty() ? 0 : stats::median(lat);

    // The profile: self time per profiled iteration.
    if (a.profile.is_object() && a.profile.contains("ops") && a.profile["ops"].is_array()) {
        const double iters = std::max(1, intOf(a.profile, "iters", 1));
        for (const auto& op : a.profile["ops"]) {
            if (!op.is_object() || !op.contains("name") || !op["name"].is_string()) continue;
            const double v = op.value("self_us", 0.0) / iters / 1e3;
            c.op_ms[op["name"].get<std::string>()] += v;
            c.profile_total_ms += v;
        }
    }

    // Threads and cores: every worker's read-back settings.
    std::vector<protocol::Applied> applied = a.worker_applied;
    if (applied.empty()) applied.push_back(a.applied);
    c.workers = std::max<int>(1, std::max<int>(int(applied.size()), a.workers));
    c.intra_threads = a.applied.intra_op_threads.value_or(1);
    std::set<int> cores;
    // A list of cores asked for and read back for the worker's threads: those cores. The
    // read-back is the union over every thread of the process, so one thread that escaped the pin
    // (affinity_uniform false, e.g. an allocator's background thread) would otherwise count every
    // core of the machine as the arm's.
    for (const auto& ap : applied) {
        c.threads += ap.intra_op_threads.value_or(1);
        const bool listed = a.knobs.affinity == spec::Affinity::List && spec::readBackOf<spec::Affinity>(ap.affinity_policy) == spec::Affinity::List;
        const std::vector<int> mask = listed ? a.knobs.affinity_cores : ap.affinity.value_or(std::vector<int>{});
        cores.insert(mask.begin(), mask.end());
    }
    if (int(applied.size()) < c.workers) c.threads += (c.workers - int(applied.size())) * c.intra_threads;
    if (cores.empty() && a.environment.contains("allowed_cores") && a.environment["allowed_cores"].is_array())
        for (const auto& core : a.environment["allowed_cores"])
            if (core.is_number_integer()) cores.insert(core.get<int>());
    c.allowed_cores = int(cores.size());

    // Preemptions inside the timed loops (block_done), else over the process's metric ticks.
    std::int64_t preempted = 0, loopIters = 0;
    for (const auto& p : a.processes)
        if (p.cpu_wall_ms > 0) {
            preempted += p.involuntary_switches;
            loopIters += p.fault_iters;
        }
    c.involuntary_per_iter = loopIters > 0 ? double(preempted) / double(loopIters) : contextSwitchesPerIter(a, false);
    c.migrations_per_iter = metricGrowthPerIter(a, "migrations");

    // Cores kept busy while measuring: each process's CPU time over its timed loops' wall time,
    // summed over the concurrent workers of a round, averaged over the rounds.
    std::map<int, double> perRound;
    for (const auto& p : a.processes)
        if (p.cpu_wall_ms > 0) perRound[p.replicate] += p.cpu_ms / p.cpu_wall_ms;
    if (!perRound.empty() && c.allowed_cores > 0) {
        double sum = 0;
        for (const auto& [r, used] : perRound) sum += used;
        c.core_use = sum / double(perRound.size()) / double(c.allowed_cores);
    }
    for (const auto& t : a.metrics) c.tensor_peak_bytes = std::max<double>(c.tensor_peak_bytes, double(t.tensor_peak_bytes));
    return c;
}

bool measuredSomething(const ArmResult& a) {
    return !a.samples.empty() && a.status != kFailed && a.status != kCrashed && a.status != kKilled &&
           a.status != kTimeout;
}

// The arm's knobs with the change applied, validated as a preset's arm would be: null (and the
// reason in `action`) when the result is not a valid arm.
void applyChange(const RunResult& run, Advice& adv) {
    if (adv.change.empty()) return;
    json knobs = knobsJson(run.arms[adv.arm]);
    for (auto it = adv.change.begin(); it != adv.change.end(); ++it) knobs[it.key()] = it.value();
    try {
        spec::parseKnobs(knobs, "advice", "knobs");
        adv.arm_knobs = knobs;
    } catch (const spec::SpecError& e) {
        adv.arm_knobs = nullptr;
        adv.action = std::string("not a valid arm here: ") + e.what();
    }
}

std::string valueText(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::string changeText(const json& change) {
    std::string s;
    for (auto it = change.begin(); it != change.end(); ++it)
        s += (s.empty() ? "" : ", ") + it.key() + "=" + valueText(it.value());
    return s;
}

std::vector<Advice> advise(const RunResult& run) {
    std::vector<Advice> all;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        if (!measuredSomething(run.arms[i])) continue;
        std::vector<Advice> found, mine;
        advice_detail::applyRules(context(run, i), found);
        for (auto& a : found) {
            applyChange(run, a);
            // A change another arm of the run measured: that measurement, not the rule's prior.
            if (advice_detail::citeMeasuredChange(run, a)) mine.push_back(std::move(a));
        }
        // The order rules are applied in breaks ties (stable).
        std::stable_sort(mine.begin(), mine.end(), [](const Advice& a, const Advice& b) {
            if (a.tier != b.tier) return a.tier < b.tier;
            return a.share > b.share;
        });
        for (auto& a : mine) all.push_back(std::move(a));
    }
    return all;
}

std::vector<Advice> adviceFor(const std::vector<Advice>& all, std::size_t arm) {
    std::vector<Advice> out;
    for (const auto& a : all)
        if (a.arm == arm) out.push_back(a);
    return out;
}

json suggestedArm(const RunResult& run, const Advice& a) {
    if (a.arm_knobs.is_null() || a.measured_in_run) return nullptr;
    return {{"name", run.arms[a.arm].name + " + " + changeText(a.change)}, {"knobs", a.arm_knobs}};
}

json presetWithSuggestedArms(const RunResult& run, const std::vector<Advice>& advice, std::size_t perArm) {
    json preset = run.preset_json.is_object() ? run.preset_json : json::object();
    if (!preset.contains("arms") || !preset["arms"].is_array()) preset["arms"] = json::array();
    std::set<std::string> names, knobSets;
    for (const auto& arm : preset["arms"]) {
        names.insert(arm.value("name", std::string()));
        knobSets.insert(arm.value("knobs", json::object()).dump());
    }
    std::map<std::size_t, std::size_t> taken;
    for (const auto& a : advice) {
        auto arm = suggestedArm(run, a);
        if (arm.is_null() || taken[a.arm] >= perArm) continue;
        if (!knobSets.insert(arm["knobs"].dump()).second) continue;  // an arm already measures it
        std::string name = arm["name"];
        for (int n = 2; names.count(name); ++n) name = arm["name"].get<std::string>() + " (" + std::to_string(n) + ")";
        names.insert(name);
        arm["name"] = name;
        preset["arms"].push_back(arm);
        ++taken[a.arm];
    }
    return preset;
}

json adviceToJson(const RunResult& run, const std::vector<Advice>& advice) {
    json out = json::array();
    std::map<std::size_t, int> rank;
    for (const auto& a : advice) {
        json j = {{"arm", run.arms[a.arm].name},
                  {"rank", ++rank[a.arm]},
                  {"rule", a.rule},
                  {"tier", tierName(a.tier)},
                  {"title", a.title},
                  {"evidence", a.evidence},
                  {"metric", a.metric},
                  {"value", a.value},
                  {"threshold", a.threshold},
                  {"share", a.share},
                  {"measured", a.measured},
                  {"change", a.change},
                  {"arm_knobs", a.arm_knobs}};
        if (!a.action.empty()) j["action"] = a.action;
        if (const auto& m = a.measured_in_run)
            j["measured_in_run"] = {{"arm", m->arm}, {"ratio", m->ratio}, {"ci_low", m->ci_low},
                                    {"ci_high", m->ci_high}, {"p_value", m->p_value}};
        out.push_back(std::move(j));
    }
    return out;
}

std::string adviceText(const RunResult& run, const std::vector<Advice>& advice) {
    if (advice.empty()) return "";
    std::ostringstream o;
    o << "Advice (per arm, ranked: per-iteration time, then throughput, then start-up; each by the share it "
         "addresses; docs/ADVISOR.md):\n";
    std::map<std::size_t, int> rank;
    for (const auto& a : advice) {
        const int r = ++rank[a.arm];
        char head[64];
        std::snprintf(head, sizeof head, "%.0f %% %s", 100.0 * a.share,
                      a.measured_in_run ? "measured in this run" : a.measured ? "measured" : "estimated");
        o << "  " << run.arms[a.arm].name << " " << r << ". " << a.title << "  [" << tierName(a.tier) << ", "
          << head << "]\n";
        o << "       why: " << a.evidence << "\n";
        if (a.measured_in_run)
            o << "       measured: arm " << a.measured_in_run->arm << " runs " << changeText(a.change) << "\n";
        else if (!a.arm_knobs.is_null())
            o << "       try: an arm with " << changeText(a.change) << " (knobs " << a.arm_knobs.dump() << ")\n";
        if (!a.action.empty()) o << "       " << (a.arm_knobs.is_null() ? "do: " : "also: ") << a.action << "\n";
    }
    return o.str();
}

}  // namespace pitlane::results
