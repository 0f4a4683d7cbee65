// Every export format from a real run: content checks, the CSV against the samples, the JSON
// re-imported (and into a history) with the same numbers, `pitlane-cli report`, atomic writes.
#include "report_fixture.h"

#include "pitlane/report/report.h"
#include "pitlane/store/run_store.h"

#include <QRegularExpression>
#include <QTemporaryDir>

using namespace pitlane;
using namespace report_test;

namespace {

results::RunResult fromJsonFile(const QString& path) {
    return results::fromResultsJson(nlohmann::json::parse(readAll(path).toStdString()));
}

void expectSameNumbers(const results::RunResult& a, const results::RunResult& b) {
    ASSERT_EQ(a.arms.size(), b.arms.size());
    for (std::size_t i = 0; i < a.arms.size(); ++i) {
        SCOPED_TRACE(a.arms[i].name);
        EXPECT_EQ(a.arms[i].name, b.arms[i].name);
        ASSERT_EQ(a.arms[i].samples.size(), b.arms[i].samples.size());
        for (std::size_t k = 0; k < a.arms[i].samples.size(); ++k) {
            ASSERT_EQ(a.arms[i].samples[k].latency_ns, b.arms[i].samples[k].latency_ns) << k;
            ASSERT_EQ(a.arms[i].samples[k].block, b.arms[i].samples[k].block) << k;
        }
        const auto sa = results::summarize(a.arms[i]), sb = results::summarize(b.arms[i]);
        EXPECT_DOUBLE_EQ(sa.median, sb.median);
        EXPECT_DOUBLE_EQ(sa.p99, sb.p99);
        EXPECT_DOUBLE_EQ(sa.throughput_per_s, sb.throughput_per_s);
        EXPECT_EQ(a.arms[i].peak_rss_bytes, b.arms[i].peak_rss_bytes);
    }
    const auto ca = results::compareArms(a), cb = results::compareArms(b);
    ASSERT_EQ(ca.size(), cb.size());
    for (std::size_t i = 0; i < ca.size(); ++i) {
        EXPECT_DOUBLE_EQ(ca[i].ratio, cb[i].ratio);
        EXPECT_DOUBLE_EQ(ca[i].ci_low, cb[i].ci_low);
        EXPECT_DOUBLE_EQ(ca[i].ci_high, cb[i].ci_high);
        EXPECT_EQ(ca[i].verdict, cb[i].verdict);
    }
}

}  // namespace

TEST(Exports, EveryFormatIsWritten) {
    REQUIRE_EXPORTED();
    for (const char* name : {"run.html", "run.pdf", "run.md", "run.csv", "run.json"})
        EXPECT_GT(readAll(artifact(QString::fromLatin1(name))).size(), 200) << name;
    EXPECT_TRUE(readAll(artifact(QStringLiteral("run.pdf"))).startsWith("%PDF-"));
}

TEST(Exports, HtmlIsOneSelfContainedFileWithTheVerdictFirst) {
    REQUIRE_EXPORTED();
    const QString html = QString::fromUtf8(readAll(artifact(QStringLiteral("run.html"))));
    // No external resource of any kind.
    EXPECT_FALSE(html.contains(QStringLiteral("http:"), Qt::CaseInsensitive));
    EXPECT_FALSE(html.contains(QStringLiteral("https:"), Qt::CaseInsensitive));
    EXPECT_FALSE(html.contains(QStringLiteral("<link"), Qt::CaseInsensitive));
    EXPECT_FALSE(html.contains(QStringLiteral("<script"), Qt::CaseInsensitive));
    EXPECT_FALSE(html.contains(QStringLiteral("@import"), Qt::CaseInsensitive));
    EXPECT_FALSE(html.contains(QStringLiteral("url("), Qt::CaseInsensitive));
    const auto srcs =
        QRegularExpression(QStringLiteral("(src|href)\\s*=\\s*\"([^\"]*)\"")).globalMatch(html);
    for (auto it = srcs; it.hasNext();) {
        const auto m = it.next();
        EXPECT_TRUE(m.captured(2).startsWith(QStringLiteral("data:")) ||
                    m.captured(2).startsWith('#'))
            << m.captured(0).toStdString();
    }
    // Charts are inline SVG: timeline, histogram, CDF, throughput, memory, CPU.
    EXPECT_GE(html.count(QStringLiteral("<svg ")), 4);
    for (const char* id :
         {"id=\"timeline\"", "id=\"histogram\"", "id=\"cdf\"", "id=\"throughput\""})
        EXPECT_TRUE(html.contains(QString::fromLatin1(id))) << id;
    // Reading order: title, machine, verdict, numbers, charts, knobs, applied, environment,
    // warnings, raw data.
    int at = -1;
    for (const char* heading : {"<h1>", "Machine:", "<h2>Verdict</h2>", "<h2>Comparison table</h2>",
                                "<h2>Charts</h2>", "<h2>Knobs</h2>", "<h2>Applied settings</h2>",
                                "<h2>Environment</h2>", "<h2>Warnings</h2>", "<h2>Raw data</h2>"}) {
        const int i = html.indexOf(QString::fromLatin1(heading));
        EXPECT_GT(i, at) << heading << " missing or out of order";
        at = std::max(at, i);
    }
    // The knob the arms differ in is highlighted; every arm has its colour.
    EXPECT_TRUE(
        html.contains(QStringLiteral("<tr class=\"diff\"><td class=\"key\">&ne;&nbsp;grad</td>")));
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(html.contains(report::armColor(i).name())) << i;
    EXPECT_TRUE(html.contains(QStringLiteral("faster")) ||
                html.contains(QStringLiteral("no significant")));
}

