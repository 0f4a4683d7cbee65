// The process level in every report from a synthetic run (no worker, fast): the Processes
// section (strip chart with one dot per process, per-process table, variance shares and their
// estimator), faults/iter in the summary tables, the process warnings, the CSV's process column.
#include "pitlane/report/report.h"
#include "report_samples.h"

#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <gtest/gtest.h>

using namespace pitlane;

namespace {

// A: three agreeing processes. B: four replicates; the second is twice as slow and faults 300
// times per iteration, the fourth failed before measuring anything.
results::RunResult replicatedRun() {
    results::RunResult r;
    r.preset.name = "processes";
    r.preset.model = "mlp";
    r.started_at = "2026-01-01T00:00:00Z";
    for (int arm = 0; arm < 2; ++arm) {
        results::ArmResult a;
        a.name = arm ? "B" : "A";
        a.status = results::kOk;
        const int processes = arm ? 4 : 3;
        int iter = 0;
        for (int p = 0; p < processes; ++p) {
            results::ProcessInfo info;
            info.replicate = p;
            info.pid = 4000 + 100 * arm + p;
            const bool dead = arm == 1 && p == 3;
            if (!dead) {
                info.load_ms = 21.5 + p;
                info.first_forward_ms = 3.5;
                info.fault_iters = 20;
                info.minor_faults = arm == 1 && p == 1 ? 20 * 300 : 10;
            }
            a.processes.push_back(info);
            if (dead) continue;
            const double base = arm == 1 && p == 1 ? 2e6 : 1e6 + 2e4 * p;
            for (int b = 0; b < 2; ++b)
                for (int k = 0; k < 10; ++k, ++iter)
                    a.samples.push_back(
                        {2 * p + b, iter, 1, 0, std::int64_t(base) + 500 * k + 200 * b, p});
        }
        r.arms.push_back(std::move(a));
    }
    return r;
}

using report_test::figure;

QString sectionText(const QString& html, const QString& heading) {
    const int at = html.indexOf(heading);
    if (at < 0) return {};
    const int end = html.indexOf(QStringLiteral("<h2"), at + 4);
    return html.mid(at, end < 0 ? -1 : end - at);
}

QString percent(double share) {
    return QString::number(100 * share, 'f', 0);
}

}  // namespace

TEST(ProcessReport, HtmlHasTheProcessesSection) {
    const auto run = replicatedRun();
    const QString html = report::htmlReport(run);
    const int processes = html.indexOf(QStringLiteral("<h2>Processes</h2>"));
    ASSERT_GT(processes, html.indexOf(QStringLiteral("<h2>Comparison table</h2>")));
    ASSERT_LT(processes, html.indexOf(QStringLiteral("<h2>Charts</h2>")));
    const QString section = sectionText(html, QStringLiteral("<h2>Processes</h2>"));

    // The strip chart: one dot per process that measured something (3 + 3), same scale.
    const QString svg = figure(html, QStringLiteral("processes"));
    ASSERT_FALSE(svg.isEmpty());
    EXPECT_TRUE(section.contains(svg));
    EXPECT_EQ(svg.count(QStringLiteral("<circle")), 6);
    EXPECT_EQ(svg.count(report::armColor(0).name()) >= 3, true);
    EXPECT_EQ(html.count(QStringLiteral("<circle")), 6);  // no other chart draws dots here

    // One table per arm: every pid, n, median, faults/iter and load of each process.
    for (const auto& a : run.arms)
        for (const auto& p : results::processSummaries(a)) {
            SCOPED_TRACE(p.info.pid);
            const QRegularExpression row(
                QStringLiteral("<tr><td>%1</td><td class=\"num\">%2</td><td class=\"num\">%3</td>"
                               "<td class=\"num\">([^<]*)</td><td class=\"num\">([^<]*)</td>"
                               "<td class=\"num\">([^<]*)</td>")
                    .arg(p.info.replicate + 1)
                    .arg(p.info.pid)
                    .arg(p.n));
            const auto m = row.match(section);
            ASSERT_TRUE(m.hasMatch()) << section.toStdString();
            if (p.n == 0) {
                EXPECT_EQ(m.captured(1), QStringLiteral("&mdash;"));
                EXPECT_EQ(m.captured(2), QStringLiteral("&mdash;"));
                EXPECT_EQ(m.captured(3), QStringLiteral("&mdash;"));
                continue;
            }
            EXPECT_EQ(m.captured(1),
                      QString::fromStdString(results::formatDuration(p.median_ns))
                          .replace(' ', QStringLiteral("&nbsp;")));
            EXPECT_EQ(m.captured(2), QString::number(p.info.minorFaultsPerIter(), 'f',
                                                     p.info.minorFaultsPerIter() < 10 ? 2 : 0));
            EXPECT_EQ(m.captured(3), QStringLiteral("%1&nbsp;ms").arg(p.info.load_ms, 0, 'f', 1));
        }
    // Variance shares of each arm and the estimator that computed them.
    for (const auto& a : run.arms) {
        const auto v = results::varianceShares(a);
        ASSERT_TRUE(v.computed);
        EXPECT_TRUE(section.contains(QStringLiteral("<b>%1%</b> between processes, <b>%2%</b> "
                                                    "between blocks of a process, <b>%3%</b> "
                                                    "within blocks (%4 processes, %5 blocks")
                                         .arg(percent(v.between_processes),
                                              percent(v.between_blocks),
                                              percent(v.within_blocks))
                                         .arg(v.processes)
                                         .arg(v.blocks)))
            << a.name;
    }
    EXPECT_TRUE(section.contains(QStringLiteral("2.00x apart")));  // B: 2.00 ms / 1.00 ms
    EXPECT_TRUE(section.contains(
        QString::fromStdString(stats::VarianceShares::kEstimator).toHtmlEscaped()));
}

