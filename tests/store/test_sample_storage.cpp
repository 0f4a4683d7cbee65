// Issue 31: samples stored compactly (schema v10 sample_chunks), read back the same, and every
// statistic the same as before. A history written by the v9 build (data/history_v9.sqlite, a
// 2-arm mlp run of 2 processes x 2 blocks of 2100 iterations, written by pitlane-cli at commit
// fbd00a2, with `report --json` of that build in data/history_v9_expected.json) is migrated and
// must give the same summaries, processes, variance shares and comparison (the bootstrap CI of
// the same seed) to the last digit. Real SQLite files in a temporary folder.
#include "pitlane/results/run_result.h"
#include "pitlane/stats/stats.h"
#include "pitlane/store/run_store.h"

#include "raw_sql.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <fstream>
#include <random>

using pitlane::store::RunStore;
namespace results = pitlane::results;
namespace stats = pitlane::stats;
using json = nlohmann::json;

namespace {

const QString kData = QStringLiteral(PITLANE_TEST_DATA_DIR);

// A run of `arms` arms, `processes` replicates x `blocks` blocks of `perBlock` samples each,
// with drift between blocks and a long tail (deterministic).
results::RunResult syntheticRun(int processes, int blocks, int perBlock, int arms = 2) {
    results::RunResult run;
    run.preset.name = run.preset.model = "synthetic";
    run.preset_json = {{"name", "synthetic"}, {"model", "synthetic"}};
    run.started_at = "2026-11-27T00:00:00Z";
    std::mt19937_64 rng(42);
    for (int a = 0; a < arms; ++a) {
        results::ArmResult arm;
        arm.name = std::string(1, char('A' + a));
        arm.status = results::kOk;
        int iter = 0;
        for (int p = 0; p < processes; ++p) {
            results::ProcessInfo info;
            info.replicate = p;
            info.pid = 1000 + p;
            arm.processes.push_back(info);
            for (int b = 0; b < blocks; ++b) {
                const std::int64_t base = 4000 + 37 * a + 11 * p + 3 * b;
                for (int k = 0; k < perBlock; ++k) {
                    std::int64_t ns = base + std::int64_t(rng() % 400);
                    if (rng() % 1000 == 0) ns += std::int64_t(rng() % 2'000'000);  // a tail
                    arm.samples.push_back({p * blocks + b, iter++, 1, 0, ns, p});
                }
            }
        }
        arm.warmup_ns = {90000, 12000, 5000};
        run.arms.push_back(std::move(arm));
    }
    return run;
}

// Records `run` as pitlane-cli does: the experiment, the samples in batches as they would
// arrive, the run's end. Returns the run id (0 when a write failed).
qint64 record(RunStore& store, results::RunResult& run, std::size_t batch) {
    const auto ids = store.beginRun(run, QStringLiteral("test"));
    if (!ids) return 0;
    for (std::size_t a = 0; a < run.arms.size(); ++a) {
        const auto& s = run.arms[a].samples;
        for (std::size_t at = 0; at < s.size(); at += batch)
            if (!store.appendSamples(ids->armIds[a], s, at, std::min(batch, s.size() - at)))
                return 0;
        if (!store.appendWarmup(ids->armIds[a], run.arms[a].warmup_ns, 0, 1)) return 0;
    }
    return store.finishRun(ids->id, run) ? ids->id : 0;
}

json readJson(const QString& path) {
    std::ifstream in(path.toStdString());
    return json::parse(in);
}

}  // namespace

