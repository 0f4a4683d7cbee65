#pragma once
// A comparison in words: the method sentence and the verdict of compare() (compare.cpp computes
// the numbers, compare_text.cpp says what they mean). Internal to pitlane_stats.
#include "pitlane/stats/stats.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace pitlane::stats::detail {

// "95%" for 0.95.
std::string confidenceLabel(double confidence);

// Verdicts of a comparison that could not be computed.
std::string noSamplesVerdict(const std::string& baseline, const std::string& arm,
                             std::size_t baselineSamples, std::size_t armSamples);
std::string nonPositiveMedianVerdict(const std::string& baseline, const std::string& arm,
                                     double baselineMedian, double armMedian);

// What the method sentence names: the bootstrap's design and the interval read from it.
struct MethodFacts {
    std::size_t processesA = 0, processesB = 0;  // worker processes of baseline and arm
    std::size_t blocksA = 0, blocksB = 0;        // their non-empty blocks
    bool pairedProcesses = false;                // the same replicate indices for both arms
    std::size_t units = 0;                       // independent units behind the CI
    const char* unit = "samples";                // "processes", "blocks" or "samples"
    double tail = 0;                             // expanded tail probability read
    bool widened = false;                        // widened to the log-normal interval
    std::string level;                           // confidenceLabel
    int resamples = 0;
    std::uint64_t seed = 0;
    double alpha = 0;
    std::size_t thinnedTo = 0;  // blocks above this many samples were thinned (0: none were)
};
std::string methodText(const MethodFacts& f);

// "B is 1.42x faster (95% CI 1.38-1.46)", "... slower ...", or "no significant difference ..."
// (saying why when one of the two tests finds a difference all the same: the CI excludes 1 but
// the rank test's p is not below alpha, or the pooled samples differ but the CI contains 1).
// `faster` / `slower`: the ratio and its CI lie on that side of 1.
std::string verdictText(const Comparison& c, bool faster, bool slower, const std::string& level,
                        double alpha);

}  // namespace pitlane::stats::detail
