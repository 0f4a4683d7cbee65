// A damaged history never shows wrong figures, and a full one says so (issue 42 items 1 and 3).
// Real runs through pitlane-cli into real history files; one stored sample chunk then damaged by
// hand through SQLite (QtSql): 16 random bytes that still decode to the chunk's 500 latencies
// (wrong ones; the varints' continuation bits kept), and 8 bytes of 0xFF that do not decode. check-history, history show, report
// (every format), compare and the gate (run --baseline) all say the run is damaged and exit as
// documented (check-history 1, the others 3), and none shows the damaged arm's figures.
// Disk full: the history capped by $PITLANE_HISTORY_MAX_PAGES (SQLite's own SQLITE_FULL, the error
// a full filesystem gives), and where this process may mount, a real 1.6 MiB tmpfs.
#include "pitlane/store/run_store.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QVariant>

#include <gtest/gtest.h>

#include "cli_run.h"
#include "raw_sql.h"

#include <functional>

#include <unistd.h>

namespace {

using pitlane::testing::CliRun;
using pitlane::testing::rawExec;
using pitlane::testing::rawScalar;

using pitlane::testing::cli;

QString writePreset(const QTemporaryDir& dir, const QString& name, int iters, int blockIters) {
    const QString path = dir.filePath(name);
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral(R"({"name": "integrity", "model": "mlp",
        "run": {"warmup_iters": 5, "iters": %1, "block_iters": %2, "processes": 1},
        "arms": [{"name": "A", "knobs": {"grad": "enabled", "intra_op_threads": 1}},
                 {"name": "B", "knobs": {"grad": "no_grad", "intra_op_threads": 1}}]})")
                .arg(iters)
                .arg(blockIters)
                .toUtf8());
    return path;
}

enum class Damage { StillDecodes, DoesNotDecode };

// Writes the damage into the BLOB of arm B's largest measured chunk, in place, and returns the
// chunk as the readers name it ("sample chunk 3 of 4 (block 1, iterations 500-999)").
// StillDecodes: 16 bytes in the middle get random value bits (their continuation bits kept): the
// chunk still decodes to its n latencies, some of them wrong.
void damageChunk(const QString& path, Damage damage, QString* named) {
    const QString name = QStringLiteral("damage-%1").arg(QRandomGenerator::global()->generate());
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        ASSERT_TRUE(db.open());
        QSqlQuery q(db);
        ASSERT_TRUE(q.exec(QStringLiteral(
            "SELECT c.rowid, c.latency_ns, c.n, c.block, c.first_iter FROM sample_chunks c JOIN "
            "arms a ON c.arm = a.id WHERE a.name = 'B' ORDER BY c.rowid")));
        int ordinal = 0, total = 0;
        qint64 rowid = 0, n = 0, block = 0, first = 0;
        QByteArray blob;
        while (q.next()) {
            ++total;
            if (q.value(3).toInt() >= 0 && q.value(2).toLongLong() > n) {
                rowid = q.value(0).toLongLong();
                blob = q.value(1).toByteArray();
                n = q.value(2).toLongLong();
                block = q.value(3).toInt();
                first = q.value(4).toLongLong();
                ordinal = total;
            }
        }
        q.finish();
        ASSERT_GE(n, 100);
        *named = QStringLiteral("run 1 arm B: sample chunk %1 of %2 (block %3, iterations %4-%5)")
                     .arg(ordinal).arg(total).arg(block).arg(first).arg(first + n - 1);
        if (damage == Damage::StillDecodes) {
            // Each byte keeps its continuation bit (where a varint ends), its 7 value bits random:
            // the varints' boundaries stay, so the BLOB still holds its n latencies.
            const qsizetype k = blob.size() / 2;
            ASSERT_LT(k + 16, blob.size());
            for (int i = 0; i < 16; ++i) {
                const uchar keep = uchar(blob[k + i]) & 0x80;
                uchar b;
                do b = uchar(keep | QRandomGenerator::global()->bounded(0x80));
                while (b == uchar(blob[k + i]));
                blob[k + i] = char(b);
            }
        } else {
            blob.replace(blob.size() / 2, 8, QByteArray(8, char(0xFF)));
        }
        QSqlQuery u(db);
        u.prepare(QStringLiteral("UPDATE sample_chunks SET latency_ns = ? WHERE rowid = ?"));
        u.addBindValue(blob);
        u.addBindValue(rowid);
        ASSERT_TRUE(u.exec()) << u.lastError().text().toStdString();
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
}

