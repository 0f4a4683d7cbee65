// Results JSON (CONTRACT.md) and CSV: export then re-import keeps every sample, block, status and
// error; a broken file is rejected with the field named.
#include "pitlane/results/run_result.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

namespace {

namespace R = pitlane::results;
using R::json;

// A run as the orchestrator leaves it: A finished, B killed mid-run with partial samples.
R::RunResult makeRun() {
    R::RunResult run;
    run.preset_json = {{"name", "unit"},
                       {"model", "mlp"},
                       {"input", json::array({{{"shape", {256}}, {"dtype", "float32"}}})},
                       {"run", {{"iters", 30}, {"block_iters", 10}}},
                       {"arms", json::array({{{"name", "A"}}, {{"name", "B"}}})}};
    run.started_at = "2024-01-01T00:00:00Z";
    run.wall_s = 1.5;

    R::ArmResult a;
    a.name = "A";
    R::setKnobsFromJson(a, {{"grad", "enabled"}});
    a.status = R::kOk;
    a.applied = pitlane::protocol::appliedFromFields(
        json::object({{"grad", "enabled"}, {"intra_op_threads", 1}, {"affinity", {0, 1}}, {"blas_state", {{"x", 1}}}}));
    a.environment = {{"libtorch", "1.13.1"}, {"cores", 2}};
    a.loaded = {{"load_ms", 12.5}, {"first_forward_ms", 3.25}, {"parameters", 399370}};
    a.warmup_ns = {900000, 800000};
    a.peak_rss_bytes = 123456789;
    for (int i = 0; i < 30; ++i)
        a.samples.push_back({i / 10, i, 1, 0, 200000 + 1000 * (i % 7) + 13 * i});

    R::ArmResult b;
    b.name = "B";
    R::setKnobsFromJson(b, {{"grad", "inference_mode"}});
    b.status = R::kKilled;
    b.error = pitlane::protocol::Error{"killed", "worker died by signal 9 (Killed)", {}};
    for (int i = 0; i < 14; ++i)
        b.samples.push_back({i / 10, i, 1, 0, 150000 + 500 * (i % 5) + 7 * i});

    run.arms = {a, b};
    return run;
}

std::vector<std::int64_t> latencies(const R::ArmResult& a) {
    std::vector<std::int64_t> v;
    for (const auto& s : a.samples) v.push_back(s.latency_ns);
    return v;
}

std::vector<int> blocks(const R::ArmResult& a) {
    std::vector<int> v;
    for (const auto& s : a.samples) v.push_back(s.block);
    return v;
}

TEST(ResultsJson, HasTheContractFields) {
    json j = R::toResultsJson(makeRun());
    EXPECT_EQ(j["schema"], 1);
    EXPECT_EQ(j["preset"]["name"], "unit");
    ASSERT_EQ(j["arms"].size(), 2u);
    for (const auto& arm : j["arms"]) {
        for (const char* key :
             {"name", "status", "knobs", "applied", "environment", "cold", "latency_ns", "summary"})
            EXPECT_TRUE(arm.contains(key)) << key;
        for (const char* key : {"n", "median_ns", "mean_ns", "sd_ns", "min_ns", "max_ns", "p90_ns",
                                "p95_ns", "p99_ns", "throughput_per_s", "peak_rss_bytes"})
            EXPECT_TRUE(arm["summary"].contains(key)) << key;
    }
    EXPECT_EQ(j["arms"][0]["summary"]["n"], 30);
    EXPECT_EQ(j["arms"][0]["summary"]["peak_rss_bytes"], 123456789);
    EXPECT_EQ(j["arms"][0]["cold"]["load_ms"], 12.5);
    EXPECT_EQ(j["arms"][0]["cold"]["first_iter_ms"], 3.25);
    EXPECT_FALSE(j["arms"][0].contains("error"));
    EXPECT_EQ(j["arms"][1]["error"]["code"], "killed");
    // A killed arm is not compared on what it left (nor is a failed, crashed or timed-out one).
    EXPECT_TRUE(j["comparisons"].empty());
    ASSERT_EQ(j["not_compared"].size(), 1u);
    EXPECT_EQ(j["not_compared"][0]["reason"], "B was killed after 14 samples: B vs A not compared");
    // Reopened from a history whose samples of B fail their check (store's code "damaged"): it
    // ran; the history lost it.
    auto damaged = makeRun();
    damaged.arms[1].status = R::kFailed;
    damaged.arms[1].error = pitlane::protocol::Error{"damaged", "sample chunk 3 fails its CRC-32", {}};
    EXPECT_EQ(R::notComparedReason(damaged, 1),
              "B is damaged in the history (its samples fail their check): B vs A not compared");
    // Stopped by the user instead: what B measured is compared.
    auto stopped = makeRun();
    stopped.arms[1].status = R::kCancelled;
    j = R::toResultsJson(stopped);
    EXPECT_TRUE(j["not_compared"].empty());
    ASSERT_EQ(j["comparisons"].size(), 1u);
    auto& c = j["comparisons"][0];
    EXPECT_EQ(c["baseline"], "A");
    EXPECT_EQ(c["arm"], "B");
    ASSERT_EQ(c["ci95"].size(), 2u);
    EXPECT_LE(c["ci95"][0].get<double>(), c["ratio"].get<double>());
    EXPECT_GE(c["ci95"][1].get<double>(), c["ratio"].get<double>());
    EXPECT_GT(c["ratio"].get<double>(), 1.0);  // B's latencies are lower
    EXPECT_TRUE(c["verdict"].is_string());
    EXPECT_TRUE(c["p_value"].is_number());
}

TEST(ResultsJson, RoundTripKeepsSamplesBlocksStatusAndError) {
    const auto run = makeRun();
    // Through text, as a file on disk would be.
    json j = json::parse(R::toResultsJson(run).dump(2));
    const auto back = R::fromResultsJson(j);

    EXPECT_EQ(back.preset_json, run.preset_json);
    EXPECT_EQ(back.preset.name, "unit");
    EXPECT_EQ(back.started_at, run.started_at);
    EXPECT_DOUBLE_EQ(back.wall_s, run.wall_s);
    ASSERT_EQ(back.arms.size(), run.arms.size());
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        const auto& b = back.arms[i];
        SCOPED_TRACE(a.name);
        EXPECT_EQ(b.name, a.name);
        EXPECT_EQ(b.status, a.status);
        EXPECT_EQ(b.knobs, a.knobs);
        EXPECT_EQ(b.knobs_written, a.knobs_written);
        EXPECT_EQ(R::knobsJson(b), R::knobsJson(a));
        EXPECT_EQ(b.applied, a.applied);
        EXPECT_EQ(b.environment, a.environment);
        EXPECT_EQ(latencies(b), latencies(a));
        EXPECT_EQ(blocks(b), blocks(a));
        EXPECT_EQ(b.warmup_ns, a.warmup_ns);
        EXPECT_EQ(b.peak_rss_bytes, a.peak_rss_bytes);
        ASSERT_EQ(b.error.has_value(), a.error.has_value());
        if (a.error) {
            EXPECT_EQ(b.error->code, a.error->code);
            EXPECT_EQ(b.error->message, a.error->message);
        }
    }
    // Re-exporting the re-import gives the same arms and comparisons.
    json again = R::toResultsJson(back);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        EXPECT_EQ(again["arms"][i]["latency_ns"], j["arms"][i]["latency_ns"]);
        EXPECT_EQ(again["arms"][i]["block"], j["arms"][i]["block"]);
        EXPECT_EQ(again["arms"][i]["summary"], j["arms"][i]["summary"]);
        EXPECT_EQ(again["arms"][i]["cold"], j["arms"][i]["cold"]);
        EXPECT_EQ(again["arms"][i]["model"], j["arms"][i]["model"]);
        EXPECT_EQ(again["arms"][i].value("error", json()), j["arms"][i].value("error", json()));
    }
    EXPECT_EQ(again["comparisons"], j["comparisons"]);
}

