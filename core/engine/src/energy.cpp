// Energy counters (issue 46, energy.h, docs/ENERGY.md). No torch, no Qt.
#include "pitlane/engine/energy.h"

#include "pitlane/engine/nvml.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace pitlane::engine {

namespace {

std::int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::optional<std::uint64_t> preadNumber(int fd) {
    char buf[40];
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return std::nullopt;
    return parsePowercapNumber(std::string(buf, std::size_t(n)));
}

// A file's whole text, or nullopt with errno kept.
std::optional<std::string> readText(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    const int err = errno;
    ::close(fd);
    errno = err;
    if (n < 0) return std::nullopt;
    return std::string(buf, std::size_t(n));
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// Stall bookkeeping for one counter read at time t.
void track(std::uint64_t value, std::int64_t t, bool& seen, std::uint64_t& last, std::int64_t& changed,
           const std::string& what, std::vector<std::string>& stalls) {
    if (!seen || value != last) {
        seen = true;
        last = value;
        changed = t;
        return;
    }
    const double frozenMs = double(t - changed) / 1e6;
    if (frozenMs >= kEnergyStallMs) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f", frozenMs / 1e3);
        stalls.push_back(what + ": the energy counter did not advance for " + buf + " s");
    }
}

}  // namespace

std::optional<std::uint64_t> parsePowercapNumber(const std::string& text) {
    std::string t = trim(text);
    if (t.empty() || t.size() > 20 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    errno = 0;
    const unsigned long long v = std::strtoull(t.c_str(), nullptr, 10);
    if (errno == ERANGE) return std::nullopt;
    return std::uint64_t(v);
}

std::uint64_t raplDelta(std::uint64_t before, std::uint64_t after, std::uint64_t maxRangeUj) {
    if (after >= before) return after - before;
    return maxRangeUj - before + after + 1;  // wrapped past max_energy_range_uj to 0
}

std::string powercapUnreadable(const std::string& path, int err) {
    if (err == EACCES || err == EPERM)
        return "energy_uj readable by root only (" + path + ": " + std::strerror(err) +
               "; since Linux 5.10, CVE-2020-8694)";
    return path + ": " + std::strerror(err);
}

void openPowercap(const std::string& dir, std::vector<EnergyMeter::Zone>& packages,
                  std::vector<EnergyMeter::Zone>& dram, std::string& why) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        why = errno == ENOENT ? "no powercap on this machine (" + dir + " absent)"
                              : dir + ": " + std::strerror(errno);
        return;
    }
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        // intel-rapl:N (a package) and intel-rapl:N:M (its subzones); AMD Zen uses the same
        // driver and names. intel-rapl-mmio and other control types are left out.
        if (n.rfind("intel-rapl:", 0) == 0) names.push_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    if (names.empty()) {
        why = "no RAPL zones in " + dir + " (no intel-rapl:N entry)";
        return;
    }
    std::string firstError;
    for (const auto& n : names) {
        const std::string zone = dir + "/" + n;
        const bool sub = std::count(n.begin(), n.end(), ':') > 1;
        const auto name = readText(zone + "/name");
        if (!name) {
            if (firstError.empty()) firstError = powercapUnreadable(zone + "/name", errno);
            continue;
        }
        EnergyMeter::Zone z;
        z.path = zone;
        z.name = trim(*name);
        if (sub && z.name != "dram") continue;  // core / uncore are inside the package
        const auto range = readText(zone + "/max_energy_range_uj");
        const auto max = range ? parsePowercapNumber(*range) : std::nullopt;
        if (!max) {
            if (firstError.empty())
                firstError = range ? zone + "/max_energy_range_uj: not a number (\"" + trim(range->substr(0, 40)) + "\")"
                                   : powercapUnreadable(zone + "/max_energy_range_uj", errno);
            continue;
        }
        z.max_range_uj = *max;
        const std::string file = zone + "/energy_uj";
        z.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
        if (z.fd < 0) {
            if (firstError.empty()) firstError = powercapUnreadable(file, errno);
            continue;
        }
        if (!preadNumber(z.fd)) {
            if (firstError.empty()) {
                const auto text = readText(file);
                firstError = file + ": not a number (\"" + trim(text ? text->substr(0, 40) : "") + "\")";
            }
            ::close(z.fd);
            continue;
        }
        (sub ? dram : packages).push_back(z);
    }
    if (packages.empty()) why = firstError.empty() ? "no RAPL package zone in " + dir : firstError;
}

