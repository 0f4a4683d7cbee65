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
        EXPECT_EQ(s.schemaVersion(), 1);
        pitlane::results::RunResult r;
        r.preset.name = "kept across reopen";
        r.preset.model = "mlp";
        r.arms.resize(1);
        r.arms[0].name = "A";
        ASSERT_TRUE(s.importRun(r, QStringLiteral("test")).has_value()) << s.lastError().toStdString();
    }
    EXPECT_EQ(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 1);
    EXPECT_EQ(rawValue(path, QStringLiteral("SELECT t FROM notes")).toString(), QStringLiteral("keep me"));
    // Reopening a v1 file migrates nothing and keeps the data.
    RunStore again;
    ASSERT_TRUE(again.open(path)) << again.lastError().toStdString();
    const auto runs = again.listRuns();
    ASSERT_EQ(runs.size(), 1);
    EXPECT_EQ(runs[0].name, QStringLiteral("kept across reopen"));
    EXPECT_EQ(runs[0].arms, QStringList{QStringLiteral("A")});
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
    EXPECT_EQ(RunStore::resolvePath(QStringLiteral("/x/flag.sqlite")), QStringLiteral("/x/flag.sqlite"));
    EXPECT_EQ(RunStore::resolvePath(QString()), QStringLiteral("/tmp/from-env.sqlite"));
    EXPECT_TRUE(RunStore::resolvePath(QStringLiteral("none")).isEmpty());
    qputenv("PITLANE_DB", "none");
    EXPECT_TRUE(RunStore::resolvePath(QString()).isEmpty());
    qunsetenv("PITLANE_DB");
    EXPECT_TRUE(RunStore::resolvePath(QString()).endsWith(QStringLiteral("pitlane/history.sqlite")));
}
