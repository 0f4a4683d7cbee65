// Opening history files: migration from v0, refusing newer or foreign files, WAL mode, rollback
// of a failed migration. Real SQLite files in a temporary folder.
#include "pitlane/store/run_store.h"
#include "raw_sql.h"

#include <QFile>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QVariant>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using pitlane::store::RunStore;

namespace {

// Runs statements on a file with a plain QSQLITE connection (what an older build would leave).
void rawExec(const QString& path, const QStringList& statements) {
    const QString name = QStringLiteral("raw-") + path;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        ASSERT_TRUE(db.open());
        QSqlQuery q(db);
        for (const auto& s : statements) ASSERT_TRUE(q.exec(s)) << s.toStdString();
    }
    QSqlDatabase::removeDatabase(name);
}

QVariant rawValue(const QString& path, const QString& sql) {
    const QString name = QStringLiteral("rawv-") + path;
    QVariant v;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery q(db);
            if (q.exec(sql) && q.next()) v = q.value(0);
        }
    }
    QSqlDatabase::removeDatabase(name);
    return v;
}

bool hasTable(const QString& path, const QString& table) {
    return rawValue(path, QStringLiteral("SELECT count(*) FROM sqlite_master WHERE type='table' "
                                         "AND name='%1'")
                              .arg(table))
               .toInt() == 1;
}

}  // namespace

TEST(Schema, FreshFileIsCreatedAtCurrentVersionInWalMode) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("sub/folder/history.sqlite"));
    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    EXPECT_EQ(s.schemaVersion(), RunStore::kSchemaVersion);
    EXPECT_EQ(s.journalMode().toLower(), QStringLiteral("wal"));
    EXPECT_TRUE(QFile::exists(path));
    for (const char* t : {"experiments", "arms", "samples", "metrics", "events"})
        EXPECT_TRUE(hasTable(path, QString::fromLatin1(t))) << t;
}

TEST(Schema, MigratesV0FileAndKeepsForeignTables) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v0.sqlite"));
    // v0: a SQLite file with user_version 0 and none of our tables (here, someone else's).
    rawExec(path, {QStringLiteral("CREATE TABLE notes (t TEXT)"),
                   QStringLiteral("INSERT INTO notes VALUES ('keep me')")});
    ASSERT_EQ(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 0);
    {
        RunStore s;
        ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
        EXPECT_EQ(s.schemaVersion(), RunStore::kSchemaVersion);
        pitlane::results::RunResult r;
        r.preset.name = "kept across reopen";
        r.preset.model = "mlp";
        r.arms.resize(1);
        r.arms[0].name = "A";
        ASSERT_TRUE(s.importRun(r, QStringLiteral("test")).has_value())
            << s.lastError().toStdString();
    }
    EXPECT_EQ(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(),
              RunStore::kSchemaVersion);
    EXPECT_EQ(rawValue(path, QStringLiteral("SELECT t FROM notes")).toString(),
              QStringLiteral("keep me"));
    // Reopening a current file migrates nothing and keeps the data.
    RunStore again;
    ASSERT_TRUE(again.open(path)) << again.lastError().toStdString();
    const auto runs = again.listRuns();
    ASSERT_EQ(runs.size(), 1);
    EXPECT_EQ(runs[0].name, QStringLiteral("kept across reopen"));
    EXPECT_EQ(runs[0].arms, QStringList{QStringLiteral("A")});
}

