// RunRecorder on real runs of the bundled mlp model, and the history panel's operations on what
// it stored: load back, list, rename, baseline, compare across runs, import, delete.
#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_recorder.h"
#include "pitlane/store/run_store.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QFile>
#include <QTemporaryDir>
#include <QTimer>

#include <gtest/gtest.h>

using namespace pitlane;
using store::RunStore;

namespace {

spec::Preset mlpPreset(const std::string& name, int iters,
                       nlohmann::json knobsA = {{"grad", "enabled"}, {"intra_op_threads", 1}},
                       nlohmann::json knobsB = {{"grad", "inference_mode"},
                                                {"intra_op_threads", 1}}) {
    const std::string modelDir = qEnvironmentVariable("PITLANE_MODEL_DIR").toStdString();
    const nlohmann::json j = {
        {"name", name},
        {"model", "mlp"},
        {"run", {{"warmup_iters", 5}, {"iters", iters}, {"block_iters", iters / 3}}},
        {"arms", {{{"name", "A"}, {"knobs", knobsA}}, {{"name", "B"}, {"knobs", knobsB}}}}};
    return spec::parsePreset(j, "<test>", modelDir);
}

// Runs the preset with a recorder attached; returns the live result and the run id. `onThread`:
// the window's recorder (its own connection to the file, writes on a thread of its own).
std::pair<results::RunResult, qint64> recordRun(RunStore& store, const spec::Preset& preset,
                                                bool onThread = false) {
    session::RunnerOptions opts;
    opts.workerPath = session::defaultWorkerPath();
    session::ExperimentRunner runner(opts);
    auto recorder = onThread
                        ? std::make_unique<store::RunRecorder>(store.path(), QStringLiteral("test"))
                        : std::make_unique<store::RunRecorder>(&store, QStringLiteral("test"));
    EXPECT_EQ(recorder->writesOnThread(), onThread);
    runner.addFeed(recorder.get());
    QString storeError;
    QObject::connect(recorder.get(), &store::RunRecorder::storeError,
                     [&](const QString& e) { storeError = e; });
    qint64 stored = 0;
    QEventLoop loop;
    QObject::connect(recorder.get(), &store::RunRecorder::runStored, [&](qint64 id) {
        stored = id;
        loop.quit();
    });
    QTimer::singleShot(60000, &loop, &QEventLoop::quit);
    runner.start(preset);
    if (!stored) loop.exec();  // inline, the run is stored when the runner finishes
    EXPECT_FALSE(runner.isRunning()) << "the run did not finish in 60 s";
    EXPECT_TRUE(storeError.isEmpty()) << storeError.toStdString();
    EXPECT_GT(stored, 0) << "runStored never came";
    EXPECT_EQ(stored, recorder->runId());
    return {runner.result(), recorder->runId()};
}

void expectSameArm(const results::ArmResult& live, const results::ArmResult& loaded) {
    EXPECT_EQ(loaded.name, live.name);
    EXPECT_EQ(loaded.status, live.status);
    EXPECT_EQ(loaded.knobs, live.knobs);
    EXPECT_EQ(loaded.knobs_written, live.knobs_written);
    EXPECT_EQ(results::knobsJson(loaded), results::knobsJson(live));
    EXPECT_EQ(loaded.applied, live.applied);
    EXPECT_EQ(loaded.environment, live.environment);
    EXPECT_EQ(loaded.loaded, live.loaded);
    EXPECT_EQ(loaded.batch_size, live.batch_size);
    EXPECT_EQ(loaded.warmup_ns, live.warmup_ns);
    EXPECT_EQ(loaded.peak_rss_bytes, live.peak_rss_bytes);
    EXPECT_EQ(loaded.warnings, live.warnings);
    EXPECT_EQ(loaded.pid, live.pid);
    EXPECT_EQ(loaded.batch_sizes, live.batch_sizes);
    EXPECT_EQ(loaded.workers, live.workers);
    EXPECT_EQ(loaded.worker_pids, live.worker_pids);
    EXPECT_EQ(loaded.worker_applied, live.worker_applied);
    EXPECT_EQ(loaded.sweep_failures.size(), live.sweep_failures.size());
    ASSERT_EQ(loaded.samples.size(), live.samples.size());
    for (std::size_t i = 0; i < live.samples.size(); ++i) {
        EXPECT_EQ(loaded.samples[i].block, live.samples[i].block) << i;
        EXPECT_EQ(loaded.samples[i].iter, live.samples[i].iter) << i;
        EXPECT_EQ(loaded.samples[i].batch_size, live.samples[i].batch_size) << i;
        EXPECT_EQ(loaded.samples[i].worker, live.samples[i].worker) << i;
        EXPECT_EQ(loaded.samples[i].latency_ns, live.samples[i].latency_ns) << i;
        EXPECT_EQ(loaded.samples[i].process, live.samples[i].process) << i;
    }
    // Every worker process: identity, cold costs, page faults; and what is derived from them.
    ASSERT_EQ(loaded.processes.size(), live.processes.size());
    for (std::size_t i = 0; i < live.processes.size(); ++i) {
        const auto &l = live.processes[i], &s = loaded.processes[i];
        // Every field of ProcessInfo's table, as recorded live and read back.
        EXPECT_TRUE(protocol::record::equal(s, l))
            << i << ": " << protocol::record::toJson(s) << " vs " << protocol::record::toJson(l);
        // The timed loops' CPU time, wall time and context switches (block_done, measured by the
        // worker's getrusage around each loop): a real process waits (voluntary switches: the
        // OpenMP pool, the channel) and runs on the CPU.
        EXPECT_GT(l.cpu_wall_ms, 0) << i;
        EXPECT_GT(l.cpu_ms, 0) << i;
    }
    const auto ps = results::processSummaries(live), pl = results::processSummaries(loaded);
    ASSERT_EQ(pl.size(), ps.size());
    for (std::size_t i = 0; i < ps.size(); ++i) {
        EXPECT_EQ(pl[i].n, ps[i].n) << i;
        EXPECT_DOUBLE_EQ(pl[i].median_ns, ps[i].median_ns) << i;
    }
    EXPECT_DOUBLE_EQ(results::minorFaultsPerIter(loaded), results::minorFaultsPerIter(live));
    const auto vs = results::varianceShares(live), vl = results::varianceShares(loaded);
    EXPECT_EQ(vl.computed, vs.computed);
    EXPECT_DOUBLE_EQ(vl.between_processes, vs.between_processes);
    EXPECT_DOUBLE_EQ(vl.between_blocks, vs.between_blocks);
    EXPECT_DOUBLE_EQ(vl.within_blocks, vs.within_blocks);
    EXPECT_EQ(results::processWarnings(loaded), results::processWarnings(live));
    ASSERT_EQ(loaded.metrics.size(), live.metrics.size());
    for (std::size_t i = 0; i < live.metrics.size(); ++i) {
        EXPECT_DOUBLE_EQ(loaded.metrics[i].t_ms, live.metrics[i].t_ms);
        // The worker's own clock (issue 41: CPU rates are taken over it) is kept.
        EXPECT_GE(live.metrics[i].sampled_ms, 0);
        EXPECT_DOUBLE_EQ(loaded.metrics[i].sampled_ms, live.metrics[i].sampled_ms);
        EXPECT_EQ(loaded.metrics[i].rss_bytes, live.metrics[i].rss_bytes);
        EXPECT_EQ(loaded.metrics[i].tensor_bytes, live.metrics[i].tensor_bytes);
        EXPECT_DOUBLE_EQ(loaded.metrics[i].cpu_s, live.metrics[i].cpu_s);
        EXPECT_EQ(loaded.metrics[i].core_util_pct, live.metrics[i].core_util_pct);
        EXPECT_EQ(loaded.metrics[i].worker, live.metrics[i].worker);
        EXPECT_EQ(loaded.metrics[i].process, live.metrics[i].process);
        EXPECT_EQ(loaded.metrics[i].raw, live.metrics[i].raw);
    }
}

}  // namespace

