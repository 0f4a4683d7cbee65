// The export-format table (report/export_formats.h) that File ▸ Export and pitlane-cli share:
// every row writes a non-empty file under each of its suffixes, suffixes are found in any case,
// and pitlane-cli takes (and documents) every row's flags. A synthetic run: no worker, fast.
#include "report_fixture.h"

#include "pitlane/report/export_formats.h"

#include <QFileInfo>
#include <QSet>
#include <QTemporaryDir>

using namespace pitlane;

namespace {

results::RunResult smallRun() {
    results::RunResult r;
    r.preset.name = "export formats";
    r.preset.model = "mlp";
    r.started_at = "2026-01-01T00:00:00Z";
    for (int arm = 0; arm < 2; ++arm) {
        results::ArmResult a;
        a.name = arm ? "B" : "A";
        a.status = results::kOk;
        results::ProcessInfo info;
        info.pid = 4000 + arm;
        a.processes.push_back(info);
        for (int k = 0; k < 40; ++k)
            a.samples.push_back({k / 10, k, 1, 0, 1000000 + 20000 * arm + 300 * (k % 7), 0});
        r.arms.push_back(std::move(a));
    }
    return r;
}

qint64 fileSize(const QString& path) {
    return QFileInfo(path).size();
}

}  // namespace

TEST(ExportFormats, EveryRowIsComplete) {
    QSet<QString> ids, suffixes, flags;
    for (const auto& f : report::exportFormats()) {
        SCOPED_TRACE(f.id.toStdString());
        EXPECT_FALSE(ids.contains(f.id));
        ids << f.id;
        EXPECT_FALSE(f.name.isEmpty());
        ASSERT_FALSE(f.suffixes.isEmpty());
        for (const auto& s : f.suffixes) {
            EXPECT_EQ(s, s.toLower());
            EXPECT_FALSE(suffixes.contains(s)) << s.toStdString();
            suffixes << s;
        }
        ASSERT_FALSE(f.cliFlags.isEmpty());
        for (const auto& flag : f.cliFlags) {
            EXPECT_TRUE(flag.startsWith(QStringLiteral("--"))) << flag.toStdString();
            EXPECT_FALSE(flags.contains(flag)) << flag.toStdString();
            flags << flag;
            EXPECT_EQ(report::exportFormatForFlag(flag), &f);
        }
        EXPECT_TRUE(f.cliFlags.contains(f.runUsageFlag));
        EXPECT_NE(f.write, nullptr);
        EXPECT_TRUE(f.fileDialogFilter().startsWith(f.name + QStringLiteral(" (*.")));
    }
    // What the window and the CLI offered before the table, in the file dialog's order.
    QStringList order;
    for (const auto& f : report::exportFormats()) order << f.suffixes.first();
    EXPECT_EQ(order.join(QLatin1Char(' ')), QStringLiteral("html pdf md csv json"));
    EXPECT_EQ(report::exportSuffixList(), QStringLiteral(".html, .pdf, .md, .csv or .json"));
    EXPECT_EQ(report::exportFormatForFlag(QStringLiteral("--report"))->id, QStringLiteral("html"));
    EXPECT_EQ(report::exportFormatForFlag(QStringLiteral("--quiet")), nullptr);
}

TEST(ExportFormats, EveryRowWritesANonEmptyFileWithItsSuffix) {
    const auto run = smallRun();
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    for (const auto& f : report::exportFormats()) {
        for (const auto& suffix : f.suffixes) {
            SCOPED_TRACE((f.id + QLatin1Char(' ') + suffix).toStdString());
            // The row's own writer, and writeExport choosing the row by the suffix.
            const QString direct = dir.filePath(QStringLiteral("direct-%1.%2").arg(f.id, suffix));
            QString error;
            ASSERT_TRUE(f.write(direct, run, {}, &error)) << error.toStdString();
            EXPECT_GT(fileSize(direct), 0);
            const QString byPath = dir.filePath(QStringLiteral("run-%1.%2").arg(f.id, suffix));
            ASSERT_EQ(report::exportFormatForPath(byPath), &f);
            ASSERT_TRUE(report::writeExport(byPath, run, {}, &error)) << error.toStdString();
            EXPECT_GT(fileSize(byPath), 0);
        }
    }
    EXPECT_TRUE(
        report_test::readAll(dir.filePath(QStringLiteral("run-pdf.pdf"))).startsWith("%PDF-"));
}

