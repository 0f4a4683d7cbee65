#pragma once
// Energy per inference (issue 46, docs/ENERGY.md): from each worker process's energy counters
// summed over its measured blocks (protocol/loop_counters.h: energy_blocks, energy_inferences,
// energy_window_ms, gpu/cpu/dram_energy_mj, energy_stalls; results::ProcessInfo) and the idle
// draw one process of the run measured (applied.energy.idle), per source: joules per inference
// gross and idle-subtracted, inferences per joule, average power, each a median across processes
// with the same bootstrap CI as latency's medianCi (one unit per process). No Qt, no torch.
#include "pitlane/results/run_result.h"

#include <string>
#include <vector>

namespace pitlane::results {

// A process's blocks are merged (summed) into one window; it counts only when the counter's
// resolution leaves at most this relative error on that window: resolution * sqrt(blocks / 6) /
// window (each block boundary falls at a uniform phase of the counter's updates, so each block's
// two readings add a variance of resolution^2 / 6 in time units).
inline constexpr double kEnergyMaxResolutionError = 0.10;

struct EnergyProcess {
    int replicate = 0, worker = 0;
    long pid = 0;
    std::int64_t blocks = 0, inferences = 0, stalls = 0;
    double window_ms = 0, mj = 0;
    double resolution_error = 0;  // relative, as above
    bool used = false;
    std::string why_not;  // when not used
    double j_per_inference = 0, net_j_per_inference = 0, average_w = 0;
};

struct EnergySource {
    std::string key;     // "gpu", "cpu", "dram"
    std::string source;  // "nvml", "rapl"
    std::string device;  // "gpu 0", "gpu 0 (fake)", "package-0", "dram"
    std::string name;    // the GPU's name
    double resolution_ms = 0;
    bool measured = false;
    std::string reason;  // not measured: why
    double idle_w = -1;  // -1: no idle draw measured
    std::vector<EnergyProcess> processes;
    std::size_t used = 0;  // processes whose figures count
    double j_per_inference = 0, ci_low = 0, ci_high = 0;
    double net_j_per_inference = 0, net_ci_low = 0, net_ci_high = 0;  // when idle_w >= 0
    double inferences_per_j = 0, average_w = 0, window_s = 0;
    std::vector<std::string> notes;  // stalls, processes left out, too short
};

struct ArmEnergy {
    bool measured = false;  // some source measured
    std::string reason;     // none measured: why (each source's reason)
    std::vector<EnergySource> sources;  // measured ones first (gpu, cpu, dram)
    std::vector<std::string> unavailable;  // "rapl: no powercap on this machine (...)"
    const EnergySource* primary() const;
};

// The arm's energy; `run` gives the idle draw (measured by one process of the run).
ArmEnergy armEnergy(const RunResult& run, std::size_t arm);
// The same with the idle draw given: runIdle() of the arm's run (null: none).
ArmEnergy armEnergy(const ArmResult& arm, const json& idleOwner);
// The results JSON's arms[].energy (CONTRACT.md).
json energyJson(const ArmEnergy& e);
// One line per source for the table and the reports: "gpu 0 (fake) (nvml): 0.0123 J/inference
// (95% CI 0.0120-0.0126), net of idle 0.0081 J (…), 81.3 inferences/J, 96.2 W average, idle 40.0 W".
std::vector<std::string> energyLines(const ArmEnergy& e);
// The comparison table's energy section ("" when no arm's worker reported energy counters): per
// arm its lines, or, when no arm measured any, one line saying why, once.
std::string energySection(const RunResult& run);
// The idle draw the run measured: applied.energy.idle of the arm that carries it (null: none).
json runIdle(const RunResult& run);
// Per-process J/inference of the primary source's used processes (the gate's units).
std::vector<double> energyUnits(const EnergySource& s, bool net = false);

}  // namespace pitlane::results
