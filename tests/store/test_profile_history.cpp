// Operator profiles in the history (schema v8, issue 14): a profile written and read back
// through a real SQLite file exactly as it went in (importRun and updateProfile), a v7 file
// migrated (its runs have no profile, and a profile can be added to them), and real runs of the
// bundled mlp with run.profile_iters recorded through ExperimentRunner (inline, where the profile
// is committed before anyone else hears of its event, and on a writer thread like the window's).
#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_recorder.h"
#include "pitlane/store/run_store.h"

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
using nlohmann::json;
using store::RunStore;

namespace {

// A profile as the worker sends it, with figures that a lossy round trip would change: doubles
// of 17 significant digits, a 64-bit count, shapes as text, nested trace arguments.
json handProfile(double scale) {
    json ops = json::array();
    ops.push_back({{"name", "aten::linear"},
                   {"calls", 9},
                   {"self_us", 0.1 + 0.2 * scale},
                   {"total_us", 123.45678901234567 * scale},
                   {"input_shapes",
                    {{{"shapes", "[[1, 784], [256, 784], [256]]"}, {"calls", 3}},
                     {{"shapes", "[[1, 256], [10, 256], [10]]"}, {"calls", 3}}}}});
    ops.push_back({{"name", "aten::relu"},
                   {"calls", 6},
                   {"self_us", 1e-9 * scale},
                   {"total_us", 7.0},
                   {"input_shapes", {{{"shapes", "[[1, 256]]"}, {"calls", 6}}}}});
    json events = json::array();
    for (int i = 0; i < 5; ++i)
        events.push_back({{"name", i % 2 ? "aten::relu" : "aten::linear"},
                          {"ph", "X"},
                          {"ts", 1700000000123.25 + i},
                          {"dur", 0.3333333333333333 * (i + 1)},
                          {"pid", 4242},
                          {"tid", 4242},
                          {"args", {{"Input Dims", {{1, 784}, {256, 784}}}}}});
    return {{"iters", 3},
            {"batch_size", 1},
            {"wall_ms", 2.718281828459045 * scale},
            {"profiler", "legacy (autograd profiler, CPU)"},
            {"events_total", std::int64_t(9007199254740993)},
            {"ops", ops},
            {"trace", {{"traceEvents", events}, {"displayTimeUnit", "ms"}}}};
}

results::RunResult handRun() {
    results::RunResult r;
    r.preset.name = "profiled by hand";
    r.preset.model = "mlp";
    r.started_at = "2026-11-24T10:00:00Z";
    for (const char* name : {"A", "B", "C"}) {
        results::ArmResult a;
        a.name = name;
        a.status = results::kOk;
        a.samples = {{0, 0, 1, 0, 1000, 0}, {0, 1, 1, 0, 1100, 0}};
        r.arms.push_back(a);
    }
    r.arms[0].profile = handProfile(1);
    r.arms[1].profile = handProfile(2);  // C: not profiled
    return r;
}

}  // namespace

TEST(ProfileHistory, ImportedProfileReadsBackExactly) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    const auto run = handRun();
    qint64 id = 0;
    {
        RunStore s;
        ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
        const auto stored = s.importRun(run, QStringLiteral("test"));
        ASSERT_TRUE(stored) << s.lastError().toStdString();
        id = *stored;
    }
    EXPECT_EQ(rawCount(path, QStringLiteral("profiles")), 2);
    RunStore s;  // a fresh connection: everything comes from the file
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    const auto back = s.loadRun(id);
    ASSERT_TRUE(back) << s.lastError().toStdString();
    ASSERT_EQ(back->arms.size(), 3u);
    EXPECT_EQ(back->arms[0].profile, run.arms[0].profile);
    EXPECT_EQ(back->arms[0].profile.dump(), run.arms[0].profile.dump());  // every digit
    EXPECT_EQ(back->arms[1].profile.dump(), run.arms[1].profile.dump());
    EXPECT_TRUE(back->arms[2].profile.is_null()) << "an arm that was not profiled has none";
    EXPECT_EQ(results::profileTable(*back), results::profileTable(run));
    EXPECT_EQ(results::profileTraceJson(back->arms[1]), results::profileTraceJson(run.arms[1]));
    EXPECT_NE(results::profileTraceJson(back->arms[1]).find("\"aten::relu\""), std::string::npos);
    EXPECT_EQ(results::profileTraceJson(back->arms[2]), "");
    // The results JSON of the loaded run carries the same profiles.
    EXPECT_EQ(results::toResultsJson(*back)["arms"][0]["profile"], run.arms[0].profile);
    // Deleting the run deletes its profiles.
    ASSERT_TRUE(s.deleteRun(id));
    EXPECT_EQ(rawCount(path, QStringLiteral("profiles")), 0);
}