EnergyMeter& EnergyMeter::instance() {
    static EnergyMeter meter;
    return meter;
}

EnergyMeter::EnergyMeter() {
    const auto& nvml = Nvml::instance();
    if (!nvml.available()) gpuWhyNot_ = nvml.whyNot();
    else if (nvml.deviceCount() == 0) gpuWhyNot_ = "NVML lists no GPU";
    const char* env = std::getenv("PITLANE_POWERCAP_DIR");
    openPowercap(env && *env ? env : "/sys/class/powercap", cpu_, dram_, raplWhyNot_);
    lastCpu_.resize(cpu_.size());
    lastDram_.resize(dram_.size());
}

void EnergyMeter::useGpu(int index) {
    gpu_ = -1;
    lastGpu_ = {};
    const auto& nvml = Nvml::instance();
    if (!nvml.available() || index < 0 || unsigned(index) >= nvml.deviceCount()) {
        if (nvml.available() && index >= 0)
            gpuWhyNot_ = "NVML has no GPU " + std::to_string(index);
        return;
    }
    unsigned long long mj = 0;
    std::string why;
    if (!nvml.energyMj(unsigned(index), mj, &why)) {
        gpuWhyNot_ = "gpu " + std::to_string(index) + " (" + nvml.deviceName(unsigned(index)) +
                     ") has no energy counter: " + why;
        return;
    }
    gpu_ = index;
    gpuWhyNot_.clear();
}

bool EnergyMeter::any() const { return gpu_ >= 0 || !cpu_.empty(); }

EnergyReading EnergyMeter::read() {
    EnergyReading r;
    r.t_ns = nowNs();
    if (gpu_ >= 0) {
        unsigned long long mj = 0;
        std::string why;
        if (Nvml::instance().energyMj(unsigned(gpu_), mj, &why)) {
            r.gpu_mj = mj;
            track(mj, r.t_ns, lastGpu_.seen, lastGpu_.value, lastGpu_.changed_ns,
                  "gpu " + std::to_string(gpu_), r.stalls);
        } else {
            r.stalls.push_back("gpu " + std::to_string(gpu_) + ": " + why);
        }
    }
    auto zones = [&](std::vector<Zone>& list, std::vector<Last>& last,
                     std::vector<std::optional<std::uint64_t>>& out) {
        for (std::size_t i = 0; i < list.size(); ++i) {
            const auto v = preadNumber(list[i].fd);
            out.push_back(v);
            if (v) track(*v, r.t_ns, last[i].seen, last[i].value, last[i].changed_ns, list[i].name, r.stalls);
            else r.stalls.push_back(list[i].path + "/energy_uj: unreadable or not a number");
        }
    };
    zones(cpu_, lastCpu_, r.cpu_uj);
    zones(dram_, lastDram_, r.dram_uj);
    return r;
}