// fromResultsJson must name what is wrong. {mutation, parts of the message}.
void expectRejected(json j, const std::vector<std::string>& parts) {
    try {
        R::fromResultsJson(j);
        ADD_FAILURE() << "accepted a broken results file";
    } catch (const std::exception& e) {
        const std::string what = e.what();
        for (const auto& p : parts)
            EXPECT_NE(what.find(p), std::string::npos)
                << "\"" << what << "\" lacks \"" << p << "\"";
    }
}

TEST(ResultsJson, ImportErrorsNameTheField) {
    json good = R::toResultsJson(makeRun());
    json j = good;
    j.erase("schema");
    expectRejected(j, {"schema"});
    j = good;
    j["schema"] = 2;
    expectRejected(j, {"schema", "2"});
    j = good;
    j.erase("arms");
    expectRejected(j, {"arms"});
    j = good;
    j.erase("preset");
    expectRejected(j, {"preset"});
    j = good;
    j["arms"][1].erase("name");
    expectRejected(j, {"arms[1]", "name"});
    j = good;
    j["arms"][0].erase("status");
    expectRejected(j, {"arms[0]", "status"});
    j = good;
    j["arms"][1].erase("latency_ns");
    expectRejected(j, {"arms[1]", "latency_ns"});
    j = good;
    j["arms"][0]["block"].erase(0);
    expectRejected(j, {"arms[0]", "block"});
    // Wrong types are named too, not left to a bare JSON library message.
    j = good;
    j["schema"] = "1";
    expectRejected(j, {"schema"});
    j = good;
    j["arms"] = {{"A", 1}};
    expectRejected(j, {"arms"});
    j = good;
    j["arms"][1]["name"] = 5;
    expectRejected(j, {"arms[1]", "name"});
    j = good;
    j["arms"][0]["latency_ns"] = {1, "2", 3};
    expectRejected(j, {"arms[0]", "latency_ns"});
    j = good;
    j["arms"][0]["error"] = "boom";
    expectRejected(j, {"arms[0]", "error"});
}

