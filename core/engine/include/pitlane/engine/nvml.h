#pragma once
// GPU telemetry through NVML, reached with dlopen("libnvidia-ml.so.1") and never linked, so the
// worker runs on machines without an NVIDIA driver. No torch, no Qt.
#include <nlohmann/json.hpp>

#include <string>

namespace pitlane::engine {

class Nvml {
public:
    static Nvml& instance();
    bool available() const { return available_; }
    const std::string& whyNot() const { return whyNot_; }  // "no NVML: ..." when unavailable
    // Devices, driver version (for the environment manifest).
    nlohmann::json manifest() const;
    // One reading per device: utilization, memory, SM clock, power, temperature.
    nlohmann::json sample() const;
    // Issue 46: the device's energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ since the
    // driver loaded, Volta and newer). False with `why` filled ("... Not Supported") otherwise.
    bool energyMj(unsigned int index, unsigned long long& mj, std::string* why = nullptr) const;
    unsigned int deviceCount() const;
    std::string deviceName(unsigned int index) const;
    // The library is PITLANE_NVML_LIBRARY's (tests: Pitlane's fake NVML) rather than the
    // driver's libnvidia-ml.so.1; `fake()`: it is the fake (it exports pitlane_fake_nvml).
    const std::string& library() const { return library_; }
    bool fake() const { return fake_; }

private:
    Nvml();
    bool available_ = false;
    std::string whyNot_;
    void* lib_ = nullptr;
    std::string library_ = "libnvidia-ml.so.1";
    bool fake_ = false;
    struct Api;
    Api* api_ = nullptr;
};

}  // namespace pitlane::engine
