// The preset's run block and the checks of a run's plan against its arms (preset_run.h).
#include "preset_run.h"

#include "pitlane/spec/run_limits.h"
#include "text_util.h"

#include <algorithm>
#include <climits>
#include <set>

namespace pitlane::spec::detail {

int intField(const json& obj, const char* key, int def, int minValue, const std::string& where,
             const std::string& prefix) {
    if (!obj.contains(key)) return def;
    const auto& v = obj[key];
    const auto f = prefix + "." + key;
    if (!v.is_number_integer()) throw SpecError(where, f, "expected an integer, got " + detail::shown(v));
    // 18446744073709551615 read as a long long is -1: an unsigned beyond the range is too large,
    // and the number is echoed as written.
    const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > 100000000u;
    const long long n = huge ? LLONG_MAX : v.get<long long>();
    if (n < minValue || n > 100000000)
        throw SpecError(where, f,
                        "must be between " + std::to_string(minValue) + " and 100000000, got " +
                            detail::shown(v));
    return static_cast<int>(n);
}

namespace {

void atMost64(const std::string& where, const char* key, int n) {
    if (n > 64)
        throw SpecError(where, std::string("run.") + key,
                        "at most 64 worker processes per arm, got " + std::to_string(n));
}

// Each run field on its own; `bad` gets the fields whose value was refused.
RunSettings parseRunFields(const json& r, Errors& errs, std::set<std::string>& bad) {
    const std::string& where = errs.where();
    RunSettings run;
    static const std::set<std::string> runKeys = {"warmup_iters", "iters", "block_iters",
                                                  "event_timeout_ms", "seed", "min_time_ms",
                                                  "max_time_ms", "target_ci_pct",
                                                  "processes", "max_processes", "profile_iters",
                                                  "compare_hosts", "budget_ms",
                                                  "energy_idle_ms", "energy_cooldown_ms"};
    for (const auto& [key, v] : r.items())
        if (!runKeys.count(key))
            errs.add("run." + detail::shown(key),
                     "unknown field (expected warmup_iters, iters, block_iters, event_timeout_ms, "
                     "seed, min_time_ms, max_time_ms, target_ci_pct, processes, max_processes, "
                     "profile_iters, compare_hosts, budget_ms, energy_idle_ms, energy_cooldown_ms)");
    auto field = [&](const char* key, auto&& parse) {
        if (!errs.step(std::string("run.") + key, parse)) bad.insert(key);
    };
    field("warmup_iters", [&] { run.warmup_iters = intField(r, "warmup_iters", run.warmup_iters, 0, where, "run"); });
    field("iters", [&] { run.iters = intField(r, "iters", run.iters, 1, where, "run"); });
    field("block_iters", [&] {
        run.block_iters = intField(r, "block_iters", std::min(run.block_iters, run.iters), 1, where, "run");
    });
    field("event_timeout_ms", [&] {
        run.event_timeout_ms = intField(r, "event_timeout_ms", run.event_timeout_ms, 100, where, "run");
    });
    field("seed", [&] { run.seed = static_cast<std::uint64_t>(intField(r, "seed", 0, 0, where, "run")); });
    field("processes", [&] {
        run.processes = intField(r, "processes", run.processes, 1, where, "run");
        atMost64(where, "processes", run.processes);
    });
    field("min_time_ms", [&] { run.min_time_ms = intField(r, "min_time_ms", 0, 0, where, "run"); });
    field("profile_iters", [&] {
        run.profile_iters = intField(r, "profile_iters", 0, 0, where, "run");
        if (run.profile_iters > 1000)
            throw SpecError(where, "run.profile_iters", "at most 1000 profiled iterations, got " +
                                                            std::to_string(run.profile_iters));
    });
    // Issue 46: the idle draw one process measures before the run (docs/ENERGY.md).
    field("energy_idle_ms", [&] {
        run.energy_idle_ms = intField(r, "energy_idle_ms", run.energy_idle_ms, 0, where, "run");
        if (run.energy_idle_ms > 60000)
            throw SpecError(where, "run.energy_idle_ms", "at most 60000 ms, got " + std::to_string(run.energy_idle_ms));
    });
    field("energy_cooldown_ms", [&] {
        run.energy_cooldown_ms = intField(r, "energy_cooldown_ms", run.energy_cooldown_ms, 0, where, "run");
        if (run.energy_cooldown_ms > 600000)
            throw SpecError(where, "run.energy_cooldown_ms",
                            "at most 600000 ms, got " + std::to_string(run.energy_cooldown_ms));
    });
    field("max_time_ms", [&] { run.max_time_ms = intField(r, "max_time_ms", 0, 0, where, "run"); });
    field("budget_ms", [&] {
        run.budget_ms = intField(r, "budget_ms", 0, 0, where, "run");
        if (run.budget_ms > 0 && run.budget_ms < kMinBudgetMs)
            throw SpecError(where, "run.budget_ms",
                            "at least " + std::to_string(kMinBudgetMs) + " ms (a worker's start, its model load "
                            "and three processes per arm take longer than that), got " +
                                std::to_string(run.budget_ms) + "; 0 for none");
    });
    run.iters_written = r.contains("iters");
    run.processes_written = r.contains("processes");
    field("target_ci_pct", [&] {
        if (!r.contains("target_ci_pct")) return;
        const auto& v = r["target_ci_pct"];
        // At least 0.1 %: the half-width shrinks as 1/sqrt(blocks), so each tenfold tighter target
        // costs a hundredfold more blocks, and below 0.1 % the machine's own drift between
        // processes (0.5-5 % measured here, DESIGN.md "Measurement") is the floor: 1e-320 was
        // accepted and, without max_time_ms, the run never ended (issue 28).
        if (!v.is_number() || v.get<double>() < kMinTargetCiPct || v.get<double>() > 100)
            throw SpecError(where, "run.target_ci_pct",
                            "expected a percentage from 0.1 to 100, e.g. 1 for +-1 % (below 0.1 % no "
                            "run converges before its time cap), got " + detail::shown(v));
        run.target_ci_pct = v.get<double>();
    });
    return run;
}

// The rules that combine fields, each only when none of its fields was refused; max_processes
// (whose default is processes) is read here.
void checkRunCombinations(const json& r, RunSettings& run, Errors& errs, std::set<std::string>& bad) {
    const std::string& where = errs.where();
    auto field = [&](const char* key, auto&& parse) {
        if (!errs.step(std::string("run.") + key, parse)) bad.insert(key);
    };
    auto ok = [&](std::initializer_list<const char*> keys) {
        return std::none_of(keys.begin(), keys.end(), [&](const char* k) { return bad.count(k) > 0; });
    };
    if (ok({"min_time_ms", "max_time_ms"}) && run.max_time_ms > 0 && run.max_time_ms < run.min_time_ms)
        errs.add("run.max_time_ms", "max_time_ms (" + std::to_string(run.max_time_ms) +
                                        ") is below min_time_ms (" + std::to_string(run.min_time_ms) + ")");
    if (ok({"budget_ms"}) && run.budget_ms > 0) {
        // A budget plans the iterations and the processes: a preset that also writes them would
        // have one of its fields silently ignored.
        for (const char* k : {"iters", "processes"})
            if (r.contains(k))
                errs.add("run.budget_ms", std::string("a budget plans run.iters and run.processes from what the "
                                                      "first forwards cost; this preset also writes run.") +
                                              k + ": give budget_ms, or iters and processes");
        if (run.adaptive())
            errs.add("run.budget_ms", "a budget plans the run itself; adaptive stopping (run.min_time_ms, "
                                      "max_time_ms, target_ci_pct) is another plan: give one of them");
    }
    if (!r.contains("processes")) run.processes = std::min(run.processes, run.iters);
    run.max_processes = r.contains("processes") ? run.processes
                        : run.budgeted()        ? kBudgetMaxProcesses
                                                : run.max_processes;
    field("max_processes", [&] {
        run.max_processes = intField(r, "max_processes", run.max_processes, 1, where, "run");
        atMost64(where, "max_processes", run.max_processes);
    });
    if (ok({"processes", "max_processes"}) && run.max_processes < run.processes)
        errs.add("run.max_processes", "max_processes (" + std::to_string(run.max_processes) +
                                          ") is below processes (" + std::to_string(run.processes) + ")");
    if (ok({"processes", "iters"}) && run.processes > run.iters)
        errs.add("run.processes", "processes (" + std::to_string(run.processes) + ") exceeds iters (" +
                                      std::to_string(run.iters) +
                                      "): every process needs at least one measured iteration");
    if (ok({"block_iters", "iters"}) && run.block_iters > run.iters)
        errs.add("run.block_iters", "block_iters (" + std::to_string(run.block_iters) +
                                        ") exceeds iters (" + std::to_string(run.iters) + ")");
}

}  // namespace

RunSettings parseRunSettings(const json& r, Errors& errs) {
    if (!r.is_object()) {
        errs.add("run", "expected an object");
        return {};
    }
    std::set<std::string> bad;
    RunSettings run = parseRunFields(r, errs, bad);
    checkRunCombinations(r, run, errs, bad);
    return run;
}

// What a run would hold in memory before any worker starts: its blocks (tasks planned at once)
// and each arm's samples (32 bytes each, kept in the window and the CLI). Counted in 64 bits:
// iters x batch sizes x workers overflowed an int ("1000000/-2094967296 iterations").
void checkRunSize(const Preset& p, Errors& errs) {
    const long long blocks = (static_cast<long long>(p.run.iters) + p.run.block_iters - 1) /
                             std::max(1, p.run.block_iters);
    if (blocks > kMaxBlocks)
        errs.add("run.block_iters", "iters " + std::to_string(p.run.iters) + " in blocks of " +
                                        std::to_string(p.run.block_iters) + " make " +
                                        std::to_string(blocks) + " blocks; at most " +
                                        std::to_string(kMaxBlocks) +
                                        " (raise block_iters)");
    for (std::size_t i = 0; i < p.arms.size(); ++i) {
        const auto& k = p.arms[i].knobs;
        const long long samples = static_cast<long long>(p.run.iters) *
                                  static_cast<long long>(k.batch_size.size()) *
                                  std::max(1, k.workers);
        if (samples > kMaxSamplesPerArm)
            errs.add("arms[" + std::to_string(i) + "]",
                     "iters x batch sizes x workers = " + std::to_string(samples) +
                         " samples; at most " + std::to_string(kMaxSamplesPerArm) +
                         " per arm (" + std::to_string(kMaxSamplesPerArm * 32 / (1 << 20)) +
                         " MiB of samples)");
    }
}

// What a serving preset asks of its arms: the batcher forms the batches, one forward per batch.
// Without a serving block, the batcher's knobs would be silently ignored: an error instead.
void checkServingArms(const Preset& p, Errors& errs) {
    if (p.run.adaptive())
        errs.add("run", "a serving preset runs a fixed plan of levels (serving.rates or clients, "
                        "run.processes rounds): min_time_ms, max_time_ms and target_ci_pct do not apply");
    if (p.run.budget_ms > 0)
        errs.add("run.budget_ms", "a serving preset runs a fixed plan of levels (serving.rates or clients, "
                                  "run.processes rounds): a budget does not apply");
    for (std::size_t i = 0; i < p.arms.size(); ++i) {
        const auto& k = p.arms[i].knobs;
        const std::string f = "arms[" + std::to_string(i) + "].knobs.";
        if (k.batch_size != std::vector<int>{1})
            errs.add(f + "batch_size", "in a serving preset the batcher forms the batches from single "
                                       "requests: leave batch_size at 1 and set max_batch");
        if (k.workload != Workload::Inference)
            errs.add(f + "workload", "a serving preset serves inference requests: workload \"" +
                                         choiceName(k.workload) + "\" cannot be served");
        if (p.serving.arrival == "closed")
            for (int c : p.serving.clients)
                if (c < k.workers)
                    errs.add(f + "workers", "workers " + std::to_string(k.workers) +
                                                " share the clients between them: every level needs at "
                                                "least as many clients (serving.clients has " +
                                                std::to_string(c) + ")");
    }
}

void checkNotServingArms(const Preset& p, Errors& errs) {
    for (std::size_t i = 0; i < p.arms.size(); ++i) {
        const auto& k = p.arms[i].knobs;
        const std::string f = "arms[" + std::to_string(i) + "].knobs.";
        if (k.max_batch != 1)
            errs.add(f + "max_batch", "max_batch is the serving batcher's: it needs a serving block "
                                      "(the closed loop times batch_size)");
        if (k.max_wait_ms != 0)
            errs.add(f + "max_wait_ms", "max_wait_ms is the serving batcher's: it needs a serving block");
    }
}


}  // namespace pitlane::spec::detail
