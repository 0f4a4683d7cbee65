// A serving run's figures: points per offered rate, the capacity within the SLO, the search's
// next rate, and the bootstrap comparison of p99 / p50 against the baseline.
#include "pitlane/results/run_result.h"
#include "pitlane/results/serving_result.h"

#include "pitlane/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace pitlane::results {

bool ServingPoint::meetsSlo() const {
    if (pooled.slo_ms <= 0 || pooled.served == 0 || pooled.saturated) return false;
    return pooled.p99_ms <= pooled.slo_ms;
}

namespace {

// Points are keyed by (clients, rate): a search step at a listed rate joins that rate's point.
using PointKey = std::pair<int, double>;

PointKey keyOf(const ServingLevel& l) { return {l.clients, l.clients > 0 ? 0.0 : l.rate_per_s}; }

}  // namespace

std::vector<ServingPoint> servingPoints(const RunResult& run, std::size_t arm) {
    const auto& levels = run.arms.at(arm).serving;
    const double slo = run.preset.serving.slo_p99_ms;
    // key -> process -> that process's levels (its workers)
    std::map<PointKey, std::map<int, std::vector<const ServingLevel*>>> byKey;
    std::map<PointKey, bool> listed;
    for (const auto& l : levels) {
        if (!l.complete) continue;
        byKey[keyOf(l)][l.process].push_back(&l);
        listed[keyOf(l)] = listed[keyOf(l)] || l.level >= 0;
    }
    std::vector<ServingPoint> out;
    for (const auto& [key, procs] : byKey) {
        ServingPoint p;
        p.clients = key.first;
        p.rate_per_s = key.first > 0 ? 0 : key.second;
        p.search = !listed[key];
        std::vector<const serving::LevelRecord*> all;
        std::vector<serving::LoadSpec> allSpecs;
        for (const auto& [proc, ls] : procs) {
            std::vector<const serving::LevelRecord*> recs;
            std::vector<serving::LoadSpec> specs;
            for (const auto* l : ls) {
                recs.push_back(&l->record);
                specs.push_back(l->load);
            }
            p.processes.push_back(serving::summarizePooled(recs, specs, slo, /*parallel=*/true));
            if (p.processes.back().meets_slo()) ++p.meeting_slo;
        }
        // Pooled over processes: each process's workers add up, the processes are repeats.
        for (const auto& [proc, ls] : procs)
            for (const auto* l : ls) {
                all.push_back(&l->record);
                allSpecs.push_back(l->load);
            }
        p.pooled = serving::summarizePooled(all, allSpecs, slo, true);
        const double nProc = double(procs.size());
        p.pooled.offered_per_s /= nProc;
        p.pooled.achieved_per_s /= nProc;
        for (const auto& s : p.processes) p.pooled.saturated = p.pooled.saturated || s.saturated;
        out.push_back(std::move(p));
    }
    return out;
}

SloCapacity sloCapacity(const std::vector<ServingPoint>& points) {
    SloCapacity c;
    for (const auto& p : points) {
        if (p.clients > 0 || p.pooled.slo_ms <= 0) continue;
        if (p.meetsSlo()) {
            if (c.first_failing_per_s == 0) c.max_rate_per_s = p.rate_per_s;
        } else if (c.first_failing_per_s == 0) {
            c.first_failing_per_s = p.rate_per_s;
        }
    }
    return c;
}

double nextSearchRate(const std::vector<ServingPoint>& points) {
    double lowest = 0;
    for (const auto& p : points)
        if (p.clients == 0 && (lowest == 0 || p.rate_per_s < lowest)) lowest = p.rate_per_s;
    if (lowest == 0) return 0;
    const SloCapacity c = sloCapacity(points);
    double next = 0;
    if (c.first_failing_per_s == 0) {
        double highest = 0;
        for (const auto& p : points) highest = std::max(highest, p.rate_per_s);
        next = 2 * highest;  // everything met it: look higher
    } else if (c.max_rate_per_s == 0) {
        next = c.first_failing_per_s / 2;  // nothing met it: look lower
        if (c.first_failing_per_s > lowest) next = lowest / 2;
    } else {
        if ((c.first_failing_per_s - c.max_rate_per_s) <= 0.02 * c.max_rate_per_s) return 0;
        next = (c.max_rate_per_s + c.first_failing_per_s) / 2;
    }
    // Three significant digits: the rate is written in tables and the history.
    const double mag = std::pow(10.0, std::floor(std::log10(next)) - 2);
    next = std::round(next / mag) * mag;
    return next >= 0.01 && next <= 1e6 ? next : 0;
}