TEST(ResultsJson, ImportWithoutBlocksPutsEverySampleInBlockZero) {
    json j = R::toResultsJson(makeRun());
    j["arms"][0].erase("block");
    const auto back = R::fromResultsJson(j);
    ASSERT_EQ(back.arms[0].samples.size(), 30u);
    for (const auto& s : back.arms[0].samples) EXPECT_EQ(s.block, 0);
}

TEST(SamplesCsv, OneRowPerSamplePlusHeader) {
    const auto run = makeRun();
    const std::string csv = R::samplesCsv(run);
    std::istringstream is(csv);
    std::string line;
    std::vector<std::string> rows;
    while (std::getline(is, line)) rows.push_back(line);
    ASSERT_EQ(rows.size(), 30u + 14u + 1u);
    EXPECT_EQ(rows[0], "arm,block,iteration,batch_size,latency_ns,process");
    EXPECT_EQ(rows[1], "A,0,0,1," + std::to_string(run.arms[0].samples[0].latency_ns) + ",0");
    EXPECT_EQ(rows.back(), "B,1,13,1," + std::to_string(run.arms[1].samples[13].latency_ns) + ",0");
    for (std::size_t i = 1; i < rows.size(); ++i)
        EXPECT_EQ(std::count(rows[i].begin(), rows[i].end(), ','), 5) << rows[i];
    EXPECT_EQ(csv.back(), '\n');
}

TEST(SamplesCsv, EmptyRunIsJustTheHeader) {
    R::RunResult run;
    EXPECT_EQ(R::samplesCsv(run), "arm,block,iteration,batch_size,latency_ns,process\n");
}

