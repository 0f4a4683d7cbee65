// Warnings about a run: an arm's worker processes that disagree or fault every iteration, noise,
// warmup that never settled, the reference BLAS, environments that differ between arms.
#include "pitlane/results/environment.h"
#include "pitlane/results/run_result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace pitlane::results {

namespace {
std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
    char buf[1024];
    std::snprintf(buf, sizeof buf, f, a, b, c, d);
    return buf;
}
}  // namespace

std::vector<std::string> processWarnings(const ArmResult& arm) {
    std::vector<std::string> out;
    const bool systemAllocator = spec::readBackOf(arm.applied.allocator, spec::Allocator::System) == spec::Allocator::System;
    const std::string tryAllocator =
        systemAllocator
            ? "add an arm with the knob allocator \"jemalloc\" or \"tcmalloc\" and compare (an "
              "A/B, not a rule: the effect differs by model)"
            : "compare allocators as arms (the effect differs by model)";
    std::vector<ProcessSummary> measured;
    for (const auto& p : processSummaries(arm))
        if (p.n > 0 && p.median_ns > 0) measured.push_back(p);
    if (measured.size() >= 2) {
        auto [mn, mx] = std::minmax_element(
            measured.begin(), measured.end(),
            [](const ProcessSummary& a, const ProcessSummary& b) { return a.median_ns < b.median_ns; });
        const double spread = mx->median_ns / mn->median_ns;
        if (spread > kProcessSpreadWarn) {
            const auto shares = varianceShares(arm);
            std::string w = arm.name + ": its " + std::to_string(measured.size()) +
                            " worker processes disagree: process medians range from " +
                            formatDuration(mn->median_ns) + " to " + formatDuration(mx->median_ns) +
                            fmt(" (%.2fx apart", spread);
            if (shares.computed)
                w += fmt("; %.0f%% of the variance of log latency lies between processes",
                         100 * shares.between_processes);
            w += "). The CI counts processes as its units, so it stays wide while they disagree.";
            // Issue 27: torch's default threads (every core) on a shared machine made processes
            // 100x apart; one thread per arm fixed it. That comes first when it applies.
            const int intra = arm.applied.intra_op_threads.value_or(0);
            // A package whose kernels run a compiled-in thread count: no knob reaches them.
            const json& package = arm.applied.extraField("package");
            const int compiled = package.is_object() && package.contains("kernel_threads") &&
                                         package["kernel_threads"].is_number_integer()
                                     ? package["kernel_threads"].get<int>()
                                     : 0;
            const std::string first =
                compiled > 1 && compiled != intra
                    ? fmt("compile the package with dynamic threads first (its own kernels run %.0f "
                          "OpenMP threads compiled into them, whatever intra_op_threads or affinity "
                          "say: knob inductor {\"dynamic_threads\": true}, or "
                          "torch._inductor.config.cpp.dynamic_threads = True), then ",
                          compiled)
                : intra > 1 ? fmt("set the knob intra_op_threads to 1 first (this arm ran %.0f "
                                "intra-op threads: threads that wait for each other under other "
                                "load are the commonest cause of processes %.2fx apart), then ",
                                intra, spread)
                          : std::string();
            // Pinning cannot reach a package's compiled-in threads: not advised for one.
            const std::string otherwise =
                compiled > 1 && compiled != intra
                    ? "look for other load on the machine, raise run.processes."
                    : "look for other load on the machine, pin threads (knob affinity), raise run.processes.";
            // Slow half against fast half (split at the geometric middle of the range).
            const double mid = std::sqrt(mn->median_ns * mx->median_ns);
            double slowF = 0, slowI = 0, fastF = 0, fastI = 0;
            for (const auto& p : measured) {
                if (p.info.fault_iters <= 0) continue;
                (p.median_ns > mid ? slowF : fastF) += double(p.info.minor_faults);
                (p.median_ns > mid ? slowI : fastI) += double(p.info.fault_iters);
            }
            if (slowI > 0 && fastI > 0) {
                const double slow = slowF / slowI, fast = fastF / fastI;
                if (slow >= kFaultsPerIterWarn && slow > 2 * fast + 1)
                    w += fmt(" Likely cause: the slow processes take %.0f minor page faults per "
                             "iteration against %.1f in the fast ones, so memory is handed back "
                             "to the OS and faulted in again every iteration (glibc malloc's "
                             "dynamic mmap threshold settles differently in each process). What "
                             "to do: ",
                             slow, fast) +
                         first + tryAllocator + ".";
                else
                    w += fmt(" Page faults do not explain it (%.1f vs %.1f per iteration in the "
                             "slow and fast processes). What to do: ",
                             slow, fast) +
                         first + otherwise;
            } else {
                w += " What to do: " + first + otherwise;
            }
            out.push_back(w);
        }
    }
    const double minor = minorFaultsPerIter(arm);
    // jemalloc with both decays off (Pitlane's MALLOC_CONF) gives no page back: its faults are
    // pages it uses for the first time, while its footprint grows (docs/KNOBS.md, "jemalloc's
    // page faults": 13-91 per iteration in a fresh process's first few hundred forwards on an
    // AMD EPYC, none later).
    const json& jemallocOptions = arm.applied.extraField("allocator_options");
    const bool keepsPages =
        spec::readBackOf(arm.applied.allocator, spec::Allocator::System) == spec::Allocator::Jemalloc &&
        jemallocOptions.is_object() && jemallocOptions.value("opt.dirty_decay_ms", 0) == -1 &&
        jemallocOptions.value("opt.muzzy_decay_ms", 0) == -1;
    if (minor >= kFaultsPerIterWarn && keepsPages)
        out.push_back(arm.name + fmt(": %.0f minor page faults per iteration: jemalloc gives no "
                                     "page back here (dirty_decay_ms and muzzy_decay_ms -1), so "
                                     "these are pages it used for the first time: its footprint "
                                     "was still growing, as it can over a fresh process's first "
                                     "few hundred iterations (kernel time inside the "
                                     "measurement). What to do: raise run.warmup_iters, or ",
                                     minor) +
                      tryAllocator + ".");
    else if (minor >= kFaultsPerIterWarn)
        out.push_back(arm.name + fmt(": %.0f minor page faults per iteration: the allocator returns "
                                     "memory to the OS every iteration and faults it in again "
                                     "(kernel time inside the measurement). What to do: ",
                                     minor) +
                      tryAllocator + ".");
    return out;
}