TEST(Schema, MigratesV1RunsKeepingEveryRow) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v1.sqlite"));
    QString err;
    ASSERT_TRUE(pitlane::store::migrateSchema(path, 1, &err)) << err.toStdString();
    ASSERT_EQ(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 1);
    // A run as a v1 build wrote it: no sweep, worker or raw-metric columns.
    QStringList rows = {
        QStringLiteral(
            "INSERT INTO experiments (id, started_at, finished_at, name, model, preset) "
            "VALUES (7, '2024-01-02T03:04:05Z', '2024-01-02T03:05:00Z', 'old run', 'mlp', "
            "'{\"name\": \"old run\", \"model\": \"mlp\"}')"),
        QStringLiteral("INSERT INTO arms (id, experiment, idx, name, batch_size, status, pid) "
                       "VALUES (70, 7, 0, 'A', 4, 'ok', 1234)"),
        QStringLiteral("INSERT INTO metrics (arm, t_ms, rss, cpu_s, core_util) "
                       "VALUES (70, 100, 1048576, 0.5, '[50, 25]')")};
    for (int i = 0; i < 30; ++i)
        rows << QStringLiteral(
                    "INSERT INTO samples (arm, block, iter, batch_size, latency_ns) "
                    "VALUES (70, %1, %2, 4, %3)")
                    .arg(i / 10)
                    .arg(i)
                    .arg(1000 + i);
    rawExec(path, rows);

    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    EXPECT_EQ(s.schemaVersion(), RunStore::kSchemaVersion);
    const auto run = s.loadRun(7);
    ASSERT_TRUE(run) << s.lastError().toStdString();
    EXPECT_EQ(run->preset.name, "old run");
    ASSERT_EQ(run->arms.size(), 1u);
    const auto& a = run->arms[0];
    ASSERT_EQ(a.samples.size(), 30u);
    EXPECT_EQ(a.samples[29].latency_ns, 1029);
    EXPECT_EQ(a.samples[29].block, 2);
    EXPECT_EQ(a.batch_sizes, std::vector<int>{4});
    EXPECT_EQ(a.workers, 1);
    EXPECT_EQ(a.worker_pids, std::vector<long>{1234});
    ASSERT_EQ(a.metrics.size(), 1u);
    EXPECT_EQ(a.metrics[0].worker, 0);
    EXPECT_EQ(a.metrics[0].rss_bytes, 1048576);
    EXPECT_EQ(a.metrics[0].core_util_pct, (std::vector<double>{50, 25}));
    EXPECT_EQ(pitlane::results::summarize(a).n, 30u);
    // One round of one worker: one process, the arm's pid.
    ASSERT_EQ(a.processes.size(), 1u);
    EXPECT_EQ(a.processes[0].pid, 1234);
    EXPECT_EQ(a.processes[0].replicate, 0);
    EXPECT_EQ(pitlane::results::processSummaries(a)[0].n, 30u);
}

