// The environment manifest's fields that describe the moment a worker started rather than the
// machine (its pid, hostname, the load average): the drift guard inside a run never compares
// them; `pitlane-cli compare`, across runs made at different times, reports the load average.
#pragma once

#include <string>
#include <vector>

#include "pitlane/results/run_result.h"

namespace pitlane::results {

// "pid", "hostname" and "load_average": fields that differ between any two worker processes.
bool momentField(const std::string& key);

// Two 1-minute load averages this far apart count as a difference (half a core kept busy).
inline constexpr double kLoadAverageDifference = 0.5;

// environmentDifferences plus the load average, which differs when the 1-minute figures are
// kLoadAverageDifference or more apart. `compared` tells whether both arms recorded one.
struct LoadAverageComparison {
    bool compared = false;
    bool differs = false;
    std::string first, other;  // the arms' load_average as JSON text, or "absent"
};
LoadAverageComparison compareLoadAverage(const ArmResult& first, const ArmResult& other);

}  // namespace pitlane::results
