// Many writers on one history file: a writer outwaits a lock held longer than SQLite's busy
// timeout, and concurrent pitlane-cli runs (real workers, one real file) are every one stored
// and finished, on a fresh file and on an existing one. PITLANE_CONCURRENT_RUNS sets how many
// run at once (8 by default, to stay quick on 2 cores; docs/RELIABILITY.md has 30 and 50).
#include "pitlane/store/run_store.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

using pitlane::store::RunStore;

namespace {

// Holds SQLite's write lock on `path` for `holdMs` from a connection of its own thread.
class LockHolder {
public:
    LockHolder(const QString& path, int holdMs) {
        thread_ = std::thread([this, path, holdMs] {
            {
                QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "holder");
                db.setDatabaseName(path);
                if (db.open()) {
                    QSqlQuery q(db);
                    held_ = q.exec(QStringLiteral("BEGIN IMMEDIATE"));
                    taken_ = true;
                    std::this_thread::sleep_for(std::chrono::milliseconds(holdMs));
                    q.exec(QStringLiteral("COMMIT"));
                }
                taken_ = true;
                db.close();
            }
            QSqlDatabase::removeDatabase("holder");
        });
        while (!taken_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ~LockHolder() { thread_.join(); }
    bool held() const { return held_; }

private:
    std::thread thread_;
    std::atomic<bool> taken_{false}, held_{false};
};

QString writePreset(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("preset.json"));
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(R"({"name": "concurrent", "model": "mlp",
        "run": {"warmup_iters": 3, "iters": 40, "block_iters": 10, "processes": 1},
        "arms": [{"name": "A", "knobs": {"intra_op_threads": 1}},
                 {"name": "B", "knobs": {"grad": "no_grad", "intra_op_threads": 1}}]})");
    return path;
}

int concurrentRuns() {
    bool ok = false;
    const int n = qEnvironmentVariableIntValue("PITLANE_CONCURRENT_RUNS", &ok);
    return ok && n > 0 ? n : 8;
}

// Starts `n` pitlane-cli runs at once on `db` and waits for all; each must exit 0.
void runConcurrently(const QString& preset, const QString& db, int n) {
    std::vector<std::unique_ptr<QProcess>> runs;
    const QString cli = QDir(qEnvironmentVariable("PITLANE_BIN_DIR")).filePath("pitlane-cli");
    for (int i = 0; i < n; ++i) {
        runs.push_back(std::make_unique<QProcess>());
        runs.back()->setProcessChannelMode(QProcess::MergedChannels);
        runs.back()->start(cli, {QStringLiteral("run"), preset, QStringLiteral("--db"), db,
                                 QStringLiteral("--quiet")});
    }
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < n; ++i) {
        auto& p = *runs[std::size_t(i)];
        ASSERT_TRUE(p.waitForFinished(std::max(1, 600000 - int(clock.elapsed()))))
            << "run " << i << " did not finish";
        const QString out = QString::fromUtf8(p.readAll());
        EXPECT_EQ(p.exitCode(), 0) << "run " << i << ":\n" << out.toStdString();
        EXPECT_FALSE(out.contains(QStringLiteral("run history:"))) << out.toStdString();
    }
    std::cout << n << " concurrent runs took " << clock.elapsed() << " ms\n";
}

void expectEveryRunStored(const QString& db, int runs) {
    RunStore s;
    ASSERT_TRUE(s.open(db)) << s.lastError().toStdString();
    const auto list = s.listRuns();
    ASSERT_EQ(list.size(), runs);
    for (const auto& info : list) {
        EXPECT_TRUE(info.complete()) << "run " << info.id << " unfinished";
        EXPECT_EQ(s.sampleCount(info.id), 80) << "run " << info.id;
        EXPECT_EQ(info.armStatuses, (QStringList{QStringLiteral("ok"), QStringLiteral("ok")}));
    }
    s.close();
    const auto check = RunStore::checkIntegrity(db);
    EXPECT_TRUE(check.readable) << check.error.toStdString();
    EXPECT_TRUE(check.problems.isEmpty()) << check.problems.join('\n').toStdString();
    EXPECT_EQ(check.runs, runs);
}

}  // namespace

// SQLite's busy handler gives up after 5 s; the store's writes retry the write lock, so a lock
// held for 6.5 s by another connection delays a write instead of losing it.
TEST(HistoryConcurrency, AWriteOutwaitsALockHeldPastTheBusyTimeout) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("h.sqlite"));
    RunStore s;
    ASSERT_TRUE(s.open(path)) << s.lastError().toStdString();
    pitlane::results::RunResult run;
    run.preset.name = "locked";
    run.arms.resize(1);
    run.arms[0].name = "A";
    const auto rec = s.beginRun(run, QStringLiteral("test"));
    ASSERT_TRUE(rec) << s.lastError().toStdString();
    QElapsedTimer clock;
    {
        LockHolder holder(path, 6500);
        ASSERT_TRUE(holder.held());
        clock.start();
        EXPECT_TRUE(s.appendEvent(rec->id, rec->armIds[0], 1.0,
                                  {{"type", "warning"}, {"code", "x"}, {"message", "waited"}}))
            << s.lastError().toStdString();
    }
    EXPECT_GT(clock.elapsed(), 5000) << "the lock was not held: the test proves nothing";
    const auto loaded = s.loadRun(rec->id);
    ASSERT_TRUE(loaded);
}

TEST(HistoryConcurrency, ConcurrentRunsOnAFreshThenAnExistingFileAreAllStored) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const QString preset = writePreset(dir);
    const int n = concurrentRuns();
    runConcurrently(preset, db, n);  // the file does not exist yet: every run migrates it
    expectEveryRunStored(db, n);
    runConcurrently(preset, db, n);
    expectEveryRunStored(db, 2 * n);
}