// A run as a v2 build wrote it (two concurrent workers, no process column or table): after the
// migration every sample and tick reads as replicate 0, each worker is one process, and new runs
// store their processes in the same file.
TEST(Schema, MigratesV2RunsToV3WithOneProcessPerWorker) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v2.sqlite"));
    QString err;
    ASSERT_TRUE(pitlane::store::migrateSchema(path, 2, &err)) << err.toStdString();
    ASSERT_EQ(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 2);
    ASSERT_FALSE(hasTable(path, QStringLiteral("processes")));
    QStringList rows = {
        QStringLiteral(
            "INSERT INTO experiments (id, started_at, finished_at, name, model, preset) "
            "VALUES (3, '2025-01-02T03:04:05Z', '2025-01-02T03:05:00Z', 'v2 run', 'mlp', "
            "'{\"name\": \"v2 run\", \"model\": \"mlp\"}')"),
        QStringLiteral(
            "INSERT INTO arms (id, experiment, idx, name, status, pid, workers, worker_pids, "
            "loaded) VALUES (30, 3, 0, 'A', 'ok', 500, 2, '[500, 501]', "
            "'{\"load_ms\": 12.5, \"first_forward_ms\": 3.25}')"),
        QStringLiteral("INSERT INTO metrics (arm, t_ms, rss, worker) VALUES (30, 100, 4096, 1)")};
    for (int i = 0; i < 40; ++i)
        rows << QStringLiteral(
                    "INSERT INTO samples (arm, block, iter, batch_size, worker, latency_ns) "
                    "VALUES (30, %1, %2, 1, %3, %4)")
                    .arg(i / 10)
                    .arg(i)
                    .arg(i % 2)
                    .arg(1000 + (i % 2) * 500 + i);
    rawExec(path, rows);

    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    EXPECT_EQ(s.schemaVersion(), RunStore::kSchemaVersion);
    EXPECT_TRUE(hasTable(path, QStringLiteral("processes")));
    const auto run = s.loadRun(3);
    ASSERT_TRUE(run) << s.lastError().toStdString();
    EXPECT_EQ(run->stopping, nlohmann::json::object());  // v4's columns: nothing recorded
    EXPECT_EQ(run->replication, nlohmann::json::object());
    const auto& a = run->arms.at(0);
    ASSERT_EQ(a.samples.size(), 40u);
    for (const auto& smp : a.samples) EXPECT_EQ(smp.process, 0);
    ASSERT_EQ(a.metrics.size(), 1u);
    EXPECT_EQ(a.metrics[0].process, 0);
    EXPECT_EQ(a.metrics[0].worker, 1);
    ASSERT_EQ(a.processes.size(), 2u);
    EXPECT_EQ(a.processes[0].pid, 500);
    EXPECT_EQ(a.processes[1].pid, 501);
    EXPECT_EQ(a.processes[1].worker, 1);
    EXPECT_DOUBLE_EQ(a.processes[0].load_ms, 12.5);
    EXPECT_DOUBLE_EQ(a.processes[0].first_forward_ms, 3.25);
    EXPECT_DOUBLE_EQ(a.processes[1].load_ms, -1);  // only worker 0 reported its cold costs
    EXPECT_EQ(pitlane::results::minorFaultsPerIter(a), -1);  // v2 stored no page faults
    const auto ps = pitlane::results::processSummaries(a);
    ASSERT_EQ(ps.size(), 2u);
    EXPECT_EQ(ps[0].n, 20u);
    EXPECT_EQ(ps[1].n, 20u);
    EXPECT_LT(ps[0].median_ns, ps[1].median_ns);
}

namespace {

// Two arms of three replicates each; arm B's middle process is slow and faults every iteration.
pitlane::results::RunResult replicatedRun() {
    pitlane::results::RunResult r;
    r.preset.name = "replicates";
    r.preset.model = "mlp";
    r.started_at = "2026-01-01T00:00:00Z";
    for (int arm = 0; arm < 2; ++arm) {
        pitlane::results::ArmResult a;
        a.name = arm ? "B" : "A";
        a.status = pitlane::results::kOk;
        int iter = 0;
        for (int p = 0; p < 3; ++p) {
            pitlane::results::ProcessInfo info;
            info.replicate = p;
            info.pid = 1000 + 10 * arm + p;
            info.load_ms = 20.5 + p;
            info.first_forward_ms = 4.25 + p;
            const bool slow = arm == 1 && p == 1;
            info.fault_iters = 20;
            info.minor_faults = slow ? 20 * 150 : 3;
            info.major_faults = p;
            info.cpu_ms = 180.25 + p;
            info.cpu_wall_ms = 200.5;
            info.involuntary_switches = 7 + p;
            info.voluntary_switches = 11 + p;
            a.processes.push_back(info);
            for (int b = 0; b < 2; ++b)
                for (int k = 0; k < 10; ++k, ++iter)
                    a.samples.push_back({2 * p + b, iter, 1, 0,
                                         (slow ? 2'000'000 : 1'000'000) + 1000 * k + 300 * b, p});
        }
        pitlane::results::MetricTick t;
        t.t_ms = 10;
        t.process = 2;
        t.rss_bytes = 1 << 20;
        a.metrics.push_back(t);
        r.arms.push_back(std::move(a));
    }
    return r;
}

using pitlane::testing::rawCount;

}  // namespace