QByteArray readFile(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The damaged arm of a results JSON: failed, code damaged, no latencies.
void expectDamagedArmB(const nlohmann::json& j, const QString& named) {
    ASSERT_TRUE(j.contains("arms")) << j.dump().substr(0, 300);
    bool seen = false;
    for (const auto& arm : j["arms"]) {
        if (arm["name"] == "A") {
            EXPECT_EQ(arm["status"], "ok");
            EXPECT_EQ(arm["latency_ns"].size(), 1500u);
            continue;
        }
        seen = true;
        EXPECT_EQ(arm["status"], "failed");
        EXPECT_EQ(arm["error"]["code"], "damaged");
        EXPECT_NE(arm["error"]["message"].get<std::string>().find(named.mid(named.indexOf("sample chunk")).toStdString()),
                  std::string::npos)
            << arm["error"]["message"];
        EXPECT_TRUE(arm["latency_ns"].empty()) << "a damaged arm's samples were shown";
    }
    EXPECT_TRUE(seen);
    // No comparison of B: its figures would be of a damaged arm.
    if (j.contains("comparisons")) {
        EXPECT_TRUE(j["comparisons"].empty()) << j["comparisons"].dump();
    }
}

void expectDamagedEverywhere(Damage damage) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const QString preset = writePreset(dir, QStringLiteral("p.json"), 1500, 500);
    auto r = cli({QStringLiteral("run"), preset, QStringLiteral("--db"), db, QStringLiteral("--quiet")});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    r = cli({QStringLiteral("check-history"), QStringLiteral("--db"), db});
    ASSERT_EQ(r.exitCode, 0) << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("each chunk's checksum"))) << r.out.toStdString();
    const QString intact = cli({QStringLiteral("history"), QStringLiteral("show"), QStringLiteral("1"),
                                QStringLiteral("--db"), db})
                               .out;
    QString named;
    ASSERT_NO_FATAL_FAILURE(damageChunk(db, damage, &named));
    const QString chunk = named.mid(named.indexOf(QLatin1String("sample chunk")));

    // check-history: the chunk, the arm and what fails; exit 1.
    r = cli({QStringLiteral("check-history"), QStringLiteral("--db"), db});
    EXPECT_EQ(r.exitCode, 1) << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(named)) << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("fails its checksum (stored CRC-32 0x"))) << r.out.toStdString();
    // The random bytes still decode: only the checksum finds them.
    EXPECT_EQ(r.out.contains(QStringLiteral("latencies it says")), damage == Damage::DoesNotDecode) << r.out.toStdString();
    EXPECT_FALSE(r.out.contains(QStringLiteral(": ok"))) << r.out.toStdString();

    // history show: B failed, [damaged], no figures; exit 3. A as before.
    r = cli({QStringLiteral("history"), QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--db"), db});
    EXPECT_EQ(r.exitCode, 3) << r.err.toStdString();
    const QRegularExpression rowB(QStringLiteral("^B\\s+failed\\s+0\\s+-\\s+-"), QRegularExpression::MultilineOption);
    EXPECT_TRUE(rowB.match(r.out).hasMatch()) << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("B failed: [damaged] damaged in the history: ") + chunk))
        << r.out.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("damaged: ") + named)) << r.err.toStdString();
    EXPECT_FALSE(r.out.contains(QStringLiteral("B vs A  "))) << "a comparison of the damaged arm was shown";
    const QRegularExpression rowA(QStringLiteral("^A\\s+ok\\s+1500\\s+\\S+ \\S+"), QRegularExpression::MultilineOption);
    const auto intactA = rowA.match(intact), nowA = rowA.match(r.out);
    ASSERT_TRUE(intactA.hasMatch() && nowA.hasMatch()) << intact.toStdString() << r.out.toStdString();
    EXPECT_EQ(intactA.captured(0), nowA.captured(0)) << "arm A changed";

    r = cli({QStringLiteral("history"), QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--json"),
             QStringLiteral("--db"), db});
    EXPECT_EQ(r.exitCode, 3) << r.err.toStdString();
    expectDamagedArmB(nlohmann::json::parse(r.out.toStdString()), named);

    // report RUN_ID, every format: the files say it, and the exit status is 3.
    const QString json = dir.filePath(QStringLiteral("r.json")), md = dir.filePath(QStringLiteral("r.md")),
                  html = dir.filePath(QStringLiteral("r.html")), csv = dir.filePath(QStringLiteral("r.csv"));
    r = cli({QStringLiteral("report"), QStringLiteral("1"), QStringLiteral("--db"), db, QStringLiteral("--json"), json,
             QStringLiteral("--md"), md, QStringLiteral("--html"), html, QStringLiteral("--csv"), csv});
    EXPECT_EQ(r.exitCode, 3) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(named)) << r.err.toStdString();
    expectDamagedArmB(nlohmann::json::parse(readFile(json).toStdString()), named);
    for (const QString& f : {md, html})
        EXPECT_TRUE(readFile(f).contains(("damaged in the history: " + chunk).toUtf8())) << f.toStdString();
    // The CSV holds samples: none of B's.
    const QByteArray rows = readFile(csv);
    ASSERT_FALSE(rows.isEmpty());
    EXPECT_FALSE(rows.contains("\n1,B,")) << "the damaged arm's samples are in the CSV";
    EXPECT_TRUE(rows.contains("\n1,A,"));

    // compare: a damaged compared arm is not compared; exit 3.
    r = cli({QStringLiteral("compare"), QStringLiteral("1:A"), QStringLiteral("1:B"), QStringLiteral("--db"), db});
    EXPECT_EQ(r.exitCode, 3) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(named)) << r.err.toStdString();
    EXPECT_FALSE(QRegularExpression(QStringLiteral("^#1 B vs #1 A +\\d"), QRegularExpression::MultilineOption)
                     .match(r.out)
                     .hasMatch())
        << r.out.toStdString();

    // The window's reopening: shown with the damage said, and exit 3 as the CLI's.
    {
        QProcess window;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        window.setProcessEnvironment(env);
        window.start(QString::fromLocal8Bit(qgetenv("PITLANE_BIN_DIR")) + QStringLiteral("/pitlane"),
                     {QStringLiteral("--open-run"), QStringLiteral("1"), QStringLiteral("--db"), db,
                      QStringLiteral("--quit-when-done")});
        ASSERT_TRUE(window.waitForFinished(120000));
        EXPECT_EQ(window.exitCode(), 3) << window.readAllStandardError().toStdString();
        EXPECT_TRUE(window.readAllStandardError().contains("run is damaged in the history"));
    }

    // The gate against the damaged run: refused before anything is measured; exit 3.
    r = cli({QStringLiteral("run"), preset, QStringLiteral("--db"), db, QStringLiteral("--baseline"),
             QStringLiteral("1"), QStringLiteral("--quiet")});
    EXPECT_EQ(r.exitCode, 3) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("the baseline run 1 is damaged in the history (run 1 arm B)")))
        << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("nothing measured"))) << r.err.toStdString();
    EXPECT_EQ(rawScalar(db, QStringLiteral("SELECT count(*) FROM experiments")), 1) << "the gate measured a run";
}

}  // namespace

