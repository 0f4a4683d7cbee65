#pragma once
// Internal to the sandbox (sandbox.cpp applies it, sandbox_probes.cpp reads it back).
#include <nlohmann/json.hpp>

#include <string>

namespace pitlane::engine::sandbox_detail {

// "Operation not permitted (errno 1)".
std::string errnoText(int e);
// One "Name:\tvalue" line of /proc/self/status ("" when absent).
std::string procStatus(const std::string& name);
// What the sandbox refuses and allows, probed from inside the worker (applied.sandbox.read_back).
nlohmann::json readBack(const std::string& scratch);

}  // namespace pitlane::engine::sandbox_detail