TEST(Exports, CsvHasOneRowPerMeasuredSample) {
    REQUIRE_EXPORTED();
    const QList<QByteArray> lines = readAll(artifact(QStringLiteral("run.csv"))).split('\n');
    ASSERT_GT(lines.size(), 2);
    EXPECT_EQ(lines.front(), "run,arm,block,iteration,batch_size,latency_ns,process");
    const auto run = fromJsonFile(artifact(QStringLiteral("run.json")));
    std::size_t samples = 0;
    for (const auto& a : run.arms) samples += a.samples.size();
    EXPECT_EQ(samples, 1800u);
    const qsizetype rows = lines.size() - 2;  // header, and the empty string after the last '\n'
    EXPECT_EQ(std::size_t(rows), samples);
    store::RunStore s;
    ASSERT_TRUE(s.open(ex.db));
    EXPECT_EQ(s.sampleCount(ex.runId), rows);
    for (qsizetype i = 1; i <= rows; ++i) {
        const auto f = lines[i].split(',');
        ASSERT_EQ(f.size(), 7) << lines[i].toStdString();
        ASSERT_EQ(f[0].toLongLong(), ex.runId);
        ASSERT_GT(f[5].toLongLong(), 0);
    }
}

TEST(Exports, JsonReimportsWithTheSameNumbers) {
    REQUIRE_EXPORTED();
    const auto fromJson = fromJsonFile(artifact(QStringLiteral("run.json")));
    store::RunStore s;
    ASSERT_TRUE(s.open(ex.db));
    const auto stored = s.loadRun(ex.runId);
    ASSERT_TRUE(stored) << s.lastError().toStdString();
    expectSameNumbers(*stored, fromJson);
    // Importing the JSON into a history and reading it back changes nothing either.
    QTemporaryDir dir;
    store::RunStore other;
    ASSERT_TRUE(other.open(dir.filePath(QStringLiteral("imported.sqlite"))));
    const auto id = other.importRun(fromJson, QStringLiteral("import"));
    ASSERT_TRUE(id) << other.lastError().toStdString();
    const auto back = other.loadRun(*id);
    ASSERT_TRUE(back);
    expectSameNumbers(fromJson, *back);
    const auto original =
        nlohmann::json::parse(readAll(artifact(QStringLiteral("run.json"))).toStdString());
    const auto again = results::toResultsJson(*back);
    for (std::size_t i = 0; i < original["arms"].size(); ++i)
        EXPECT_EQ(again["arms"][i]["summary"], original["arms"][i]["summary"]) << i;
    EXPECT_EQ(again["comparisons"], original["comparisons"]);
}

TEST(Exports, MarkdownSummaryTable) {
    REQUIRE_EXPORTED();
    const QString md = QString::fromUtf8(readAll(artifact(QStringLiteral("run.md"))));
    EXPECT_TRUE(md.startsWith(QStringLiteral("# mlp: autograd vs no_grad vs inference_mode")));
    // One title, every section a level below it (issue 27: title ###, Advice ##, Knobs ####).
    EXPECT_EQ(md.count(QRegularExpression(QStringLiteral("^# "), QRegularExpression::MultilineOption)), 1);
    EXPECT_EQ(md.count(QRegularExpression(QStringLiteral("^#{3,} "), QRegularExpression::MultilineOption)), 0);
    EXPECT_TRUE(md.contains(QStringLiteral("\n## Knobs\n")));
    EXPECT_TRUE(md.contains(QStringLiteral("| arm | status | n | median |")));
    for (const char* arm : {"| A | ok | 600 |", "| B | ok | 600 |", "| C | ok | 600 |"})
        EXPECT_TRUE(md.contains(QString::fromLatin1(arm))) << arm;
    EXPECT_TRUE(md.contains(QStringLiteral("| B vs A |")));
    EXPECT_TRUE(md.contains(QStringLiteral("| C vs A |")));
    EXPECT_EQ(md.count(QRegularExpression(QStringLiteral("^\\*\\*.+\\*\\*  $"),
                                          QRegularExpression::MultilineOption)),
              2);  // one verdict line per comparison
    // What the real workers measured: page faults and context switches per iteration (numbers,
    // not "not measured"), the environment, the knobs and the applied read-back.
    const auto counters = QRegularExpression(QStringLiteral(
        "^\\| [ABC] \\| \\d+\\.?\\d* \\| \\d+\\.?\\d* \\| \\d+\\.?\\d* \\| \\d+\\.?\\d* \\|$"),
        QRegularExpression::MultilineOption);
    EXPECT_EQ(md.count(counters), 3) << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral("**Environment:** ")));
    EXPECT_TRUE(md.contains(QStringLiteral("libtorch 2.11")));  // the pinned wheel (issue 25)
    EXPECT_TRUE(md.contains(QStringLiteral("| ≠ `grad` | `enabled` | `no_grad` | `inference_mode` |")));
    EXPECT_TRUE(md.contains(QStringLiteral("| `intra_op_threads` | `1` | `1` | `1` |")));
}