EnergyDelta EnergyMeter::delta(const EnergyReading& a, const EnergyReading& b) const {
    EnergyDelta d;
    d.window_ms = double(b.t_ns - a.t_ns) / 1e6;
    d.stalls = a.stalls;
    d.stalls.insert(d.stalls.end(), b.stalls.begin(), b.stalls.end());
    // NVML's counter is an unsigned 64-bit count of mJ: the difference modulo 2^64 is right
    // across a wrap.
    if (a.gpu_mj && b.gpu_mj) d.gpu_mj = double(*b.gpu_mj - *a.gpu_mj);
    auto sum = [&](const std::vector<Zone>& zones, const std::vector<std::optional<std::uint64_t>>& x,
                   const std::vector<std::optional<std::uint64_t>>& y) -> std::optional<double> {
        if (zones.empty() || x.size() != zones.size() || y.size() != zones.size()) return std::nullopt;
        double uj = 0;
        for (std::size_t i = 0; i < zones.size(); ++i) {
            if (!x[i] || !y[i]) return std::nullopt;
            uj += double(raplDelta(*x[i], *y[i], zones[i].max_range_uj));
        }
        return uj / 1e3;
    };
    d.cpu_mj = sum(cpu_, a.cpu_uj, b.cpu_uj);
    d.dram_mj = sum(dram_, a.dram_uj, b.dram_uj);
    // Over 10 kW in a window: the counter went back or jumped (a driver reload), not energy.
    auto plausible = [&](std::optional<double>& mj, const char* what) {
        if (mj && d.window_ms > 0 && *mj / d.window_ms > 10000) {
            d.stalls.push_back(std::string(what) + ": the counter jumped by " + std::to_string(*mj / 1e3) +
                               " J in " + std::to_string(d.window_ms) + " ms (reset or reload?)");
            mj.reset();
        }
    };
    plausible(d.gpu_mj, "gpu");
    plausible(d.cpu_mj, "cpu");
    plausible(d.dram_mj, "dram");
    return d;
}

nlohmann::json EnergyMeter::describe() const {
    nlohmann::json j = nlohmann::json::object();
    const auto& nvml = Nvml::instance();
    if (gpu_ >= 0) {
        std::string device = "gpu " + std::to_string(gpu_);
        if (nvml.fake()) device += " (fake)";
        j["gpu"] = {{"source", "nvml"}, {"device", device}, {"name", nvml.deviceName(unsigned(gpu_))},
                    {"index", gpu_}, {"resolution_ms", 100},
                    {"counter", "nvmlDeviceGetTotalEnergyConsumption"}, {"library", nvml.library()}};
    } else {
        j["gpu"] = {{"unavailable", gpuWhyNot_.empty() ? "no GPU selected" : gpuWhyNot_}};
    }
    auto zones = [](const std::vector<Zone>& list) {
        std::string device, paths;
        nlohmann::json z = nlohmann::json::array();
        for (const auto& zone : list) {
            device += (device.empty() ? "" : " + ") + zone.name;
            z.push_back({{"path", zone.path}, {"name", zone.name}, {"max_energy_range_uj", zone.max_range_uj}});
        }
        return nlohmann::json{{"source", "rapl"}, {"device", device}, {"resolution_ms", 1}, {"zones", z}};
    };
    if (!cpu_.empty()) j["cpu"] = zones(cpu_);
    else j["cpu"] = {{"unavailable", raplWhyNot_}};
    if (!dram_.empty()) j["dram"] = zones(dram_);
    else if (!cpu_.empty()) j["dram"] = {{"unavailable", "no dram zone in the RAPL packages"}};
    return j;
}

nlohmann::json EnergyMeter::measureIdle(int cooldownMs, int windowMs) {
    nlohmann::json idle = {{"cooldown_ms", cooldownMs}};
    if (!any()) return idle;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::max(0, cooldownMs)));
    const auto a = read();
    std::this_thread::sleep_for(std::chrono::milliseconds(std::max(1, windowMs)));
    const auto b = read();
    const auto d = delta(a, b);
    idle["window_ms"] = d.window_ms;
    if (d.gpu_mj) idle["gpu_w"] = *d.gpu_mj / d.window_ms;
    if (d.cpu_mj) idle["cpu_w"] = *d.cpu_mj / d.window_ms;
    if (d.dram_mj) idle["dram_w"] = *d.dram_mj / d.window_ms;
    if (!d.stalls.empty()) idle["stalls"] = d.stalls;
    return idle;
}

}  // namespace pitlane::engine
