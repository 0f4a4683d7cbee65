// A serving run in every report (tests/common/serving_run.h: built by hand, b1 saturates at
// 800 req/s, b4 keeps up): one row per arm and offered rate with the figures servingPoints
// computes, the capacity within the SLO, the verdict lines, the latency-vs-rate and batch-size
// charts; none of the per-iteration sections, which would show zeros; the CSV one row per
// request; the same report after a round trip through the results JSON; the PDF rendered.
// The HTML, PDF and their PNGs stay in artifacts/serving-*.
#include "report_fixture.h"
#include "serving_run.h"

#include "pitlane/report/report.h"

#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cstdio>

using namespace pitlane;

namespace {

std::string g(double v, const char* f) {
    char buf[48];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// A rate as the CLI table writes it: whole requests/s from 100 up, else four digits.
std::string rate(double v) {
    return g(v, v >= 100 ? "%.0f" : "%.4g");
}

// The reports' figures: three significant digits, never an exponent (1042, not 1.04e+03).
std::string ms3(double v) {
    return g(v, v >= 1000 ? "%.0f" : "%.3g");
}

QString ms(double v) {
    return QString::fromStdString(ms3(v)) + QStringLiteral("&nbsp;ms");
}

// The HTML row the table must hold for one point: every figure as servingPoints computed it.
QString expectedRow(const results::ServingPoint& p) {
    const auto& s = p.pooled;
    auto num = [](const QString& v) { return QStringLiteral("<td class=\"num\">%1</td>").arg(v); };
    return num(QString::fromStdString(rate(p.rate_per_s))) +
           num(QString::fromStdString(rate(s.offered_per_s))) +
           num(QString::fromStdString(rate(s.achieved_per_s))) +
           num(QString::number(s.served)) + num(ms(s.p50_ms)) + num(ms(s.p90_ms)) +
           num(ms(s.p99_ms)) + num(ms(s.p999_ms)) + num(QString::number(s.mean_batch, 'f', 2)) +
           num(QString::number(s.max_queue)) +
           QStringLiteral("<td>%1</td>")
               .arg(s.saturated ? QStringLiteral("<b class=\"bad\">yes</b>")
                                : QStringLiteral("no")) +
           QStringLiteral("<td>%1 (%2 of %3)</td>")
               .arg(p.meetsSlo() ? QStringLiteral("yes") : QStringLiteral("no"))
               .arg(p.meeting_slo)
               .arg(p.processes.size());
}

QString esc(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

// The artifacts folder is emptied once per process by the shared CLI run: make sure that has
// happened before writing into it.
QString servingArtifact(const QString& name) {
    (void)report_test::exported();
    return report_test::artifact(QStringLiteral("serving-") + name);
}

using report_test::runTool;

// Pixels of arm `arm`'s colour in an image.
int armPixels(const QImage& img, int arm) {
    const QImage rgb = img.convertToFormat(QImage::Format_RGB32);
    const QColor c = report::armColor(arm);
    int n = 0;
    for (int y = 0; y < rgb.height(); ++y) {
        const QRgb* line = reinterpret_cast<const QRgb*>(rgb.constScanLine(y));
        for (int x = 0; x < rgb.width(); ++x)
            n += std::abs(qRed(line[x]) - c.red()) + std::abs(qGreen(line[x]) - c.green()) +
                     std::abs(qBlue(line[x]) - c.blue()) <
                 40;
    }
    return n;
}

}  // namespace

TEST(ServingReport, HtmlHasEveryLevelTheCapacityTheVerdictAndTheCharts) {
    const auto run = fixtures::handBuiltServingRun();
    const QString html = report::htmlReport(run);
    EXPECT_TRUE(html.contains(QStringLiteral("<h2>Serving under load</h2>")));
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto points = results::servingPoints(run, i);
        ASSERT_EQ(points.size(), 2u);
        for (const auto& p : points)
            EXPECT_TRUE(html.contains(expectedRow(p))) << run.arms[i].name << " at " << p.rate_per_s
                                                       << ": " << expectedRow(p).toStdString();
    }
    // b1 at 800 req/s: saturated (a red row), missed the SLO in both processes; b4 met it.
    const auto b1 = results::servingPoints(run, 0);
    EXPECT_TRUE(b1[1].pooled.saturated);
    EXPECT_TRUE(html.contains(QStringLiteral("<tr class=\"drift\">")));
    EXPECT_TRUE(html.contains(QStringLiteral("<td>no (0 of 2)</td>")));
    EXPECT_TRUE(html.contains(QStringLiteral("<td>yes (2 of 2)</td>")));
    // The capacity: b1 200/s (missed at 800), b4 at least 800/s.
    EXPECT_TRUE(html.contains(QStringLiteral("Capacity within the SLO")));
    EXPECT_TRUE(html.contains(
        QStringLiteral("<td class=\"num\">200&nbsp;/s</td><td class=\"num\">800&nbsp;/s</td>")));
    EXPECT_TRUE(html.contains(QStringLiteral("at least 800&nbsp;/s")));
    // Every verdict line, in the verdict box.
    const auto verdict = results::servingVerdict(run);
    ASSERT_GE(verdict.size(), 2u);
    const int box = html.indexOf(QStringLiteral("<h2>Verdict</h2>"));
    const int boxEnd = html.indexOf(QStringLiteral("</table>"), box);
    for (const auto& line : verdict) {
        const int at = html.indexOf(esc(line), box);
        EXPECT_TRUE(at > box && at < boxEnd) << line;
    }
    // The p99 comparison at each listed rate.
    for (const auto& c : results::compareServing(run))
        EXPECT_TRUE(html.contains(esc(c.text))) << c.text;
    // The charts: latency vs offered rate with both arms and the SLO, and the batch sizes.
    for (const char* id : {"serving_latency", "serving_batches"}) {
        const int at = html.indexOf(QStringLiteral("<figure id=\"%1\">").arg(QLatin1String(id)));
        ASSERT_GE(at, 0) << id;
        const QString fig = html.mid(at, html.indexOf(QStringLiteral("</figure>"), at) - at);
        for (int a = 0; a < 2; ++a)
            EXPECT_TRUE(fig.contains(report::armColor(a).name())) << id << a;
    }
    EXPECT_TRUE(html.contains(QStringLiteral("SLO: p99 25 ms")));
    EXPECT_TRUE(html.contains(QStringLiteral("saturated, p99 ")));  // b1 at 800, above the scale
    EXPECT_FALSE(html.contains(QStringLiteral("e+0")));  // no figure in exponent notation
    // Nothing of the per-iteration sections: they would show zeros or dashes for every arm.
    for (const char* absent : {"Latency per iteration", "Page faults and context switches",
                               "fewer than two arms have measured samples", "items/s",
                               "no arm has measured samples", "<h2>Processes</h2>"})
        EXPECT_FALSE(html.contains(QLatin1String(absent))) << absent;
    // Raw data: requests and levels, the cut-short one named.
    std::int64_t served = 0;
    for (const auto& l : run.arms[1].serving) served += l.record.served();
    EXPECT_TRUE(html.contains(QStringLiteral("%1 requests").arg(served)));
    EXPECT_TRUE(html.contains(QStringLiteral("5 (1 cut short)")));
    QString err;
    ASSERT_TRUE(report::writeHtml(servingArtifact(QStringLiteral("run.html")), run, {}, &err))
        << err.toStdString();
}

// The results JSON export carries the raw levels: a report of the re-imported run is the same.
TEST(ServingReport, TheResultsJsonRoundTripGivesTheSameReport) {
    const auto run = fixtures::handBuiltServingRun();
    const auto back = results::fromResultsJson(results::toResultsJson(run));
    auto body = [](QString html) {  // everything but the footer's generation time
        return html.left(html.indexOf(QStringLiteral("<footer>")));
    };
    const QString a = body(report::htmlReport(run)), b = body(report::htmlReport(back));
    if (a != b) {  // for a person to diff
        QString err;
        report::writeFileAtomic(servingArtifact(QStringLiteral("measured.html")), a.toUtf8(), &err);
        report::writeFileAtomic(servingArtifact(QStringLiteral("reimported.html")), b.toUtf8(),
                                &err);
    }
    EXPECT_TRUE(a == b)
        << "the HTML of the re-imported run differs: diff artifacts/serving-measured.html "
           "artifacts/serving-reimported.html";
    EXPECT_EQ(report::markdownSummary(back), report::markdownSummary(run));
    EXPECT_EQ(report::samplesCsv(back), report::samplesCsv(run));
}

TEST(ServingReport, MarkdownHasTheLevelsAndTheVerdict) {
    const auto run = fixtures::handBuiltServingRun();
    const QString md = report::markdownSummary(run);
    for (const auto& line : results::servingVerdict(run))
        EXPECT_TRUE(md.contains(QStringLiteral("**%1**").arg(QString::fromStdString(line))))
            << line;
    EXPECT_TRUE(md.contains(
        QStringLiteral("| arm | rate/s | offered/s | achieved/s | served | p50 | p90 | p99 | p99.9 "
                       "| mean batch | max queue | saturated | SLO met |")));
    for (std::size_t i = 0; i < run.arms.size(); ++i)
        for (const auto& p : results::servingPoints(run, i)) {
            const auto& s = p.pooled;
            const std::string row = "| " + run.arms[i].name + " | " + rate(p.rate_per_s) +
                                    " | " + rate(s.offered_per_s) + " | " +
                                    rate(s.achieved_per_s) + " | " + std::to_string(s.served) +
                                    " | " + ms3(s.p50_ms) + " ms | " + ms3(s.p90_ms) + " ms | " +
                                    ms3(s.p99_ms) + " ms | " + ms3(s.p999_ms) + " ms | " +
                                    g(s.mean_batch, "%.2f") + " | " + std::to_string(s.max_queue) +
                                    " | " + (s.saturated ? "**yes**" : "no") + " | ";
            EXPECT_TRUE(md.contains(QString::fromStdString(row))) << row;
        }
    EXPECT_TRUE(md.contains(QStringLiteral("| b4 vs b1 | 200/s |")));
    // No per-iteration summary: its n and median columns would be 0 and "-" for every arm.
    EXPECT_FALSE(md.contains(QStringLiteral("| n | median |")));
    EXPECT_FALSE(md.contains(QStringLiteral("faults/iter")));
}

TEST(ServingReport, CsvIsOneRowPerServedRequest) {
    const auto run = fixtures::handBuiltServingRun();
    report::ReportOptions o;
    o.runId = QStringLiteral("42");
    const QByteArray csv = report::samplesCsv(run, o);
    const auto lines = csv.split('\n');
    ASSERT_GT(lines.size(), 2);
    EXPECT_EQ(lines[0], QByteArray("run,arm,process,worker,rate_per_s,clients,request,arrival_ns,"
                                   "batch_size,queue_wait_ns,formation_wait_ns,inference_ns,"
                                   "end_to_end_ns"));
    std::int64_t served = 0;
    for (const auto& a : run.arms)
        for (const auto& l : a.serving) served += l.record.served();
    EXPECT_EQ(lines.size(), served + 2);  // header, one per request, the empty tail
    EXPECT_TRUE(lines.back().isEmpty());
    // Each row is results::servingRequestsCsv's, after the run column.
    const auto requests = QByteArray::fromStdString(results::servingRequestsCsv(run)).split('\n');
    ASSERT_EQ(requests.size(), lines.size());
    for (int k = 1; k + 1 < lines.size(); ++k) ASSERT_EQ(lines[k], "42," + requests[k]) << k;
}

TEST(ServingReport, PdfCarriesTheServingSectionAndItsCharts) {
    const auto run = fixtures::handBuiltServingRun();
    const QString pdf = servingArtifact(QStringLiteral("run.pdf"));
    QString err;
    ASSERT_TRUE(report::writePdf(pdf, run, {}, &err)) << err.toStdString();
    QString text;
    if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty())
        GTEST_SKIP() << "pdftotext is not installed (Debian package poppler-utils)";
    ASSERT_EQ(runTool(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")}, &text), 0);
    text = text.simplified();
    // (The charts' titles are inside their images; their captions are text.)
    for (const char* s :
         {"Serving under load", "Capacity within the SLO", "at least 800 /s", "no (0 of 2)",
          "End-to-end latency of a request", "How many requests the dynamic batcher"})
        EXPECT_TRUE(text.contains(QLatin1String(s))) << s;
    EXPECT_TRUE(
        text.contains(QString::fromStdString(results::servingVerdict(run).front()).simplified()));
    EXPECT_FALSE(text.contains(QStringLiteral("Latency per iteration")));

    const QString pdftoppm = QStandardPaths::findExecutable(QStringLiteral("pdftoppm"));
    if (pdftoppm.isEmpty()) GTEST_SKIP() << "pdftoppm is not installed";
    ASSERT_EQ(runTool(pdftoppm,
                      {QStringLiteral("-png"), QStringLiteral("-r"), QStringLiteral("60"), pdf,
                       servingArtifact(QStringLiteral("pdf"))},
                      &text),
              0)
        << text.toStdString();
    const QStringList pages =
        QDir(report_test::artifacts())
            .entryList({QStringLiteral("serving-pdf-*.png")}, QDir::Files, QDir::Name);
    ASSERT_GE(pages.size(), 2);
    int pixels[2] = {0, 0};
    for (const auto& page : pages) {
        const QImage img(report_test::artifact(page));
        ASSERT_FALSE(img.isNull()) << page.toStdString();
        for (int a = 0; a < 2; ++a) pixels[a] += armPixels(img, a);
    }
    // The charts are drawn: far more of each arm's colour than the table swatches give.
    for (int a = 0; a < 2; ++a) EXPECT_GT(pixels[a], 1500) << "arm " << a;
}

TEST(ServingReport, HtmlInHeadlessChromium) {
    QString chromium = QStandardPaths::findExecutable(QStringLiteral("chromium"));
    if (chromium.isEmpty()) GTEST_SKIP() << "chromium is not installed (Debian package chromium)";
    const auto run = fixtures::handBuiltServingRun();
    const QString html = servingArtifact(QStringLiteral("chromium.html"));
    QString err;
    ASSERT_TRUE(report::writeHtml(html, run, {}, &err)) << err.toStdString();
    QTemporaryDir profile;
    const QString png = servingArtifact(QStringLiteral("html.png"));
    QString log;
    ASSERT_EQ(runTool(chromium,
                      {QStringLiteral("--headless"), QStringLiteral("--no-sandbox"),
                       QStringLiteral("--disable-gpu"), QStringLiteral("--no-first-run"),
                       QStringLiteral("--user-data-dir=") + profile.path(),
                       QStringLiteral("--screenshot=") + png,
                       QStringLiteral("--window-size=1280,3000"), QStringLiteral("file://") + html},
                      &log),
              0)
        << log.toStdString();
    const QImage img(png);
    ASSERT_FALSE(img.isNull()) << log.toStdString();
    // The first 3000 px hold the verdict, the serving table and both serving charts.
    for (int a = 0; a < 2; ++a) EXPECT_GT(armPixels(img, a), 2000) << "arm " << a;
}