TEST(Schema, ProcessesAndSampleReplicatesRoundTrip) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    auto run = replicatedRun();
    run.replication = {{"processes", 3}, {"rule", "three rounds"}, {"extensions", nlohmann::json::array()}};
    run.stopping = {{"rule", "adaptive"}, {"stable", false}, {"message", "not stable yet"}};
    const auto id = s.importRun(run, QStringLiteral("test"));
    ASSERT_TRUE(id) << s.lastError().toStdString();
    EXPECT_EQ(rawCount(path, QStringLiteral("processes")), 6);
    const auto back = s.loadRun(*id);
    ASSERT_TRUE(back) << s.lastError().toStdString();
    for (std::size_t i = 0; i < 2; ++i) {
        const auto &a = run.arms[i], &b = back->arms[i];
        SCOPED_TRACE(a.name);
        ASSERT_EQ(b.samples.size(), a.samples.size());
        for (std::size_t k = 0; k < a.samples.size(); ++k)
            ASSERT_EQ(b.samples[k].process, a.samples[k].process) << k;
        ASSERT_EQ(b.metrics.size(), 1u);
        EXPECT_EQ(b.metrics[0].process, 2);
        ASSERT_EQ(b.processes.size(), 3u);
        for (std::size_t p = 0; p < 3; ++p)
            EXPECT_TRUE(pitlane::protocol::record::equal(b.processes[p], a.processes[p])) << p;
        // What the views derive: per-process medians, faults per iteration, variance shares.
        const auto ja = pitlane::results::toResultsJson(run)["arms"][i];
        const auto jb = pitlane::results::toResultsJson(*back)["arms"][i];
        EXPECT_EQ(jb["processes"], ja["processes"]);
        EXPECT_EQ(jb["variance"], ja["variance"]);
        EXPECT_EQ(jb["sample_process"], ja["sample_process"]);
        EXPECT_EQ(jb["summary"], ja["summary"]);
        EXPECT_EQ(pitlane::results::processWarnings(b), pitlane::results::processWarnings(a));
    }
    EXPECT_TRUE(pitlane::results::varianceShares(back->arms[1]).between_processes > 0.9);
    // How many rounds ran and why, and how the run stopped (its "not stable" warning with it).
    EXPECT_EQ(back->replication, run.replication);
    EXPECT_EQ(back->stopping, run.stopping);
    EXPECT_EQ(pitlane::results::runWarnings(*back), pitlane::results::runWarnings(run));
    EXPECT_EQ(pitlane::results::processWarnings(back->arms[1]).size(), 2u);  // spread, faults

    // Deleting the run deletes its processes.
    ASSERT_TRUE(s.deleteRun(*id));
    EXPECT_EQ(rawCount(path, QStringLiteral("processes")), 0);
}

// A lesson run keeps its judgement (schema v5): the history knows each lesson's status without
// loading the run; a run without lesson checks stores none.
TEST(Schema, LessonStatusIsStoredWithTheRun) {
    QTemporaryDir dir;
    RunStore s;
    ASSERT_TRUE(s.open(dir.filePath(QStringLiteral("h.sqlite")))) << s.lastError().toStdString();
    auto run = replicatedRun();
    const auto plain = s.importRun(run, QStringLiteral("test"));
    run.preset.lesson = {{"title", "B has a slow process"},
                         {"checks", {{{"kind", "lower"}, {"metric", "minor_faults_per_iter"},
                                      {"arm", "A"}, {"than", "B"}}}}};
    const auto lesson = s.importRun(run, QStringLiteral("test"));
    ASSERT_TRUE(plain && lesson) << s.lastError().toStdString();
    EXPECT_EQ(s.runInfo(*plain)->lessonStatus(), QString());
    const auto info = s.runInfo(*lesson);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->lessonStatus(), QStringLiteral("reproduced")) << info->lesson.dump();
    EXPECT_EQ(info->lesson["checks"].size(), 1u);
    EXPECT_EQ(info->lesson["title"], "B has a slow process");
    EXPECT_EQ(s.listRuns().front().lessonStatus(), QStringLiteral("reproduced"));
}

