// What every report carries beyond the summary, from a synthetic run (report_samples.h, no
// worker): page faults and context switches per iteration ("not measured" where absent), every
// batch size of a sweep (Markdown rows, HTML/PDF table and curves), p99.9, knobs, applied
// settings and the environment; and the PDF's layout: no table row cut by a page, no column
// squeezed until words break, no table wider than the page.
#include "report_samples.h"

#include "../../core/report/src/pdf_layout.h"
#include "pitlane/report/report.h"

#include <QAbstractTextDocumentLayout>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextFrame>
#include <QTextLayout>
#include <QTextTable>

#include <gtest/gtest.h>

#include <cstring>

using namespace pitlane;

namespace {

// Two arms sweep: "eval_inference_mode_frozen_optimized" (1, 8) and "sweep_inference_mode"
// (1, 8, 64; 256 failed).
results::RunResult run() {
    auto r = report_test::sampleRun();
    r.arms[1] = report_test::sampleArm("eval_inference_mode_frozen_optimized", 1, {1, 8});
    return r;
}

using report_test::figure;

QString pdfText(const results::RunResult& r) {
    QTemporaryDir dir;
    const QString pdf = dir.filePath(QStringLiteral("r.pdf"));
    QString err;
    if (!report::writePdf(pdf, r, {}, &err)) return QStringLiteral("write failed: ") + err;
    QProcess p;
    p.start(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
    p.waitForFinished(30000);
    // pdftotext writes the font's ligatures ("ﬁrst", "ﬂoat32") as their own characters.
    return QString::fromUtf8(p.readAllStandardOutput())
        .replace(QStringLiteral("ﬁ"), QStringLiteral("fi"))
        .replace(QStringLiteral("ﬂ"), QStringLiteral("fl"))
        .replace(QStringLiteral("ﬀ"), QStringLiteral("ff"))
        .simplified();
}

// Every table of the laid-out PDF document, nested ones included.
void tables(QTextFrame* frame, std::vector<QTextTable*>& out) {
    for (QTextFrame* child : frame->childFrames()) {
        if (auto* t = qobject_cast<QTextTable*>(child)) out.push_back(t);
        tables(child, out);
    }
}

}  // namespace

TEST(ReportContent, HtmlCarriesFaultsSwitchesAndTheSweepCurves) {
    const auto r = run();
    const QString html = report::htmlReport(r);
    EXPECT_TRUE(html.contains(QStringLiteral("<h3>Page faults and context switches</h3>")));
    for (const char* h : {"minor page faults / iter", "major page faults / iter",
                          "voluntary context switches / iter",
                          "involuntary context switches / iter"})
        EXPECT_TRUE(html.contains(QStringLiteral("<th>%1</th>").arg(QLatin1String(h)))) << h;
    // train_grad_enabled_baseline: 60 minor faults, 1 major over 120 iterations; 180 voluntary
    // and 60 involuntary switches over its 60 samples.
    const QRegularExpression row(QStringLiteral(
        "train_grad_enabled_baseline</td><td class=\"num\">0.50</td><td class=\"num\">0.01</td>"
        "<td class=\"num\">3.00</td><td class=\"num\">1.00</td>"));
    EXPECT_TRUE(row.match(html).hasMatch());
    // The sweep: a row per batch size (the failed one says why), p99.9, and the curves.
    EXPECT_TRUE(html.contains(QStringLiteral("<th>p99.9</th><th>throughput</th>")));
    for (int bs : {1, 8, 64, 256})
        EXPECT_TRUE(html.contains(QStringLiteral("<td>batch size %1</td>").arg(bs))) << bs;
    EXPECT_TRUE(html.contains(QStringLiteral("failed: [out_of_memory] CPU out of memory")));
    const QString throughput = figure(html, QStringLiteral("sweep_throughput"));
    const QString latency = figure(html, QStringLiteral("sweep_latency"));
    ASSERT_TRUE(throughput.contains(QStringLiteral("<svg "))) << "no throughput curve";
    ASSERT_TRUE(latency.contains(QStringLiteral("<svg "))) << "no latency curve";
    EXPECT_EQ(throughput.count(QStringLiteral("<polyline")), 2);  // one per arm that swept
    EXPECT_EQ(latency.count(QStringLiteral("<polyline")), 4);     // median and p99 per arm
    EXPECT_EQ(throughput.count(QStringLiteral("<circle")), 2 + 3);  // a dot per measured size
    EXPECT_TRUE(throughput.contains(report::armColor(1).name()));
    EXPECT_TRUE(throughput.contains(report::armColor(2).name()));
    EXPECT_FALSE(throughput.contains(report::armColor(0).name()));  // arm 0 did not sweep
    // The environment in one line, with the allocator and the BLAS the workers read back.
    EXPECT_TRUE(html.contains(QStringLiteral(
        "Machine: AMD EPYC 7B13, 2 cores, Linux 6.1, libtorch 1.13.1, BLAS openblas, "
        "allocator system")));
    // The input shape whole, with room to wrap.
    EXPECT_TRUE(html.contains(QStringLiteral("int64[1, 77, 1024, 4096]")));
}

TEST(ReportContent, NotMeasuredWhereTheWorkersDidNotReport) {
    auto r = run();
    for (auto& m : r.arms[0].metrics) m.raw = nlohmann::json::object();
    for (auto& p : r.arms[0].processes) p.fault_iters = 0;
    const QString html = report::htmlReport(r);
    EXPECT_TRUE(html.contains(QStringLiteral(
        "train_grad_enabled_baseline</td><td class=\"num\">not measured</td><td class=\"num\">"
        "not measured</td><td class=\"num\">not measured</td><td class=\"num\">not "
        "measured</td>")));
    const QString md = report::markdownSummary(r);
    EXPECT_TRUE(md.contains(QStringLiteral(
        "| train_grad_enabled_baseline | not measured | not measured | not measured | not "
        "measured |")))
        << md.toStdString();
}

TEST(ReportContent, MarkdownHasEveryBatchSizeKnobsAppliedAndEnvironment) {
    const QString md = report::markdownSummary(run());
    EXPECT_TRUE(md.contains(
        QStringLiteral("| arm | status | n | median | p90 | p99 | p99.9 | CoV | items/s |")));
    EXPECT_TRUE(md.contains(QStringLiteral(
        "| arm | minor faults/iter | major faults/iter | voluntary switches/iter | involuntary "
        "switches/iter |")));
    EXPECT_TRUE(md.contains(QStringLiteral("| sweep_inference_mode | 1.50 | 0.01 | 1.00 | 0.33 |")))
        << md.toStdString();
    // One row per arm and batch size.
    EXPECT_TRUE(md.contains(QStringLiteral(
        "| arm | batch size | status | n | median | p99 | p99.9 | items/s |")));
    const auto rows = QRegularExpression(
        QStringLiteral("^\\| (\\w+) \\| (\\d+) \\| (ok|failed[^|]*) \\|"),
        QRegularExpression::MultilineOption);
    QStringList seen;
    for (auto it = rows.globalMatch(md); it.hasNext();) {
        const auto m = it.next();
        seen << m.captured(1) + QLatin1Char('@') + m.captured(2);
    }
    EXPECT_EQ(seen, QStringList({"train_grad_enabled_baseline@1",
                                 "eval_inference_mode_frozen_optimized@1",
                                 "eval_inference_mode_frozen_optimized@8",
                                 "sweep_inference_mode@1", "sweep_inference_mode@8",
                                 "sweep_inference_mode@64", "sweep_inference_mode@256"}));
    EXPECT_TRUE(md.contains(QStringLiteral(
        "| sweep_inference_mode | 256 | failed: [out_of_memory] CPU out of memory at batch 256 | "
        "0 | - | - | - | - |")));
    // Knobs and applied settings per arm, the differing ones marked.
    EXPECT_TRUE(md.contains(QStringLiteral("\n## Knobs")));
    EXPECT_TRUE(md.contains(QStringLiteral(
        "| ≠ `grad` | `enabled` | `inference_mode` | `inference_mode` |")));
    EXPECT_TRUE(md.contains(QStringLiteral("| ≠ `batch_size` | _default_ | `[1,8]` |")));
    EXPECT_TRUE(md.contains(QStringLiteral("<summary>Applied settings")));
    EXPECT_TRUE(md.contains(QStringLiteral("| `cudnn.enabled` | `true` | `true` | `true` |")));
    EXPECT_TRUE(md.contains(
        QStringLiteral("| `parallel_info` | `ATen/Parallel:` … _(full value in the JSON)_")));
    EXPECT_TRUE(md.contains(QStringLiteral(
        "**Environment:** AMD EPYC 7B13, 2 cores, Linux 6.1, libtorch 1.13.1, BLAS openblas, "
        "allocator system")));
}

TEST(ReportContent, PdfTextHasTheWholeInputFaultsSwitchesAndSweep) {
    if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty())
        GTEST_SKIP() << "pdftotext not installed";
    const QString text = pdfText(run());
    for (const char* s :
         {"float32[1, 3, 224, 224]", "int64[1, 77, 1024, 4096]", "minor page faults / iter",
          "major page faults / iter", "involuntary context switches / iter", "p99.9",
          "batch size 256", "failed: [out_of_memory]", "Items per second at each batch size",
          "Latency of one call", "allocator system", "train_grad_enabled_baseline",
          "eval_inference_mode_frozen_optimized"})
        EXPECT_TRUE(text.contains(QLatin1String(s))) << s << "\n" << text.toStdString();
}