TEST(HistoryIntegrity, SixteenRandomBytesThatStillDecodeAreFoundByEveryReader) {
    expectDamagedEverywhere(Damage::StillDecodes);
}

TEST(HistoryIntegrity, EightBytesThatDoNotDecodeAreFoundByEveryReader) {
    expectDamagedEverywhere(Damage::DoesNotDecode);
}

// Chunks stored before schema v12 carry no checksum (the migration leaves the column NULL): read
// as before, with one note that they are unchecked; check-history counts them and says ok.
TEST(HistoryIntegrity, ChunksWithoutAChecksumAreReadAsBeforeAndLabelledUncheckedOnce) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    auto r = cli({QStringLiteral("run"), writePreset(dir, QStringLiteral("p.json"), 600, 200), QStringLiteral("--db"),
                  db, QStringLiteral("--quiet")});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    const QString before = cli({QStringLiteral("history"), QStringLiteral("show"), QStringLiteral("1"),
                                QStringLiteral("--db"), db})
                               .out;
    const qint64 chunks = rawScalar(db, QStringLiteral("SELECT count(*) FROM sample_chunks"));
    ASSERT_EQ(rawExec(db, QStringLiteral("UPDATE sample_chunks SET crc32 = NULL")), QString());
    r = cli({QStringLiteral("history"), QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--db"), db});
    EXPECT_EQ(r.exitCode, 0) << r.err.toStdString();
    EXPECT_EQ(r.out, before);
    EXPECT_EQ(r.err.count(QStringLiteral("unchecked")), 1) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("run 1's samples are unchecked"))) << r.err.toStdString();
    r = cli({QStringLiteral("check-history"), QStringLiteral("--db"), db});
    EXPECT_EQ(r.exitCode, 0) << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("%1 sample chunks unchecked").arg(chunks))) << r.out.toStdString();
}