class History : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(dir.isValid());
        ASSERT_TRUE(store.open(dir.filePath(QStringLiteral("history.sqlite"))))
            << store.lastError().toStdString();
    }
    QTemporaryDir dir;
    RunStore store;
};

// Everything the live run holds, read back from the file.
void expectStoredAsLive(RunStore& store, const results::RunResult& live, qint64 id) {
    ASSERT_GT(id, 0);
    ASSERT_TRUE(live.allOk());
    const auto loaded = store.loadRun(id);
    ASSERT_TRUE(loaded) << store.lastError().toStdString();
    EXPECT_EQ(loaded->preset.name, "recorded");
    EXPECT_EQ(loaded->preset.model, "mlp");
    EXPECT_EQ(loaded->preset_json, live.preset_json);
    EXPECT_EQ(loaded->started_at, live.started_at);
    EXPECT_DOUBLE_EQ(loaded->wall_s, live.wall_s);
    ASSERT_EQ(loaded->arms.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        // At least three fresh processes per arm (the default run.processes; more when rounds
        // were added), each with its own samples.
        ASSERT_GE(live.arms[i].processes.size(), 3u);
        for (const auto& p : results::processSummaries(live.arms[i])) {
            EXPECT_GT(p.info.pid, 0);
            EXPECT_GT(p.n, 0u);
            EXPECT_GT(p.info.fault_iters, 0);
        }
        expectSameArm(live.arms[i], loaded->arms[i]);
    }
    // 600 iterations per arm, or more when the runner added rounds of processes.
    EXPECT_EQ(store.sampleCount(id), qint64(live.arms[0].samples.size() + live.arms[1].samples.size()));
    EXPECT_GE(store.sampleCount(id), 600);
    // The verdict of the stored run is the verdict of the live one.
    const auto a = results::compareArms(live), b = results::compareArms(*loaded);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(a[0].verdict, b[0].verdict);
    EXPECT_DOUBLE_EQ(a[0].ratio, b[0].ratio);
    EXPECT_DOUBLE_EQ(a[0].ci_low, b[0].ci_low);

    // Everything the results JSON says about the run is the same, read back or live.
    EXPECT_EQ(results::toResultsJson(*loaded), results::toResultsJson(live));

    const auto info = store.runInfo(id);
    ASSERT_TRUE(info);
    EXPECT_TRUE(info->complete());
    EXPECT_EQ(info->source, QStringLiteral("test"));
    EXPECT_EQ(info->verdict, QString::fromStdString(a[0].verdict));
    EXPECT_EQ(info->arms, (QStringList{QStringLiteral("A"), QStringLiteral("B")}));
    EXPECT_EQ(info->armStatuses, (QStringList{QStringLiteral("ok"), QStringLiteral("ok")}));
}

