#pragma once
// Shared by the stats tests: portable generators for synthetic latency data.
#include <cmath>
#include <random>

namespace pitlane::stats::testing {

// Portable generators for synthetic data (std:: distributions are implementation-defined).
inline double uniform01(std::mt19937_64& rng) {
    return (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53;
}
inline double normal01(std::mt19937_64& rng) {
    const double u1 = uniform01(rng);
    const double u2 = uniform01(rng);
    const double twoPi = 6.283185307179586;
    return std::sqrt(-2 * std::log(u1)) * std::cos(twoPi * u2);
}

}  // namespace pitlane::stats::testing
