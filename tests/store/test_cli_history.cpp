// pitlane-cli and the run history: the run id it prints, --db none, $PITLANE_DB, the history
// surviving a SIGKILL of pitlane-cli in the middle of a run, and a damaged history (a page
// overwritten, a table dropped before or during a run, a run's samples gone) never taken for a
// finished run.
#include "pitlane/store/run_store.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QThread>

#include <gtest/gtest.h>

#include "cli_run.h"
#include "raw_sql.h"

#include <algorithm>
#include <csignal>
#include <iostream>
#include <map>

using pitlane::store::RunStore;

namespace {

QString cli() { return pitlane::testing::cliPath(); }

// pitlane-cli with this environment, a minute at most.
pitlane::testing::CliRun runCli(const QStringList& args, const QProcessEnvironment& env) {
    return pitlane::testing::runCli(args, env, 60000);
}

QString writePreset(const QTemporaryDir& dir, int iters, int blockIters) {
    const QString path = dir.filePath(QStringLiteral("preset.json"));
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral(R"({"name": "history test", "model": "mlp",
        "run": {"warmup_iters": 5, "iters": %1, "block_iters": %2, "processes": 3},
        "arms": [{"name": "A", "knobs": {"grad": "enabled", "intra_op_threads": 1}},
                 {"name": "B", "knobs": {"grad": "no_grad", "intra_op_threads": 1}}]})")
                .arg(iters)
                .arg(blockIters)
                .toUtf8());
    return path;
}

// A worker orphaned by the SIGKILL of its parent: end it by its own pid, only if it is ours.
// Starts `pitlane-cli run` of a long preset recording into `db` and returns once its second block
// is done (its stderr so far in `err`): the run is mid-way, with samples stored.
void startRunUntilItsSecondBlock(QProcess& p, QString& err, const QTemporaryDir& dir, const QString& db,
                                 const QString& json) {
    p.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
    p.start(cli(), {QStringLiteral("run"), writePreset(dir, 4000, 200), QStringLiteral("--db"), db,
                    QStringLiteral("--json"), json});
    ASSERT_TRUE(p.waitForStarted());
    QElapsedTimer clock;
    clock.start();
    while (!err.contains(QStringLiteral("block 1 done")) && clock.elapsed() < 60000) {
        p.waitForReadyRead(200);
        err += QString::fromUtf8(p.readAllStandardError());
    }
    ASSERT_TRUE(err.contains(QStringLiteral("block 1 done"))) << err.toStdString();
}

bool isWorker(qint64 pid) {
    QFile comm(QStringLiteral("/proc/%1/comm").arg(pid));
    return comm.open(QIODevice::ReadOnly) && comm.readAll().trimmed() == "pitlane-worker";
}

// A worker of a killed pitlane-cli dies with it (PR_SET_PDEATHSIG): none is left under init.
void expectWorkerGone(qint64 pid) {
    for (int waited = 0; isWorker(pid) && waited < 5000; waited += 50) QThread::msleep(50);
    EXPECT_FALSE(isWorker(pid)) << "worker " << pid << " outlived the killed pitlane-cli";
    if (isWorker(pid)) ::kill(pid_t(pid), SIGKILL);
}

}  // namespace

TEST(CliHistory, RunIsStoredAndItsIdPrinted) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const auto r =
        runCli({QStringLiteral("run"), writePreset(dir, 120, 40), QStringLiteral("--db"), db},
               QProcessEnvironment::systemEnvironment());
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    const auto m = QRegularExpression(QStringLiteral("run id: (\\d+)")).match(r.out);
    ASSERT_TRUE(m.hasMatch()) << r.out.toStdString();
    RunStore s;
    ASSERT_TRUE(s.open(db));
    const auto info = s.runInfo(m.captured(1).toLongLong());
    ASSERT_TRUE(info);
    EXPECT_TRUE(info->complete());
    EXPECT_EQ(info->source, QStringLiteral("cli"));
    EXPECT_EQ(s.sampleCount(info->id), 240);
}