TEST(PdfLayout, NoTableRowIsCutByAPage) {
    const auto layout = report::detail::layoutPdf(run(), {});
    ASSERT_TRUE(layout.error.isEmpty()) << layout.error.toStdString();
    ASSERT_GE(layout.pages.size(), 3u);
    int repeated = 0;
    for (const auto& page : layout.pages) {
        EXPECT_LE(page.bottom - page.top + page.headerHeight(),
                  report::detail::kPdfPageHeight + 0.01);
        repeated += page.headerHeight() > 0;
    }
    EXPECT_GE(repeated, 1) << "a table continued on the next page repeats its header row";
    auto* docLayout = layout.doc->documentLayout();
    std::vector<QTextTable*> all;
    tables(layout.doc->rootFrame(), all);
    ASSERT_GT(all.size(), 10u);
    int rows = 0;
    for (QTextTable* t : all)
        for (int r = 0; r < t->rows(); ++r, ++rows) {
            const double top =
                docLayout->blockBoundingRect(t->cellAt(r, 0).firstCursorPosition().block()).top();
            double bottom = top;
            for (int c = 0; c < t->columns(); ++c)
                bottom = std::max(
                    bottom,
                    docLayout->blockBoundingRect(t->cellAt(r, c).lastCursorPosition().block())
                        .bottom());
            for (const auto& page : layout.pages)
                EXPECT_FALSE(top < page.bottom - 0.01 && bottom > page.bottom + 0.01)
                    << "row " << r << " of a table spans " << top << "-" << bottom
                    << ", cut at " << page.bottom;
        }
    EXPECT_GT(rows, 50);
}