namespace {

// What a history that fills up mid-run must say, whatever filled it: "disk full" with the file
// and the free space on every run, the first run's JSON whole, the partly stored run
// "incomplete: the history ran out of space after N of M samples" (never cancelled), and
// check-history exit 1 for it. `runIn` runs pitlane-cli where the history's filesystem is.
void expectDiskFullSaid(const QString& db, const std::function<CliRun(const QStringList&)>& runIn,
                        const QString& preset, const QString& json) {
    const QString abs = QFileInfo(db).absoluteFilePath();
    auto r = runIn({QStringLiteral("run"), preset, QStringLiteral("--db"), db, QStringLiteral("--json"), json,
                    QStringLiteral("--quiet")});
    EXPECT_EQ(r.exitCode, 3) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("disk full: ") + abs + QStringLiteral(": database or disk is full (")))
        << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral(" free on "))) << r.err.toStdString();
    const auto results = nlohmann::json::parse(readFile(json).toStdString());
    for (const auto& arm : results["arms"]) EXPECT_EQ(arm["latency_ns"].size(), 20000u) << arm["name"];
    // Every run says it: never "record run: " with no reason.
    r = runIn({QStringLiteral("run"), preset, QStringLiteral("--db"), db, QStringLiteral("--quiet")});
    EXPECT_EQ(r.exitCode, 3) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("disk full: ") + abs)) << r.err.toStdString();
    EXPECT_FALSE(QRegularExpression(QStringLiteral(": \\n")).match(r.err).hasMatch()) << r.err.toStdString();
    r = runIn({QStringLiteral("history"), QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--db"), db});
    EXPECT_EQ(r.exitCode, 0) << r.err.toStdString();
    const QRegularExpression incomplete(
        QStringLiteral("A failed: \\[not_stored\\] incomplete: the history ran out of space after (\\d+) of 20000 samples"));
    const auto m = incomplete.match(r.out);
    ASSERT_TRUE(m.hasMatch()) << r.out.toStdString();
    EXPECT_LT(m.captured(1).toInt(), 20000);
    EXPECT_FALSE(r.out.contains(QStringLiteral("cancelled"))) << r.out.toStdString();
    EXPECT_FALSE(r.out.contains(QStringLiteral("interrupted"))) << r.out.toStdString();
    r = runIn({QStringLiteral("check-history"), QStringLiteral("--db"), db});
    EXPECT_EQ(r.exitCode, 1) << r.out.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("run 1 arm A is incomplete: the history ran out of space after ")))
        << r.out.toStdString();
}

}  // namespace

