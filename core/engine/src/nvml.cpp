#include "pitlane/engine/nvml.h"

#include <dlfcn.h>

namespace pitlane::engine {

namespace {
// The subset of nvml.h we use, declared here so no NVIDIA header is needed to build.
using nvmlDevice_t = void*;
using nvmlReturn_t = int;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
struct nvmlUtilization_t {
    unsigned int gpu, memory;
};
struct nvmlMemory_t {
    unsigned long long total, free, used;
};
constexpr int NVML_CLOCK_SM = 1;
constexpr int NVML_TEMPERATURE_GPU = 0;
}  // namespace

struct Nvml::Api {
    nvmlReturn_t (*init)();
    nvmlReturn_t (*deviceCount)(unsigned int*);
    nvmlReturn_t (*handleByIndex)(unsigned int, nvmlDevice_t*);
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int*);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*);
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*);
    nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int);
    nvmlReturn_t (*driverVersion)(char*, unsigned int);
};

Nvml& Nvml::instance() {
    static Nvml nvml;
    return nvml;
}

Nvml::Nvml() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
        whyNot_ = "no NVML (libnvidia-ml.so.1 not found: no NVIDIA driver on this machine)";
        return;
    }
    auto* api = new Api{};
    auto sym = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib_, name));
        return fn != nullptr;
    };
    const bool ok = sym(api->init, "nvmlInit_v2") && sym(api->deviceCount, "nvmlDeviceGetCount_v2") &&
                    sym(api->handleByIndex, "nvmlDeviceGetHandleByIndex_v2") &&
                    sym(api->utilization, "nvmlDeviceGetUtilizationRates") &&
                    sym(api->memory, "nvmlDeviceGetMemoryInfo") &&
                    sym(api->clock, "nvmlDeviceGetClockInfo") &&
                    sym(api->power, "nvmlDeviceGetPowerUsage") &&
                    sym(api->temperature, "nvmlDeviceGetTemperature") &&
                    sym(api->name, "nvmlDeviceGetName") &&
                    sym(api->driverVersion, "nvmlSystemGetDriverVersion");
    if (!ok) {
        whyNot_ = "no NVML (libnvidia-ml.so.1 lacks expected symbols)";
        delete api;
        return;
    }
    if (api->init() != NVML_SUCCESS) {
        whyNot_ = "no NVML (nvmlInit failed: driver not loaded?)";
        delete api;
        return;
    }
    api_ = api;
    available_ = true;
}

nlohmann::json Nvml::manifest() const {
    if (!available_) return {{"status", whyNot_}};
    nlohmann::json m;
    char buf[96] = {};
    if (api_->driverVersion(buf, sizeof buf) == NVML_SUCCESS) m["driver"] = buf;
    unsigned int count = 0;
    api_->deviceCount(&count);
    m["devices"] = nlohmann::json::array();
    for (unsigned int i = 0; i < count; ++i) {
        nvmlDevice_t dev = nullptr;
        if (api_->handleByIndex(i, &dev) != NVML_SUCCESS) continue;
        char name[96] = {};
        api_->name(dev, name, sizeof name);
        nvmlMemory_t mem{};
        api_->memory(dev, &mem);
        m["devices"].push_back({{"index", i}, {"name", name}, {"memory_total_bytes", mem.total}});
    }
    return m;
}

nlohmann::json Nvml::sample() const {
    nlohmann::json out = nlohmann::json::array();
    if (!available_) return out;
    unsigned int count = 0;
    api_->deviceCount(&count);
    for (unsigned int i = 0; i < count; ++i) {
        nvmlDevice_t dev = nullptr;
        if (api_->handleByIndex(i, &dev) != NVML_SUCCESS) continue;
        nlohmann::json g = {{"index", i}};
        nvmlUtilization_t u{};
        if (api_->utilization(dev, &u) == NVML_SUCCESS) {
            g["util_pct"] = u.gpu;
            g["mem_util_pct"] = u.memory;
        }
        nvmlMemory_t mem{};
        if (api_->memory(dev, &mem) == NVML_SUCCESS) {
            g["memory_used_bytes"] = mem.used;
            g["memory_total_bytes"] = mem.total;
        }
        unsigned int v = 0;
        if (api_->clock(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS) g["sm_clock_mhz"] = v;
        if (api_->power(dev, &v) == NVML_SUCCESS) g["power_w"] = v / 1000.0;
        if (api_->temperature(dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS) g["temperature_c"] = v;
        out.push_back(g);
    }
    return out;
}

}  // namespace pitlane::engine