TEST(PdfLayout, NoColumnIsSqueezedAndNoTableIsWiderThanThePage) {
    const auto layout = report::detail::layoutPdf(run(), {});
    auto* docLayout = layout.doc->documentLayout();
    std::vector<QTextTable*> all;
    tables(layout.doc->rootFrame(), all);
    ASSERT_GT(all.size(), 10u);
    for (QTextTable* t : all) {
        for (int r = 0; r < t->rows(); ++r)
            for (int c = 0; c < t->columns(); ++c) {
                const QTextTableCell cell = t->cellAt(r, c);
                for (auto it = cell.begin(); !it.atEnd(); ++it) {
                    const QTextBlock b = it.currentBlock();
                    if (!b.isValid() || !b.layout()) continue;
                    const QString text = b.text();
                    // Nothing beyond the page's right edge, no line wider than its cell.
                    EXPECT_LE(docLayout->blockBoundingRect(b).right(),
                              report::detail::kPdfPageWidth)
                        << "cut off at the page's edge: " << text.toStdString();
                    for (int i = 0; i < b.layout()->lineCount(); ++i)
                        EXPECT_LE(b.layout()->lineAt(i).naturalTextWidth(),
                                  b.layout()->lineAt(i).width() + 0.5)
                            << "wider than its cell: " << text.toStdString();
                    // A line may end inside a word only when the word is longer than a column
                    // of a fair width (an identifier), never because the column was squeezed
                    // to a few letters ("a r m").
                    for (int i = 0; i + 1 < b.layout()->lineCount(); ++i) {
                        const QTextLine line = b.layout()->lineAt(i);
                        const int end = line.textStart() + line.textLength();
                        ASSERT_GT(end, 0);
                        if (end < text.size() && text[end - 1].isLetterOrNumber() &&
                            text[end].isLetterOrNumber()) {
                            EXPECT_GE(line.width(), 90) << "word broken in a narrow cell: "
                                                        << text.toStdString();
                        }
                    }
                }
            }
    }
}

