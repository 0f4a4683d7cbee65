// Serving runs in the history (schema v7): a run built by hand through importRun and loadRun,
// levels written in chunks as the recorder streams them, a v6 file migrated, and real serving
// runs of the bundled mlp recorded through ExperimentRunner (inline and on a writer thread).
#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_recorder.h"
#include "pitlane/store/run_store.h"

#include "serving_run.h"

#include <QEventLoop>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTimer>
#include <QVariant>

#include <gtest/gtest.h>

#include "raw_sql.h"

using namespace pitlane;
using pitlane::testing::rawCount;
using pitlane::testing::rawScalar;
using store::RunStore;

namespace {

void expectSameLevels(const std::vector<results::ServingLevel>& live,
                      const std::vector<results::ServingLevel>& loaded) {
    ASSERT_EQ(loaded.size(), live.size());
    for (std::size_t i = 0; i < live.size(); ++i) {
        SCOPED_TRACE("level " + std::to_string(i));
        const auto &a = live[i], &b = loaded[i];
        EXPECT_EQ(b.level, a.level);
        EXPECT_EQ(b.process, a.process);
        EXPECT_EQ(b.worker, a.worker);
        EXPECT_DOUBLE_EQ(b.rate_per_s, a.rate_per_s);
        EXPECT_EQ(b.clients, a.clients);
        EXPECT_EQ(b.complete, a.complete);
        EXPECT_EQ(b.load.arrival, a.load.arrival);
        EXPECT_DOUBLE_EQ(b.load.rate_per_s, a.load.rate_per_s);
        EXPECT_EQ(b.load.clients, a.load.clients);
        EXPECT_DOUBLE_EQ(b.load.duration_ms, a.load.duration_ms);
        EXPECT_EQ(b.load.seed, a.load.seed);
        EXPECT_EQ(b.load.max_batch, a.load.max_batch);
        EXPECT_DOUBLE_EQ(b.load.max_wait_ms, a.load.max_wait_ms);
        EXPECT_DOUBLE_EQ(b.load.saturation_ms, a.load.saturation_ms);
        EXPECT_EQ(b.load.idle, a.load.idle);
        EXPECT_EQ(b.record.scheduled, a.record.scheduled);
        EXPECT_EQ(b.record.max_queue, a.record.max_queue);
        EXPECT_EQ(b.record.saturated, a.record.saturated);
        EXPECT_EQ(b.record.arrival_ns, a.record.arrival_ns);
        ASSERT_EQ(b.record.batches.size(), a.record.batches.size());
        for (std::size_t k = 0; k < a.record.batches.size(); ++k) {
            EXPECT_EQ(b.record.batches[k].size, a.record.batches[k].size) << k;
            EXPECT_EQ(b.record.batches[k].free_ns, a.record.batches[k].free_ns) << k;
            EXPECT_EQ(b.record.batches[k].start_ns, a.record.batches[k].start_ns) << k;
            EXPECT_EQ(b.record.batches[k].end_ns, a.record.batches[k].end_ns) << k;
        }
    }
}

// What every view computes from the levels: the points, the capacity, the verdict, the JSON.
void expectSameServingFigures(const results::RunResult& live, const results::RunResult& loaded) {
    EXPECT_TRUE(loaded.preset.serving.enabled);
    EXPECT_EQ(spec::servingToJson(loaded.preset.serving), spec::servingToJson(live.preset.serving));
    ASSERT_EQ(loaded.arms.size(), live.arms.size());
    for (std::size_t i = 0; i < live.arms.size(); ++i) {
        SCOPED_TRACE(live.arms[i].name);
        expectSameLevels(live.arms[i].serving, loaded.arms[i].serving);
        EXPECT_TRUE(loaded.arms[i].samples.empty());
        EXPECT_EQ(results::servingArmJson(loaded, i), results::servingArmJson(live, i));
    }
    EXPECT_EQ(results::servingVerdict(loaded), results::servingVerdict(live));
    EXPECT_EQ(results::servingTable(loaded), results::servingTable(live));
    EXPECT_EQ(results::servingRequestsCsv(loaded), results::servingRequestsCsv(live));
}

QString joinedVerdict(const results::RunResult& run) {
    QStringList lines;
    for (const auto& l : results::servingVerdict(run)) lines << QString::fromStdString(l);
    return lines.join(QStringLiteral("; "));
}

}  // namespace

