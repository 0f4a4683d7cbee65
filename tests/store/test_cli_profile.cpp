// A profiled run of the bundled mlp through pitlane-cli (`run --profile 3 --db FILE`), read back
// from the history by `pitlane-cli report RUN_ID`: the same profiles in the results JSON, the
// same "Where the time goes" in the Markdown and HTML reports and in the printed table.
#include "pitlane/store/run_store.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include "cli_run.h"

using nlohmann::json;
using pitlane::testing::runCli;
using pitlane::store::RunStore;

namespace {

QString readText(const QString& path) {
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::ReadOnly)) << path.toStdString();
    return QString::fromUtf8(f.readAll());
}

// The "## Where the time goes" section of a Markdown report, up to the next heading.
QString profileSection(const QString& md) {
    const int at = md.indexOf(QStringLiteral("## Where the time goes"));
    if (at < 0) return {};
    const int next = md.indexOf(QStringLiteral("\n## "), at + 1);
    return md.mid(at, next < 0 ? -1 : next - at);
}

}  // namespace

TEST(CliProfileHistory, ReportFromTheHistoryShowsWhereTheTimeGoes) {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h.sqlite"));
    const QString preset = dir.filePath(QStringLiteral("p.json"));
    {
        QFile f(preset);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(R"({"name": "profiled via cli", "model": "mlp",
            "run": {"warmup_iters": 2, "iters": 20, "block_iters": 10, "processes": 1},
            "arms": [{"name": "grad", "knobs": {"grad": "enabled", "intra_op_threads": 1}},
                     {"name": "nograd", "knobs": {"grad": "no_grad", "intra_op_threads": 1}}]})");
    }
    const QString ranJson = dir.filePath(QStringLiteral("ran.json"));
    const QString ranMd = dir.filePath(QStringLiteral("ran.md"));
    const auto r = runCli({QStringLiteral("run"), preset, QStringLiteral("--db"), db,
                           QStringLiteral("--profile"), QStringLiteral("3"), QStringLiteral("--json"),
                           ranJson, QStringLiteral("--md"), ranMd});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString() << r.out.toStdString();
    const auto m = QRegularExpression(QStringLiteral("run id: (\\d+)")).match(r.out);
    ASSERT_TRUE(m.hasMatch()) << r.out.toStdString();
    const QString id = m.captured(1);

    const QString backJson = dir.filePath(QStringLiteral("back.json"));
    const QString backMd = dir.filePath(QStringLiteral("back.md"));
    const QString backHtml = dir.filePath(QStringLiteral("back.html"));
    const auto rep = runCli({QStringLiteral("report"), id, QStringLiteral("--db"), db,
                             QStringLiteral("--md"), backMd, QStringLiteral("--json"), backJson,
                             QStringLiteral("--html"), backHtml});
    ASSERT_EQ(rep.exitCode, 0) << rep.err.toStdString();

    // The profiles, exactly as the run wrote them.
    const json a = json::parse(readText(ranJson).toStdString(), nullptr, false);
    const json b = json::parse(readText(backJson).toStdString(), nullptr, false);
    ASSERT_TRUE(a.is_object() && b.is_object());
    ASSERT_EQ(b["arms"].size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        SCOPED_TRACE(a["arms"][i]["name"].get<std::string>());
        ASSERT_TRUE(a["arms"][i].contains("profile"));
        EXPECT_EQ(a["arms"][i]["profile"]["iters"], 3);
        EXPECT_FALSE(a["arms"][i]["profile"]["trace"]["traceEvents"].empty());
        EXPECT_EQ(b["arms"][i]["profile"], a["arms"][i]["profile"]);
    }

    // The Markdown report from the history has the operator table, the same as the run's.
    const QString section = profileSection(readText(backMd));
    ASSERT_FALSE(section.isEmpty()) << readText(backMd).toStdString();
    // The mlp's heaviest operator by self time (aten::linear is a wrapper whose own self time can
    // fall out of the table's top rows on a loaded machine).
    EXPECT_TRUE(section.contains(QStringLiteral("| `aten::addmm` |"))) << section.toStdString();
    EXPECT_TRUE(section.contains(QStringLiteral("| **total** |"))) << section.toStdString();
    EXPECT_TRUE(section.contains(QStringLiteral("| grad |")) &&
                section.contains(QStringLiteral(" nograd |")))
        << section.toStdString();
    EXPECT_EQ(section, profileSection(readText(ranMd)));
    EXPECT_TRUE(readText(backHtml).contains(QStringLiteral("Where the time goes")));

    // The table printed for the stored run is the one printed for the live run, profile included.
    const auto table = runCli({QStringLiteral("report"), id, QStringLiteral("--db"), db});
    ASSERT_EQ(table.exitCode, 0) << table.err.toStdString();
    const QString printed = r.out.left(r.out.indexOf(QStringLiteral("\nrun id:")));
    EXPECT_TRUE(printed.contains(QStringLiteral("Where the time goes")));
    EXPECT_EQ(table.out.trimmed(), printed.trimmed());

    RunStore s;
    ASSERT_TRUE(s.open(db)) << s.lastError().toStdString();
    EXPECT_GE(s.schemaVersion(), 8);  // the profiles table
}