TEST_F(History, RecordedRunLoadsBackIdentical) {
    const auto [live, id] = recordRun(store, mlpPreset("recorded", 300));
    expectStoredAsLive(store, live, id);
}

// The window's recorder: copies of every event written in batches on the writer thread, the
// verdict computed there; the file holds exactly what the inline recorder writes.
TEST_F(History, RecordedOnAWriterThreadLoadsBackIdentical) {
    const auto [live, id] = recordRun(store, mlpPreset("recorded", 300), /*onThread=*/true);
    expectStoredAsLive(store, live, id);
}

TEST_F(History, SweepsAndConcurrentWorkersLoadBackIdentical) {
    const auto [live, id] = recordRun(
        store, mlpPreset("sweep and workers", 60, {{"batch_size", {1, 4}}, {"intra_op_threads", 1}},
                         {{"workers", 2}, {"intra_op_threads", 1}}));
    ASSERT_TRUE(live.allOk());
    ASSERT_EQ(live.arms[0].batch_sizes, (std::vector<int>{1, 4}));
    ASSERT_EQ(live.arms[1].workers, 2);
    const auto loaded = store.loadRun(id);
    ASSERT_TRUE(loaded) << store.lastError().toStdString();
    for (std::size_t i = 0; i < 2; ++i) expectSameArm(live.arms[i], loaded->arms[i]);
    EXPECT_EQ(results::toResultsJson(*loaded), results::toResultsJson(live));
}

