// What a run will measure (run_plan.h).
#include "pitlane/session/run_plan.h"

#include "pitlane/session/budget_plan.h"
#include "pitlane/session/round_plan.h"
#include "pitlane/spec/run_limits.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace pitlane::session {

namespace {
int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

std::string plural(int n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "3 processes of 2 blocks of 10 iterations", "3 processes of 6-7 blocks of 10 iterations",
// "3 processes of 7, 7 and 6 iterations (one block each)".
std::string roundsInWords(int processes, const std::vector<int>& roundBlocks,
                          const std::vector<int>& roundIters, const std::vector<int>& blocks) {
    std::ostringstream o;
    o << plural(processes, "process", "processes") << " of ";
    const bool sameSize = std::all_of(blocks.begin(), blocks.end(), [&](int b) { return b == blocks.front(); });
    if (sameSize && !blocks.empty()) {
        const auto [lo, hi] = std::minmax_element(roundBlocks.begin(), roundBlocks.end());
        if (*lo == *hi)
            o << plural(*lo, "block", "blocks");
        else
            o << *lo << "-" << *hi << " blocks";
        o << " of " << plural(blocks.front(), "iteration", "iterations");
        return o.str();
    }
    for (std::size_t i = 0; i < roundIters.size(); ++i)
        o << (i == 0 ? "" : i + 1 == roundIters.size() ? " and " : ", ") << roundIters[i];
    o << " iterations";
    return o.str();
}

std::string pct(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}
}  // namespace

std::vector<int> addedRoundBlocks(const spec::RunSettings& run) {
    const int processes = plannedProcesses(run);
    return roundShare(blockIterations(run), processes, 0).iters;
}

MeasurementPlan measurementPlan(const spec::Preset& preset) {
    const auto& run = preset.run;
    MeasurementPlan p;
    p.serving = preset.serving.enabled;
    p.asked = run.iters;
    p.blockIters = run.block_iters;
    p.processes = plannedProcesses(run);
    const std::vector<int> blocks = blockIterations(run);
    p.blocks = blocks;
    for (int r = 0; r < p.processes; ++r) {
        const RoundShare s = roundShare(blocks, p.processes, r);
        p.roundBlocks.push_back(int(s.iters.size()));
        p.roundIters.push_back(sum(s.iters));
    }
    p.adaptive = run.adaptive();
    p.minIters = sum(p.roundIters);
    if (run.budgeted() && !p.serving) {
        p.budgetMs = run.budget_ms;
        p.maxProcesses = run.max_processes;
        p.maxIters = -1;
    }
    if (p.adaptive) {
        p.maxProcesses = p.processes;
        p.addedRound = run.processes > 1 ? addedRoundBlocks(run) : std::vector<int>{run.block_iters};
        p.maxIters = -1;
        p.capMs = spec::adaptiveTimeCapMs(run);
        p.targetCiPct = run.target_ci_pct;
        p.capGiven = run.max_time_ms > 0;
    } else {
        // Replication adds rounds up to run.max_processes (ExperimentRunner::decideReplication);
        // it looks only when there is a comparison (two arms or more).
        p.maxProcesses = preset.arms.size() >= 2 ? std::max(p.processes, run.max_processes) : p.processes;
        p.addedRound = addedRoundBlocks(run);
        p.maxIters = p.minIters + (p.maxProcesses - p.processes) * sum(p.addedRound);
    }
    for (const auto& a : preset.arms) {
        p.perBatchSize = p.perBatchSize || a.knobs.batch_size.size() > 1;
        p.perWorker = p.perWorker || a.knobs.workers > 1;
    }
    return p;
}

std::string planText(const MeasurementPlan& p) {
    if (p.serving) return {};
    if (p.budgetMs > 0) return budgetPlanText(p.budgetMs);
    std::string per = "per arm";
    if (p.perBatchSize) per += " and batch size";
    if (p.perWorker) per += " (each concurrent worker)";
    const std::string rounds = roundsInWords(p.processes, p.roundBlocks, p.roundIters, p.blocks);
    std::ostringstream o;
    const int added = sum(p.addedRound);
    if (p.adaptive) {
        o << p.asked << " asked -> " << p.minIters << " or more measured " << per << ": " << rounds
          << ", then rounds of " << plural(added, "iteration", "iterations")
          << (p.processes > 1 ? " in fresh processes" : "") << " until ";
        const std::string cap = pct(p.capMs / 1000.0) + " s measured (" +
                                (p.capGiven ? "run.max_time_ms" : "the default cap: set run.max_time_ms") + ")";
        if (p.targetCiPct > 0)
            o << "every median's 95 % CI is within +-" << pct(p.targetCiPct) << " %, at most " << cap;
        else
            o << cap;
        return o.str();
    }
    if (p.maxIters == p.minIters) {
        o << p.minIters << " iterations measured " << per << (p.minIters == p.asked ? ", as asked" : "")
          << ": " << rounds;
        return o.str();
    }
    const int more = p.maxProcesses - p.processes;
    o << p.asked << " asked -> " << p.minIters << "-" << p.maxIters << " measured " << per << ": "
      << rounds << ", then up to " << more << " more " << (more == 1 ? "process" : "processes") << " of "
      << plural(added, "iteration", "iterations") << " while a comparison is inconclusive (run.max_processes "
      << p.maxProcesses << "; give run.processes alone to measure exactly " << p.minIters << ")";
    return o.str();
}

}  // namespace pitlane::session
