#include "pitlane/stats/stats.h"

#include <cmath>
#include <cstdio>

namespace pitlane::stats {

SteadyState detectSteadyState(const std::vector<double>& warmup, double reference,
                              double tolerance, int window) {
    SteadyState s;
    s.reference = reference;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "first warmup iteration from which every window of %d has its median within "
                  "%.0f%% of the measured median",
                  window, tolerance * 100);
    s.rule = buf;
    const int n = static_cast<int>(warmup.size());
    if (reference <= 0 || n == 0) return s;
    const int w = std::max(1, std::min(window, n));
    auto within = [&](int start) {
        std::vector<double> win(warmup.begin() + start, warmup.begin() + start + w);
        return std::fabs(median(win) / reference - 1.0) <= tolerance;
    };
    // Scan from the end: the steady state starts after the last window that is out of bounds.
    int firstGood = n - w + 1;
    for (int i = n - w; i >= 0; --i) {
        if (!within(i)) break;
        firstGood = i;
    }
    if (firstGood <= n - w) {
        s.settled = true;
        s.index = firstGood;
    }
    return s;
}

}  // namespace pitlane::stats
