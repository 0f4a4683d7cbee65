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

private:
    Nvml();
    bool available_ = false;
    std::string whyNot_;
    void* lib_ = nullptr;
    struct Api;
    Api* api_ = nullptr;
};

}  // namespace pitlane::engine
