// The lesson of a lesson preset in every report, from a synthetic run of known truth (no
// worker, fast): title, text, claim and each check's status word with its measured figure, in
// the HTML (right after the verdict), the PDF made from the same content, and the Markdown.
#include "pitlane/report/report.h"
#include "pitlane/results/lesson.h"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <gtest/gtest.h>

using namespace pitlane;
using nlohmann::json;

namespace {

// B is twice as fast as A in every process; A reads back grad "enabled", B "inference_mode";
// neither reports its peak RSS.
results::RunResult lessonRun() {
    results::RunResult r;
    r.preset.name = "Lesson: grad <inference>";
    r.preset.model = "mlp";
    r.started_at = "2026-01-01T00:00:00Z";
    r.interleaved = true;
    r.preset.lesson = {
        {"title", "Grad left on & inference"},
        {"text", "Autograd records a graph for every forward."},
        {"claim", "inference_mode is 1.5x faster than grad (Smith et al. 2023)"},
        {"expect", "B is faster"},
        {"checks",
         {{{"kind", "faster"}, {"arm", "B"}, {"than", "A"}, {"min_ratio", 1.5}},
          {{"kind", "applied"}, {"arm", "A"}, {"field", "grad"}, {"equals", "inference_mode"}},
          {{"kind", "lower"}, {"arm", "B"}, {"than", "A"}, {"metric", "peak_rss_bytes"}}}}};
    for (int arm = 0; arm < 2; ++arm) {
        results::ArmResult a;
        a.name = arm ? "B" : "A";
        a.status = results::kOk;
        a.applied.grad = arm ? "inference_mode" : "enabled";
        int iter = 0;
        for (int p = 0; p < 4; ++p) {
            results::ProcessInfo info;
            info.replicate = p;
            info.pid = 100 + 10 * arm + p;
            a.processes.push_back(info);
            const double base = (arm ? 1e6 : 2e6) * (1 + 0.01 * p);
            for (int b = 0; b < 2; ++b)
                for (int k = 0; k < 20; ++k, ++iter)
                    a.samples.push_back(
                        {2 * p + b, iter, 1, 0, std::int64_t(base) + 1000 * ((k * 7) % 13), p});
        }
        r.arms.push_back(std::move(a));
    }
    return r;
}

}  // namespace

TEST(LessonReport, TheSyntheticRunJudgesAsExpected) {
    const auto report = results::checkLesson(lessonRun());
    ASSERT_EQ(report.checks.size(), 3u);
    EXPECT_EQ(report.checks[0].status, results::kReproduced);
    EXPECT_EQ(report.checks[1].status, results::kNotReproduced);
    EXPECT_EQ(report.checks[2].status, results::kNotRun);
    EXPECT_EQ(report.status, results::kNotReproduced);
}

TEST(LessonReport, HtmlHasTheLessonAfterTheVerdict) {
    const auto run = lessonRun();
    const QString html = report::htmlReport(run);
    const int verdict = html.indexOf(QStringLiteral("<h2>Verdict</h2>"));
    const int lesson =
        html.indexOf(QStringLiteral("<h2>Lesson: Grad left on &amp; inference</h2>"));
    ASSERT_GE(verdict, 0);
    ASSERT_GT(lesson, verdict) << "the lesson follows the verdict";
    EXPECT_LT(lesson, html.indexOf(QStringLiteral("<h2>Latency</h2>")) < 0
                          ? html.size()
                          : html.indexOf(QStringLiteral("<h2>Latency</h2>")));
    const QString section =
        html.mid(lesson, html.indexOf(QStringLiteral("<h2"), lesson + 4) - lesson);
    EXPECT_TRUE(section.contains(QStringLiteral("Autograd records a graph for every forward.")));
    EXPECT_TRUE(section.contains(QStringLiteral(
        "<b>Claim:</b> inference_mode is 1.5x faster than grad (Smith et al. 2023)")));
    EXPECT_TRUE(section.contains(QStringLiteral("Expect: B is faster")));
    // The overall status and one row per check: the word (never colour alone) and the figure.
    EXPECT_TRUE(section.contains(QStringLiteral("<b>On this run:</b>")));
    EXPECT_EQ(section.count(QStringLiteral("<tr><td>")), 3);
    EXPECT_TRUE(section.contains(QStringLiteral("✔&nbsp;reproduced")));
    EXPECT_TRUE(section.contains(QStringLiteral("✘&nbsp;not&nbsp;reproduced")));
    EXPECT_TRUE(section.contains(QStringLiteral("&nbsp;reproduced&nbsp;")));
    EXPECT_TRUE(section.contains(QStringLiteral("&nbsp;not&nbsp;reproduced&nbsp;")));
    EXPECT_TRUE(section.contains(QStringLiteral("&nbsp;not&nbsp;run&nbsp;")));
    EXPECT_TRUE(section.contains(QStringLiteral("B is faster than A by at least 1.50x")));
    EXPECT_TRUE(section.contains(QStringLiteral("B 2.0")));  // "B 2.0?x the speed of A"
    EXPECT_TRUE(section.contains(QStringLiteral("A read back grad = &quot;enabled&quot;")));
    EXPECT_TRUE(section.contains(QStringLiteral("peak_rss_bytes was not reported")));
    // The preset's strings are escaped.
    EXPECT_FALSE(html.contains(QStringLiteral("<inference>")));
}