// The history capped at 45 pages (PRAGMA max_page_count through $PITLANE_HISTORY_MAX_PAGES): the
// writes beyond it fail with SQLite's SQLITE_FULL, as on a full filesystem. Runs everywhere.
TEST(HistoryDiskFull, ACappedHistorySaysDiskFullEveryRunAndKeepsTheRunAsIncomplete) {
    QTemporaryDir dir;
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert(QLatin1String(pitlane::store::RunStore::kMaxPagesEnv), QStringLiteral("45"));
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    expectDiskFullSaid(
        db, [&](const QStringList& args) { return cli(args, env); },
        writePreset(dir, QStringLiteral("p.json"), 20000, 2000), dir.filePath(QStringLiteral("out.json")));
}

// A real full filesystem: a 1.6 MiB tmpfs in a mount namespace of its own (unshare; as root, or
// through an unprivileged user namespace), the history on it, the results JSON outside it.
TEST(HistoryDiskFull, ARealSmallTmpfsSaysDiskFullEveryRunAndKeepsTheRunAsIncomplete) {
    const QString unshare = QStandardPaths::findExecutable(QStringLiteral("unshare"));
    if (unshare.isEmpty()) GTEST_SKIP() << "no unshare(1): the capped-history test covers the path";
    QTemporaryDir dir;
    const QString fs = dir.filePath(QStringLiteral("fs"));
    ASSERT_TRUE(QDir().mkpath(fs));
    const QStringList ns = geteuid() == 0 ? QStringList{QStringLiteral("-m")} : QStringList{QStringLiteral("-rm")};
    {
        QProcess probe;
        probe.start(unshare, ns + QStringList{QStringLiteral("mount"), QStringLiteral("-t"), QStringLiteral("tmpfs"),
                                              QStringLiteral("-o"), QStringLiteral("size=64k"), QStringLiteral("tmpfs"), fs});
        if (!probe.waitForFinished(10000) || probe.exitCode() != 0)
            GTEST_SKIP() << "cannot mount a tmpfs here (" << probe.readAllStandardError().trimmed().toStdString()
                         << "): the capped-history test covers the path";
    }
    const QString db = fs + QStringLiteral("/h.sqlite");
    const QString script = dir.filePath(QStringLiteral("in-tmpfs.sh"));
    {
        // Each command mounts a fresh-looking namespace over the same folder: the tmpfs must
        // live across the commands, so one shell mounts it and runs them all, their outputs
        // written outside it.
        QFile f(script);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral("set -e\nmount -t tmpfs -o size=1600k tmpfs '%1'\nn=0\nwhile read -r line; do\n"
                               "  n=$((n+1)); set +e; eval \"'%2' $line\" >'%3'/out.$n 2>'%3'/err.$n; echo $? >'%3'/rc.$n; set -e\n"
                               "done < '%3'/commands\n")
                    .arg(fs, pitlane::testing::cliPath(), dir.path())
                    .toUtf8());
    }
    const QString preset = writePreset(dir, QStringLiteral("p.json"), 20000, 2000);
    const QString json = dir.filePath(QStringLiteral("out.json"));
    // The commands expectDiskFullSaid runs, in its order, run in one namespace; replayed below.
    QStringList commands;
    commands = {QStringLiteral("run '%1' --db '%2' --json '%3' --quiet").arg(preset, db, json),
                QStringLiteral("run '%1' --db '%2' --quiet").arg(preset, db),
                QStringLiteral("history show 1 --db '%1'").arg(db),
                QStringLiteral("check-history --db '%1'").arg(db)};
    {
        QFile f(dir.filePath(QStringLiteral("commands")));
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write((commands.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8());
    }
    QProcess p;
    p.start(unshare, ns + QStringList{QStringLiteral("sh"), script});
    ASSERT_TRUE(p.waitForFinished(300000));
    ASSERT_EQ(p.exitCode(), 0) << p.readAllStandardError().toStdString();
    int next = 0;
    auto replay = [&](const QStringList&) {
        ++next;
        return CliRun{readFile(dir.filePath(QStringLiteral("rc.%1").arg(next))).trimmed().toInt(),
                      QString::fromUtf8(readFile(dir.filePath(QStringLiteral("out.%1").arg(next)))),
                      QString::fromUtf8(readFile(dir.filePath(QStringLiteral("err.%1").arg(next))))};
    };
    expectDiskFullSaid(db, replay, preset, json);
    EXPECT_EQ(next, commands.size());
}
