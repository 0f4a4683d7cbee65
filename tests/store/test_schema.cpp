// Opening history files: migration from v0, refusing newer or foreign files, WAL mode, rollback
// of a failed migration. Real SQLite files in a temporary folder.
#include "pitlane/store/run_store.h"

#include <QFile>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QVariant>

#include <gtest/gtest.h>

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

TEST(Schema, MigratesV1RunsToV2KeepingEveryRow) {
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
    EXPECT_EQ(s.schemaVersion(), 2);
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
    rawExec(path, {QStringLiteral("CREATE TABLE experiments (id INTEGER)"),
                   QStringLiteral("PRAGMA user_version = 7")});
    const QString modeBefore = rawValue(path, QStringLiteral("PRAGMA journal_mode")).toString();
    RunStore s;
    EXPECT_FALSE(s.open(path));
    EXPECT_TRUE(s.lastError().contains(QStringLiteral("newer"))) << s.lastError().toStdString();
    EXPECT_EQ(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 7);
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
