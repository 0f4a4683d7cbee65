// A fake NVML for tests only (issue 46, docs/ENERGY.md "Testing without a GPU"): a shared
// library exporting the NVML functions pitlane-worker calls (engine/src/nvml.cpp), selected by
// PITLANE_NVML_LIBRARY, with devices and energy counters scripted by the file named in
// PITLANE_FAKE_NVML_SCRIPT. No GPU is involved: the worker runs its model on the CPU and reads
// this counter as "gpu N (fake)".
//
// The script, one setting a line ('#' starts a comment):
//   device NAME              a device (index 0, 1, ... in order); the settings below are its own
//   energy none              it has no energy counter (NVML_ERROR_NOT_SUPPORTED)
//   idle_w W                 watts drawn at all times
//   busy_w W                 watts per core the calling process keeps busy (getrusage: user +
//                            system CPU time of the whole process)
//   granularity_ms N         the counter changes at most once per N ms since nvmlInit (0: at
//                            every read), as NVML's updates about every 100 ms
//   start_mj N               the counter at nvmlInit (near 2^64 to make it wrap)
//   stall_after_reads N      after N reads the counter stops advancing, for good
//   wrap_at_read N           at the N-th read the counter is set to 2^64 - 1, as if it had
//                            counted that far, so the next reading has wrapped past 0 (a test
//                            picks N as the first reading of a window; the jump to 2^64 - 1 falls
//                            between two windows)
// So the counter of a device is start_mj + idle_w * (t - t_init) [ms] + busy_w * (cpu - cpu_init)
// [ms] in mJ, published at the granularity, modulo 2^64. A malformed script makes nvmlInit_v2
// fail with NVML_ERROR_UNKNOWN, and nvmlErrorString says the file, the line and why.
#include <sys/resource.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3,
              kUnknown = 999;

struct Device {
    std::string name;
    bool energy = true;
    double idle_w = 0, busy_w = 0, granularity_ms = 0;
    unsigned long long start_mj = 0;
    long long stall_after_reads = -1, wrap_at_read = -1;
    // State.
    long long reads = 0;
    long long lastTick = 0;
    unsigned long long published = 0;
};

std::mutex mu;
std::vector<Device> devices;
bool initialized = false;
std::string initError;
double t0Ms = 0, cpu0Ms = 0;

double monoMs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

double cpuMs() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

bool number(const std::string& text, double& out) {
    char* end = nullptr;
    errno = 0;
    out = std::strtod(text.c_str(), &end);
    return !text.empty() && end && *end == '\0' && errno == 0 && std::isfinite(out) && out >= 0;
}

bool unsignedNumber(const std::string& text, unsigned long long& out) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
    errno = 0;
    out = std::strtoull(text.c_str(), nullptr, 10);
    return errno == 0;
}

std::string loadScript(const char* path) {
    if (!path || !*path) return "PITLANE_FAKE_NVML_SCRIPT is not set";
    std::ifstream in(path);
    if (!in) return std::string("script ") + path + ": cannot be read (" + std::strerror(errno) + ")";
    std::string line;
    int n = 0;
    auto bad = [&](const std::string& why) {
        return std::string("script ") + path + ": line " + std::to_string(n) + ": " + why;
    };
    while (std::getline(in, line)) {
        ++n;
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::istringstream words(line);
        std::string key;
        if (!(words >> key)) continue;
        std::string rest;
        std::getline(words, rest);
        rest.erase(0, rest.find_first_not_of(" \t"));
        while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r')) rest.pop_back();
        if (key == "device") {
            if (rest.empty()) return bad("device needs a name");
            devices.push_back(Device{});
            devices.back().name = rest;
            continue;
        }
        if (devices.empty()) return bad("\"" + key + "\" before any device line");
        Device& d = devices.back();
        double v = 0;
        unsigned long long u = 0;
        if (key == "energy") {
            if (rest != "none" && rest != "yes") return bad("energy must be none or yes, not \"" + rest + "\"");
            d.energy = rest == "yes";
        } else if (key == "idle_w" || key == "busy_w" || key == "granularity_ms") {
            if (!number(rest, v)) return bad(key + " needs a number >= 0, not \"" + rest + "\"");
            (key == "idle_w" ? d.idle_w : key == "busy_w" ? d.busy_w : d.granularity_ms) = v;
        } else if (key == "start_mj") {
            if (!unsignedNumber(rest, u)) return bad("start_mj needs an unsigned integer, not \"" + rest + "\"");
            d.start_mj = u;
        } else if (key == "wrap_at_read") {
            if (!unsignedNumber(rest, u) || u == 0) return bad("wrap_at_read needs an integer >= 1, not \"" + rest + "\"");
            d.wrap_at_read = (long long)u;
        } else if (key == "stall_after_reads") {
            if (!unsignedNumber(rest, u)) return bad("stall_after_reads needs an unsigned integer, not \"" + rest + "\"");
            d.stall_after_reads = (long long)u;
        } else {
            return bad("unknown setting \"" + key + "\"");
        }
    }
    if (devices.empty()) return std::string("script ") + path + ": no device line";
    return {};
}

