// Energy per inference (issue 46; energy.h, docs/ENERGY.md).
#include "pitlane/results/energy.h"

#include <cmath>
#include <cstdio>

namespace pitlane::results {

namespace {

std::string num(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// Significant figures that keep a J/inference readable whatever its size.
std::string joules(double j) {
    const double a = std::fabs(j);
    if (a == 0) return "0";
    if (a >= 100) return num("%.1f", j);
    if (a >= 1) return num("%.3f", j);
    return num("%.3g", j);
}

double mjOf(const ProcessInfo& p, const std::string& key) {
    if (key == "gpu") return p.gpu_energy_mj;
    if (key == "cpu") return p.cpu_energy_mj;
    return p.dram_energy_mj;
}

// Median across processes with latency's CI (stats::medianCi: one unit per process).
stats::MedianCi acrossProcesses(const std::vector<double>& values) {
    stats::BlockedSamples b;
    for (std::size_t i = 0; i < values.size(); ++i) {
        b.blocks.push_back({values[i]});
        b.process.push_back(int(i));
    }
    return stats::medianCi(b);
}

}  // namespace

const EnergySource* ArmEnergy::primary() const {
    for (const auto& s : sources)
        if (s.measured) return &s;
    return nullptr;
}

json runIdle(const RunResult& run) {
    for (const auto& a : run.arms) {
        const json& e = a.applied.extraField("energy");
        if (e.is_object() && e.contains("idle") && e["idle"].is_object()) return e;
    }
    return nullptr;
}

std::vector<double> energyUnits(const EnergySource& s, bool net) {
    std::vector<double> v;
    for (const auto& p : s.processes)
        if (p.used) v.push_back(net ? p.net_j_per_inference : p.j_per_inference);
    return v;
}

ArmEnergy armEnergy(const RunResult& run, std::size_t armIndex) {
    const ArmResult& arm = run.arms.at(armIndex);
    // The arm's own idle draw first. Arms of two different runs (store's compareRuns:
    // preset_json.compared_runs) take no other arm's: that idle draw was another run's machine
    // state, so the arm without one of its own has no net figure rather than a wrong one.
    const json& own = arm.applied.extraField("energy");
    if (own.is_object() && own.contains("idle") && own["idle"].is_object()) return armEnergy(arm, own);
    const json runs = run.preset_json.is_object() ? run.preset_json.value("compared_runs", json()) : json();
    if (runs.is_array() && runs.size() == 2 && runs[0] != runs[1]) return armEnergy(arm, json());
    return armEnergy(arm, runIdle(run));
}

ArmEnergy armEnergy(const ArmResult& arm, const json& idleOwner) {
    ArmEnergy out;
    const json& desc = arm.applied.extraField("energy");
    if (!desc.is_object()) {
        out.reason = "the worker reported no energy counters";
        return out;
    }
    for (const char* key : {"gpu", "cpu", "dram"}) {
        if (!desc.contains(key) || !desc[key].is_object()) continue;
        const json& d = desc[key];
        EnergySource s;
        s.key = key;
        s.source = std::string(key) == "gpu" ? "nvml" : "rapl";
        if (d.contains("unavailable")) {
            s.reason = d["unavailable"].is_string() ? d["unavailable"].get<std::string>() : "unavailable";
            out.unavailable.push_back(s.source + " (" + key + "): " + s.reason);
            continue;
        }
        s.device = d.value("device", std::string(key));
        s.name = d.value("name", std::string());
        s.resolution_ms = d.value("resolution_ms", 0.0);
        // The idle draw applies to the same counter only (another GPU's idle is not this one's).
        if (idleOwner.is_object() && idleOwner.contains(key) && idleOwner[key].is_object() &&
            idleOwner[key].value("device", std::string()) == s.device) {
            const json& idle = idleOwner["idle"];
            const std::string w = std::string(key) + "_w";
            if (idle.contains(w) && idle[w].is_number() && !idle.contains("stalls"))
                s.idle_w = idle[w].get<double>();
            else if (idle.contains("stalls"))
                s.notes.push_back("idle draw not used: " + idle["stalls"].dump());
        }
        std::vector<double> gross, net;
        double usedMj = 0, usedMs = 0;
        std::int64_t shortest = 0;
        double worst = 0, mostBlocksWindow = 0;
        for (const auto& p : arm.processes) {
            if (p.energy_blocks <= 0) continue;
            EnergyProcess e;
            e.replicate = p.replicate;
            e.worker = p.worker;
            e.pid = p.pid;
            e.blocks = p.energy_blocks;
            e.inferences = p.energy_inferences;
            e.stalls = p.energy_stalls;
            e.window_ms = p.energy_window_ms;
            e.mj = mjOf(p, key);
            e.resolution_error = e.window_ms > 0
                                     ? s.resolution_ms * std::sqrt(double(e.blocks) / 6.0) / e.window_ms
                                     : INFINITY;
            if (e.inferences > 0 && e.mj >= 0) {
                e.j_per_inference = e.mj / 1e3 / double(e.inferences);
                e.average_w = e.window_ms > 0 ? e.mj / e.window_ms : 0;
                if (s.idle_w >= 0)
                    e.net_j_per_inference = (e.mj - s.idle_w * e.window_ms) / 1e3 / double(e.inferences);
            }
            // A counter that read 0 J over a window of two or more of its updates did not count:
            // no device or package draws nothing.
            if (e.stalls == 0 && e.mj <= 0 && e.window_ms >= 2 * s.resolution_ms) e.stalls = e.blocks;
            if (e.stalls > 0)
                e.why_not = e.mj <= 0 ? "the counter did not advance over its " + num("%.2f", e.window_ms / 1e3) +
                                            " s of blocks (stalled)"
                                      : "a counter stalled or failed in " + std::to_string(e.stalls) +
                                            " of its " + std::to_string(e.blocks) + " blocks";
            else if (e.inferences <= 0)
                e.why_not = "no inference measured";
            else if (!(e.resolution_error <= kEnergyMaxResolutionError))
                e.why_not = "too short: " + num("%.2f", e.window_ms / 1e3) + " s in " +
                            std::to_string(e.blocks) + " blocks leaves +/-" +
                            num("%.0f", 100 * e.resolution_error) + " % at the counter's " +
                            num("%g", s.resolution_ms) + " ms resolution";
            e.used = e.why_not.empty();
            if (e.used) {
                gross.push_back(e.j_per_inference);
                net.push_back(e.net_j_per_inference);
                usedMj += e.mj;
                usedMs += e.window_ms;
            } else if (e.stalls == 0 && e.inferences > 0) {
                worst = std::max(worst, e.resolution_error);
                shortest = std::max(shortest, e.blocks);
                mostBlocksWindow = std::max(mostBlocksWindow, e.window_ms);
            }
            s.processes.push_back(e);
        }
        s.used = gross.size();
        std::size_t stalled = 0;
        for (const auto& p : s.processes) stalled += p.stalls > 0;
        if (stalled > 0)
            s.notes.push_back(s.device + ": the energy counter stalled or failed in " + std::to_string(stalled) +
                              " of " + std::to_string(s.processes.size()) +
                              " processes; their energy is left out");
        if (s.processes.empty()) {
            s.reason = "no measured block read the counter";
        } else if (gross.empty()) {
            if (stalled == s.processes.size())
                s.reason = "the energy counter stalled in every process";
            else {
                // The window a process would need: resolution * sqrt(n / 6) / 10 %.
                const double needS = s.resolution_ms * std::sqrt(double(shortest) / 6.0) /
                                     kEnergyMaxResolutionError / 1e3;
                s.reason = std::string(stalled > 0 ? "the energy counter stalled in " + std::to_string(stalled) + " of " +
                                                         std::to_string(s.processes.size()) + " processes, and " : "") +
                           "the run is too short to measure energy: a process measured at most " +
                           num("%.2f", mostBlocksWindow / 1e3) + " s in its blocks (merged), which leaves +/-" +
                           num("%.0f", 100 * worst) + " % at the counter's " + num("%g", s.resolution_ms) +
                           " ms resolution; about " + num("%.1f", needS) +
                           " s per process is needed (more or longer blocks)";
            }
        } else {
            s.measured = true;
            const auto ci = acrossProcesses(gross);
            s.j_per_inference = ci.median;
            s.ci_low = ci.low;
            s.ci_high = ci.high;
            if (s.idle_w >= 0) {
                const auto nci = acrossProcesses(net);
                s.net_j_per_inference = nci.median;
                s.net_ci_low = nci.low;
                s.net_ci_high = nci.high;
            }
            s.inferences_per_j = s.j_per_inference > 0 ? 1.0 / s.j_per_inference : 0;
            s.average_w = usedMs > 0 ? usedMj / usedMs : 0;
            s.window_s = usedMs / 1e3;
            if (s.used < s.processes.size())
                s.notes.push_back(s.device + ": " + std::to_string(s.processes.size() - s.used) + " of " +
                                  std::to_string(s.processes.size()) + " processes left out");
        }
        if (!s.measured) out.unavailable.push_back(s.source + " (" + key + ", " + s.device + "): " + s.reason);
        out.sources.push_back(std::move(s));
    }
    std::stable_partition(out.sources.begin(), out.sources.end(), [](const EnergySource& s) { return s.measured; });
    out.measured = out.primary() != nullptr;
    if (!out.measured) {
        for (const auto& u : out.unavailable) out.reason += (out.reason.empty() ? "" : "; ") + u;
        if (out.reason.empty()) out.reason = "no energy counter";
    }
    return out;
}

namespace {

json sourceJson(const EnergySource& s) {
    json j = {{"source", s.source}, {"counter", s.key}, {"device", s.device}, {"measured", s.measured}};
    if (!s.name.empty()) j["name"] = s.name;
    j["resolution_ms"] = s.resolution_ms;
    if (s.idle_w >= 0) j["idle_power_w"] = s.idle_w;
    if (s.measured) {
        j["joules_per_inference"] = s.j_per_inference;
        j["joules_per_inference_ci95"] = {s.ci_low, s.ci_high};
        if (s.idle_w >= 0) {
            j["net_joules_per_inference"] = s.net_j_per_inference;
            j["net_joules_per_inference_ci95"] = {s.net_ci_low, s.net_ci_high};
        } else {
            j["net_joules_per_inference"] = nullptr;
            j["net_reason"] = "no idle draw measured (run.energy_idle_ms 0, or another arm's device)";
        }
        j["inferences_per_joule"] = s.inferences_per_j;
        j["inferences_per_joule_ci95"] = {s.ci_high > 0 ? 1 / s.ci_high : 0.0, s.ci_low > 0 ? 1 / s.ci_low : 0.0};
        j["average_power_w"] = s.average_w;
        j["window_s"] = s.window_s;
        j["processes_used"] = s.used;
        j["ci_method"] = "bootstrap of the median across processes (one unit per process), as latency's";
    } else {
        j["reason"] = s.reason;
    }
    json procs = json::array();
    for (const auto& p : s.processes) {
        json q = {{"replicate", p.replicate}, {"worker", p.worker}, {"pid", p.pid}, {"blocks", p.blocks},
                  {"inferences", p.inferences}, {"window_ms", p.window_ms}, {"energy_mj", p.mj},
                  {"stalls", p.stalls}, {"resolution_error", p.resolution_error}, {"used", p.used},
                  {"joules_per_inference", p.j_per_inference}, {"average_power_w", p.average_w}};
        if (s.idle_w >= 0) q["net_joules_per_inference"] = p.net_j_per_inference;
        if (!p.why_not.empty()) q["why_not"] = p.why_not;
        procs.push_back(q);
    }
    j["processes"] = procs;
    if (!s.notes.empty()) j["notes"] = s.notes;
    return j;
}

}  // namespace

json energyJson(const ArmEnergy& e) {
    json j = {{"measured", e.measured}};
    if (const EnergySource* p = e.primary()) {
        // The headline is the first measured source (the GPU where NVML has a counter).
        j.update(sourceJson(*p));
        j.erase("processes");
    } else {
        j["reason"] = e.reason;
    }
    json all = json::array();
    for (const auto& s : e.sources) all.push_back(sourceJson(s));
    j["sources"] = all;
    if (!e.unavailable.empty()) j["unavailable"] = e.unavailable;
    return j;
}

std::vector<std::string> energyLines(const ArmEnergy& e) {
    std::vector<std::string> lines;
    for (const auto& s : e.sources) {
        if (!s.measured) continue;
        std::string l = s.device + " (" + s.source + "): " + joules(s.j_per_inference) +
                        " J/inference (95% CI " + joules(s.ci_low) + "-" + joules(s.ci_high) + ")";
        if (s.idle_w >= 0)
            l += ", net of idle " + joules(s.net_j_per_inference) + " J (" + joules(s.net_ci_low) + "-" +
                 joules(s.net_ci_high) + ")";
        l += ", " + num("%.3g", s.inferences_per_j) + " inferences/J, " + num("%.1f", s.average_w) + " W average";
        if (s.idle_w >= 0) l += ", idle " + num("%.1f", s.idle_w) + " W";
        l += " (" + std::to_string(s.used) + " processes, " + num("%.1f", s.window_s) + " s)";
        lines.push_back(l);
        for (const auto& n : s.notes) lines.push_back("  " + n);
    }
    if (!e.measured) lines.push_back("energy not measured: " + e.reason);
    else
        for (const auto& s : e.sources)
            if (!s.measured && s.key == "gpu") lines.push_back("  " + s.source + ": " + s.reason);
    return lines;
}

std::string energySection(const RunResult& run) {
    std::vector<ArmEnergy> all;
    bool reported = false, anyMeasured = false;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        all.push_back(armEnergy(run, i));
        reported = reported || run.arms[i].applied.extraField("energy").is_object();
        anyMeasured = anyMeasured || all.back().measured;
    }
    if (!reported) return {};
    std::string out = "\nEnergy per inference";
    if (!anyMeasured) {
        // Said once: the arms of one machine share the reason.
        std::string reason;
        for (std::size_t i = 0; i < all.size(); ++i)
            if (run.arms[i].applied.extraField("energy").is_object()) {
                reason = all[i].reason;
                break;
            }
        return out + ": not measured (" + reason + ")\n";
    }
    if (const json idle = runIdle(run); idle.is_object())
        out += " (idle draw measured after a " + num("%.1f", idle["idle"].value("cooldown_ms", 0.0) / 1e3) +
               " s cool-down, over " + num("%.1f", idle["idle"].value("window_ms", 0.0) / 1e3) + " s)";
    out += "\n";
    for (std::size_t i = 0; i < all.size(); ++i)
        for (const auto& l : energyLines(all[i])) out += "  " + run.arms[i].name + ": " + l + "\n";
    return out;
}

}  // namespace pitlane::results