TEST(ReportContent, ThroughputIsTheWholeArmsWithConcurrentWorkers) {
    auto r = run();
    auto& a = r.arms[0];
    a.workers = 2;
    results::SampleSeries two;
    for (auto s : a.samples) {
        if (s.iter % 2 == 0) s.worker = 1;
        two.push_back(s);
    }
    a.samples = two;
    const double whole = results::aggregateThroughput(a);
    ASSERT_GT(whole, 1.5 * results::summarize(a).throughput_per_s);  // two workers at once
    const QString cell = QStringLiteral("<td class=\"num\">%1&nbsp;/s</td>").arg(whole, 0, 'f', 1);
    const QString html = report::htmlReport(r);
    const int table = html.indexOf(QStringLiteral("<h3>Throughput, memory, cold start</h3>"));
    EXPECT_EQ(html.indexOf(cell, table), html.indexOf(QStringLiteral("train_grad_enabled_baseline</td>"), table) +
                                             int(std::strlen("train_grad_enabled_baseline</td>")));
    EXPECT_TRUE(report::markdownSummary(r).contains(
        QStringLiteral(" | %1 | ").arg(whole, 0, 'f', 1)));
}

namespace {

// Names reach the reports as written in a results JSON (issue 28: "<script>", newlines and
// escape codes reached the Markdown raw): the Markdown keeps them text and keeps the table whole,
// the HTML escapes them.
TEST(ReportContent, HostileArmNamesStayTextInMarkdownAndHtml) {
    auto r = run();
    r.arms[0].name = "<script>alert(1)</script>";
    r.arms[1].name = "B|x\n## fake\r\x1b[31m[link](javascript:alert(1))";
    const std::string md = report::markdownSummary(r).toStdString();
    // Escaped, so no viewer reads a tag: "\<script>" shows "<script>".
    EXPECT_NE(md.find("\\<script>alert(1)\\</script>"), std::string::npos) << md;
    for (std::size_t at = md.find("<script"); at != std::string::npos; at = md.find("<script", at + 1))
        EXPECT_TRUE(at > 0 && md[at - 1] == '\\') << md;
    EXPECT_EQ(md.find("\n## fake"), std::string::npos);
    EXPECT_EQ(md.find('\r'), std::string::npos);
    EXPECT_EQ(md.find('\x1b'), std::string::npos);
    EXPECT_NE(md.find("B\\|x ## fake [31m[link](javascript:alert(1))"), std::string::npos) << md;
    const QString html = report::htmlReport(r);
    EXPECT_FALSE(html.contains(QStringLiteral("<script>alert")));
    EXPECT_TRUE(html.contains(QStringLiteral("&lt;script&gt;alert(1)&lt;/script&gt;")));
}

}  // namespace