TEST(ExportFormats, SuffixLookupIsCaseInsensitive) {
    const auto id = [](const char* path) {
        const auto* f = report::exportFormatForPath(QString::fromUtf8(path));
        return f ? f->id : QStringLiteral("none");
    };
    EXPECT_EQ(id("/tmp/r.html"), QStringLiteral("html"));
    EXPECT_EQ(id("/tmp/R.HTML"), QStringLiteral("html"));
    EXPECT_EQ(id("r.Htm"), QStringLiteral("html"));
    EXPECT_EQ(id("r.PDF"), QStringLiteral("pdf"));
    EXPECT_EQ(id("a.b.Md"), QStringLiteral("markdown"));
    EXPECT_EQ(id("samples.CSV"), QStringLiteral("csv"));
    EXPECT_EQ(id("results.Json"), QStringLiteral("json"));
    EXPECT_EQ(id("notes.txt"), QStringLiteral("none"));
    EXPECT_EQ(id("html"), QStringLiteral("none"));
    EXPECT_EQ(id("run."), QStringLiteral("none"));
    EXPECT_EQ(id("/tmp/run.html/plain"), QStringLiteral("none"));

    QTemporaryDir dir;
    QString error;
    EXPECT_FALSE(
        report::writeExport(dir.filePath(QStringLiteral("run.txt")), smallRun(), {}, &error));
    EXPECT_TRUE(error.contains(
        QStringLiteral("unknown export format (use .html, .pdf, .md, .csv or .json)")))
        << error.toStdString();
    EXPECT_FALSE(QFileInfo::exists(dir.filePath(QStringLiteral("run.txt"))));
}

// pitlane-cli report: every flag of every row (the --report alias too) writes that format; a
// format named twice writes the last file named.
TEST(ExportFormats, CliTakesEveryRowsFlags) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString results = dir.filePath(QStringLiteral("results.json"));
    QString error;
    ASSERT_TRUE(report::writeJson(results, smallRun(), {}, &error)) << error.toStdString();
    for (const auto& f : report::exportFormats())
        for (const auto& flag : f.cliFlags) {
            const QString out =
                dir.filePath(QStringLiteral("cli%1.%2").arg(flag.mid(2), f.suffixes.first()));
            const auto r = report_test::runCli({QStringLiteral("report"), results, flag, out});
            EXPECT_EQ(r.exitCode, 0) << flag.toStdString() << ": " << r.err.toStdString();
            EXPECT_GT(fileSize(out), 0) << flag.toStdString();
        }
    EXPECT_TRUE(
        report_test::readAll(dir.filePath(QStringLiteral("clipdf.pdf"))).startsWith("%PDF-"));
    EXPECT_EQ(report_test::readAll(dir.filePath(QStringLiteral("clihtml.html"))),
              report_test::readAll(dir.filePath(QStringLiteral("clireport.html"))));

    const QString first = dir.filePath(QStringLiteral("first.html"));
    const QString last = dir.filePath(QStringLiteral("last.html"));
    const auto r = report_test::runCli({QStringLiteral("report"), results, QStringLiteral("--html"),
                                        first, QStringLiteral("--report"), last});
    EXPECT_EQ(r.exitCode, 0) << r.err.toStdString();
    EXPECT_FALSE(QFileInfo::exists(first));
    EXPECT_GT(fileSize(last), 0);
}

// The usage text comes from the table: `run` documents each row's runUsageFlag, `report` each
// row's first flag (CONTRACT.md: run --json --csv --report --pdf --md; report --html --pdf
// --md --csv --json).
TEST(ExportFormats, CliUsageListsTheTablesFlags) {
    const auto r = report_test::runCli({QStringLiteral("--help")});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    const QString text = r.out;
    const int run = text.indexOf(QStringLiteral("pitlane-cli run "));
    const int validate = text.indexOf(QStringLiteral("pitlane-cli validate"));
    const int report = text.indexOf(QStringLiteral("pitlane-cli report "));
    const int db = text.indexOf(QStringLiteral("--db:"));
    ASSERT_TRUE(run >= 0 && validate > run && report > validate && db > report)
        << text.toStdString();
    const QString runUsage = text.mid(run, validate - run);
    const QString reportUsage = text.mid(report, db - report);
    for (const auto& f : report::exportFormats()) {
        EXPECT_TRUE(runUsage.contains(
            QStringLiteral("[%1 OUT.%2]").arg(f.runUsageFlag, f.suffixes.first())))
            << runUsage.toStdString();
        EXPECT_TRUE(reportUsage.contains(QStringLiteral("[%1 F]").arg(f.cliFlags.first())))
            << reportUsage.toStdString();
    }
    EXPECT_TRUE(runUsage.contains(QStringLiteral("[--report OUT.html]")));
    EXPECT_TRUE(
        reportUsage.contains(QStringLiteral("[--html F] [--pdf F] [--md F] [--csv F] [--json F]")));
    EXPECT_TRUE(runUsage.contains(QStringLiteral("[--db PATH|none] [--quiet]")));
    for (const auto& line : text.split(QLatin1Char('\n')))
        EXPECT_LE(line.size(), 92) << line.toStdString();
}