// The recorder rewrites a process's row as it reports more (pid, load, faults block by block):
// updateProcesses(first) replaces rows [first, end) and leaves the others alone.
TEST(Schema, UpdateProcessesReplacesTheTail) {
    QTemporaryDir dir;
    RunStore s;
    ASSERT_TRUE(s.open(dir.filePath(QStringLiteral("h.sqlite")))) << s.lastError().toStdString();
    auto run = replicatedRun();
    auto& a = run.arms[0];
    auto procs = a.processes;
    a.processes.clear();
    const auto rec = s.beginRun(run, QStringLiteral("test"));
    ASSERT_TRUE(rec) << s.lastError().toStdString();
    const qint64 armId = rec->armIds[0];
    std::vector<pitlane::results::ProcessInfo> live(procs.begin(), procs.begin() + 2);
    live[1].fault_iters = 0;
    ASSERT_TRUE(s.updateProcesses(armId, live, 0)) << s.lastError().toStdString();
    live[1].fault_iters = 20;
    live.push_back(procs[2]);
    live[0].pid = 42;  // not rewritten: before `first`
    ASSERT_TRUE(s.updateProcesses(armId, live, 1)) << s.lastError().toStdString();
    const auto back = s.loadRun(rec->id);
    ASSERT_TRUE(back) << s.lastError().toStdString();
    const auto& b = back->arms[0];
    ASSERT_EQ(b.processes.size(), 3u);
    EXPECT_EQ(b.processes[0].pid, procs[0].pid);
    EXPECT_EQ(b.processes[1].fault_iters, 20);
    EXPECT_EQ(b.processes[2].pid, procs[2].pid);
    // The arm had no samples yet: nothing is derived for the empty arm B.
    EXPECT_TRUE(back->arms[1].processes.empty());
}

TEST(Schema, FailedMigrationRollsBackToV0) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("clash.sqlite"));
    // A table named like our 5th statement's: experiments, arms and samples are created first,
    // then the step fails and must leave none of them behind.
    rawExec(path, {QStringLiteral("CREATE TABLE metrics (x INTEGER)")});
    RunStore s;
    EXPECT_FALSE(s.open(path));
    EXPECT_TRUE(s.lastError().contains(QStringLiteral("v0 to v1"))) << s.lastError().toStdString();
    EXPECT_FALSE(s.isOpen());
    EXPECT_EQ(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 0);
    EXPECT_FALSE(hasTable(path, QStringLiteral("experiments")));
    EXPECT_FALSE(hasTable(path, QStringLiteral("arms")));
}

TEST(Schema, RefusesNewerSchemaWithoutTouchingIt) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("future.sqlite"));
    const int future = RunStore::kSchemaVersion + 1;
    rawExec(path, {QStringLiteral("CREATE TABLE experiments (id INTEGER)"),
                   QStringLiteral("PRAGMA user_version = %1").arg(future)});
    const QString modeBefore = rawValue(path, QStringLiteral("PRAGMA journal_mode")).toString();
    RunStore s;
    EXPECT_FALSE(s.open(path));
    EXPECT_TRUE(s.lastError().contains(QStringLiteral("newer"))) << s.lastError().toStdString();
    EXPECT_EQ(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), future);
    EXPECT_EQ(rawValue(path, QStringLiteral("PRAGMA journal_mode")).toString(), modeBefore);
}

TEST(Schema, RefusesAFileThatIsNotSqlite) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("notes.txt"));
    const QByteArray text = "these are my notes, not a database\n";
    {
        QFile f(path);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(text);
    }
    RunStore s;
    EXPECT_FALSE(s.open(path));
    EXPECT_TRUE(s.lastError().contains(QStringLiteral("not an SQLite database")))
        << s.lastError().toStdString();
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    EXPECT_EQ(f.readAll(), text);
}

TEST(Schema, ResolvePathHonoursFlagEnvironmentAndNone) {
    qputenv("PITLANE_DB", "/tmp/from-env.sqlite");
    EXPECT_EQ(RunStore::resolvePath(QStringLiteral("/x/flag.sqlite")),
              QStringLiteral("/x/flag.sqlite"));
    EXPECT_EQ(RunStore::resolvePath(QString()), QStringLiteral("/tmp/from-env.sqlite"));
    EXPECT_TRUE(RunStore::resolvePath(QStringLiteral("none")).isEmpty());
    qputenv("PITLANE_DB", "none");
    EXPECT_TRUE(RunStore::resolvePath(QString()).isEmpty());
    qunsetenv("PITLANE_DB");
    EXPECT_TRUE(
        RunStore::resolvePath(QString()).endsWith(QStringLiteral("pitlane/history.sqlite")));
}