TEST(ProfileHistory, UpdateProfileReplacesTheArmsRow) {
    QTemporaryDir dir;
    RunStore s;
    ASSERT_TRUE(s.open(dir.filePath(QStringLiteral("h.sqlite")))) << s.lastError().toStdString();
    auto run = handRun();
    for (auto& a : run.arms) {
        a.profile = json();
        a.status = results::kPending;
    }
    const auto rec = s.beginRun(run, QStringLiteral("test"));
    ASSERT_TRUE(rec) << s.lastError().toStdString();
    ASSERT_TRUE(s.updateProfile(rec->armIds[2], handProfile(3))) << s.lastError().toStdString();
    ASSERT_TRUE(s.updateProfile(rec->armIds[2], handProfile(5))) << s.lastError().toStdString();
    // The run never finished (its recorder was killed): the profile is there all the same.
    const auto back = s.loadRun(rec->id);
    ASSERT_TRUE(back) << s.lastError().toStdString();
    EXPECT_TRUE(back->arms[0].profile.is_null());
    EXPECT_EQ(back->arms[2].profile.dump(), handProfile(5).dump());
    EXPECT_EQ(back->arms[2].status, results::kCancelled);  // interrupted, as any unfinished arm
}

// A v7 file (before profiles) migrates to v8; its runs read as runs without a profile, and the
// migrated file takes profiles.
TEST(ProfileHistory, V7FileMigratesAndItsRunsHaveNoProfile) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v7.sqlite"));
    QString err;
    ASSERT_TRUE(store::migrateSchema(path, 7, &err)) << err.toStdString();
    ASSERT_EQ(rawScalar(path, QStringLiteral("PRAGMA user_version")), 7);
    EXPECT_EQ(rawScalar(path, QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name = "
                                            "'profiles'")),
              0);
    {
        const QString name = QStringLiteral("v7-writer");
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
                                      "(1, 1, 0, 'A', 'ok'), (2, 1, 1, 'B', 'ok')")));
            ASSERT_TRUE(
                q.exec(QStringLiteral("INSERT INTO samples (arm, block, iter, batch_size, "
                                      "latency_ns) VALUES (1, 0, 0, 1, 1000), (2, 0, 0, 1, 900)")));
        }
        QSqlDatabase::removeDatabase(name);
    }
    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    EXPECT_EQ(s.schemaVersion(), RunStore::kSchemaVersion);  // v8 and every later step
    EXPECT_EQ(rawCount(path, QStringLiteral("profiles")), 0);
    auto run = s.loadRun(1);
    ASSERT_TRUE(run) << s.lastError().toStdString();
    ASSERT_EQ(run->arms.size(), 2u);
    for (const auto& a : run->arms) EXPECT_TRUE(a.profile.is_null()) << a.name;
    EXPECT_EQ(run->arms[0].samples.size(), 1u);
    EXPECT_TRUE(results::profileRows(*run).empty());
    ASSERT_TRUE(s.updateProfile(2, handProfile(1))) << s.lastError().toStdString();
    run = s.loadRun(1);
    ASSERT_TRUE(run) << s.lastError().toStdString();
    EXPECT_EQ(run->arms[1].profile, handProfile(1));
    EXPECT_EQ(results::profileRows(*run).arms, std::vector<std::size_t>{1});
}

