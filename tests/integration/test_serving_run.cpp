// A serving preset through the real pitlane-cli and workers (issue 13): every arm serves every
// listed rate in every process, the batcher's knobs are read back and obeyed by every batch, the
// SLO search measures rates between the listed ones, the results JSON carries the raw levels
// and their summaries (recomputed here from the raw batches), and a re-read JSON gives the same
// table. Bad serving presets are refused before anything runs, naming the field.
#include "cli.h"

#include "pitlane/results/run_result.h"

#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace pitlane;
using namespace pitlane::itest;
using json = nlohmann::json;

namespace {

json servingPreset() {
    return {{"name", "serving run"},
            {"model", "mlp"},
            {"run", {{"warmup_iters", 3}, {"processes", 2}}},
            {"serving",
             {{"arrival", "poisson"},
              {"rates", {200, 800}},
              {"duration_ms", 600},
              {"slo_p99_ms", 0.05},  // tight: the mlp misses it at some rate, so the search runs
              {"search_steps", 2}}},
            {"arms",
             {{{"name", "b1"}, {"knobs", {{"intra_op_threads", 1}}}},
              {{"name", "b4"},
               {"knobs", {{"intra_op_threads", 1}, {"max_batch", 4}, {"max_wait_ms", 1}}}}}}};
}

}  // namespace

TEST(ServingRun, EveryArmServesEveryRateInEveryProcessAndObeysItsBatcher) {
    QTemporaryDir dir;
    const QString preset = writeJson(dir.filePath("serving.json"), servingPreset());
    const QString out = dir.filePath("results.json");
    const auto r = runCli({"run", preset, "--db", "none", "--json", out}, 120000);
    ASSERT_TRUE(r.finished);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("Serving: poisson arrivals"), std::string::npos) << r.out;
    const json j = readJson(out);
    ASSERT_TRUE(j.contains("serving")) << "top-level serving object";
    EXPECT_TRUE(j["serving"]["verdict"].is_array());
    ASSERT_EQ(j["arms"].size(), 2u);
    for (const auto& arm : j["arms"]) {
        SCOPED_TRACE(arm["name"].get<std::string>());
        EXPECT_EQ(arm["status"], "ok");
        const int maxBatch = arm["name"] == "b4" ? 4 : 1;
        // Read back: the worker reports the batcher it configured.
        EXPECT_EQ(arm["applied"]["max_batch"], maxBatch);
        EXPECT_EQ(arm["applied"]["max_wait_ms"], maxBatch == 4 ? 1 : 0);
        const auto& levels = arm["serving"]["levels"];
        std::set<std::pair<int, double>> listed;
        int search = 0;
        for (const auto& l : levels) {
            EXPECT_TRUE(l["complete"].get<bool>());
            EXPECT_EQ(l["load"]["max_batch"], maxBatch);
            if (l["level"] == -1) {
                ++search;
                EXPECT_EQ(l["process"], 1) << "the search runs in the last round's processes";
            } else {
                listed.insert({l["process"].get<int>(), l["rate_per_s"].get<double>()});
            }
            // Every batch within max_batch; every request that arrived was served (not saturated).
            const auto sizes = l["batches"]["size"].get<std::vector<int>>();
            ASSERT_FALSE(sizes.empty());
            EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()), maxBatch);
            long long served = 0;
            for (int s : sizes) served += s;
            EXPECT_EQ(served, (long long)l["arrival_ns"].size());
            EXPECT_EQ(l["scheduled"].get<long long>(), (long long)l["arrival_ns"].size());
        }
        const std::set<std::pair<int, double>> want = {{0, 200}, {0, 800}, {1, 200}, {1, 800}};
        EXPECT_EQ(listed, want);
        EXPECT_GE(search, 1) << "a missed SLO starts the search";
        EXPECT_LE(search, 2);
        // The points: every listed rate, pooled over both processes.
        int listedPoints = 0;
        for (const auto& p : arm["serving"]["points"]) {
            EXPECT_GT(p["served"].get<long long>(), 0);
            EXPECT_LE(p["p50_ms"].get<double>(), p["p99_ms"].get<double>());
            if (!p["search"].get<bool>()) {
                ++listedPoints;
                EXPECT_EQ(p["processes"].size(), 2u);
            }
        }
        EXPECT_EQ(listedPoints, 2);
    }
    // Batching happened under load: b4 formed batches of more than one request at 800 req/s.
    const auto& b4 = j["arms"][1]["serving"]["points"];
    const auto at800 = std::find_if(b4.begin(), b4.end(), [](const json& p) { return p["rate_per_s"] == 800.0; });
    ASSERT_NE(at800, b4.end());
    EXPECT_GT((*at800)["mean_batch"].get<double>(), 1.0);

    // Re-read: the same figures come back from the raw levels.
    const results::RunResult back = results::fromResultsJson(j);
    ASSERT_TRUE(back.preset.serving.enabled);
    const json again = results::toResultsJson(back);
    for (std::size_t i = 0; i < 2; ++i) {
        const auto& a = j["arms"][i]["serving"]["points"];
        const auto& b = again["arms"][i]["serving"]["points"];
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t k = 0; k < a.size(); ++k) {
            EXPECT_DOUBLE_EQ(a[k]["p99_ms"].get<double>(), b[k]["p99_ms"].get<double>());
            EXPECT_EQ(a[k]["batch_histogram"], b[k]["batch_histogram"]);
        }
    }
    EXPECT_EQ(j["serving"]["comparisons"], again["serving"]["comparisons"]);
}

TEST(ServingRun, BadServingPresetsAreRefusedNamingTheField) {
    QTemporaryDir dir;
    struct Case {
        json patch;
        std::string field;
    };
    const std::vector<Case> cases = {
        {{{"serving", {{"arrival", "poisson"}, {"rates", {400, 100}}}}}, "serving.rates[1]"},
        {{{"serving", {{"arrival", "bursty"}, {"rates", {100}}}}}, "serving.arrival"},
        {{{"serving", {{"arrival", "closed"}, {"rates", {100}}}}}, "serving.rates"},
        {{{"serving", {{"rates", {100}}, {"duration_ms", 5}}}}, "serving.duration_ms"},
    };
    for (const auto& c : cases) {
        json p = servingPreset();
        p.merge_patch(c.patch);
        if (c.patch["serving"].contains("arrival") && c.patch["serving"]["arrival"] == "closed")
            p["serving"].erase("slo_p99_ms");
        const QString path = writeJson(dir.filePath("bad.json"), p);
        const auto r = runCli({"validate", path}, 30000);
        EXPECT_NE(r.exitCode, 0) << c.field;
        EXPECT_NE((r.out + r.err).find(c.field), std::string::npos) << c.field << ": " << r.out << r.err;
    }
    // The batcher's knobs without a serving block: refused, not silently ignored.
    json p = servingPreset();
    p.erase("serving");
    const auto r = runCli({"validate", writeJson(dir.filePath("noserve.json"), p)}, 30000);
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE((r.out + r.err).find("arms[1].knobs.max_batch"), std::string::npos) << r.out << r.err;
}