TEST(Format, DurationsAndBytes) {
    EXPECT_EQ(R::formatDuration(37759100), "37.76 ms");
    EXPECT_EQ(R::formatDuration(812400), "812.4 us");
    EXPECT_EQ(R::formatDuration(999), "999 ns");
    EXPECT_EQ(R::formatDuration(2.5e9), "2.500 s");
    EXPECT_EQ(R::formatBytes(512), "512 B");
    EXPECT_EQ(R::formatBytes(178.6 * 1024 * 1024), "178.6 MiB");
    EXPECT_EQ(R::formatBytes(3.0 * 1024 * 1024 * 1024), "3.00 GiB");
}

}  // namespace

// compareArms is memoised per run: the same answer again, recomputed once samples are appended.
TEST(ResultsMemo, ComparisonsAreReusedUntilSamplesChange) {
    pitlane::results::RunResult run;
    for (const char* name : {"A", "B"}) {
        pitlane::results::ArmResult a;
        a.name = name;
        a.status = pitlane::results::kOk;
        for (int i = 0; i < 40; ++i)
            a.samples.push_back({i / 10, i, 1, 0, (name[0] == 'A' ? 2000000 : 1000000) + 1000 * (i % 7)});
        run.arms.push_back(a);
    }
    const auto first = pitlane::results::compareArms(run);
    ASSERT_EQ(first.size(), 1u);
    ASSERT_TRUE(run.comparison_memo.has_value());
    const auto again = pitlane::results::compareArms(run);
    EXPECT_EQ(again.front().verdict, first.front().verdict);
    EXPECT_DOUBLE_EQ(again.front().ci_low, first.front().ci_low);
    // Forty more, much slower samples for B: the memo is stale and the ratio moves.
    for (int i = 0; i < 40; ++i) run.arms[1].samples.push_back({4 + i / 10, 40 + i, 1, 0, 5000000});
    const auto changed = pitlane::results::compareArms(run);
    EXPECT_LT(changed.front().ratio, first.front().ratio);
    // Renaming an arm (as a cross-run comparison does) also invalidates it.
    run.arms[1].name = "#2 B";
    EXPECT_EQ(pitlane::results::compareArms(run).front().arm, "#2 B");
}

// ---------------------------------------------------------------------------------------------
// Process replicates in the results

namespace {
// Arm "A" measured by 3 processes of 2 blocks x 10 samples; process `slow` runs `factor` x slower
// and takes `slowFaults` minor faults per iteration (others 1).
R::ArmResult replicatedArm(int slow, double factor, std::int64_t slowFaults) {
    R::ArmResult a;
    a.name = "A";
    a.status = R::kOk;
    a.applied.allocator = "system";
    int iter = 0;
    for (int p = 0; p < 3; ++p) {
        R::ProcessInfo info;
        info.replicate = p;
        info.pid = 1000 + p;
        info.load_ms = 10 + p;
        info.fault_iters = 20;
        info.minor_faults = 20 * (p == slow ? slowFaults : 1);
        a.processes.push_back(info);
        for (int b = 0; b < 2; ++b)
            for (int i = 0; i < 10; ++i)
                a.samples.push_back({p * 2 + b, iter++, 1, 0,
                                     std::int64_t((p == slow ? factor : 1.0) * (1000000 + 1000 * i)), p});
    }
    return a;
}
}  // namespace