namespace {

spec::Preset profiledPreset() {
    const std::string modelDir = qEnvironmentVariable("PITLANE_MODEL_DIR").toStdString();
    const json j = {
        {"name", "profile history"},
        {"model", "mlp"},
        {"run",
         {{"warmup_iters", 2}, {"iters", 20}, {"block_iters", 10}, {"processes", 1},
          {"profile_iters", 3}}},
        {"arms",
         {{{"name", "grad"}, {"knobs", {{"grad", "enabled"}, {"intra_op_threads", 1}}}},
          {{"name", "nograd"}, {"knobs", {{"grad", "no_grad"}, {"intra_op_threads", 1}}}}}}};
    return spec::parsePreset(j, "<test>", modelDir);
}

void checkRecordedProfiledRun(bool onThread) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    session::RunnerOptions opts;
    opts.workerPath = session::defaultWorkerPath();
    session::ExperimentRunner runner(opts);
    auto recorder = onThread ? std::make_unique<store::RunRecorder>(path, QStringLiteral("test"))
                             : std::make_unique<store::RunRecorder>(&s, QStringLiteral("test"));
    runner.addFeed(recorder.get());
    QString storeError;
    QObject::connect(recorder.get(), &store::RunRecorder::storeError,
                     [&](const QString& e) { storeError = e; });
    // Inline, a profile is committed before anyone else hears of its event (the recorder was
    // connected first): what a run killed right after it keeps.
    std::vector<qint64> rowsAtProfileEvent;
    QObject::connect(&runner, &session::ExperimentRunner::armEvent, [&](int, const protocol::Event& ev) {
        if (std::holds_alternative<protocol::Profile>(ev))
            rowsAtProfileEvent.push_back(
                rawCount(path, QStringLiteral("profiles")));
    });
    qint64 stored = 0;
    QEventLoop loop;
    QObject::connect(recorder.get(), &store::RunRecorder::runStored, [&](qint64 id) {
        stored = id;
        loop.quit();
    });
    QTimer::singleShot(90000, &loop, &QEventLoop::quit);
    runner.start(profiledPreset());
    if (!stored) loop.exec();
    ASSERT_FALSE(runner.isRunning()) << "the run did not finish in 90 s";
    EXPECT_TRUE(storeError.isEmpty()) << storeError.toStdString();
    ASSERT_GT(stored, 0) << "runStored never came";
    const auto& live = runner.result();
    ASSERT_TRUE(live.allOk());
    ASSERT_EQ(rowsAtProfileEvent.size(), 2u);  // one process per arm: one profile event each
    if (!onThread) {
        EXPECT_EQ(rowsAtProfileEvent, (std::vector<qint64>{1, 2}));
    }

    const auto back = s.loadRun(stored);
    ASSERT_TRUE(back) << s.lastError().toStdString();
    ASSERT_EQ(back->arms.size(), live.arms.size());
    for (std::size_t i = 0; i < live.arms.size(); ++i) {
        SCOPED_TRACE(live.arms[i].name);
        ASSERT_TRUE(live.arms[i].profile.is_object());
        EXPECT_EQ(live.arms[i].profile["iters"], 3);
        EXPECT_EQ(back->arms[i].profile, live.arms[i].profile);
        EXPECT_EQ(results::profileTraceJson(back->arms[i]),
                  results::profileTraceJson(live.arms[i]));
        EXPECT_FALSE(live.arms[i].profile["trace"]["traceEvents"].empty());
    }
    EXPECT_EQ(results::profileTable(*back, 100), results::profileTable(live, 100));
    EXPECT_NE(results::profileTable(*back, 100).find("aten::linear"), std::string::npos);
}

}  // namespace

TEST(ProfileHistory, RecordedProfiledRunLoadsBackIdentical) {
    checkRecordedProfiledRun(false);
}

TEST(ProfileHistory, RecordedOnAWriterThreadLoadsBackIdentical) {
    checkRecordedProfiledRun(true);
}