RatioCi percentileRatioCi(const std::vector<std::vector<std::vector<double>>>& a,
                          const std::vector<std::vector<std::vector<double>>>& b, double q,
                          int resamples, std::uint64_t seed) {
    RatioCi out;
    auto pooledPercentile = [q](const std::vector<std::vector<std::vector<double>>>& procs) {
        std::vector<double> all;
        for (const auto& p : procs)
            for (const auto& w : p) all.insert(all.end(), w.begin(), w.end());
        return all.empty() ? 0.0 : stats::percentile(all, q);
    };
    const double pa = pooledPercentile(a), pb = pooledPercentile(b);
    if (pa <= 0 || pb <= 0) return out;
    out.ratio = pb / pa;
    std::mt19937_64 rng(seed);
    // One resample of an arm: R processes drawn with replacement; within each, its workers'
    // requests redrawn as blocks of consecutive requests (circular, ~20 blocks per worker).
    std::vector<double> buf;
    auto resample = [&](const std::vector<std::vector<std::vector<double>>>& procs) {
        buf.clear();
        std::uniform_int_distribution<std::size_t> pickProc(0, procs.size() - 1);
        for (std::size_t r = 0; r < procs.size(); ++r) {
            for (const auto& w : procs[pickProc(rng)]) {
                const std::size_t n = w.size();
                if (n == 0) continue;
                const std::size_t len = std::max<std::size_t>(1, n / 20);
                std::uniform_int_distribution<std::size_t> pickStart(0, n - 1);
                for (std::size_t got = 0; got < n;) {
                    const std::size_t s = pickStart(rng);
                    for (std::size_t k = 0; k < len && got < n; ++k, ++got) buf.push_back(w[(s + k) % n]);
                }
            }
        }
        if (buf.empty()) return 0.0;
        const double pos = q / 100.0 * double(buf.size() - 1);
        const auto lo = std::size_t(std::floor(pos));
        std::nth_element(buf.begin(), buf.begin() + std::ptrdiff_t(lo), buf.end());
        const double v0 = buf[lo];
        if (lo + 1 >= buf.size()) return v0;
        const double v1 = *std::min_element(buf.begin() + std::ptrdiff_t(lo) + 1, buf.end());
        return v0 + (pos - double(lo)) * (v1 - v0);
    };
    std::vector<double> ratios;
    ratios.reserve(std::size_t(resamples));
    for (int i = 0; i < resamples; ++i) {
        const double ra = resample(a);
        const double rb = resample(b);
        if (ra > 0 && rb > 0) ratios.push_back(rb / ra);
    }
    if (ratios.empty()) return out;
    std::sort(ratios.begin(), ratios.end());
    out.lo = stats::percentileSorted(ratios, 2.5);
    out.hi = stats::percentileSorted(ratios, 97.5);
    return out;
}