// Many processes opening a fresh history at once (issue 12: 13 of 30 concurrent pitlane-cli
// runs were refused with "table experiments already exists"): each migration step runs under
// the write lock and reads the version again inside it. Threads with a connection each race
// exactly as processes do (SQLite locks the file, not the connection).
TEST(Schema, ConcurrentOpensOfAFreshFileAllSucceed) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("fresh.sqlite"));
    constexpr int kOpeners = 12;
    std::atomic<bool> go{false};
    std::vector<QString> errors(kOpeners);
    std::vector<int> versions(kOpeners, -1);
    std::vector<std::thread> threads;
    for (int i = 0; i < kOpeners; ++i)
        threads.emplace_back([&, i] {
            while (!go.load()) std::this_thread::yield();
            RunStore s;
            if (s.open(path))
                versions[std::size_t(i)] = s.schemaVersion();
            else
                errors[std::size_t(i)] = s.lastError();
        });
    go = true;
    for (auto& t : threads) t.join();
    for (int i = 0; i < kOpeners; ++i) {
        EXPECT_TRUE(errors[std::size_t(i)].isEmpty()) << i << ": " << errors[std::size_t(i)].toStdString();
        EXPECT_EQ(versions[std::size_t(i)], RunStore::kSchemaVersion) << i;
    }
}

// A sweep collected by `pitlane-cli collect` (its preset carries sweep_slices): its arms ran in
// other processes at other times, so the stored run reads back as not interleaved (unpaired
// comparisons), as it was when collected; any other run reads back interleaved.
TEST(Schema, ACollectedSweepReadsBackNotInterleaved) {
    QTemporaryDir dir;
    RunStore s;
    ASSERT_TRUE(s.open(dir.filePath(QStringLiteral("h.sqlite")))) << s.lastError().toStdString();
    auto run = replicatedRun();
    const auto plain = s.importRun(run, QStringLiteral("test"));
    run.interleaved = false;
    run.preset_json = {{"name", "sweep (2 of 2 slices)"},
                       {"model", "mlp"},
                       {"sweep_slices", nlohmann::json::array({{{"index", 0}, {"status", "ok"}},
                                                                {{"index", 1}, {"status", "ok"}}})}};
    const auto sweep = s.importRun(run, QStringLiteral("sweep"));
    ASSERT_TRUE(plain && sweep) << s.lastError().toStdString();
    EXPECT_TRUE(s.loadRun(*plain)->interleaved);
    const auto back = s.loadRun(*sweep);
    ASSERT_TRUE(back);
    EXPECT_FALSE(back->interleaved);
    EXPECT_EQ(back->preset.name, "sweep (2 of 2 slices)");
    // The comparisons are the unpaired ones the collected run had.
    const auto a = pitlane::results::compareArms(run), b = pitlane::results::compareArms(*back);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_DOUBLE_EQ(a[i].ratio, b[i].ratio);
        EXPECT_DOUBLE_EQ(a[i].ci_low, b[i].ci_low);
    }
}