TEST(SampleStorage, ChunksRoundTripEverySampleAndWarmup) {
    QTemporaryDir dir;
    RunStore store;
    ASSERT_TRUE(store.open(dir.filePath(QStringLiteral("h.sqlite")))) << store.lastError().toStdString();
    auto run = syntheticRun(2, 3, 2500);
    // Odd fields: a second worker, another batch size, iterations that skip, extreme latencies.
    auto& b = run.arms[1];
    b.samples.push_back({9, 77, 1, 1, std::numeric_limits<std::int64_t>::max(), 1});
    b.samples.push_back({9, 78, 1, 1, std::numeric_limits<std::int64_t>::min(), 1});
    b.samples.push_back({9, 5, 4, 0, 0, 1});
    b.samples.push_back({9, 6, 4, 0, -1, 1});
    const qint64 id = record(store, run, 1000);
    ASSERT_GT(id, 0) << store.lastError().toStdString();
    const auto loaded = store.loadRun(id);
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->arms.size(), 2u);
    for (std::size_t a = 0; a < 2; ++a) {
        EXPECT_TRUE(loaded->arms[a].samples == run.arms[a].samples) << "arm " << a;
        EXPECT_EQ(loaded->arms[a].warmup_ns, run.arms[a].warmup_ns);
    }
    EXPECT_EQ(store.sampleCount(id), qint64(run.arms[0].samples.size() + b.samples.size()));
    // Nothing is written to the v1-v9 table any more.
    EXPECT_EQ(pitlane::testing::rawScalar(store.path(), QStringLiteral("SELECT count(*) FROM samples")), 0);
}

TEST(SampleStorage, StatisticsAndStoredComparisonsAreTheSameAfterReopening) {
    QTemporaryDir dir;
    RunStore store;
    ASSERT_TRUE(store.open(dir.filePath(QStringLiteral("h.sqlite"))));
    auto run = syntheticRun(2, 4, 3000);  // blocks over 2000: the bootstrap's quantiles
    const auto before = results::compareArms(run);
    ASSERT_EQ(before.size(), 1u);
    const qint64 id = record(store, run, 700);
    ASSERT_GT(id, 0) << store.lastError().toStdString();
    const auto loaded = store.loadRun(id);
    ASSERT_TRUE(loaded);
    // The comparisons come back with the run (no bootstrap when it is reopened) ...
    ASSERT_TRUE(loaded->comparison_memo.has_value());
    const auto after = results::compareArms(*loaded);
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].ratio, before[0].ratio);
    EXPECT_EQ(after[0].ci_low, before[0].ci_low);
    EXPECT_EQ(after[0].ci_high, before[0].ci_high);
    EXPECT_EQ(after[0].p_value, before[0].p_value);
    EXPECT_EQ(after[0].verdict, before[0].verdict);
    EXPECT_EQ(after[0].method, before[0].method);
    // ... and are what the samples give when computed again.
    results::RunResult fresh = *loaded;
    fresh.comparison_memo.reset();
    const auto again = results::compareArms(fresh);
    EXPECT_EQ(again[0].ci_low, before[0].ci_low);
    EXPECT_EQ(again[0].ci_high, before[0].ci_high);
    // Every exact statistic, to the last bit.
    const json j0 = results::toResultsJson(run), j1 = results::toResultsJson(*loaded);
    for (std::size_t a = 0; a < 2; ++a) {
        EXPECT_EQ(j0["arms"][a]["summary"], j1["arms"][a]["summary"]);
        EXPECT_EQ(j0["arms"][a]["processes"], j1["arms"][a]["processes"]);
        EXPECT_EQ(j0["arms"][a]["variance"], j1["arms"][a]["variance"]);
        EXPECT_EQ(j0["arms"][a]["latency_ns"], j1["arms"][a]["latency_ns"]);
    }
    EXPECT_EQ(j0["comparisons"], j1["comparisons"]);
}

