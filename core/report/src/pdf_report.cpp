// PDF: the same content as the HTML (RichText flavour) laid out by QTextDocument on A4 pages;
// the SVG charts are rendered to images with QSvgRenderer at twice their printed size.
#include "html_builder.h"

#include <QBuffer>
#include <QImage>
#include <QPageLayout>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgRenderer>
#include <QTextDocument>
#include <QTextFrame>
#include <QUrl>

namespace pitlane::report {

namespace {

QImage renderChart(const QString& svg) {
    QSvgRenderer r(detail::withNamespace(svg).toUtf8());
    if (!r.isValid()) return {};
    const QSize size = r.defaultSize() * 2;
    QImage img(size, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    p.setRenderHint(QPainter::TextAntialiasing);
    r.render(&p);
    return img;
}

}  // namespace

bool writePdf(const QString& path, const results::RunResult& run, const ReportOptions& options,
              QString* error) {
    const auto doc = detail::buildHtml(run, options, detail::Flavor::RichText);
    QTextDocument text;
    text.setDefaultStyleSheet(detail::richTextCss());
    text.setDefaultFont(QFont(QStringLiteral("DejaVu Sans"), 9));
    for (const auto& c : doc.charts) {
        const QImage img = renderChart(c.svg);
        if (img.isNull()) {
            *error = path + QStringLiteral(": cannot render the %1 chart").arg(c.id);
            return false;
        }
        text.addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("chart:") + c.id), img);
    }
    text.setHtml(doc.html);
    // Lay out on an A4 page of 96-dpi pixels (794 x 1123) with 15 mm margins; print() scales it
    // to the writer's resolution, so sizes in the HTML read as on screen.
    QTextFrameFormat root = text.rootFrame()->frameFormat();
    root.setMargin(0);
    text.rootFrame()->setFrameFormat(root);
    const double marginPx = 15 / 25.4 * 96;
    text.setPageSize(QSizeF(794 - 2 * marginPx, 1123 - 2 * marginPx));
    text.setDocumentMargin(0);

    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        *error = path + QStringLiteral(": ") + file.errorString();
        return false;
    }
    {
        QPdfWriter pdf(&file);
        pdf.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Portrait,
                                      QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter));
        pdf.setResolution(300);
        pdf.setTitle(!options.title.isEmpty() ? options.title
                                              : QString::fromStdString(run.preset.name));
        pdf.setCreator(QStringLiteral("pitlane"));
        text.print(&pdf);
    }
    if (!file.commit()) {
        *error = path + QStringLiteral(": ") + file.errorString();
        return false;
    }
    return true;
}

}  // namespace pitlane::report
