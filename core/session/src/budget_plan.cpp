// A run planned from a time budget (budget_plan.h).
#include "pitlane/session/budget_plan.h"

#include "pitlane/session/round_plan.h"
#include "pitlane/spec/run_limits.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace pitlane::session {

namespace {
std::string seconds(double ms) {
    std::ostringstream o;
    o << clockText(ms);
    return o.str();
}

std::string plural(int n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}
}  // namespace

VarianceSplit varianceSplit(const std::vector<stats::BlockedSamples>& arms) {
    VarianceSplit out;
    double iterSum = 0, procSum = 0;
    int used = 0;
    for (const auto& arm : arms) {
        // Each process's log latencies.
        std::map<int, std::vector<double>> byProcess;
        for (std::size_t b = 0; b < arm.blocks.size(); ++b)
            for (double v : arm.blocks[b])
                if (v > 0) byProcess[arm.processOf(b)].push_back(std::log(v));
        std::vector<double> means;
        double within = 0, dof = 0, count = 0;
        for (const auto& [p, xs] : byProcess) {
            if (xs.size() < 2) continue;
            double m = 0;
            for (double x : xs) m += x;
            m /= double(xs.size());
            for (double x : xs) within += (x - m) * (x - m);
            dof += double(xs.size()) - 1;
            count += double(xs.size());
            means.push_back(m);
        }
        if (means.size() < 2 || dof <= 0) continue;
        const double ti2 = within / dof;
        double mm = 0;
        for (double m : means) mm += m;
        mm /= double(means.size());
        double sp2 = 0;
        for (double m : means) sp2 += (m - mm) * (m - mm);
        sp2 /= double(means.size()) - 1;
        const double nbar = count / double(means.size());
        const double tp2 = std::max(sp2 - ti2 / nbar, 0.01 * ti2 / nbar);
        iterSum += ti2;
        procSum += tp2;
        out.processes = used == 0 ? int(means.size()) : std::min(out.processes, int(means.size()));
        ++used;
    }
    if (used == 0 || procSum <= 0) return out;
    out.iterationVar = iterSum;
    out.processVar = procSum;
    out.ratio = iterSum / procSum;
    return out;
}

RoundCosts roundCosts(const spec::Preset& preset, const ObservedCosts& costs, int round, int warmupIters) {
    RoundCosts out;
    RemainingInput in;
    for (const auto& a : preset.arms) in.workers.push_back(std::max(1, a.knobs.workers));
    in.finalAnalysis = false;
    in.pending = planRound(preset, round, 0, {}, true, 0, warmupIters);
    const RemainingTime setup = estimateRemaining(in, costs);
    constexpr int kProbe = 100;
    in.pending = planRound(preset, round, 0, blocksOf(kProbe, preset.run.block_iters), true, 0, warmupIters);
    const RemainingTime full = estimateRemaining(in, costs);
    out.known = setup.known && full.known;
    out.setupMs = setup.lowMs;
    out.iterMs = std::max(0.0, (full.lowMs - setup.lowMs) / kProbe);
    return out;
}

LaterWarmup laterWarmupIters(int asked, const std::vector<std::vector<double>>& warmups) {
    LaterWarmup out;
    out.iters = asked;
    if (asked <= kMinLaterWarmupIters) {
        out.reason = "the warmup asked is already the least a later round takes";
        return out;
    }
    int need = kMinLaterWarmupIters;
    std::string unjudged;
    for (std::size_t a = 0; a < warmups.size(); ++a) {
        const auto& w = warmups[a];
        const int n = int(w.size());
        int settled = -1;
        if (n >= kMinJudgedWarmup && n <= asked) {
            std::vector<double> tail(w.begin() + n / 2, w.end());
            std::nth_element(tail.begin(), tail.begin() + long(tail.size() / 2), tail.end());
            const double median = tail[tail.size() / 2];
            int s = 0;
            for (int i = 0; i < n; ++i)
                if (w[std::size_t(i)] > kWarmupSettledFactor * median) s = i + 1;
            if (s <= n / 2) settled = s;
        }
        out.settledAfter.push_back(settled);
        if (settled < 0) {
            if (unjudged.empty()) unjudged = "arm " + std::to_string(a + 1);
            continue;
        }
        need = std::max(need, settled + kWarmupMargin);
    }
    if (!unjudged.empty() || warmups.empty()) {
        out.reason = "as asked: " + (unjudged.empty() ? std::string("no warmup measured") : unjudged) +
                     "'s warmup in round 0 did not settle within its first half (or could not be judged)";
        return out;
    }
    out.iters = std::min(asked, need);
    std::ostringstream o;
    o << "round 0's warmups settled after ";
    for (std::size_t a = 0; a < out.settledAfter.size(); ++a)
        o << (a ? "/" : "") << out.settledAfter[a];
    o << " iterations (none later slower than " << kWarmupSettledFactor
      << "x the median of their second half): later rounds warm up " << out.iters << " of the " << asked
      << " asked";
    out.reason = o.str();
    return out;
}