TEST(SampleStorage, AV9HistoryOfTheOldBuildGivesTheSameFigures) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v9.sqlite"));
    ASSERT_TRUE(QFile::copy(kData + QStringLiteral("/history_v9.sqlite"), path));
    QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    ASSERT_EQ(pitlane::testing::rawScalar(path, QStringLiteral("PRAGMA user_version")), 9);
    const json expected = readJson(kData + QStringLiteral("/history_v9_expected.json"));
    {
        RunStore store;
        ASSERT_TRUE(store.open(path)) << store.lastError().toStdString();
        const auto run = store.loadRun(1);
        ASSERT_TRUE(run);
        EXPECT_FALSE(run->comparison_memo.has_value());  // v9 stored none: computed again
        const json j = results::toResultsJson(*run);
        ASSERT_EQ(j["arms"].size(), expected["arms"].size());
        for (std::size_t a = 0; a < j["arms"].size(); ++a) {
            const auto& e = expected["arms"][a];
            const auto& g = j["arms"][a];
            EXPECT_EQ(g["summary"], e["summary"]) << "arm " << a;
            // Every figure the v9 build wrote, to the last digit; fields added since (the
            // timed loop's voluntary_switches, read from an old row as 0) may be more.
            ASSERT_EQ(g["processes"].size(), e["processes"].size()) << "arm " << a;
            for (std::size_t p = 0; p < e["processes"].size(); ++p)
                for (const auto& [key, value] : e["processes"][p].items())
                    EXPECT_EQ(g["processes"][p].value(key, json()), value) << "arm " << a << " process " << p << " " << key;
            EXPECT_EQ(g["variance"], e["variance"]) << "arm " << a;
            ASSERT_EQ(g["latency_ns"].size(), e["n_latency"].get<std::size_t>());
            for (std::size_t k = 0; k < 5; ++k) {
                EXPECT_EQ(g["latency_ns"][k], e["latency_head"][k]);
                EXPECT_EQ(g["latency_ns"][g["latency_ns"].size() - 5 + k], e["latency_tail"][k]);
            }
        }
        // comparisons[].caveats (issue 41) came later than the old build: its arms ran as asked.
        json comparisons = j["comparisons"];
        for (auto& c : comparisons) {
            EXPECT_EQ(c.value("caveats", json::array()), json::array()) << c.dump();
            c.erase("caveats");
        }
        EXPECT_EQ(comparisons, expected["comparisons"]);
        EXPECT_EQ(store.sampleCount(1), 8400);
    }
    const auto check = RunStore::checkIntegrity(path);
    EXPECT_TRUE(check.problems.isEmpty()) << check.problems.join('\n').toStdString();
    EXPECT_EQ(check.schemaVersion, RunStore::kSchemaVersion);  // v10 and every later step
    EXPECT_EQ(check.samples, 8400);
}

TEST(SampleStorage, CheckHistoryFindsADamagedChunk) {
    QTemporaryDir dir;
    RunStore store;
    ASSERT_TRUE(store.open(dir.filePath(QStringLiteral("h.sqlite"))));
    auto run = syntheticRun(1, 2, 100);
    const qint64 id = record(store, run, 100);
    ASSERT_GT(id, 0);
    auto sound = RunStore::checkIntegrity(store.path());
    EXPECT_TRUE(sound.problems.isEmpty()) << sound.problems.join('\n').toStdString();
    EXPECT_EQ(sound.samples, 400);
    // A BLOB cut short: SQLite's own check cannot see it, the chunk's count can.
    ASSERT_EQ(pitlane::testing::rawExec(
                  store.path(), QStringLiteral("UPDATE sample_chunks SET latency_ns = "
                                               "substr(latency_ns, 1, 10) WHERE rowid = 2")),
              QString());
    const auto damaged = RunStore::checkIntegrity(store.path());
    ASSERT_EQ(damaged.problems.size(), 1);
    EXPECT_TRUE(damaged.problems[0].contains(QStringLiteral("does not hold the 100 latencies")))
        << damaged.problems[0].toStdString();
}

TEST(SampleStorage, FewerThanEightBytesASample) {
    QTemporaryDir dir;
    RunStore store;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    ASSERT_TRUE(store.open(path));
    auto run = syntheticRun(1, 10, 20000);  // 400 000 samples of ~4 us with a tail
    ASSERT_GT(record(store, run, 5000), 0);
    pitlane::testing::rawExec(path, QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)"));
    const double perSample = double(QFileInfo(path).size()) / 400000.0;
    EXPECT_LT(perSample, 8.0);
    std::cerr << "history file: " << perSample << " bytes per sample\n";
}

