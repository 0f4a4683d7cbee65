#pragma once
// Energy counters read by the worker at block boundaries (issue 46, docs/ENERGY.md): NVML's
// nvmlDeviceGetTotalEnergyConsumption (mJ, ~100 ms updates) for the arm's GPU, and RAPL's
// powercap energy_uj files (µJ, wrapping at max_energy_range_uj) for the CPU packages and DRAM.
// Everything is opened before the sandbox (worker_main.cpp), so reading needs no path access.
// No torch, no Qt.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pitlane::engine {

// One reading of every counter that is open, at steady-clock time t_ns.
struct EnergyReading {
    std::int64_t t_ns = 0;
    std::optional<unsigned long long> gpu_mj;
    std::vector<std::optional<std::uint64_t>> cpu_uj, dram_uj;  // per RAPL zone
    std::vector<std::string> stalls;  // a counter found frozen at this reading (why, in words)
};

// Between two readings: the window and each source's energy (absent: not read).
struct EnergyDelta {
    double window_ms = 0;
    std::optional<double> gpu_mj, cpu_mj, dram_mj;
    std::vector<std::string> stalls;  // a counter frozen or unreadable in the window
};

// A counter that has not changed for this long while it is read is stalled: NVML updates about
// every 100 ms and RAPL every ~1 ms, and a device or package never draws 0 W.
inline constexpr double kEnergyStallMs = 500;

class EnergyMeter {
public:
    // The meter of this process: opens NVML (Nvml::instance) and the powercap zones the first
    // time (worker_main calls it before the sandbox). PITLANE_POWERCAP_DIR replaces
    // /sys/class/powercap (tests: a fake tree).
    static EnergyMeter& instance();
    // The GPU whose counter is read: the arm's cuda:N, or 0 for a CPU arm (what the GPU drew
    // while the CPU worked). -1: none.
    void useGpu(int index);
    bool any() const;
    EnergyReading read();
    EnergyDelta delta(const EnergyReading& a, const EnergyReading& b) const;
    // applied.energy: each source's counter (source, device, resolution_ms) or why it is
    // unavailable ({"unavailable": "..."}), and the idle draw when measured.
    nlohmann::json describe() const;
    // The idle draw: sleeps cooldownMs, then reads over windowMs of sleep. Watts per source.
    nlohmann::json measureIdle(int cooldownMs, int windowMs);

    struct Zone {
        std::string path, name;  // the zone's folder and its `name` (package-0, dram)
        int fd = -1;
        std::uint64_t max_range_uj = 0;
    };

private:
    EnergyMeter();
    int gpu_ = -1;
    std::string gpuWhyNot_;
    std::vector<Zone> cpu_, dram_;
    std::string raplWhyNot_;
    // Stall detection: each counter's last value and when it last changed.
    struct Last {
        bool seen = false;
        std::uint64_t value = 0;
        std::int64_t changed_ns = 0;
    };
    Last lastGpu_;
    std::vector<Last> lastCpu_, lastDram_;
};

// RAPL's difference of two energy_uj readings: a reading below the one before wrapped at
// max_energy_range_uj (the counter counts 0..max inclusive).
std::uint64_t raplDelta(std::uint64_t before, std::uint64_t after, std::uint64_t maxRangeUj);
// Why an energy_uj file could not be opened, in words ("energy_uj readable by root only ...").
std::string powercapUnreadable(const std::string& path, int err);
// Parses an energy_uj / max_energy_range_uj text: digits and an optional newline.
std::optional<std::uint64_t> parsePowercapNumber(const std::string& text);
// The RAPL zones under a powercap folder (intel-rapl:N packages, intel-rapl:N:M "dram"), opened;
// `why` says why there are none ("no powercap on this machine", "energy_uj readable by root
// only", a file that does not parse, naming it).
void openPowercap(const std::string& dir, std::vector<EnergyMeter::Zone>& packages,
                  std::vector<EnergyMeter::Zone>& dram, std::string& why);

}  // namespace pitlane::engine
