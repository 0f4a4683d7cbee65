// A real serving run of the bundled mlp through pitlane-cli, stored in the history, read back
// by `pitlane-cli report RUN_ID`: the same serving points, levels, comparisons and verdict as
// the run itself wrote, and the same table.
#include "pitlane/store/run_store.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <gtest/gtest.h>

using pitlane::store::RunStore;
using nlohmann::json;

namespace {

QString cli() {
    return QDir(qEnvironmentVariable("PITLANE_BIN_DIR")).filePath("pitlane-cli");
}

struct CliRun {
    int exitCode = -1;
    QString out, err;
};

CliRun runCli(const QStringList& args) {
    QProcess p;
    p.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
    p.start(cli(), args);
    EXPECT_TRUE(p.waitForFinished(120000)) << "pitlane-cli did not finish";
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

json readJson(const QString& path) {
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::ReadOnly)) << path.toStdString();
    return json::parse(f.readAll().toStdString(), nullptr, false);
}

}  // namespace

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
    const auto r = runCli({QStringLiteral("run"), preset, QStringLiteral("--db"), db,
                           QStringLiteral("--json"), ran});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString() << r.out.toStdString();
    const auto m = QRegularExpression(QStringLiteral("run id: (\\d+)")).match(r.out);
    ASSERT_TRUE(m.hasMatch()) << r.out.toStdString();
    const QString id = m.captured(1);

    const QString back = dir.filePath(QStringLiteral("back.json"));
    const auto rep = runCli({QStringLiteral("report"), id, QStringLiteral("--db"), db,
                             QStringLiteral("--json"), back});
    ASSERT_EQ(rep.exitCode, 0) << rep.err.toStdString();
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