TEST_F(History, PanelOperations) {
    const auto [run1, id1] = recordRun(store, mlpPreset("first", 150));
    const auto [run2, id2] = recordRun(store, mlpPreset("second", 150));
    ASSERT_GT(id2, id1);
    auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 2);
    EXPECT_EQ(runs[0].id, id2);  // newest first
    EXPECT_EQ(runs[1].id, id1);

    ASSERT_TRUE(store.renameRun(id1, QStringLiteral("last week's build")));
    EXPECT_EQ(store.runInfo(id1)->label, QStringLiteral("last week's build"));
    EXPECT_FALSE(store.renameRun(9999, QStringLiteral("x")));

    // One baseline per model: marking the second clears the first.
    ASSERT_TRUE(store.setBaseline(id1, true));
    EXPECT_EQ(store.baselineRun(QStringLiteral("mlp")), id1);
    ASSERT_TRUE(store.setBaseline(id2, true));
    EXPECT_EQ(store.baselineRun(QStringLiteral("mlp")), id2);
    EXPECT_FALSE(store.runInfo(id1)->baseline);
    ASSERT_TRUE(store.setBaseline(id2, false));
    EXPECT_FALSE(store.baselineRun(QStringLiteral("mlp")).has_value());

    // Arm B of the first run against arm A of the second.
    const auto cmp = store.compareRuns(id1, 1, id2, 0);
    ASSERT_TRUE(cmp) << store.lastError().toStdString();
    ASSERT_EQ(cmp->run.arms.size(), 2u);
    EXPECT_EQ(cmp->run.arms[0].name, "#" + std::to_string(id1) + " B");
    EXPECT_EQ(cmp->run.arms[1].name, "#" + std::to_string(id2) + " A");
    EXPECT_EQ(cmp->run.arms[0].samples.size(), run1.arms[1].samples.size());
    EXPECT_EQ(cmp->comparison.baseline, cmp->run.arms[0].name);
    EXPECT_FALSE(cmp->comparison.verdict.empty());
    EXPECT_FALSE(cmp->note.empty());
    const auto direct = stats::compare(run1.arms[1].name, run1.arms[1].blocked(), run2.arms[0].name,
                                       run2.arms[0].blocked());
    EXPECT_DOUBLE_EQ(cmp->comparison.ratio, direct.ratio);
    EXPECT_FALSE(cmp->run.interleaved);
    EXPECT_NE(cmp->note.find("not interleaved"), std::string::npos) << cmp->note;

    // Two arms of one run: interleaved as measured, the run's own verdict to the last digit.
    const auto same = store.compareRuns(id1, 0, id1, 1);
    ASSERT_TRUE(same) << store.lastError().toStdString();
    EXPECT_TRUE(same->run.interleaved);
    EXPECT_EQ(same->note.find("different runs"), std::string::npos) << same->note;
    const auto own = results::compareArms(run1);
    ASSERT_EQ(own.size(), 1u);
    EXPECT_DOUBLE_EQ(same->comparison.ratio, own[0].ratio);
    EXPECT_DOUBLE_EQ(same->comparison.ci_low, own[0].ci_low);
    EXPECT_DOUBLE_EQ(same->comparison.ci_high, own[0].ci_high);
    EXPECT_EQ(same->comparison.p_value, own[0].p_value);

    EXPECT_FALSE(store.compareRuns(id1, 5, id2, 0).has_value());
    EXPECT_TRUE(store.lastError().contains(QStringLiteral("no arm 5")));

    // Delete cascades to every row of the run.
    ASSERT_TRUE(store.deleteRun(id1));
    EXPECT_FALSE(store.loadRun(id1).has_value());
    EXPECT_EQ(store.sampleCount(id1), 0);
    runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1);
    EXPECT_EQ(runs[0].id, id2);
    EXPECT_FALSE(store.deleteRun(id1));
}

