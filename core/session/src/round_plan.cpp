// The plan of a run in rounds (round_plan.h).
#include "pitlane/session/round_plan.h"

#include <algorithm>

namespace pitlane::session {

int plannedProcesses(const spec::RunSettings& run) {
    return std::max(1, std::min(run.processes, run.iters));
}

std::vector<int> blockIterations(const spec::RunSettings& run) {
    const int processes = plannedProcesses(run);
    const int natural = (run.iters + run.block_iters - 1) / run.block_iters;
    std::vector<int> blockIters;
    if (natural >= processes) {
        for (int b = 0; b < natural; ++b)
            blockIters.push_back(std::min(run.block_iters, run.iters - b * run.block_iters));
    } else {
        for (int b = 0; b < processes; ++b)
            blockIters.push_back(run.iters / processes + (b < run.iters % processes ? 1 : 0));
    }
    return blockIters;
}

RoundShare roundShare(const std::vector<int>& blockIters, int processes, int round) {
    const int n = int(blockIters.size());
    RoundShare s;
    s.first = n * round / processes;
    const int last = n * (round + 1) / processes;
    s.iters.assign(blockIters.begin() + s.first, blockIters.begin() + last);
    return s;
}

std::vector<int> roundOrder(int arms, int round) {
    std::vector<int> order(static_cast<std::size_t>(std::max(0, arms)));
    for (int i = 0; i < arms; ++i) order[std::size_t(i)] = round % 2 == 0 ? i : arms - 1 - i;
    return order;
}

bool setUpConcurrently(const spec::Preset& preset, int round) {
    for (const auto& a : preset.arms)
        if (a.knobs.device != "cpu") return false;
    return round > 0;
}

std::vector<Task> planRound(const spec::Preset& preset, int round, int firstBlock,
                            const std::vector<int>& blockIters, bool allSweepPoints,
                            int blocksPerPoint, int warmupIters) {
    std::vector<Task> out;
    const int warmup = warmupIters >= 0 ? warmupIters : preset.run.warmup_iters;
    const std::vector<int> order = roundOrder(int(preset.arms.size()), round);
    const bool concurrent = setUpConcurrently(preset, round);
    out.push_back({Task::StartRound, -1, -1, 0, 1, round});
    for (int i : order) out.push_back({Task::Configure, i, -1, 0, 1, round, concurrent});
    std::size_t points = 0;
    for (const auto& a : preset.arms) points = std::max(points, a.knobs.batch_size.size());
    if (!allSweepPoints) points = std::min<std::size_t>(points, 1);
    for (std::size_t s = 0; s < points; ++s) {
        const auto has = [&](int i) { return s < preset.arms[std::size_t(i)].knobs.batch_size.size(); };
        const auto batch = [&](int i) { return preset.arms[std::size_t(i)].knobs.batch_size[s]; };
        if (warmup > 0)
            for (int i : order)
                if (has(i))
                    out.push_back({Task::Warmup, i, -1, warmup, batch(i), round, concurrent});
        for (std::size_t b = 0; b < blockIters.size(); ++b)
            for (int i : order)
                if (has(i))
                    out.push_back({Task::Block, i, int(s) * blocksPerPoint + firstBlock + int(b),
                                   blockIters[b], batch(i), round});
    }
    return out;
}

}  // namespace pitlane::session
