// The report headers name each arm's model when the arms measured models of their own (issue 44:
// the HTML, PDF and Markdown headers named only the preset's model). Synthetic runs, no worker.
#include "pitlane/report/report.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <gtest/gtest.h>

using namespace pitlane;

namespace {

results::ArmResult armOn(const std::string& name, const std::string& model, const std::string& sha,
                         double ms) {
    results::ArmResult a;
    a.name = name;
    a.status = results::kOk;
    a.model = model;
    a.model_sha256 = sha;
    a.model_format = "torchscript";
    for (int i = 0; i < 20; ++i) a.samples.push_back({i / 10, i, 1, 0, std::int64_t(ms * 1e6) + 1000 * i, 0});
    return a;
}

// A two-model preset: the preset's model is resnet18, arm "wide" measures resnet50.
results::RunResult twoModelRun() {
    results::RunResult r;
    r.preset.name = "resnet18 vs resnet50";
    r.preset.model = "resnet18";
    r.started_at = "2026-01-01T00:00:00Z";
    r.arms.push_back(armOn("small", "/opt/models/resnet18.pt", std::string(64, 'a'), 10));
    r.arms.push_back(armOn("wide", "/opt/models/resnet50.pt", std::string(64, 'b'), 25));
    return r;
}

// The header: the <p class="sub"> line under the title.
QString htmlHeader(const QString& html) {
    const int at = html.indexOf(QStringLiteral("<p class=\"sub\">"));
    return at < 0 ? QString() : html.mid(at, html.indexOf(QStringLiteral("</p>"), at) - at);
}

// The Markdown header: the line after the title.
QString markdownHeader(const QString& md) {
    const QStringList lines = md.split(QLatin1Char('\n'));
    return lines.size() > 2 ? lines[2] : QString();
}

}  // namespace

TEST(ReportHeader, EachArmsModelWhenTheArmsHaveTheirOwn) {
    const auto r = twoModelRun();
    const QString html = htmlHeader(report::htmlReport(r));
    EXPECT_TRUE(html.contains(QStringLiteral("models: small <b>resnet18.pt</b>, wide <b>resnet50.pt</b>")))
        << html.toStdString();
    EXPECT_FALSE(html.contains(QStringLiteral("model <b>resnet18</b>"))) << html.toStdString();
    const QString md = markdownHeader(report::markdownSummary(r));
    EXPECT_EQ(md.toStdString(), "models: small `resnet18.pt`, wide `resnet50.pt` · 2026-01-01T00:00:00Z");

    // The PDF is laid out from the same HTML.
    if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty())
        GTEST_SKIP() << "pdftotext not installed";
    QTemporaryDir dir;
    const QString pdf = dir.filePath(QStringLiteral("r.pdf"));
    QString err;
    ASSERT_TRUE(report::writePdf(pdf, r, {}, &err)) << err.toStdString();
    QProcess p;
    p.start(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
    ASSERT_TRUE(p.waitForFinished(30000));
    const QString text = QString::fromUtf8(p.readAllStandardOutput()).simplified();
    EXPECT_TRUE(text.contains(QStringLiteral("models: small resnet18.pt, wide resnet50.pt"))) << text.toStdString();
}

TEST(ReportHeader, TwoFilesOfOneNameByTheirPathsAndOneModelAsThePresetWroteIt) {
    auto r = twoModelRun();
    r.arms[0].model = "/opt/v1/model.pt";
    r.arms[1].model = "/opt/v2/model.pt";
    const QString html = htmlHeader(report::htmlReport(r));
    EXPECT_TRUE(html.contains(QStringLiteral("models: small <b>/opt/v1/model.pt</b>, wide <b>/opt/v2/model.pt</b>")))
        << html.toStdString();
    EXPECT_EQ(markdownHeader(report::markdownSummary(r, {QStringLiteral("7")})).toStdString(),
              "models: small `/opt/v1/model.pt`, wide `/opt/v2/model.pt` · run #7 · 2026-01-01T00:00:00Z");

    // One model for every arm: the preset's, as written, once.
    r.arms[1].model = r.arms[0].model;
    r.arms[1].model_sha256 = r.arms[0].model_sha256;
    EXPECT_TRUE(htmlHeader(report::htmlReport(r)).contains(QStringLiteral("model <b>resnet18</b>")));
    EXPECT_EQ(markdownHeader(report::markdownSummary(r)).toStdString(), "model `resnet18` · 2026-01-01T00:00:00Z");
    // No model at all: no empty "model ``".
    r.preset.model.clear();
    EXPECT_EQ(markdownHeader(report::markdownSummary(r)).toStdString(), "2026-01-01T00:00:00Z");
}