TEST(ProcessReport, FaultsPerIterationInTheSummaryAndWarningsListed) {
    const auto run = replicatedRun();
    const QString html = report::htmlReport(run);
    const QString table = sectionText(html, QStringLiteral("<h2>Comparison table</h2>"));
    EXPECT_TRUE(table.contains(QStringLiteral("<th>minor page faults / iter</th>")));
    // A: 30 faults over 60 iterations; B: (10 + 6000 + 10) / 60.
    EXPECT_TRUE(table.contains(QStringLiteral("<td class=\"num\">0.50</td>")));
    EXPECT_TRUE(table.contains(QStringLiteral("<td class=\"num\">100</td>")));
    // Both process warnings of B (processes disagree, faults every iteration) are with the
    // others, and the verdict counts them.
    const auto warnings = results::processWarnings(run.arms[1]);
    ASSERT_EQ(warnings.size(), 2u);
    const QString listed = sectionText(html, QStringLiteral("<h2>Warnings</h2>"));
    for (const auto& w : warnings)
        EXPECT_TRUE(listed.contains(QString::fromStdString(w).toHtmlEscaped())) << w;
    EXPECT_TRUE(listed.contains(QStringLiteral("Likely cause: the slow processes take 300")));
    const auto all = results::runWarnings(run);
    EXPECT_TRUE(html.contains(QStringLiteral("%1 warning(s) below").arg(all.size())));
}

TEST(ProcessReport, MarkdownHasTheProcessTableAndShares) {
    const auto run = replicatedRun();
    const QString md = report::markdownSummary(run);
    EXPECT_TRUE(md.contains(
        QStringLiteral("| arm | status | n | median | p90 | p99 | p99.9 | CoV | items/s | "
                       "peak RSS | faults/iter |")));
    EXPECT_TRUE(md.contains(QStringLiteral(" | 0.50 |\n")));  // A's row ends with its faults
    EXPECT_TRUE(md.contains(QStringLiteral("| arm | replicate | pid | n | median | faults/iter | load |")));
    EXPECT_TRUE(md.contains(QStringLiteral("| B | 2 | 4101 | 20 | 2.00 ms | 300 | 22.5 ms |")));
    EXPECT_TRUE(md.contains(QStringLiteral("| B | 4 | 4103 | 0 | - | - | - |")));
    EXPECT_EQ(md.count(QRegularExpression(QStringLiteral("^\\| [AB] \\| \\d \\| \\d+ \\|"),
                                          QRegularExpression::MultilineOption)),
              7);
    for (const auto& a : run.arms) {
        const auto v = results::varianceShares(a);
        EXPECT_TRUE(md.contains(QStringLiteral("- **%1**: %2% between processes, %3% between "
                                               "blocks, %4% within blocks")
                                    .arg(QString::fromStdString(a.name), percent(v.between_processes),
                                         percent(v.between_blocks), percent(v.within_blocks))))
            << md.toStdString();
    }
    EXPECT_TRUE(md.contains(QString::fromStdString(stats::VarianceShares::kEstimator)));
    // The process table comes after the comparison, before the warnings.
    EXPECT_GT(md.indexOf(QStringLiteral("| replicate |")), md.indexOf(QStringLiteral("| B vs A |")));
    EXPECT_LT(md.indexOf(QStringLiteral("| replicate |")), md.indexOf(QStringLiteral("warning(s)")));
}

TEST(ProcessReport, CsvNamesTheProcessOfEverySample) {
    const auto run = replicatedRun();
    const QList<QByteArray> lines = report::samplesCsv(run, {}).split('\n');
    EXPECT_EQ(lines.front(), "run,arm,block,iteration,batch_size,latency_ns,process");
    std::size_t row = 1;
    for (const auto& a : run.arms)
        for (const auto& s : a.samples) {
            const auto f = lines[qsizetype(row++)].split(',');
            ASSERT_EQ(f.size(), 7);
            EXPECT_EQ(f[6].toInt(), s.process);
        }
}

TEST(ProcessReport, PdfRendersTheStripChartAndTheTables) {
    const auto run = replicatedRun();
    QTemporaryDir dir;
    const QString pdf = dir.filePath(QStringLiteral("p.pdf"));
    QString err;
    // A chart QSvgRenderer cannot draw fails the export, naming it.
    ASSERT_TRUE(report::writePdf(pdf, run, {}, &err)) << err.toStdString();
    const QString tool = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
    if (tool.isEmpty()) GTEST_SKIP() << "pdftotext not installed";
    QProcess p;
    p.start(tool, {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
    ASSERT_TRUE(p.waitForFinished(30000));
    const QString text = QString::fromUtf8(p.readAllStandardOutput());
    EXPECT_TRUE(text.contains(QStringLiteral("Processes")));
    EXPECT_TRUE(text.contains(QStringLiteral("between processes")));
    EXPECT_TRUE(text.contains(QStringLiteral("4101")));
    EXPECT_TRUE(text.contains(QStringLiteral("minor page faults / iter")));
}