// mJ drawn since nvmlInit (a double: the counter adds it modulo 2^64).
double drawnMj(const Device& d, double tMs, double cpu) {
    return d.idle_w * (tMs - t0Ms) + d.busy_w * (cpu - cpu0Ms);
}

Device* deviceOf(void* handle) {
    const auto i = reinterpret_cast<std::uintptr_t>(handle);
    return i >= 1 && i <= devices.size() ? &devices[i - 1] : nullptr;
}

}  // namespace

extern "C" {

// Marks this library as Pitlane's fake (the worker says "gpu N (fake)").
__attribute__((visibility("default"))) int pitlane_fake_nvml() { return 1; }

__attribute__((visibility("default"))) int nvmlInit_v2() {
    std::lock_guard<std::mutex> lock(mu);
    if (initialized) return kSuccess;
    devices.clear();
    initError = loadScript(std::getenv("PITLANE_FAKE_NVML_SCRIPT"));
    if (!initError.empty()) return kUnknown;
    t0Ms = monoMs();
    cpu0Ms = cpuMs();
    for (auto& d : devices) d.published = d.start_mj;
    initialized = true;
    return kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(int rc) {
    switch (rc) {
        case kSuccess: return "Success";
        case kUninitialized: return "Uninitialized";
        case kInvalidArgument: return "Invalid Argument";
        case kNotSupported: return "Not Supported";
        default: return initError.empty() ? "Unknown Error" : initError.c_str();
    }
}

__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned int* count) {
    if (!initialized) return kUninitialized;
    if (!count) return kInvalidArgument;
    *count = unsigned(devices.size());
    return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** handle) {
    if (!initialized) return kUninitialized;
    if (!handle || i >= devices.size()) return kInvalidArgument;
    *handle = reinterpret_cast<void*>(std::uintptr_t(i) + 1);
    return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTotalEnergyConsumption(void* handle, unsigned long long* mj) {
    std::lock_guard<std::mutex> lock(mu);
    Device* d = deviceOf(handle);
    if (!d || !mj) return kInvalidArgument;
    if (!d->energy) return kNotSupported;
    ++d->reads;
    const bool stalled = d->stall_after_reads >= 0 && d->reads > d->stall_after_reads;
    if (!stalled) {
        const double t = monoMs();
        const long long tick = d->granularity_ms > 0 ? (long long)((t - t0Ms) / d->granularity_ms) : d->reads;
        const double drawn = drawnMj(*d, t, cpuMs());
        if (d->reads == d->wrap_at_read) {
            d->start_mj = ~0ull - (unsigned long long)std::llround(drawn);  // unsigned: modulo 2^64
            d->lastTick = tick - 1;
        }
        if (tick != d->lastTick) {
            d->lastTick = tick;
            d->published = d->start_mj + (unsigned long long)std::llround(drawn);
        }
    }
    *mj = d->published;
    return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void* handle, unsigned int* u) {
    if (!deviceOf(handle) || !u) return kInvalidArgument;
    u[0] = 0;
    u[1] = 0;
    return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* handle, unsigned long long* m) {
    if (!deviceOf(handle) || !m) return kInvalidArgument;
    m[0] = 16ull << 30;  // total, free, used
    m[1] = 16ull << 30;
    m[2] = 0;
    return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(void* handle, int, unsigned int* v) {
    if (!deviceOf(handle) || !v) return kInvalidArgument;
    *v = 0;
    return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void* handle, unsigned int* mw) {
    Device* d = deviceOf(handle);
    if (!d || !mw) return kInvalidArgument;
    *mw = unsigned(std::llround(d->idle_w * 1000));
    return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(void* handle, int, unsigned int* c) {
    if (!deviceOf(handle) || !c) return kInvalidArgument;
    *c = 30;
    return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetName(void* handle, char* name, unsigned int len) {
    Device* d = deviceOf(handle);
    if (!d || !name || len == 0) return kInvalidArgument;
    std::snprintf(name, len, "%s", d->name.c_str());
    return kSuccess;
}

__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* v, unsigned int len) {
    if (!v || len == 0) return kInvalidArgument;
    std::snprintf(v, len, "%s", "fake-nvml (pitlane tests)");
    return kSuccess;
}

}  // extern "C"