TEST_F(History, ImportedResultsJsonGivesTheSameNumbers) {
    const auto [live, id] = recordRun(store, mlpPreset("to export", 150));
    const auto exported = results::toResultsJson(*store.loadRun(id));
    const auto reimported = results::fromResultsJson(nlohmann::json::parse(exported.dump()));
    const auto newId = store.importRun(reimported, QStringLiteral("import"));
    ASSERT_TRUE(newId) << store.lastError().toStdString();
    const auto back = store.loadRun(*newId);
    ASSERT_TRUE(back);
    const auto again = results::toResultsJson(*back);
    ASSERT_EQ(again["arms"].size(), exported["arms"].size());
    for (std::size_t i = 0; i < exported["arms"].size(); ++i) {
        EXPECT_EQ(again["arms"][i]["latency_ns"], exported["arms"][i]["latency_ns"]);
        EXPECT_EQ(again["arms"][i]["block"], exported["arms"][i]["block"]);
        EXPECT_EQ(again["arms"][i]["summary"], exported["arms"][i]["summary"]);
        EXPECT_EQ(again["arms"][i]["cold"], exported["arms"][i]["cold"]);
        EXPECT_EQ(again["arms"][i]["applied"], exported["arms"][i]["applied"]);
    }
    EXPECT_EQ(again["comparisons"], exported["comparisons"]);
    EXPECT_EQ(store.runInfo(*newId)->source, QStringLiteral("import"));
}

// The writer thread commits a batch in one transaction, and a write that fails in it (an arm id
// that does not exist: foreign key) rolls back alone; each write's outcome reaches its owner.
TEST_F(History, WriterThreadBatchKeepsGoodWritesWhenOneFails) {
    const auto [live, id] = recordRun(store, mlpPreset("batched", 60));
    ASSERT_GT(id, 0);
    QObject owner;
    std::vector<std::pair<bool, QString>> outcomes;
    auto note = [&](bool ok, const QString& e) { outcomes.emplace_back(ok, e); };
    {
        store::HistoryWriter writer(store.path(), &owner);
        ASSERT_TRUE(writer.onThread());
        const results::SampleSeries one{results::Sample{}};
        writer.post([&](RunStore& s) { return s.renameRun(id, QStringLiteral("first")); }, note);
        writer.post([&](RunStore& s) { return s.appendSamples(987654321, one, 0, 1); }, note);
        writer.post([&](RunStore& s) { return s.setBaseline(id, true); }, note);
        writer.drain();
    }
    QCoreApplication::processEvents();  // the outcomes are queued to the owner's thread
    ASSERT_EQ(outcomes.size(), 3u);
    EXPECT_TRUE(outcomes[0].first) << outcomes[0].second.toStdString();
    EXPECT_FALSE(outcomes[1].first);
    EXPECT_TRUE(outcomes[1].second.contains(QStringLiteral("record samples")))
        << outcomes[1].second.toStdString();
    EXPECT_TRUE(outcomes[2].first) << outcomes[2].second.toStdString();
    const auto info = store.runInfo(id);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->label, QStringLiteral("first"));
    EXPECT_TRUE(info->baseline);
    EXPECT_EQ(store.sampleCount(id), qint64(live.arms[0].samples.size() + live.arms[1].samples.size()));
}

// A history file the writer cannot open: every write is reported failed with the reason.
TEST_F(History, WriterThreadReportsAFileItCannotOpen) {
    QObject owner;
    std::vector<std::pair<bool, QString>> outcomes;
    const QString notSqlite = dir.filePath(QStringLiteral("not.sqlite"));
    QFile f(notSqlite);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("this is not a database, it is text\n");
    f.close();
    {
        store::HistoryWriter writer(notSqlite, &owner);
        writer.post([](RunStore&) { return true; },
                    [&](bool ok, const QString& e) { outcomes.emplace_back(ok, e); });
    }
    QCoreApplication::processEvents();
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_FALSE(outcomes[0].first);
    EXPECT_TRUE(outcomes[0].second.contains(QStringLiteral("not an SQLite database")))
        << outcomes[0].second.toStdString();
}
