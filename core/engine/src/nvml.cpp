#include "pitlane/engine/nvml.h"

#include <dlfcn.h>

#include <cstdlib>

namespace pitlane::engine {

namespace {
// The subset of nvml.h we use, declared here so no NVIDIA header is needed to build.
using nvmlDevice_t = void*;
using nvmlReturn_t = int;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
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
    // Optional (issue 46): absent from old drivers.
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
    const char* (*errorString)(nvmlReturn_t) = nullptr;
    std::string error(nvmlReturn_t rc) const {
        const char* s = errorString ? errorString(rc) : nullptr;
        return s ? std::string(s) : "NVML error " + std::to_string(rc);
    }
};

Nvml& Nvml::instance() {
    static Nvml nvml;
    return nvml;
}

Nvml::Nvml() {
    // Tests point PITLANE_NVML_LIBRARY at Pitlane's fake NVML (tests/energy/fake_nvml.cpp).
    if (const char* env = std::getenv("PITLANE_NVML_LIBRARY"); env && *env) library_ = env;
    lib_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
        if (library_ == "libnvidia-ml.so.1")
            whyNot_ = "no NVML (libnvidia-ml.so.1 not found: no NVIDIA driver on this machine)";
        else
            whyNot_ = "no NVML (PITLANE_NVML_LIBRARY " + library_ + ": " + std::string(dlerror()) + ")";
        return;
    }
    fake_ = dlsym(lib_, "pitlane_fake_nvml") != nullptr;
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
        whyNot_ = "no NVML (" + library_ + " lacks expected symbols)";
        delete api;
        return;
    }
    sym(api->energy, "nvmlDeviceGetTotalEnergyConsumption");
    sym(api->errorString, "nvmlErrorString");
    if (const nvmlReturn_t rc = api->init(); rc != NVML_SUCCESS) {
        whyNot_ = fake_ ? "no NVML (fake NVML " + library_ + ": " + api->error(rc) + ")"
                        : "no NVML (nvmlInit failed: " + api->error(rc) + "; driver not loaded?)";
        delete api;
        return;
    }
    api_ = api;
    available_ = true;
}

unsigned int Nvml::deviceCount() const {
    unsigned int count = 0;
    if (available_ && api_->deviceCount(&count) != NVML_SUCCESS) count = 0;
    return count;
}

std::string Nvml::deviceName(unsigned int index) const {
    nvmlDevice_t dev = nullptr;
    char name[96] = {};
    if (!available_ || api_->handleByIndex(index, &dev) != NVML_SUCCESS) return {};
    if (api_->name(dev, name, sizeof name) != NVML_SUCCESS) return {};
    return name;
}

bool Nvml::energyMj(unsigned int index, unsigned long long& mj, std::string* why) const {
    auto fail = [&](std::string reason) {
        if (why) *why = std::move(reason);
        return false;
    };
    if (!available_) return fail(whyNot_);
    if (!api_->energy)
        return fail(library_ + " has no nvmlDeviceGetTotalEnergyConsumption (driver too old)");
    nvmlDevice_t dev = nullptr;
    if (const nvmlReturn_t rc = api_->handleByIndex(index, &dev); rc != NVML_SUCCESS)
        return fail("nvmlDeviceGetHandleByIndex(" + std::to_string(index) + "): " + api_->error(rc));
    const nvmlReturn_t rc = api_->energy(dev, &mj);
    if (rc == NVML_ERROR_NOT_SUPPORTED)
        return fail("nvmlDeviceGetTotalEnergyConsumption: " + api_->error(rc) +
                    " (the energy counter needs a Volta or newer GPU)");
    if (rc != NVML_SUCCESS) return fail("nvmlDeviceGetTotalEnergyConsumption: " + api_->error(rc));
    return true;
}

nlohmann::json Nvml::manifest() const {
    if (!available_) return {{"status", whyNot_}};
    nlohmann::json m;
    if (fake_) m["fake"] = library_;
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