TEST(Exports, HtmlAndPdfCarryFaultsAndContextSwitches) {
    REQUIRE_EXPORTED();
    const QString html = QString::fromUtf8(readAll(artifact(QStringLiteral("run.html"))));
    EXPECT_TRUE(html.contains(QStringLiteral("<h3>Page faults and context switches</h3>")));
    EXPECT_FALSE(html.contains(QStringLiteral("not measured</td>")))
        << "the workers report faults and context switches";
    // ...so the caption does not say they were not (issue 27: it always did).
    EXPECT_FALSE(html.contains(QStringLiteral("Not measured: the workers did not report them")));
    QProcess p;
    p.start(QStringLiteral("pdftotext"), {artifact(QStringLiteral("run.pdf")), QStringLiteral("-")});
    if (!p.waitForStarted()) GTEST_SKIP() << "pdftotext not installed";
    p.waitForFinished(30000);
    const QString text = QString::fromUtf8(p.readAllStandardOutput()).simplified();
    // (pdftotext reads a wrapped header cell's lines apart)
    EXPECT_TRUE(text.contains(QStringLiteral("involuntary context")));
    EXPECT_TRUE(text.contains(QStringLiteral("major page faults")));
    EXPECT_TRUE(text.contains(QStringLiteral("p99.9")));
}

TEST(Exports, ReportCommandReadsRunIdsAndResultsFiles) {
    REQUIRE_EXPORTED();
    QTemporaryDir dir;
    auto out = [&](const char* n) { return dir.filePath(QString::fromLatin1(n)); };
    auto r = runCli({QStringLiteral("report"), QString::number(ex.runId), QStringLiteral("--db"),
                     ex.db, QStringLiteral("--html"), out("id.html"), QStringLiteral("--pdf"),
                     out("id.pdf"), QStringLiteral("--md"), out("id.md"), QStringLiteral("--csv"),
                     out("id.csv"), QStringLiteral("--json"), out("id.json")});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    // It says what it wrote (issue 27: nothing on success).
    for (const char* f : {"id.html", "id.pdf", "id.md", "id.csv", "id.json"})
        EXPECT_TRUE(r.err.contains(QStringLiteral("pitlane-cli: wrote ")) && r.err.contains(out(f)))
            << f << "\n" << r.err.toStdString();
    EXPECT_EQ(readAll(out("id.csv")), readAll(artifact(QStringLiteral("run.csv"))));
    EXPECT_EQ(readAll(out("id.md")), readAll(artifact(QStringLiteral("run.md"))));
    EXPECT_TRUE(readAll(out("id.pdf")).startsWith("%PDF-"));
    expectSameNumbers(fromJsonFile(out("id.json")),
                      fromJsonFile(artifact(QStringLiteral("run.json"))));

    r = runCli({QStringLiteral("report"), artifact(QStringLiteral("run.json")),
                QStringLiteral("--csv"), out("j.csv"), QStringLiteral("--md"), out("j.md")});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    EXPECT_EQ(readAll(out("j.csv")), readAll(artifact(QStringLiteral("run.csv"))));
    EXPECT_EQ(readAll(out("j.md")), readAll(artifact(QStringLiteral("run.md"))));

    r = runCli({QStringLiteral("report"), QStringLiteral("9999"), QStringLiteral("--db"), ex.db});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(r.err.contains(QStringLiteral("no such run"))) << r.err.toStdString();
}

TEST(Exports, WritesAreAtomic) {
    REQUIRE_EXPORTED();
    const auto run = fromJsonFile(artifact(QStringLiteral("run.json")));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("report.html"));
    QString err;
    ASSERT_TRUE(report::writeFileAtomic(path, "old, good report", &err));
    ASSERT_TRUE(report::writeHtml(path, run, {}, &err)) << err.toStdString();
    const QByteArray html = readAll(path);
    EXPECT_TRUE(html.startsWith("<!DOCTYPE html>"));
    EXPECT_TRUE(html.trimmed().endsWith("</html>"));
    ASSERT_TRUE(report::writePdf(dir.filePath(QStringLiteral("r.pdf")), run, {}, &err))
        << err.toStdString();
    // Only the finished files: no temporary left behind.
    EXPECT_EQ(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);
    // A write that cannot complete fails, names the file and leaves nothing.
    const QString missing = dir.filePath(QStringLiteral("no/such/folder/r.csv"));
    EXPECT_FALSE(report::writeCsv(missing, run, {}, &err));
    EXPECT_TRUE(err.contains(missing)) << err.toStdString();
    EXPECT_FALSE(QFile::exists(missing));
}