namespace {

// Per process, per worker: end-to-end latencies (ms) in arrival order, at one point.
std::vector<std::vector<std::vector<double>>> latenciesAt(const ArmResult& arm, const ServingLevel& like) {
    std::map<int, std::vector<std::vector<double>>> byProc;
    for (const auto& l : arm.serving) {
        if (!l.complete || keyOf(l) != keyOf(like)) continue;
        std::vector<double> ms;
        for (const auto& t : serving::requestTimes(l.record)) ms.push_back(double(t.end_to_end) / 1e6);
        byProc[l.process].push_back(std::move(ms));
    }
    std::vector<std::vector<std::vector<double>>> out;
    for (auto& [p, ws] : byProc) out.push_back(std::move(ws));
    return out;
}

// `digits` significant digits, never an exponent: whole numbers from 10^digits up.
std::string fmt(double v, int digits = 3) {
    char buf[64];
    if (std::fabs(v) >= std::pow(10.0, digits))
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

std::string levelName(double rate, int clients) {
    return clients > 0 ? std::to_string(clients) + " clients" : fmt(rate, 4) + " req/s";
}

}  // namespace

std::vector<ServingComparison> compareServing(const RunResult& run) {
    std::vector<ServingComparison> out;
    if (!run.preset.serving.enabled || run.arms.size() < 2) return out;
    const auto& base = run.arms.front();
    if (base.status != kOk && base.status != kCancelled) return out;
    for (std::size_t i = 1; i < run.arms.size(); ++i) {
        const auto& arm = run.arms[i];
        if (arm.status != kOk && arm.status != kCancelled) continue;
        const auto basePoints = servingPoints(run, 0);
        const auto armPoints = servingPoints(run, i);
        for (const auto& bp : basePoints) {
            if (bp.search) continue;
            const auto ap = std::find_if(armPoints.begin(), armPoints.end(), [&](const ServingPoint& p) {
                return !p.search && p.clients == bp.clients && p.rate_per_s == bp.rate_per_s;
            });
            if (ap == armPoints.end()) continue;
            ServingLevel like;
            like.clients = bp.clients;
            like.rate_per_s = bp.rate_per_s;
            ServingComparison c;
            c.arm = i;
            c.baseline = 0;
            c.rate_per_s = bp.rate_per_s;
            c.clients = bp.clients;
            c.arm_saturated = ap->pooled.saturated;
            c.baseline_saturated = bp.pooled.saturated;
            const auto la = latenciesAt(base, like), lb = latenciesAt(arm, like);
            const std::uint64_t seed = run.preset.run.seed * 1000003ULL + i * 7919ULL +
                                       std::uint64_t(bp.rate_per_s * 100) + std::uint64_t(bp.clients);
            const RatioCi p99 = percentileRatioCi(la, lb, 99, 400, seed);
            const RatioCi p50 = percentileRatioCi(la, lb, 50, 400, seed + 1);
            c.p99_ratio = p99.ratio, c.p99_lo = p99.lo, c.p99_hi = p99.hi;
            c.p50_ratio = p50.ratio, c.p50_lo = p50.lo, c.p50_hi = p50.hi;
            const std::string at = "at " + levelName(c.rate_per_s, c.clients) + ": ";
            const std::string& an = arm.name;
            const std::string& bn = base.name;
            if (c.arm_saturated != c.baseline_saturated) {
                c.significant = true;
                const auto& sat = c.arm_saturated ? an : bn;
                const auto& ok = c.arm_saturated ? bn : an;
                const auto& okPoint = c.arm_saturated ? bp : *ap;
                c.text = at + sat + " saturated (its queue grew without bound); " + ok +
                         " kept up, p99 " + fmt(okPoint.pooled.p99_ms) + " ms";
            } else if (c.arm_saturated) {
                c.text = at + "both saturated";
            } else {
                c.significant = c.p99_lo > 1 || c.p99_hi < 1;
                const std::string ci = "95 % CI " + fmt(c.p99_lo) + "-" + fmt(c.p99_hi) + "; " +
                                       fmt(ap->pooled.p99_ms) + " ms vs " + fmt(bp.pooled.p99_ms) + " ms)";
                c.text = c.significant ? at + an + "'s p99 is " + fmt(c.p99_ratio) + "x " + bn + "'s (" + ci
                                       : at + "no significant difference in p99 (" + an + "/" + bn + " " +
                                             fmt(c.p99_ratio) + "x, " + ci;
            }
            out.push_back(std::move(c));
        }
    }
    return out;
}

std::vector<std::string> servingVerdict(const RunResult& run) {
    std::vector<std::string> lines;
    if (!run.preset.serving.enabled) return lines;
    const double slo = run.preset.serving.slo_p99_ms;
    if (slo > 0 && run.preset.serving.arrival != "closed") {
        std::string line = "Highest rate with p99 <= " + fmt(slo) + " ms:";
        std::vector<double> caps;
        for (std::size_t i = 0; i < run.arms.size(); ++i) {
            const SloCapacity c = sloCapacity(servingPoints(run, i));
            caps.push_back(c.max_rate_per_s);
            line += (i ? "; " : " ") + run.arms[i].name + " ";
            if (!c.measured())
                line += "not measured";
            else if (c.max_rate_per_s == 0)
                line += "none (missed at " + fmt(c.first_failing_per_s, 4) + " req/s, the lowest measured)";
            else if (c.first_failing_per_s == 0)
                line += "at least " + fmt(c.max_rate_per_s, 4) + " req/s (met at every rate measured)";
            else
                line += fmt(c.max_rate_per_s, 4) + " req/s (missed at " + fmt(c.first_failing_per_s, 4) + ")";
        }
        lines.push_back(line);
        // A ratio only where the baseline's capacity is bounded (it missed at some rate); "at
        // least" where the arm met the SLO at every rate measured.
        const SloCapacity base = sloCapacity(servingPoints(run, 0));
        for (std::size_t i = 1; i < caps.size(); ++i) {
            const SloCapacity c = sloCapacity(servingPoints(run, i));
            if (caps[0] <= 0 || caps[i] <= 0 || base.first_failing_per_s == 0) continue;
            lines.push_back(run.arms[i].name + " sustains " +
                            (c.first_failing_per_s == 0 ? std::string("at least ") : std::string()) +
                            fmt(caps[i] / caps[0]) + "x the rate of " + run.arms[0].name +
                            " within the SLO");
        }
    }
    for (const auto& c : compareServing(run)) lines.push_back(c.text);
    return lines;
}

}  // namespace pitlane::results