TEST(ServingHistory, HandBuiltRunRoundTripsWithEveryLevelAndBatch) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    EXPECT_EQ(s.schemaVersion(), RunStore::kSchemaVersion);  // v7 or later
    auto run = fixtures::handBuiltServingRun();
    // A lesson judged on the levels when the run is stored (the checks of the dynamic batching
    // lesson), like the verdict.
    run.preset.lesson = {{"title", "batching keeps up"},
                         {"checks",
                          {{{"kind", "saturated"}, {"arm", "b1"}, {"rate", 800}},
                           {{"kind", "keeps_up"}, {"arm", "b4"}, {"rate", 800}}}}};
    // The run is what the fixture promises: b1 saturates at 800/s, b4 meets the SLO there.
    const auto b1 = results::servingPoints(run, 0), b4 = results::servingPoints(run, 1);
    ASSERT_EQ(b1.size(), 2u);
    ASSERT_EQ(b4.size(), 2u);
    EXPECT_TRUE(b1[1].pooled.saturated);
    EXPECT_TRUE(b4[1].meetsSlo()) << b4[1].pooled.p99_ms;

    const auto id = s.importRun(run, QStringLiteral("test"));
    ASSERT_TRUE(id) << s.lastError().toStdString();
    EXPECT_EQ(rawCount(path, QStringLiteral("serving_levels")), 9);
    const auto back = s.loadRun(*id);
    ASSERT_TRUE(back) << s.lastError().toStdString();
    expectSameServingFigures(run, *back);
    EXPECT_FALSE(back->arms[1].serving.back().complete);  // the level cut short stays cut short

    // The history list's verdict is the serving verdict (a serving run has no samples).
    const auto info = s.runInfo(*id);
    ASSERT_TRUE(info);
    EXPECT_FALSE(info->verdict.isEmpty());
    EXPECT_EQ(info->verdict, joinedVerdict(run));
    EXPECT_TRUE(info->verdict.contains(QStringLiteral("b4"))) << info->verdict.toStdString();
    EXPECT_EQ(info->lessonStatus(), QStringLiteral("reproduced")) << info->lesson.dump();

    // Deleting the run deletes its levels and batches.
    ASSERT_TRUE(s.deleteRun(*id));
    EXPECT_EQ(rawCount(path, QStringLiteral("serving_levels")), 0);
    EXPECT_EQ(rawCount(path, QStringLiteral("serving_batches")), 0);
}

// The recorder writes a level's row, then its batches in chunks as they stream in; a chunk that
// does not continue where the stored ones end is left out and the level marked cut short.
TEST(ServingHistory, ChunksStreamedInPiecesReadBackAsOneLevel) {
    QTemporaryDir dir;
    RunStore s;
    ASSERT_TRUE(s.open(dir.filePath(QStringLiteral("h.sqlite")))) << s.lastError().toStdString();
    const auto full = fixtures::handBuiltServingRun();
    auto rows = full;
    for (auto& a : rows.arms) a.serving.clear();
    const auto rec = s.beginRun(rows, QStringLiteral("test"));
    ASSERT_TRUE(rec) << s.lastError().toStdString();
    const auto& level = full.arms[1].serving[1];  // b4 at 800/s, process 0
    results::ServingLevel row = level;
    row.record.batches.clear();
    row.record.arrival_ns.clear();
    row.complete = false;
    ASSERT_TRUE(s.updateServingLevel(rec->armIds[1], 0, row)) << s.lastError().toStdString();
    // Three chunks of batches with their requests' arrivals, as serve_batches events bring them.
    const auto& batches = level.record.batches;
    std::size_t b = 0, r = 0;
    for (std::size_t cut : {batches.size() / 4, batches.size() / 2, batches.size()}) {
        store::ServingChunk c;
        c.first_batch = b;
        c.first_request = r;
        for (; b < cut; ++b) {
            c.batches.push_back(batches[b]);
            for (int k = 0; k < batches[b].size; ++k)
                c.arrival_ns.push_back(level.record.arrival_ns[r++]);
        }
        ASSERT_TRUE(s.appendServingChunk(rec->armIds[1], c)) << s.lastError().toStdString();
    }
    // The block_done: the final figures, and arrivals never served (none here).
    row.complete = true;
    ASSERT_TRUE(s.updateServingLevel(rec->armIds[1], 0, row));
    auto back = s.loadRun(rec->id);
    ASSERT_TRUE(back) << s.lastError().toStdString();
    expectSameLevels({level}, back->arms[1].serving);

    // A chunk out of step (it claims to start at batch 0 again): dropped, the level cut short.
    store::ServingChunk stray;
    stray.batches = {batches.front()};
    stray.arrival_ns = {level.record.arrival_ns.front()};
    ASSERT_TRUE(s.appendServingChunk(rec->armIds[1], stray));
    back = s.loadRun(rec->id);
    ASSERT_TRUE(back);
    ASSERT_EQ(back->arms[1].serving.size(), 1u);
    EXPECT_FALSE(back->arms[1].serving[0].complete);
    EXPECT_EQ(back->arms[1].serving[0].record.batches.size(), batches.size());
}