// A history file with a damaged page (real file, one page overwritten): the run is measured and
// its results JSON written, the history is never written to, and the exit status is 3 with a
// message naming the file and SQLite's finding. check-history's full integrity_check says
// damaged (exit 1); on the sound file it said ok (exit 0).
TEST(CliHistory, ADamagedHistoryIsNeverWrittenAndTheRunStillGivesItsResults) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const QString preset = writePreset(dir, 60, 30);
    const auto env = QProcessEnvironment::systemEnvironment();
    auto r = runCli({QStringLiteral("run"), preset, QStringLiteral("--db"), db}, env);
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    r = runCli({QStringLiteral("check-history"), QStringLiteral("--db"), db}, env);
    EXPECT_EQ(r.exitCode, 0) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("ok (integrity_check; 1 runs, 120 samples")))
        << r.out.toStdString();
    QFile f(db);
    ASSERT_TRUE(f.open(QIODevice::ReadWrite));
    ASSERT_GT(f.size(), 4 * 4096) << "expected a history of several pages";
    f.seek(2 * 4096);  // a b-tree page past the schema
    f.write(QByteArray(4096, char(0xAB)));
    f.close();
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    const QByteArray before = f.readAll();
    f.close();

    const QString json = dir.filePath(QStringLiteral("out.json"));
    r = runCli({QStringLiteral("run"), preset, QStringLiteral("--db"), db, QStringLiteral("--json"),
                json},
               env);
    EXPECT_EQ(r.exitCode, 3) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(db)) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("quick_check")) ||
                r.err.contains(QStringLiteral("cannot be read")))
        << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("this run was not stored"))) << r.err.toStdString();
    QFile results(json);
    ASSERT_TRUE(results.open(QIODevice::ReadOnly)) << "the results JSON was not written";
    const auto j = nlohmann::json::parse(results.readAll().toStdString());
    ASSERT_EQ(j["arms"].size(), 2u);
    for (const auto& arm : j["arms"]) {
        EXPECT_EQ(arm["status"], "ok");
        EXPECT_EQ(arm["latency_ns"].size(), 60u);
    }
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    EXPECT_EQ(f.readAll(), before) << "the damaged history was written to";
    f.close();

    r = runCli({QStringLiteral("check-history"), QStringLiteral("--db"), db}, env);
    EXPECT_EQ(r.exitCode, 1) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("damaged"))) << r.out.toStdString();
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    EXPECT_EQ(f.readAll(), before) << "check-history wrote to the file";
}

// A write that fails in the middle of a run (here: another process deletes the run's rows, so
// the next insert breaks a foreign key) is said on stderr, the run goes on, its results JSON
// holds every sample, and the exit status is 3, not 0.
TEST(CliHistory, AWriteFailingMidRunGivesExitThreeAndKeepsTheResults) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const QString json = dir.filePath(QStringLiteral("out.json"));
    QProcess p;
    QString err;
    ASSERT_NO_FATAL_FAILURE(startRunUntilItsSecondBlock(p, err, dir, db, json));
    {
        QSqlDatabase other = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "other");
        other.setDatabaseName(db);
        ASSERT_TRUE(other.open());
        QSqlQuery q(other);
        ASSERT_TRUE(q.exec(QStringLiteral("PRAGMA busy_timeout = 10000")));
        ASSERT_TRUE(q.exec(QStringLiteral("PRAGMA foreign_keys = ON")));  // arms go too
        ASSERT_TRUE(q.exec(QStringLiteral("DELETE FROM experiments"))) << q.lastError().text().toStdString();
        other.close();
    }
    QSqlDatabase::removeDatabase("other");
    ASSERT_TRUE(p.waitForFinished(120000));
    err += QString::fromUtf8(p.readAllStandardError());
    EXPECT_EQ(p.exitCode(), 3) << err.toStdString();
    EXPECT_TRUE(err.contains(QStringLiteral("run 1 is incomplete in the history"))) << err.toStdString();
    QFile results(json);
    ASSERT_TRUE(results.open(QIODevice::ReadOnly)) << "the results JSON was not written";
    const auto j = nlohmann::json::parse(results.readAll().toStdString());
    for (const auto& arm : j["arms"]) EXPECT_EQ(arm["latency_ns"].size(), 4000u);
}

