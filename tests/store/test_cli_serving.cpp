// A real serving run of the bundled mlp through pitlane-cli, stored in the history, read back
// by `pitlane-cli report RUN_ID`: the same serving points, levels, comparisons and verdict as
// the run itself wrote, and the same table. And a serving run killed mid-level: every level the
// CLI had reported is in the history, whole, and the level it was serving is kept, cut short.
#include "pitlane/store/run_store.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>

#include <gtest/gtest.h>

#include "cli_run.h"

#include <csignal>
#include <vector>

using nlohmann::json;
using pitlane::testing::runCli;
using pitlane::store::RunStore;

using pitlane::testing::readJson;

TEST(CliServingHistory, StoredServingRunReportsTheSamePoints) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const QString preset = dir.filePath(QStringLiteral("serving.json"));
    {
        QFile f(preset);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(R"({"name": "serving via cli", "model": "mlp",
            "run": {"warmup_iters": 2, "processes": 1},
            "serving": {"arrival": "poisson", "rates": [200], "duration_ms": 500},
            "arms": [{"name": "b1", "knobs": {"intra_op_threads": 1}},
                     {"name": "b4", "knobs": {"intra_op_threads": 1, "max_batch": 4,
                                              "max_wait_ms": 1}}]})");
    }
    const QString ran = dir.filePath(QStringLiteral("ran.json"));
    const auto r = runCli(
        {QStringLiteral("run"), preset, QStringLiteral("--db"), db, QStringLiteral("--json"), ran});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString() << r.out.toStdString();
    const auto m = QRegularExpression(QStringLiteral("run id: (\\d+)")).match(r.out);
    ASSERT_TRUE(m.hasMatch()) << r.out.toStdString();
    const QString id = m.captured(1);

    const QString back = dir.filePath(QStringLiteral("back.json"));
    const auto rep = runCli(
        {QStringLiteral("report"), id, QStringLiteral("--db"), db, QStringLiteral("--json"), back});
    ASSERT_EQ(rep.exitCode, 0) << rep.err.toStdString();
    ASSERT_TRUE(QFile::exists(ran) && QFile::exists(back)) << ran.toStdString() << " " << back.toStdString();
    const json a = readJson(ran), b = readJson(back);
    ASSERT_TRUE(a.is_object() && b.is_object());
    ASSERT_EQ(b["arms"].size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        SCOPED_TRACE(a["arms"][i]["name"].get<std::string>());
        const json& sa = a["arms"][i]["serving"];
        ASSERT_EQ(sa["points"].size(), 1u) << sa.dump();
        EXPECT_GT(sa["points"][0]["served"].get<long long>(), 50);
        EXPECT_EQ(b["arms"][i]["serving"]["points"], sa["points"]);
        EXPECT_EQ(b["arms"][i]["serving"]["levels"], sa["levels"]);
    }
    EXPECT_EQ(b["serving"], a["serving"]);
    EXPECT_FALSE(a["serving"]["verdict"].empty());

    // The table pitlane-cli prints for the stored run is the one it printed for the live run.
    const auto table = runCli({QStringLiteral("report"), id, QStringLiteral("--db"), db});
    ASSERT_EQ(table.exitCode, 0) << table.err.toStdString();
    const QString printed = r.out.left(r.out.indexOf(QStringLiteral("\nrun id:")));
    EXPECT_TRUE(printed.contains(QStringLiteral("b4")));
    EXPECT_EQ(table.out.trimmed(), printed.trimmed());

    RunStore s;
    ASSERT_TRUE(s.open(db)) << s.lastError().toStdString();
    const auto info = s.runInfo(id.toLongLong());
    ASSERT_TRUE(info);
    EXPECT_TRUE(info->complete());
    EXPECT_FALSE(info->verdict.isEmpty());
}