TEST(Processes, ResultsJsonCarriesProcessesVarianceAndFaultsAndReadsThemBack) {
    R::RunResult run;
    run.preset_json = {{"name", "p"}};
    run.arms = {replicatedArm(2, 4.0, 60)};
    const json j = R::toResultsJson(run);
    const auto& arm = j["arms"][0];
    ASSERT_EQ(arm["processes"].size(), 3u);
    for (int p = 0; p < 3; ++p) {
        const auto& pj = arm["processes"][std::size_t(p)];
        EXPECT_EQ(pj["pid"], 1000 + p);
        EXPECT_EQ(pj["replicate"], p);
        EXPECT_EQ(pj["n"], 20);
        // Independent: median of 1000000 + 1000*i over i = 0..9 twice is 1004500 (x factor).
        EXPECT_DOUBLE_EQ(pj["median_ns"].get<double>(), (p == 2 ? 4.0 : 1.0) * 1004500);
        EXPECT_DOUBLE_EQ(pj["minor_faults_per_iter"].get<double>(), p == 2 ? 60.0 : 1.0);
    }
    EXPECT_NEAR(arm["summary"]["minor_faults_per_iter"].get<double>(), (60.0 + 1 + 1) / 3, 1e-12);
    const auto& v = arm["variance"];
    EXPECT_EQ(v["processes"], 3);
    EXPECT_EQ(v["blocks"], 6);
    const double sum = v["between_processes"].get<double>() + v["between_blocks"].get<double>() +
                       v["within_blocks"].get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_GT(v["between_processes"].get<double>(), 0.95);
    EXPECT_EQ(arm["sample_process"].size(), 60u);

    const auto back = R::fromResultsJson(j);
    ASSERT_EQ(back.arms[0].processes.size(), 3u);
    EXPECT_EQ(back.arms[0].processes[2].minor_faults, 1200);
    EXPECT_EQ(back.arms[0].samples[59].process, 2);
    const auto again = R::toResultsJson(back);
    EXPECT_EQ(again["arms"][0]["processes"], arm["processes"]);
    EXPECT_EQ(again["arms"][0]["variance"], arm["variance"]);
}

TEST(Processes, DisagreeingProcessesAreExplainedByTheirPageFaults) {
    const auto w = R::processWarnings(replicatedArm(2, 4.0, 60));
    ASSERT_EQ(w.size(), 2u);
    EXPECT_NE(w[0].find("A: its 3 worker processes disagree"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("4.00x apart"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("60 minor page faults per iteration against 1.0"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("allocator \"jemalloc\""), std::string::npos) << w[0];
    EXPECT_NE(w[1].find("21 minor page faults per iteration"), std::string::npos) << w[1];
}

// jemalloc with both decays off gives no page back: its faults are first touches while its
// footprint grows (docs/KNOBS.md), not memory handed back every iteration; with decay on it may
// hand pages back, and the warning says so.
TEST(Processes, JemallocKeepingItsPagesIsNotSaidToHandThemBack) {
    auto arm = replicatedArm(0, 1.0, 20);  // 20 faults per iteration in every process
    for (auto& p : arm.processes) p.minor_faults = 20 * 20;
    arm.applied.allocator = "jemalloc";
    arm.applied.extra["allocator_options"] = {{"opt.dirty_decay_ms", -1}, {"opt.muzzy_decay_ms", -1}};
    auto w = R::processWarnings(arm);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].rfind("A: 20 minor page faults per iteration: jemalloc gives no page back here "
                         "(dirty_decay_ms and muzzy_decay_ms -1), so these are pages it used for "
                         "the first time: its footprint was still growing",
                         0),
              0u)
        << w[0];
    EXPECT_NE(w[0].find("raise run.warmup_iters, or compare allocators as arms"), std::string::npos) << w[0];
    EXPECT_EQ(w[0].find("returns memory to the OS"), std::string::npos) << w[0];

    arm.applied.extra["allocator_options"]["opt.dirty_decay_ms"] = 10000;  // jemalloc's default
    w = R::processWarnings(arm);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("the allocator returns memory to the OS every iteration"), std::string::npos) << w[0];
}

TEST(Processes, DisagreementWithoutAFaultDifferenceSaysSo) {
    const auto w = R::processWarnings(replicatedArm(1, 1.5, 1));
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("Page faults do not explain it"), std::string::npos) << w[0];
}