// Issue 28: `DROP TABLE samples` on a history. The file passes SQLite's checks, and a run used
// to be stored as finished and ok with no samples (exit 3, yet "ok" in the history and from
// check-history). Now the file is refused as damaged before anything is written (exit 3, the
// file and the missing table named, the results JSON whole), the earlier run stays as it was,
// and check-history names the missing table (exit 1).
TEST(CliHistory, AHistoryMissingItsSamplesTableIsRefusedAndCheckHistoryFindsIt) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const QString preset = writePreset(dir, 30, 30);
    const auto env = QProcessEnvironment::systemEnvironment();
    auto r = runCli({QStringLiteral("run"), preset, QStringLiteral("--db"), db}, env);
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    ASSERT_EQ(pitlane::testing::rawExec(db, QStringLiteral("DROP TABLE samples")), QString());

    const QString json = dir.filePath(QStringLiteral("out.json"));
    r = runCli({QStringLiteral("run"), preset, QStringLiteral("--db"), db, QStringLiteral("--json"),
                json},
               env);
    EXPECT_EQ(r.exitCode, 3) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(db)) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("table samples is missing"))) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("this run was not stored"))) << r.err.toStdString();
    QFile results(json);
    ASSERT_TRUE(results.open(QIODevice::ReadOnly)) << "the results JSON was not written";
    for (const auto& arm : nlohmann::json::parse(results.readAll().toStdString())["arms"])
        EXPECT_EQ(arm["latency_ns"].size(), 30u);
    EXPECT_EQ(pitlane::testing::rawCount(db, QStringLiteral("experiments")), 1)
        << "the damaged history was written to";
    EXPECT_EQ(pitlane::testing::rawScalar(
                  db, QStringLiteral("SELECT count(*) FROM arms WHERE status = 'ok'")),
              2);

    r = runCli({QStringLiteral("check-history"), QStringLiteral("--db"), db}, env);
    EXPECT_EQ(r.exitCode, 1) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(db + QStringLiteral(": table samples is missing")))
        << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("damaged"))) << r.out.toStdString();
    EXPECT_FALSE(r.out.contains(QStringLiteral(": ok"))) << r.out.toStdString();
}

// The samples table dropped while a run records (another process, between two of its
// commits): every later samples write fails, the run goes on, exit 3, and the run's end stores
// its arms as failed with code not_stored and the reason, never as ok. check-history names the
// missing table.
TEST(CliHistory, SamplesTableDroppedMidRunStoresTheArmsAsNotStored) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const QString json = dir.filePath(QStringLiteral("out.json"));
    QProcess p;
    QString err;
    ASSERT_NO_FATAL_FAILURE(startRunUntilItsSecondBlock(p, err, dir, db, json));
    ASSERT_EQ(pitlane::testing::rawExec(db, QStringLiteral("DROP TABLE samples")), QString());
    ASSERT_TRUE(p.waitForFinished(120000));
    err += QString::fromUtf8(p.readAllStandardError());
    EXPECT_EQ(p.exitCode(), 3) << err.toStdString();
    EXPECT_TRUE(err.contains(QStringLiteral("no such table: samples"))) << err.toStdString();
    EXPECT_TRUE(err.contains(QStringLiteral("run 1 is stored as not complete"))) << err.toStdString();
    EXPECT_TRUE(err.contains(QStringLiteral("run 1 is incomplete in the history")))
        << err.toStdString();
    QFile results(json);
    ASSERT_TRUE(results.open(QIODevice::ReadOnly)) << "the results JSON was not written";
    for (const auto& arm : nlohmann::json::parse(results.readAll().toStdString())["arms"]) {
        EXPECT_EQ(arm["status"], "ok");  // the measurement itself was fine
        EXPECT_EQ(arm["latency_ns"].size(), 4000u);
    }
    using pitlane::testing::rawScalar;
    EXPECT_EQ(rawScalar(db, QStringLiteral("SELECT count(*) FROM experiments WHERE finished_at "
                                           "IS NOT NULL")),
              1);
    EXPECT_EQ(rawScalar(db, QStringLiteral("SELECT count(*) FROM arms WHERE status = 'ok'")), 0);
    EXPECT_EQ(rawScalar(db, QStringLiteral("SELECT count(*) FROM arms WHERE status = 'failed' AND "
                                           "error_code = 'not_stored' AND error_message LIKE "
                                           "'%no such table: samples%'")),
              2);
    EXPECT_EQ(rawScalar(db, QStringLiteral("SELECT count(*) FROM events WHERE code = "
                                           "'not_stored'")),
              2);

    const auto r = runCli({QStringLiteral("check-history"), QStringLiteral("--db"), db},
                          QProcessEnvironment::systemEnvironment());
    EXPECT_EQ(r.exitCode, 1) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("table samples is missing"))) << r.out.toStdString();
}