int round0WarmupIters(int asked, double firstForwardMs, int budgetMs) {
    if (firstForwardMs <= 0 || budgetMs <= 0 || asked <= kMinJudgedWarmup) return asked;
    const int fit = int(std::ceil(kRound0WarmupShare * budgetMs / firstForwardMs));
    return std::min(asked, std::max(kMinJudgedWarmup, fit));
}

nlohmann::json LaterWarmup::toJson(int asked) const {
    return {{"asked", asked}, {"later_rounds", iters}, {"settled_after", settledAfter}, {"reason", reason}};
}

std::vector<int> blocksOf(int n, int blockIters) {
    if (n <= 0) return {};
    const int size = std::max(1, blockIters);
    const int count = (n + size - 1) / size;
    std::vector<int> out(std::size_t(count), n / count);
    for (int i = 0; i < n % count; ++i) ++out[std::size_t(i)];
    return out;
}

BudgetDesign designRounds(const BudgetInput& in) {
    BudgetDesign d;
    d.ratio = in.ratio;
    d.ratioSource = in.ratioSource;
    const double cp = std::max(in.costs.setupMs, 1.0);
    const double ci = std::max(in.costs.iterMs, 1e-3);
    const double left = double(in.budgetMs) - in.elapsedMs - in.queuedMs - in.analysisMs;
    const int open = in.firstRoundOpen ? 1 : 0;
    const int done = in.roundsPlanned;
    // Kalibera & Jones: the iterations per process that buy the most precision per unit of time.
    int n = int(std::lround(std::sqrt(cp / ci * std::max(in.ratio, 0.0))));
    n = std::clamp(n, kMinItersPerProcess, kMaxItersPerProcess);
    auto fits = [&](int iters) {
        const double rest = left - open * iters * ci;
        return rest < 0 ? -1 : int(std::floor(rest / (cp + iters * ci)));
    };
    int k = fits(n);
    const int least = std::max(0, spec::kBudgetMinProcesses - done - open);
    if (k < least) {
        // Fewer iterations per process before fewer processes: the CI's process level needs its
        // three (and a budget that cannot hold them at the least iterations is said so).
        const double room = left - least * cp;
        const int fit = room > 0 ? int(std::floor(room / ((open + least) * ci))) : 0;
        n = std::clamp(fit, kMinItersPerProcess, n);
        k = std::max(fits(n), 0);
        if (k < least) {
            d.overBudget = true;
            k = least;
        }
    }
    const int cap = std::max(in.maxProcesses, 1);
    if (done + open + k > cap) {
        // More processes fit than run.max_processes allows: the rest goes to iterations.
        k = std::max(0, cap - done - open);
        const int per = open + k;
        if (per > 0) {
            const double room = left - k * cp;
            const int more = room > 0 ? int(std::floor(room / (per * ci))) : n;
            n = std::clamp(std::max(n, more), kMinItersPerProcess, kMaxItersPerProcess);
        }
    }
    d.itersPerProcess = n;
    d.blocks = blocksOf(n, std::max(in.blockIters, (n + kMaxBlocksPerProcess - 1) / kMaxBlocksPerProcess));
    d.processes = done + open + k;
    d.roundMs = cp + n * ci;
    d.predictedMs = in.elapsedMs + in.queuedMs + open * n * ci + k * d.roundMs + in.analysisMs;
    return d;
}

nlohmann::json BudgetDesign::toJson() const {
    return {{"iters_per_process", itersPerProcess},
            {"blocks", blocks},
            {"processes", processes},
            {"round_ms", roundMs},
            {"predicted_ms", predictedMs},
            {"variance_ratio", ratio},
            {"variance_ratio_source", ratioSource},
            {"over_budget", overBudget}};
}

std::string budgetPlanText(int budgetMs) {
    return "budget " + seconds(budgetMs) +
           ": processes, blocks and iterations per arm planned from what the first forwards and "
           "set-ups cost (at least " + std::to_string(spec::kBudgetMinProcesses) + " processes)";
}

std::string designText(const BudgetDesign& d, int budgetMs) {
    std::ostringstream o;
    o << "planned: " << plural(d.processes, "process", "processes") << " x ";
    const auto [lo, hi] = std::minmax_element(d.blocks.begin(), d.blocks.end());
    if (d.blocks.empty())
        o << "0 iterations";
    else if (*lo == *hi)
        o << plural(int(d.blocks.size()), "block", "blocks") << " x " << plural(*lo, "iteration", "iterations");
    else
        o << d.blocks.size() << " blocks of " << *lo << "-" << *hi << " iterations";
    o << " per arm, about " << seconds(d.predictedMs) << " (budget " << seconds(budgetMs) << ")";
    if (d.overBudget)
        o << ": the budget holds fewer than " << spec::kBudgetMinProcesses
          << " processes, the least the CI's process level takes";
    return o.str();
}

}  // namespace pitlane::session
