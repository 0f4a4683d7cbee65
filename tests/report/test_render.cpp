// The HTML rendered by headless Chromium and the PDF by pdftoppm: both must give real pictures
// (not blank, with the arms' colours from the charts). The PNGs stay in artifacts/.
#include "report_fixture.h"

#include "pitlane/report/report.h"

#include <QImage>
#include <QStandardPaths>
#include <QTemporaryDir>

using namespace report_test;

namespace {

struct Ink {
    double nonWhite = 0;         // share of pixels that are not (near) white
    std::vector<int> armPixels;  // pixels close to each arm's colour
};

Ink measure(const QImage& img, int arms) {
    Ink ink;
    ink.armPixels.assign(std::size_t(arms), 0);
    qint64 dark = 0;
    const QImage rgb = img.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < rgb.height(); ++y) {
        const QRgb* line = reinterpret_cast<const QRgb*>(rgb.constScanLine(y));
        for (int x = 0; x < rgb.width(); ++x) {
            const QRgb p = line[x];
            if (qRed(p) < 235 || qGreen(p) < 235 || qBlue(p) < 235) ++dark;
            for (int a = 0; a < arms; ++a) {
                const QColor c = pitlane::report::armColor(a);
                if (std::abs(qRed(p) - c.red()) + std::abs(qGreen(p) - c.green()) +
                        std::abs(qBlue(p) - c.blue()) <
                    40)
                    ++ink.armPixels[std::size_t(a)];
            }
        }
    }
    ink.nonWhite = double(dark) / double(qint64(rgb.width()) * rgb.height());
    return ink;
}

using report_test::runTool;

}  // namespace

TEST(Render, HtmlInHeadlessChromium) {
    REQUIRE_EXPORTED();
    QString chromium = QStandardPaths::findExecutable(QStringLiteral("chromium"));
    if (chromium.isEmpty())
        chromium = QStandardPaths::findExecutable(QStringLiteral("chromium-browser"));
    if (chromium.isEmpty()) GTEST_SKIP() << "chromium is not installed (Debian package chromium)";
    QTemporaryDir profile;
    const QString png = artifact(QStringLiteral("html.png"));
    QString log;
    const int rc = runTool(
        chromium,
        {QStringLiteral("--headless"), QStringLiteral("--no-sandbox"),
         QStringLiteral("--disable-gpu"), QStringLiteral("--disable-background-networking"),
         QStringLiteral("--disable-component-update"), QStringLiteral("--disable-sync"),
         QStringLiteral("--no-first-run"), QStringLiteral("--user-data-dir=") + profile.path(),
         QStringLiteral("--screenshot=") + png, QStringLiteral("--window-size=1280,2400"),
         QStringLiteral("file://") + artifact(QStringLiteral("run.html"))},
        &log);
    ASSERT_EQ(rc, 0) << log.toStdString();
    QImage img(png);
    ASSERT_FALSE(img.isNull()) << "no PNG from chromium: " << log.toStdString();
    EXPECT_EQ(img.size(), QSize(1280, 2400));
    const Ink ink = measure(img, 3);
    EXPECT_GT(ink.nonWhite, 0.03) << "the page looks blank";
    // The first 2400 px hold the verdict, the tables and the first charts: every arm's colour
    // must be there in quantity (lines and histogram fills), not only in the table swatches.
    for (int a = 0; a < 3; ++a) EXPECT_GT(ink.armPixels[std::size_t(a)], 400) << "arm " << a;
}

TEST(Render, PdfWithPdftoppm) {
    REQUIRE_EXPORTED();
    const QString pdftoppm = QStandardPaths::findExecutable(QStringLiteral("pdftoppm"));
    if (pdftoppm.isEmpty())
        GTEST_SKIP() << "pdftoppm is not installed (Debian package poppler-utils)";
    QString log;
    const int rc = runTool(pdftoppm,
                           {QStringLiteral("-png"), QStringLiteral("-r"), QStringLiteral("60"),
                            artifact(QStringLiteral("run.pdf")), artifact(QStringLiteral("pdf"))},
                           &log);
    ASSERT_EQ(rc, 0) << log.toStdString();
    const QStringList pages =
        QDir(artifacts()).entryList({QStringLiteral("pdf-*.png")}, QDir::Files, QDir::Name);
    ASSERT_GE(pages.size(), 2) << "expected several A4 pages";
    std::vector<int> armPixels(3, 0);
    for (const auto& page : pages) {
        QImage img(artifact(page));
        ASSERT_FALSE(img.isNull()) << page.toStdString();
        // A4 at 60 dpi.
        EXPECT_NEAR(img.width(), 496, 3);
        EXPECT_NEAR(img.height(), 702, 3);
        const Ink ink = measure(img, 3);
        // The last page may hold only the end of a table; none may be empty.
        EXPECT_GT(ink.nonWhite, page == pages.front() ? 0.03 : 0.001)
            << page.toStdString() << " is blank";
        for (int a = 0; a < 3; ++a) armPixels[std::size_t(a)] += ink.armPixels[std::size_t(a)];
    }
    for (int a = 0; a < 3; ++a)
        EXPECT_GT(armPixels[std::size_t(a)], 200)
            << "arm " << a << " colour missing: charts not drawn";
}