// A finished run stored as ok whose samples are gone (what the dropped table used to leave;
// here the rows deleted behind the store's back, schema intact): check-history names the run,
// the arm and the iterations its processes measured (exit 1), where it used to say ok.
TEST(CliHistory, CheckHistoryFindsAFinishedRunMissingItsSamples) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const auto env = QProcessEnvironment::systemEnvironment();
    auto r = runCli({QStringLiteral("run"), writePreset(dir, 30, 30), QStringLiteral("--db"), db},
                    env);
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    ASSERT_EQ(pitlane::testing::rawExec(
                  db, QStringLiteral("DELETE FROM sample_chunks WHERE arm = (SELECT id FROM "
                                     "arms WHERE name = 'B') AND block >= 0")),  // schema v10
              QString());
    r = runCli({QStringLiteral("check-history"), QStringLiteral("--db"), db}, env);
    EXPECT_EQ(r.exitCode, 1) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral(
        "run 1 arm B is stored as finished and ok but holds none of its samples")))
        << r.out.toStdString();
    EXPECT_FALSE(r.out.contains(QStringLiteral("arm A"))) << r.out.toStdString();
}

TEST(CliHistory, DbNoneStoresNothingAndEnvironmentChoosesTheFile) {
    QTemporaryDir dir;
    const QString envDb = dir.filePath(QStringLiteral("env.sqlite"));
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PITLANE_DB"), envDb);
    const QString preset = writePreset(dir, 60, 30);
    auto r = runCli({QStringLiteral("run"), preset, QStringLiteral("--db"), QStringLiteral("none")},
                    env);
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    EXPECT_FALSE(r.out.contains(QStringLiteral("run id:")));
    EXPECT_FALSE(QFile::exists(envDb));
    r = runCli({QStringLiteral("run"), preset}, env);
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("run id: 1")));
    EXPECT_TRUE(QFile::exists(envDb));
    // A --db that cannot be used is said, the run is measured, and the exit status is 3.
    QFile bad(dir.filePath(QStringLiteral("bad.sqlite")));
    ASSERT_TRUE(bad.open(QIODevice::WriteOnly));
    bad.write("not sqlite");
    bad.close();
    r = runCli({QStringLiteral("run"), preset, QStringLiteral("--db"), bad.fileName()}, env);
    EXPECT_EQ(r.exitCode, 3);
    EXPECT_TRUE(r.err.contains(QStringLiteral("not an SQLite database"))) << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("A"))) << "the table was not printed";
}