TEST(LessonReport, MarkdownHasTheLessonAndEachCheck) {
    const QString md = report::markdownSummary(lessonRun());
    const int lesson = md.indexOf(QStringLiteral("## Lesson: Grad left on & inference"));
    ASSERT_GE(lesson, 0) << md.toStdString();
    EXPECT_GT(lesson, md.indexOf(QStringLiteral("**B is")));  // after the verdict line
    EXPECT_TRUE(md.contains(QStringLiteral("Autograd records a graph for every forward.")));
    EXPECT_TRUE(md.contains(
        QStringLiteral("**Claim:** inference_mode is 1.5x faster than grad (Smith et al. 2023)")));
    EXPECT_TRUE(md.contains(QStringLiteral("_Expect: B is faster_")));
    EXPECT_TRUE(md.contains(QStringLiteral("**On this run: ✘ not reproduced**")));
    EXPECT_TRUE(md.contains(
        QStringLiteral("| ✔ reproduced | B is faster than A by at least 1.50x | B 2.0")));
    EXPECT_TRUE(md.contains(QStringLiteral("| ✘ not reproduced | A reads back grad")));
    EXPECT_TRUE(md.contains(QStringLiteral("| – not run | B has lower peak_rss_bytes than A")));
}

TEST(LessonReport, PdfCarriesTheLesson) {
    const auto run = lessonRun();
    QTemporaryDir dir;
    const QString pdf = dir.filePath(QStringLiteral("lesson.pdf"));
    QString err;
    ASSERT_TRUE(report::writePdf(pdf, run, {}, &err)) << err.toStdString();
    const QString tool = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
    if (tool.isEmpty()) GTEST_SKIP() << "pdftotext not installed";
    QProcess p;
    p.start(tool, {pdf, QStringLiteral("-")});
    ASSERT_TRUE(p.waitForFinished(30000));
    const QString text = QString::fromUtf8(p.readAllStandardOutput()).simplified();
    EXPECT_TRUE(text.contains(QStringLiteral("Lesson: Grad left on & inference")));
    EXPECT_TRUE(text.contains(QStringLiteral("Claim: inference_mode is 1.5x faster")));
    EXPECT_TRUE(text.contains(QStringLiteral("Autograd records a graph for every forward.")));
    EXPECT_TRUE(text.contains(QStringLiteral("Expect: B is faster")));
    EXPECT_TRUE(text.contains(QStringLiteral("not reproduced")));
    EXPECT_TRUE(text.contains(QStringLiteral("not run")));
    EXPECT_TRUE(text.contains(QStringLiteral("peak_rss_bytes was not reported")));
}

TEST(LessonReport, WrittenForPeopleToLookAt) {
    // PITLANE_LESSON_REPORT_OUT=DIR keeps the files for a person to look at; otherwise they go to
    // a temporary folder and are checked for being written whole.
    QTemporaryDir tmp;
    QString out = qEnvironmentVariable("PITLANE_LESSON_REPORT_OUT");
    if (out.isEmpty()) out = tmp.path();
    QString err;
    const auto run = lessonRun();
    ASSERT_TRUE(report::writeHtml(out + QStringLiteral("/lesson.html"), run, {}, &err)) << err.toStdString();
    ASSERT_TRUE(report::writePdf(out + QStringLiteral("/lesson.pdf"), run, {}, &err)) << err.toStdString();
    ASSERT_TRUE(report::writeMarkdown(out + QStringLiteral("/lesson.md"), run, {}, &err)) << err.toStdString();
    for (const char* name : {"/lesson.html", "/lesson.pdf", "/lesson.md"})
        EXPECT_GT(QFileInfo(out + QLatin1String(name)).size(), 1000) << name;
    QFile pdf(out + QStringLiteral("/lesson.pdf"));
    ASSERT_TRUE(pdf.open(QIODevice::ReadOnly));
    EXPECT_TRUE(pdf.read(5).startsWith("%PDF-"));
}

TEST(LessonReport, NoLessonNoSection) {
    auto run = lessonRun();
    run.preset.lesson = json();
    EXPECT_FALSE(report::htmlReport(run).contains(QStringLiteral("<h2>Lesson")));
    EXPECT_FALSE(report::htmlReport(run).contains(QStringLiteral("On this run")));
    EXPECT_FALSE(report::markdownSummary(run).contains(QStringLiteral("## Lesson")));
}