// A v6 file (before serving) migrates to v7 and its runs read as runs without serving levels.
TEST(ServingHistory, V6FileMigratesAndItsRunsHaveNoLevels) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v6.sqlite"));
    QString err;
    ASSERT_TRUE(store::migrateSchema(path, 6, &err)) << err.toStdString();
    {
        // A run written by the v6 schema, through the v6 tables only.
        const QString name = QStringLiteral("v6-writer");
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
            db.setDatabaseName(path);
            ASSERT_TRUE(db.open());
            QSqlQuery q(db);
            ASSERT_TRUE(q.exec(QStringLiteral(
                "INSERT INTO experiments (id, started_at, finished_at, name, model, preset) VALUES "
                "(1, '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 'old', 'mlp', "
                "'{\"name\": \"old\", \"model\": \"mlp\"}')")));
            ASSERT_TRUE(
                q.exec(QStringLiteral("INSERT INTO arms (id, experiment, idx, name, status) VALUES "
                                      "(1, 1, 0, 'A', 'ok')")));
            ASSERT_TRUE(
                q.exec(QStringLiteral("INSERT INTO samples (arm, block, iter, batch_size, "
                                      "latency_ns) VALUES (1, 0, 0, 1, 1000)")));
        }
        QSqlDatabase::removeDatabase(name);
    }
    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    EXPECT_EQ(s.schemaVersion(), RunStore::kSchemaVersion);  // v7 and every later step
    EXPECT_EQ(rawCount(path, QStringLiteral("serving_levels")), 0);
    const auto run = s.loadRun(1);
    ASSERT_TRUE(run) << s.lastError().toStdString();
    EXPECT_FALSE(run->preset.serving.enabled);
    ASSERT_EQ(run->arms.size(), 1u);
    EXPECT_TRUE(run->arms[0].serving.empty());
    EXPECT_EQ(run->arms[0].samples.size(), 1u);
}

namespace {

// Two arms of the bundled mlp under Poisson load: one request at a time, and batches of up to 4.
spec::Preset servingPreset() {
    const std::string modelDir = qEnvironmentVariable("PITLANE_MODEL_DIR").toStdString();
    const nlohmann::json j = {
        {"name", "serving history"},
        {"model", "mlp"},
        {"run", {{"warmup_iters", 2}, {"processes", 1}}},
        {"serving", {{"arrival", "poisson"}, {"rates", {100, 300}}, {"duration_ms", 300}}},
        {"arms",
         {{{"name", "b1"}, {"knobs", {{"intra_op_threads", 1}}}},
          {{"name", "b4"},
           {"knobs", {{"intra_op_threads", 1}, {"max_batch", 4}, {"max_wait_ms", 1}}}}}}};
    return spec::parsePreset(j, "<test>", modelDir);
}

// Runs the preset with a recorder attached (inline, or on a writer thread like the window's);
// returns the live result and the run id.
std::pair<results::RunResult, qint64> recordServingRun(RunStore& store, bool onThread) {
    session::RunnerOptions opts;
    opts.workerPath = session::defaultWorkerPath();
    session::ExperimentRunner runner(opts);
    auto recorder = onThread
                        ? std::make_unique<store::RunRecorder>(store.path(), QStringLiteral("test"))
                        : std::make_unique<store::RunRecorder>(&store, QStringLiteral("test"));
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
    QTimer::singleShot(90000, &loop, &QEventLoop::quit);
    runner.start(servingPreset());
    if (!stored) loop.exec();
    EXPECT_FALSE(runner.isRunning()) << "the run did not finish in 90 s";
    EXPECT_TRUE(storeError.isEmpty()) << storeError.toStdString();
    EXPECT_GT(stored, 0) << "runStored never came";
    return {runner.result(), stored};
}

void checkRecordedServingRun(bool onThread) {
    QTemporaryDir dir;
    RunStore s;
    ASSERT_TRUE(s.open(dir.filePath(QStringLiteral("h.sqlite")))) << s.lastError().toStdString();
    const auto [live, id] = recordServingRun(s, onThread);
    ASSERT_GT(id, 0);
    ASSERT_TRUE(live.allOk());
    for (const auto& a : live.arms) {
        ASSERT_EQ(a.serving.size(), 2u) << a.name;  // one process, two rates
        for (const auto& l : a.serving) {
            EXPECT_TRUE(l.complete);
            EXPECT_GT(l.record.served(), 0);
        }
    }
    const auto back = s.loadRun(id);
    ASSERT_TRUE(back) << s.lastError().toStdString();
    expectSameServingFigures(live, *back);
    const auto info = s.runInfo(id);
    ASSERT_TRUE(info && info->complete());
    EXPECT_EQ(info->verdict, joinedVerdict(live));
}

}  // namespace

TEST(ServingHistory, RecordedServingRunLoadsBackIdentical) {
    checkRecordedServingRun(false);
}

TEST(ServingHistory, RecordedOnAWriterThreadLoadsBackIdentical) {
    checkRecordedServingRun(true);
}
