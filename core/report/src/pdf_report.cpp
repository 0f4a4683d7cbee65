// PDF: the same content as the HTML (RichText flavour) laid out by QTextDocument on A4 pages;
// the SVG charts are rendered to images with QSvgRenderer at twice their printed size.
#include "html_builder.h"

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

// QTextDocument::print() paints with its own QPainter, which stores the chart images as lossy
// JPEG (visible as shifted arm colours). Paint the pages ourselves with lossless images, and a
// footer with the title and page numbers.
void paginate(QTextDocument& text, QPdfWriter& pdf, const QString& title) {
    QPainter p(&pdf);
    p.setRenderHint(QPainter::LosslessImageRendering);
    p.setRenderHint(QPainter::Antialiasing);
    const QSizeF page = text.pageSize();
    const QRectF paint = pdf.pageLayout().paintRectPixels(pdf.resolution());
    const double scale = paint.width() / page.width();
    const int pages = text.pageCount();
    // In layout pixels (the painter is scaled): a point size would be scaled twice.
    QFont footerFont(QStringLiteral("DejaVu Sans"));
    footerFont.setPixelSize(9);
    for (int i = 0; i < pages; ++i) {
        if (i > 0) pdf.newPage();
        p.save();
        p.scale(scale, scale);
        const QRectF view(0, i * page.height(), page.width(), page.height());
        p.translate(0, -view.top());
        text.drawContents(&p, view);
        p.restore();
        // The footer sits in the bottom margin, below the laid-out page.
        p.save();
        p.scale(scale, scale);
        p.setFont(footerFont);
        p.setPen(QColor(0x88, 0x88, 0x88));
        const QRectF foot(0, page.height() + 8, page.width(), 20);
        p.drawText(foot, Qt::AlignLeft | Qt::AlignTop, title);
        p.drawText(foot, Qt::AlignRight | Qt::AlignTop,
                   QStringLiteral("page %1 of %2").arg(i + 1).arg(pages));
        p.restore();
    }
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
    // Lay out on an A4 page of 96-dpi pixels (794 x 1123) with 15 mm margins; paginate() scales
    // it to the writer's resolution, so sizes in the HTML read as on screen.
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
        paginate(text, pdf,
                 options.title.isEmpty() ? QString::fromStdString(run.preset.name) : options.title);
    }
    if (!file.commit()) {
        *error = path + QStringLiteral(": ") + file.errorString();
        return false;
    }
    return true;
}

}  // namespace pitlane::report