bool momentField(const std::string& key) {
    return key == "pid" || key == "hostname" || key == "load_average";
}

LoadAverageComparison compareLoadAverage(const ArmResult& first, const ArmResult& other) {
    LoadAverageComparison c;
    const auto text = [](const ArmResult& a) {
        return a.environment.is_object() && a.environment.contains("load_average")
                   ? a.environment["load_average"].dump()
                   : std::string("absent");
    };
    c.first = text(first);
    c.other = text(other);
    const auto oneMinute = [](const ArmResult& a) -> const json* {
        if (!a.environment.is_object()) return nullptr;
        const auto it = a.environment.find("load_average");
        if (it == a.environment.end() || !it->is_array() || it->empty() || !(*it)[0].is_number())
            return nullptr;
        return &(*it)[0];
    };
    const json *x = oneMinute(first), *y = oneMinute(other);
    c.compared = x && y;
    // In hundredths, as the worker records it: 0.7 - 0.2 is 0.49999... in binary.
    c.differs = c.compared ? std::llround(std::fabs(x->get<double>() - y->get<double>()) * 100) >=
                                 std::llround(kLoadAverageDifference * 100)
                           : (x != nullptr) != (y != nullptr);
    return c;
}

std::vector<EnvironmentDifference> environmentDifferences(const ArmResult& first,
                                                          const ArmResult& other) {
    std::vector<EnvironmentDifference> out;
    if (!first.environment.is_object() || !other.environment.is_object()) return out;
    std::set<std::string> keys;
    for (const auto& [key, v] : other.environment.items()) keys.insert(key);
    for (const auto& [key, v] : first.environment.items()) keys.insert(key);
    for (const auto& key : keys) {
        // The hostname names the process too, unless the arms ran on different hosts.
        if (momentField(key) && !(key == "hostname" && first.host != other.host)) continue;
        // Whether the worker loaded its CUDA module follows from the arm's own setup (a CUDA
        // device, or an AOTInductor package whose library links libtorch.so): not drift.
        if (key == "cuda_module_loaded") continue;
        const bool inFirst = first.environment.contains(key), inOther = other.environment.contains(key);
        if (inFirst && inOther && first.environment[key] == other.environment[key]) continue;
        out.push_back({key, inFirst ? first.environment[key].dump() : std::string("absent"),
                       inOther ? other.environment[key].dump() : std::string("absent")});
    }
    return out;
}

std::vector<std::string> runWarnings(const RunResult& run) {
    std::vector<std::string> w;
    // What did not run as asked comes first: every figure below is of what ran.
    for (const auto& a : run.arms)
        for (auto& c : armCaveats(a)) w.push_back(std::move(c));
    if (run.stopping.value("stable", true) == false)
        w.push_back(run.stopping.value("message", std::string("not stable")));
    for (const auto& a : run.arms) {
        if (run.preset.serving.enabled) {
            // A serving arm has levels, not samples: what would warn is a level cut short.
            std::size_t cut = 0;
            for (const auto& l : a.serving) cut += l.complete ? 0 : 1;
            if (cut)
                w.push_back(a.name + ": " + std::to_string(cut) + " serving level(s) were cut short "
                            "(a failure or Stop) and are left out of the figures");
            if (a.serving.empty() && a.status == kOk) w.push_back(a.name + ": no serving level was measured");
        } else {
            for (const auto& n : stats::noiseWarnings(a.blocked(), summarize(a))) w.push_back(a.name + ": " + n);
            for (auto& p : processWarnings(a)) w.push_back(std::move(p));
        }
        if (!a.warmup_ns.empty() && !a.samples.empty() && !steadyState(a).settled)
            w.push_back(a.name + ": warmup did not reach the steady state within " +
                        std::to_string(a.warmup_ns.size()) +
                        " iterations (its last iterations are more than 10% off the measured "
                        "median): raise run.warmup_iters");
        if (a.applied.blas == "reference")
            w.push_back(a.name + ": libtorch runs on the reference BLAS (install libopenblas0-openmp)");
    }
    // Environment drift: every manifest field but those that name the process.
    const ArmResult* first = nullptr;
    for (const auto& a : run.arms) {
        if (!a.environment.is_object()) continue;
        if (!first) {
            first = &a;
            continue;
        }
        // Arms on different hosts (run.compare_hosts) name them: the drift is the hosts'.
        const auto on = [&](const ArmResult& x) {
            return x.name + (first->host == a.host ? std::string()
                                                    : " (" + (x.host.empty() ? std::string("this machine")
                                                                             : "host " + x.host) + ")");
        };
        for (const auto& d : environmentDifferences(*first, a))
            w.push_back("environment differs between " + on(*first) + " and " + on(a) + " in \"" +
                        d.key + "\" (not a knob): " + d.first + " vs " + d.other);
    }
    return w;
}

}  // namespace pitlane::results
