#include "pitlane/serving/serve_loop.h"

#include <cmath>
#include <random>

namespace pitlane::serving {

const char* arrivalName(Arrival a) {
    switch (a) {
    case Arrival::Poisson: return "poisson";
    case Arrival::Constant: return "constant";
    case Arrival::Closed: return "closed";
    }
    return "?";
}

bool parseArrival(const std::string& name, Arrival* out) {
    for (Arrival a : {Arrival::Poisson, Arrival::Constant, Arrival::Closed})
        if (name == arrivalName(a)) return *out = a, true;
    return false;
}

const char* idleWaitName(IdleWait w) {
    return w == IdleWait::Spin ? "spin" : "sleep";
}

bool parseIdleWait(const std::string& name, IdleWait* out) {
    for (IdleWait w : {IdleWait::Sleep, IdleWait::Spin})
        if (name == idleWaitName(w)) return *out = w, true;
    return false;
}

std::vector<std::int64_t> openArrivals(const LoadSpec& spec) {
    std::vector<std::int64_t> out;
    if (spec.arrival == Arrival::Closed || !(spec.rate_per_s > 0)) return out;
    const double end_s = spec.duration_ms / 1e3;
    out.reserve(std::size_t(spec.rate_per_s * end_s * 1.1) + 16);
    if (spec.arrival == Arrival::Constant) {
        for (std::int64_t k = 0;; ++k) {
            const double t = double(k) / spec.rate_per_s;
            if (t >= end_s) break;
            out.push_back(std::int64_t(std::llround(t * 1e9)));
        }
        return out;
    }
    std::mt19937_64 rng(spec.seed);
    double t = 0;
    for (;;) {
        const double u = double(rng() >> 11) * 0x1.0p-53;  // [0, 1)
        t += -std::log1p(-u) / spec.rate_per_s;
        if (t >= end_s) break;
        out.push_back(std::int64_t(std::llround(t * 1e9)));
    }
    return out;
}

}  // namespace pitlane::serving