// Issue 27: an arm on torch's default threads whose processes were 100x apart; one intra-op
// thread fixed it. The warning names that first, with the measured spread; an arm already on
// one thread is not told to.
TEST(Processes, DisagreementOnSeveralThreadsNamesOneThreadFirst) {
    auto arm = replicatedArm(1, 1.5, 1);
    arm.applied.intra_op_threads = 8;
    auto w = R::processWarnings(arm);
    ASSERT_EQ(w.size(), 1u);
    const auto todo = w[0].find("What to do: set the knob intra_op_threads to 1 first (this arm ran 8 intra-op threads");
    EXPECT_NE(todo, std::string::npos) << w[0];
    EXPECT_NE(w[0].find("processes 1.50x apart), then look for other load"), std::string::npos) << w[0];
    arm.applied.intra_op_threads = 1;
    w = R::processWarnings(arm);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].find("intra_op_threads"), std::string::npos) << w[0];
    // With the fault explanation too, the threads still come first.
    auto faulting = replicatedArm(2, 4.0, 60);
    faulting.applied.intra_op_threads = 2;
    w = R::processWarnings(faulting);
    EXPECT_NE(w[0].find("What to do: set the knob intra_op_threads to 1 first"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("then add an arm with the knob allocator"), std::string::npos) << w[0];
}

TEST(Processes, AgreeingProcessesWarnNothing) {
    EXPECT_TRUE(R::processWarnings(replicatedArm(0, 1.1, 1)).empty());
}

TEST(Processes, ReplicationSummarySaysHowManyProcessesAndWhy) {
    R::RunResult run;
    EXPECT_EQ(R::replicationSummary(run), "");
    run.replication = {{"processes", 3}, {"processes_min", 3}, {"processes_max", 3}};
    EXPECT_EQ(R::replicationSummary(run), "3 worker processes per arm");
    run.replication["processes_max"] = 6;
    EXPECT_EQ(R::replicationSummary(run),
              "3 worker processes per arm (every comparison conclusive at the minimum; up to 6 "
              "if not)");
    run.replication["processes"] = 4;
    run.replication["extensions"] = json::array({json::array({"B vs A after 3 processes: ..."})});
    EXPECT_EQ(R::replicationSummary(run),
              "4 worker processes per arm: 3, then 1 more until every comparison was conclusive");
    run.replication["processes"] = 6;
    run.replication["stopped"] = "run.max_processes reached";
    EXPECT_EQ(R::replicationSummary(run),
              "6 worker processes per arm: 3, then 3 more while a comparison was inconclusive "
              "(the cap, run.max_processes)");
    // Carried through the results JSON.
    EXPECT_EQ(R::fromResultsJson(R::toResultsJson(run)).replication, run.replication);
}

// A budgeted run says its design, and its warmups when they were fewer than asked.
TEST(Processes, ReplicationSummaryOfABudgetSaysTheWarmups) {
    R::RunResult run;
    run.replication = {{"budget_ms", 30000},
                       {"processes", 18},
                       {"design", {{"first", {{"iters_per_process", 8}, {"variance_ratio", 4.0},
                                              {"variance_ratio_source", "prior"}}},
                                   {"added", json::array()}}}};
    const std::string base =
        "18 worker processes per arm, planned to fit a 30 s budget (8 iterations each; Kalibera & Jones with a "
        "variance ratio of 4, prior)";
    EXPECT_EQ(R::replicationSummary(run), base);
    run.replication["warmup"] = {{"asked", 10}, {"later_rounds", 10}, {"round0", {10, 10}}};
    EXPECT_EQ(R::replicationSummary(run), base) << "as asked: nothing to say";
    run.replication["warmup"] = {{"asked", 10}, {"later_rounds", 3}, {"round0", {10, 7}}};
    EXPECT_EQ(R::replicationSummary(run),
              base + "; warmup 7-10 iterations in the first process, 3 in later ones (10 asked; they had settled)");
}