TEST(SampleStorage, MannWhitneyOnSortedSamplesIsTheSameToTheBit) {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 20; ++round) {
        std::vector<double> x(500 + rng() % 3000), y(500 + rng() % 3000);
        const int spread = 1 + int(rng() % 200);  // few distinct values: many ties
        for (auto& v : x) v = double(1000 + int(rng() % std::uint64_t(spread)));
        for (auto& v : y) v = double(1003 + int(rng() % std::uint64_t(spread)));
        const auto plain = stats::mannWhitneyU(x, y);
        std::sort(x.begin(), x.end());
        std::sort(y.begin(), y.end());
        const auto sorted = stats::mannWhitneyUSorted(x, y);
        EXPECT_EQ(plain.u, sorted.u);
        EXPECT_EQ(plain.z, sorted.z);
        EXPECT_EQ(plain.p_value, sorted.p_value);
    }
}

// The window reopens a run with its memos computed on the reader thread (results::warmArmMemos):
// the summary read from the memoized sorted latencies, the process medians and the variance
// shares are the same to the bit as computed from the samples without any memo.
TEST(SampleStorage, WarmedMemosGiveTheSameFiguresToTheBit) {
    const auto plain = syntheticRun(3, 4, 2500);
    const auto warmed = syntheticRun(3, 4, 2500);  // the same samples (a fixed seed)
    for (const auto& a : warmed.arms) EXPECT_EQ(results::memoizedSortedLatencies(a), nullptr);
    results::warmArmMemos(warmed);
    for (std::size_t i = 0; i < plain.arms.size(); ++i) {
        const auto& p = plain.arms[i];
        const auto& w = warmed.arms[i];
        const auto sorted = results::memoizedSortedLatencies(w);
        ASSERT_NE(sorted, nullptr);
        ASSERT_EQ(sorted->size(), p.samples.size());
        EXPECT_TRUE(std::is_sorted(sorted->begin(), sorted->end()));
        EXPECT_EQ(results::sortedLatencies(w), sorted);  // the memo, not a new sort
        // The verdict's thread works on a copy (armSettings and the shared samples): it finds
        // the memos; a copy with other samples does not.
        auto mirror = results::armSettings(w);
        EXPECT_EQ(results::memoizedSortedLatencies(mirror), nullptr);
        mirror.samples = w.samples;
        EXPECT_EQ(results::memoizedSortedLatencies(mirror), sorted);
        EXPECT_EQ(mirror.summary_memo, w.summary_memo);
        const auto sp = stats::summarize(p.latencies(), p.batch_size), sw = results::summarize(w);
        EXPECT_EQ(sp.n, sw.n);
        for (auto field : {&stats::Summary::mean, &stats::Summary::sd, &stats::Summary::median,
                           &stats::Summary::p90, &stats::Summary::p99, &stats::Summary::p999,
                           &stats::Summary::min, &stats::Summary::max, &stats::Summary::throughput_per_s})
            EXPECT_EQ(sp.*field, sw.*field);
        const auto vp = stats::varianceShares(p.blocked()), vw = results::varianceShares(w);
        EXPECT_EQ(vp.between_processes, vw.between_processes);
        EXPECT_EQ(vp.between_blocks, vw.between_blocks);
        EXPECT_EQ(vp.within_blocks, vw.within_blocks);
        const auto pp = results::processSummaries(p), pw = results::processSummaries(w);
        ASSERT_EQ(pp.size(), pw.size());
        for (std::size_t k = 0; k < pp.size(); ++k) {
            EXPECT_EQ(pp[k].n, pw[k].n);
            EXPECT_EQ(pp[k].median_ns, pw[k].median_ns);
        }
    }
    // A memo is of the samples it was computed from: one more sample and it is not used.
    auto grown = syntheticRun(1, 1, 100, 1);
    results::warmArmMemos(grown);
    const auto before = results::summarize(grown.arms[0]);
    grown.arms[0].samples.push_back({1, 100, 1, 0, 1'000'000'000, 0});
    EXPECT_EQ(results::memoizedSortedLatencies(grown.arms[0]), nullptr);
    EXPECT_EQ(results::summarize(grown.arms[0]).n, before.n + 1);
    EXPECT_EQ(results::summarize(grown.arms[0]).max, 1e9);
    EXPECT_EQ(results::sortedLatencies(grown.arms[0])->back(), 1e9);
}

TEST(SampleStorage, SummarizeSortedIsSummarizeToTheBit) {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 10; ++round) {
        std::vector<double> v(1 + rng() % 5000);
        for (auto& x : v) x = double(3000 + rng() % 100000) * (rng() % 50 == 0 ? 40.0 : 1.0);
        const auto a = stats::summarize(v, 4);
        std::sort(v.begin(), v.end());
        const auto b = stats::summarizeSorted(v, 4);
        EXPECT_EQ(a.n, b.n);
        for (auto field : {&stats::Summary::mean, &stats::Summary::sd, &stats::Summary::cov,
                           &stats::Summary::median, &stats::Summary::p90, &stats::Summary::p95,
                           &stats::Summary::p99, &stats::Summary::p999, &stats::Summary::min,
                           &stats::Summary::max, &stats::Summary::throughput_per_s})
            EXPECT_EQ(a.*field, b.*field);
    }
}

// forEachSpan from sample `first`: every sample from there, in order, with its run's fields, as
// series[i] reads them (a view that has shown the first samples walks only the new ones).
TEST(SampleStorage, SpansFromAnySampleAreTheSamplesFromThere) {
    results::SampleSeries s;
    std::mt19937_64 rng(3);
    int iter = 0;
    for (int run = 0; run < 40; ++run) {
        std::vector<std::int64_t> ns(1 + rng() % 9000);
        for (auto& x : ns) x = std::int64_t(rng() % 1'000'000);
        s.append(run / 3, iter, 1 + run % 2, run % 2, run / 10, ns.data(), ns.size());
        iter += int(ns.size());
    }
    ASSERT_GT(s.size(), 2 * results::SampleSeries::kChunk);
    for (std::size_t first : {std::size_t(0), std::size_t(1), std::size_t(8999),
                              results::SampleSeries::kChunk - 1, results::SampleSeries::kChunk,
                              s.size() / 2, s.size() - 1, s.size(), s.size() + 5}) {
        std::size_t i = first;
        s.forEachSpan(
            [&](const results::SampleSeries::Run& r, std::size_t offset, const std::int64_t* ns, std::size_t n) {
                for (std::size_t k = 0; k < n; ++k, ++i) {
                    const auto expected = s[i];
                    const auto got = r.at(offset + k, ns[k]);
                    ASSERT_EQ(got.latency_ns, expected.latency_ns) << "from " << first << " at " << i;
                    ASSERT_EQ(got.iter, expected.iter);
                    ASSERT_EQ(got.block, expected.block);
                    ASSERT_EQ(got.batch_size, expected.batch_size);
                    ASSERT_EQ(got.worker, expected.worker);
                    ASSERT_EQ(got.process, expected.process);
                }
            },
            first);
        EXPECT_EQ(i, std::max(first, s.size())) << "from " << first;
    }
}

// sortedLatencies sorts the integer latencies (a radix sort): the same doubles as std::sort of
// the arm's latencies, negative and very large values too; one process's median read from them
// is stats::median's, for an odd and an even count.
TEST(SampleStorage, SortedLatenciesAndOneProcessMedianAreTheSortsAndTheMedians) {
    for (int blocks : {3, 4}) {
        auto run = syntheticRun(1, blocks, 1001, 1);
        auto& arm = run.arms[0];
        arm.samples.push_back({blocks, int(arm.samples.size()), 1, 0, -5, 0});
        arm.samples.push_back({blocks, int(arm.samples.size()), 1, 0, std::int64_t(1) << 60, 0});
        arm.samples.push_back({blocks, int(arm.samples.size()), 1, 0, 0, 0});
        arm.samples.push_back({blocks, int(arm.samples.size()), 2, 0, 7, 0});  // another batch size
        auto expected = arm.latencies();
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(*results::sortedLatencies(arm), expected);
        const double median = stats::median(arm.latencies());
        const auto processes = results::processSummaries(arm);
        ASSERT_EQ(processes.size(), 1u);
        EXPECT_EQ(processes[0].n, expected.size());
        EXPECT_EQ(processes[0].median_ns, median);
    }
}
