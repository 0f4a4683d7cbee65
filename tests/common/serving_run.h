#pragma once
// A serving run built by hand, for the tests of the store and the reports: the bundled mlp by
// name, arms "b1" (max_batch 1) and "b4" (max_batch 4, max_wait 1 ms), Poisson arrivals at 200
// and 800 requests/s for 1 s, two processes, a p99 SLO of 25 ms. Every level is served by
// serving::runLevel on a virtual clock with a model of known cost (2 ms + 0.5 ms per request),
// so every figure is reproducible: b1 (capacity 400/s) saturates at 800/s, b4 does not.
// Arm b4 also has a level cut short (a search step whose block_done never came): kept in the
// raw levels, left out of every figure.
#include "pitlane/results/run_result.h"
#include "pitlane/serving/serve_loop.h"
#include "pitlane/spec/preset.h"

#include <algorithm>
#include <cstdint>

namespace pitlane::fixtures {

// Time moves only when the loop sleeps or runs a batch.
class VirtualServingClock : public serving::LoopClock {
public:
    std::int64_t now() override { return t; }
    void sleepUntil(std::int64_t ns) override { t = std::max(t, ns); }
    std::int64_t t = 0;
};

inline serving::LevelRecord virtualLevel(const serving::LoadSpec& spec) {
    VirtualServingClock clock;
    return serving::runLevel(spec, clock, [&](int size) {
        clock.t += 2'000'000 + 500'000 * std::int64_t(size);
        return true;
    });
}

inline nlohmann::json servingPresetJson() {
    return {{"name", "serving by hand"},
            {"model", "mlp"},
            {"run", {{"warmup_iters", 2}, {"processes", 2}}},
            {"serving",
             {{"arrival", "poisson"},
              {"rates", {200, 800}},
              {"duration_ms", 1000},
              {"slo_p99_ms", 25},
              {"search_steps", 0}}},
            {"arms",
             {{{"name", "b1"}, {"knobs", {{"intra_op_threads", 1}}}},
              {{"name", "b4"},
               {"knobs", {{"intra_op_threads", 1}, {"max_batch", 4}, {"max_wait_ms", 1}}}}}}};
}

inline results::RunResult handBuiltServingRun() {
    results::RunResult run;
    run.preset_json = servingPresetJson();
    run.preset.name = "serving by hand";
    run.preset.model = "mlp";
    std::vector<spec::SpecError> errors;
    run.preset.serving = spec::parseServing(run.preset_json["serving"], "test", errors);
    run.started_at = "2026-11-24T10:00:00Z";
    run.wall_s = 9.5;
    const int maxBatch[] = {1, 4};
    for (int a = 0; a < 2; ++a) {
        results::ArmResult arm;
        arm.name = a == 0 ? "b1" : "b4";
        results::setKnobsFromJson(arm, run.preset_json["arms"][a]["knobs"]);
        arm.status = results::kOk;
        arm.loaded = {{"parameters", 399370},
                      {"file_size_bytes", 1602000},
                      {"load_ms", 48.1 + a},
                      {"first_forward_ms", 105.0 + a},
                      {"input", {{{"dtype", "float32"}, {"shape", {1, 784}}}}}};
        arm.environment = {{"cpu", "AMD EPYC"}, {"cores", 2}, {"libtorch", "1.13.1"}};
        arm.applied.intra_op_threads = 1;
        arm.applied.blas = "openblas";
        arm.peak_rss_bytes = 168 << 20;
        for (int process = 0; process < 2; ++process) {
            for (int level = 0; level < 2; ++level) {
                results::ServingLevel l;
                l.level = level;
                l.process = process;
                l.rate_per_s = run.preset.serving.rates[std::size_t(level)];
                l.load.arrival = serving::Arrival::Poisson;
                l.load.rate_per_s = l.rate_per_s;
                l.load.duration_ms = 1000;
                // Above 2^63: the seed must survive storage as the unsigned number it is.
                l.load.seed = 0x9E3779B97F4A7C15ULL + std::uint64_t(10 * process + level);
                l.load.max_batch = maxBatch[a];
                l.load.max_wait_ms = a == 0 ? 0 : 1;
                l.record = virtualLevel(l.load);
                l.complete = true;
                arm.serving.push_back(std::move(l));
            }
            arm.processes.push_back({process, 0, 4000L + 10 * a + process, 120.0, 3.5, 0, 0, 0});
        }
        if (a == 1) {
            results::ServingLevel cut = arm.serving.back();
            cut.level = -1;
            cut.rate_per_s = cut.load.rate_per_s = 600;
            cut.record.batches.resize(cut.record.batches.size() / 3);
            std::int64_t served = 0;
            for (const auto& b : cut.record.batches) served += b.size;
            cut.record.arrival_ns.resize(std::size_t(served + 3));
            cut.complete = false;
            arm.serving.push_back(std::move(cut));
        }
        run.arms.push_back(std::move(arm));
    }
    return run;
}

}  // namespace pitlane::fixtures