TEST(CliServingHistory, SurvivesSigkillMidLevelWithEveryReportedLevel) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("killed.sqlite"));
    const QString preset = dir.filePath(QStringLiteral("serving.json"));
    {
        QFile f(preset);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"name": "serving killed", "model": "mlp", "run": {"warmup_iters": 2, "processes": 1},
            "serving": {"arrival": "poisson", "rates": [100, 200, 300, 400], "duration_ms": 1500},
            "arms": [{"name": "b1", "knobs": {"intra_op_threads": 1}},
                     {"name": "b4", "knobs": {"intra_op_threads": 1, "max_batch": 4,
                                              "max_wait_ms": 1}}]})");
    }
    QProcess p;
    p.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
    p.start(pitlane::testing::cliPath(), {QStringLiteral("run"), preset, QStringLiteral("--db"), db});
    ASSERT_TRUE(p.waitForStarted());
    // "[b1] served 100 req/s: 151 of 151 requests in 151 batches (1/4 levels)"
    const QRegularExpression served(QStringLiteral(
        "^\\[(\\w+)\\] served ([\\d.]+) req/s: (\\d+) of (\\d+) requests in (\\d+) batches"));
    struct Reported {
        std::string arm;
        double rate;
        long long served, arrived, batches;
    };
    std::vector<Reported> reported;
    QElapsedTimer clock;
    clock.start();
    QByteArray pending;
    while (reported.size() < 3 && clock.elapsed() < 90000 && p.state() == QProcess::Running) {
        p.waitForReadyRead(200);
        pending += p.readAllStandardError();
        int nl;
        while ((nl = pending.indexOf('\n')) >= 0) {
            const QString line = QString::fromUtf8(pending.left(nl));
            pending.remove(0, nl + 1);
            if (const auto m = served.match(line); m.hasMatch())
                reported.push_back({m.captured(1).toStdString(), m.captured(2).toDouble(),
                                    m.captured(3).toLongLong(), m.captured(4).toLongLong(),
                                    m.captured(5).toLongLong()});
        }
    }
    ASSERT_EQ(reported.size(), 3u) << "pitlane-cli reported no levels in 90 s";
    QThread::msleep(600);  // well into the next level: some of its batches have streamed in
    ASSERT_EQ(p.state(), QProcess::Running) << "pitlane-cli ended before it could be killed";
    ::kill(pid_t(p.processId()), SIGKILL);
    ASSERT_TRUE(p.waitForFinished(10000));

    RunStore s;
    ASSERT_TRUE(s.open(db)) << s.lastError().toStdString();
    const auto runs = s.listRuns();
    ASSERT_EQ(runs.size(), 1);
    EXPECT_FALSE(runs[0].complete());
    const auto run = s.loadRun(runs[0].id);
    ASSERT_TRUE(run) << s.lastError().toStdString();
    ASSERT_TRUE(run->preset.serving.enabled);
    // Every level the CLI printed: stored complete, with the counts it printed.
    for (const auto& r : reported) {
        SCOPED_TRACE(r.arm + " at " + std::to_string(r.rate));
        const auto arm = std::find_if(run->arms.begin(), run->arms.end(),
                                      [&](const auto& a) { return a.name == r.arm; });
        ASSERT_NE(arm, run->arms.end());
        const auto level =
            std::find_if(arm->serving.begin(), arm->serving.end(),
                         [&](const auto& l) { return l.rate_per_s == r.rate && l.complete; });
        ASSERT_NE(level, arm->serving.end()) << "a level the CLI had reported is missing";
        EXPECT_EQ(level->record.served(), r.served);
        EXPECT_EQ(std::int64_t(level->record.arrival_ns.size()), r.arrived);
        EXPECT_EQ(std::int64_t(level->record.batches.size()), r.batches);
    }
    // The level being served when the CLI died: kept with what had streamed in, cut short.
    int cut = 0;
    std::int64_t cutBatches = 0;
    for (const auto& a : run->arms)
        for (const auto& l : a.serving)
            if (!l.complete) {
                ++cut;
                cutBatches += std::int64_t(l.record.batches.size());
            }
    EXPECT_EQ(cut, 1);
    EXPECT_GT(cutBatches, 0) << "the batches of the level in progress were not stored as they came";
    // The figures leave the cut level out: each arm has one point per complete level.
    for (std::size_t i = 0; i < run->arms.size(); ++i) {
        int complete = 0;
        for (const auto& l : run->arms[i].serving) complete += l.complete ? 1 : 0;
        EXPECT_EQ(int(pitlane::results::servingPoints(*run, i).size()), complete);
    }
}