// pitlane-cli prints "[ARM] block K done (X/Y iterations)" after the samples of that block were
// appended (and so committed). Kill it with SIGKILL after a few blocks: every iteration counted
// in those lines must be in the database, as an unbroken prefix of each arm's samples.
TEST(CliHistory, SurvivesSigkillMidRunWithEverySampleReceived) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("killed.sqlite"));
    QProcess p;
    p.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
    // ~200 us per iteration: 2000-iteration blocks take about 0.4 s, the whole run ~40 s.
    p.start(cli(),
            {QStringLiteral("run"), writePreset(dir, 100000, 2000), QStringLiteral("--db"), db});
    ASSERT_TRUE(p.waitForStarted());
    const QRegularExpression doneLine(QStringLiteral("^\\[(\\w+)\\] block (\\d+) done \\((\\d+)/"));
    const QRegularExpression pidLine(QStringLiteral("worker pid (\\d+)"));
    std::map<QString, int> received;  // arm -> iterations the CLI said it had
    std::vector<qint64> workers;
    int blocksDone = 0;
    QElapsedTimer clock;
    clock.start();
    QByteArray pending;
    while (blocksDone < 5 && clock.elapsed() < 60000 && p.state() == QProcess::Running) {
        p.waitForReadyRead(200);
        pending += p.readAllStandardError();
        int nl;
        while ((nl = pending.indexOf('\n')) >= 0) {
            const QString line = QString::fromUtf8(pending.left(nl));
            pending.remove(0, nl + 1);
            if (const auto m = pidLine.match(line); m.hasMatch())
                workers.push_back(m.captured(1).toLongLong());
            if (const auto m = doneLine.match(line); m.hasMatch()) {
                received[m.captured(1)] = m.captured(3).toInt();
                ++blocksDone;
            }
        }
    }
    ASSERT_EQ(p.state(), QProcess::Running) << "pitlane-cli ended before it could be killed";
    ASSERT_GE(blocksDone, 5) << "no progress from pitlane-cli in 60 s";
    ::kill(pid_t(p.processId()), SIGKILL);
    ASSERT_TRUE(p.waitForFinished(10000));
    EXPECT_EQ(p.exitStatus(), QProcess::CrashExit);
    for (qint64 w : workers) expectWorkerGone(w);

    RunStore s;
    ASSERT_TRUE(s.open(db)) << s.lastError().toStdString();
    const auto runs = s.listRuns();
    ASSERT_EQ(runs.size(), 1);
    EXPECT_FALSE(runs[0].complete()) << "the run was recorded as finished although it was killed";
    const auto run = s.loadRun(runs[0].id);
    ASSERT_TRUE(run) << s.lastError().toStdString();
    ASSERT_EQ(run->arms.size(), 2u);
    qint64 printed = 0;
    for (const auto& arm : run->arms) {
        const int said = received[QString::fromStdString(arm.name)];
        printed += said;
        SCOPED_TRACE(arm.name);
        EXPECT_GT(said, 0);
        EXPECT_GE(int(arm.samples.size()), said) << "samples the CLI had reported are missing";
        for (std::size_t i = 0; i < arm.samples.size(); ++i)
            ASSERT_EQ(arm.samples[i].iter, int(i)) << "gap in the stored samples";
        EXPECT_EQ(arm.status, "cancelled");
        ASSERT_TRUE(arm.error.has_value());
        EXPECT_EQ(arm.error->code, "interrupted");
        EXPECT_FALSE(arm.environment.empty());
        EXPECT_FALSE(arm.applied.empty());
        // Its worker processes were written as they reported: the pid the CLI printed, the
        // model load, and the page faults of every block the CLI had said was done.
        ASSERT_FALSE(arm.processes.empty());
        std::int64_t faultIters = 0;
        for (const auto& proc : arm.processes) {
            EXPECT_NE(std::find(workers.begin(), workers.end(), qint64(proc.pid)), workers.end())
                << "process pid " << proc.pid << " was not printed by the CLI";
            faultIters += proc.fault_iters;
        }
        EXPECT_GT(arm.processes[0].load_ms, 0);
        EXPECT_GE(faultIters, said) << "page faults of reported blocks are missing";
    }
    EXPECT_GE(s.sampleCount(runs[0].id), printed);
    std::cout << "killed after " << blocksDone << " blocks: the CLI had reported " << printed
              << " iterations, the database holds " << s.sampleCount(runs[0].id) << "\n";
}