// Issue 41: what was measured next to what was asked (the runner's asked_iters and
// measured_iters), said only when they differ; a run recorded before says nothing of it.
TEST(Processes, ReplicationSummarySaysMeasuredWhereItIsNotWhatWasAsked) {
    R::RunResult run;
    run.replication = {{"processes", 6}, {"processes_min", 3}, {"processes_max", 6},
                       {"extensions", json::array({json::array({"..."})})}, {"stopped", "cap"},
                       {"asked_iters", 60}, {"planned_iters", {60, 120}},
                       {"measured_iters", {{"A", 120}, {"B", 120}}}};
    EXPECT_EQ(R::replicationSummary(run),
              "6 worker processes per arm: 3, then 3 more while a comparison was inconclusive "
              "(the cap, run.max_processes); measured 120 iterations per arm where 60 were asked "
              "(run.iters)");
    run.replication["measured_iters"] = {{"A", 60}, {"B", 40}};
    EXPECT_NE(R::replicationSummary(run).find("measured iterations per arm: A 60, B 40 where 60 were asked"),
              std::string::npos)
        << R::replicationSummary(run);
    run.replication = {{"asked_iters", 60}, {"measured_iters", {{"A", 60}, {"B", 60}}}};
    EXPECT_EQ(R::replicationSummary(run), "") << "as asked: nothing to say";
    run.replication["measured_iters"] = {{"A", 90}, {"B", 90}};  // adaptive stopping: no processes
    EXPECT_EQ(R::replicationSummary(run), "measured 90 iterations per arm where 60 were asked (run.iters)");
}

// An arm's profile as a trace file: nothing without a profile; a trace stored before the worker
// ordered its events (children first, no thread names) comes out in order of start, the longer
// first at equal starts, under the arm's name, each thread named.
TEST(ProfileTrace, ArmNameThreadNamesAndEventsInOrderOfStart) {
    R::ArmResult arm;
    arm.name = "B";
    EXPECT_EQ(R::profileTraceJson(arm), "");
    arm.profile = {{"iters", 2}, {"batch_size", 4}, {"profiler", "legacy"}, {"ops", json::array()}};
    EXPECT_EQ(R::profileTraceJson(arm), "") << "a profile without a trace";
    auto x = [](const char* name, double ts, double dur, int tid) {
        return json{{"name", name}, {"ph", "X"}, {"ts", ts},
                    {"dur", dur},   {"pid", 42}, {"tid", tid}};
    };
    arm.profile["trace"] = {
        {"traceEvents", json::array({x("aten::relu", 5, 1, 1), x("child", 2, 1, 1),
                                     x("parent", 2, 3, 1), x("other", 1, 1, 7)})}};
    const json t = json::parse(R::profileTraceJson(arm));
    EXPECT_EQ(t["displayTimeUnit"], "ms");
    EXPECT_EQ(t["otherData"]["pitlane_arm"], "B");
    EXPECT_EQ(t["otherData"]["iters"], 2);
    const json& ev = t["traceEvents"];
    ASSERT_EQ(ev.size(), 8u) << ev.dump();
    EXPECT_EQ(ev[0]["name"], "process_name");
    EXPECT_EQ(ev[0]["args"]["name"], "B");
    EXPECT_EQ(ev[0]["pid"], 42);
    EXPECT_EQ(ev[1]["name"], "process_labels");
    EXPECT_NE(
        ev[1]["args"]["labels"].get<std::string>().find("batch size 4, 2 profiled iterations"),
        std::string::npos);
    EXPECT_EQ(ev[2]["name"], "thread_name");
    EXPECT_EQ(ev[2]["tid"], 1);
    EXPECT_EQ(ev[3]["name"], "thread_name");
    EXPECT_EQ(ev[3]["tid"], 7);
    std::vector<std::string> order;
    for (std::size_t i = 4; i < ev.size(); ++i) order.push_back(ev[i]["name"]);
    EXPECT_EQ(order, (std::vector<std::string>{"other", "parent", "child", "aten::relu"}));
    // Thread names the worker wrote are kept, not named again.
    arm.profile["trace"]["traceEvents"].push_back({{"name", "thread_name"},
                                                   {"ph", "M"},
                                                   {"pid", 42},
                                                   {"tid", 1},
                                                   {"args", {{"name", "main"}}}});
    const json named = json::parse(R::profileTraceJson(arm));
    int names = 0;
    for (const auto& e : named["traceEvents"])
        if (e["name"] == "thread_name" && e["tid"] == 1) {
            ++names;
            EXPECT_EQ(e["args"]["name"], "main");
        }
    EXPECT_EQ(names, 1);
}