// tests/store/data/history_v9.db: a run (mlp, arms A and B, 2 processes each) recorded by
// pitlane-cli as built before the records' tables (issue 30). Opened by this build, it gains the
// columns its records have since (record_sql.h), keeps every row, and reads back.
TEST(Schema, AHistoryWrittenBeforeTheRecordTablesOpensAndReadsBack) {
    const QString fixture = qEnvironmentVariable("PITLANE_SOURCE_DIR") +
                            QStringLiteral("/tests/store/data/history_v9.db");
    ASSERT_TRUE(QFile::exists(fixture)) << fixture.toStdString();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    ASSERT_TRUE(QFile::copy(fixture, path));
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    EXPECT_EQ(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 9);
    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    EXPECT_EQ(s.schemaVersion(), RunStore::kSchemaVersion);
    const auto runs = s.listRuns();
    ASSERT_EQ(runs.size(), 1);
    const auto run = s.loadRun(runs.front().id);
    ASSERT_TRUE(run) << s.lastError().toStdString();
    ASSERT_EQ(run->arms.size(), 2u);
    for (const auto& a : run->arms) {
        SCOPED_TRACE(a.name);
        EXPECT_EQ(a.status, "ok");
        EXPECT_EQ(a.samples.size(), 20u);
        EXPECT_FALSE(a.metrics.empty());
        ASSERT_EQ(a.processes.size(), 2u);
        for (const auto& p : a.processes) {
            EXPECT_GT(p.pid, 0);
            EXPECT_EQ(p.fault_iters, 10);  // one measured block of 10 per process
            EXPECT_GT(p.cpu_ms, 0);
            EXPECT_GT(p.cpu_wall_ms, 0);
            EXPECT_GT(p.load_ms, 0);
        }
    }
    // Its knobs, stored as JSON text by that build, read as typed knobs and write back as stored.
    EXPECT_EQ(run->arms[0].knobs.grad, pitlane::spec::Grad::Enabled);
    EXPECT_EQ(run->arms[1].knobs.grad, pitlane::spec::Grad::NoGrad);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(run->arms[i].knobs.intra_op_threads, std::optional<int>(1));
        const auto stored = nlohmann::json::parse(
            rawValue(path, QStringLiteral("SELECT knobs FROM arms ORDER BY id LIMIT 1 OFFSET %1").arg(i))
                .toString()
                .toStdString());
        EXPECT_EQ(pitlane::results::knobsJson(run->arms[i]).dump(), stored.dump());
        EXPECT_TRUE(run->arms[i].knobs_written.verbatim.empty());
        // The applied read-back, as that build's worker sent it: typed, and written back as stored.
        const auto applied = nlohmann::json::parse(
            rawValue(path, QStringLiteral("SELECT applied FROM arms ORDER BY id LIMIT 1 OFFSET %1").arg(i))
                .toString()
                .toStdString());
        EXPECT_EQ(pitlane::protocol::appliedFields(run->arms[i].applied).dump(), applied.dump());
        EXPECT_EQ(run->arms[i].applied.blas, std::optional<std::string>("mkl"));
        ASSERT_TRUE(run->arms[i].applied.jit_state.has_value());
        EXPECT_EQ(run->arms[i].applied.jit_state->profiling_executor, std::optional<bool>(true));
        EXPECT_FALSE(run->arms[i].applied.extra.contains("grad")) << "typed, not kept as sent";
    }
    // The counters added since (voluntary_switches) have their column, and the old rows read as
    // not counted.
    EXPECT_EQ(rawValue(path, QStringLiteral("SELECT count(*) FROM processes WHERE "
                                            "voluntary_switches = 0")).toInt(), 4);
    for (const auto& a : run->arms)
        for (const auto& p : a.processes) EXPECT_EQ(p.voluntary_switches, 0);
    // Every column of the records' tables is there now: a run written into the file reads back.
    const auto id = s.importRun(*run, QStringLiteral("test"));
    ASSERT_TRUE(id) << s.lastError().toStdString();
    const auto again = s.loadRun(*id);
    ASSERT_TRUE(again) << s.lastError().toStdString();
    for (std::size_t i = 0; i < 2; ++i) {
        ASSERT_EQ(again->arms[i].processes.size(), run->arms[i].processes.size());
        for (std::size_t p = 0; p < run->arms[i].processes.size(); ++p)
            EXPECT_TRUE(pitlane::protocol::record::equal(again->arms[i].processes[p],
                                                         run->arms[i].processes[p]));
        ASSERT_EQ(again->arms[i].metrics.size(), run->arms[i].metrics.size());
        for (std::size_t m = 0; m < run->arms[i].metrics.size(); ++m)
            EXPECT_TRUE(pitlane::protocol::record::equal(again->arms[i].metrics[m],
                                                         run->arms[i].metrics[m]));
    }
}
