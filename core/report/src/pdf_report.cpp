// PDF: the same content as the HTML (RichText flavour) laid out by QTextDocument, cut into A4
// pages where no table row and no line is cut (pdf_layout.h); the SVG charts are rendered to
// images with QSvgRenderer at twice their printed size.
#include "html_builder.h"
#include "pdf_layout.h"

#include <QAbstractTextDocumentLayout>
#include <QTextBlock>
#include <QTextTable>
#include <QTextLayout>

#include <algorithm>

#include <QImage>
#include <QPageLayout>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgRenderer>
#include <QTextDocument>
#include <QTextFrame>
#include <QUrl>

namespace pitlane::report::detail {

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

// Where a page may not be cut, in document order; `withNext`: keep it on the page of the next one
// (a heading, a chart before its caption, a table's header row).
struct Span {
    double top, bottom;
    bool withNext;
    double headerTop = 0, headerBottom = 0;
};

void addBlock(QAbstractTextDocumentLayout& layout, const QTextBlock& block,
              std::vector<Span>& out, std::vector<double>* forced) {
    const QTextLayout* lines = block.layout();
    if (!lines || lines->lineCount() == 0 || block.length() <= 1) return;
    const double top = layout.blockBoundingRect(block).top();
    const QTextBlockFormat format = block.blockFormat();
    if (forced && (format.pageBreakPolicy() & QTextFormat::PageBreak_AlwaysBefore))
        forced->push_back(top + lines->lineAt(0).y());
    const bool withNext =
        format.headingLevel() > 0 || block.text().contains(QChar::ObjectReplacementCharacter);
    for (int i = 0; i < lines->lineCount(); ++i) {
        const QTextLine line = lines->lineAt(i);
        out.push_back({top + line.y(), top + line.y() + line.height(),
                       withNext && i + 1 == lines->lineCount()});
    }
}

template <typename Iterator>
void addFlow(QAbstractTextDocumentLayout& layout, Iterator it, std::vector<Span>& out,
             std::vector<double>* forced, double pageHeight);

// A table row is one stretch (with the cell padding and borders); its header row stays with the
// first row. A row taller than a page can only be cut between the lines of its cells.
void addTable(QAbstractTextDocumentLayout& layout, QTextTable* table, std::vector<Span>& out,
              double pageHeight) {
    const QTextTableFormat format = table->format();
    const double pad = format.cellPadding() + format.border() + format.cellSpacing();
    double headerTop = 0, headerBottom = 0;
    for (int r = 0; r < table->rows(); ++r) {
        double top = 1e300, bottom = -1e300;
        for (int c = 0; c < table->columns(); ++c) {
            const QTextTableCell cell = table->cellAt(r, c);
            if (!cell.isValid() || cell.row() != r || cell.column() != c) continue;
            top = std::min(top, layout.blockBoundingRect(cell.firstCursorPosition().block()).top());
            bottom = std::max(bottom,
                              layout.blockBoundingRect(cell.lastCursorPosition().block()).bottom());
        }
        if (top > bottom) continue;
        if (bottom - top + 2 * pad > pageHeight) {
            for (int c = 0; c < table->columns(); ++c)
                addFlow(layout, table->cellAt(r, c).begin(), out, nullptr, pageHeight);
            continue;
        }
        const bool header = r == 0 && table->rows() > 1;
        out.push_back({top - pad, bottom + pad, header, headerTop, headerBottom});
        if (header) {
            headerTop = top - pad;
            headerBottom = bottom + pad;
        }
    }
}

template <typename Iterator>
void addFlow(QAbstractTextDocumentLayout& layout, Iterator it, std::vector<Span>& out,
             std::vector<double>* forced, double pageHeight) {
    for (; !it.atEnd(); ++it) {
        if (QTextFrame* frame = it.currentFrame()) {
            if (auto* table = qobject_cast<QTextTable*>(frame))
                addTable(layout, table, out, pageHeight);
            else
                addFlow(layout, frame->begin(), out, forced, pageHeight);
        } else {
            addBlock(layout, it.currentBlock(), out, forced);
        }
    }
}

// Draws the pages with lossless images (QTextDocument::print() stores the chart images as lossy
// JPEG, visible as shifted arm colours) and a footer with the title and page numbers.
void paintPages(const PdfLayout& layout, QPdfWriter& pdf, const QString& title) {
    QPainter p(&pdf);
    p.setRenderHint(QPainter::LosslessImageRendering);
    p.setRenderHint(QPainter::Antialiasing);
    const QRectF paint = pdf.pageLayout().paintRectPixels(pdf.resolution());
    const double scale = paint.width() / kPdfPageWidth;
    const int pages = int(layout.pages.size());
    // In layout pixels (the painter is scaled): a point size would be scaled twice.
    QFont footerFont(QStringLiteral("DejaVu Sans"));
    footerFont.setPixelSize(9);
    for (int i = 0; i < pages; ++i) {
        if (i > 0) pdf.newPage();
        const PdfPage& page = layout.pages[std::size_t(i)];
        p.save();
        p.scale(scale, scale);
        if (page.headerHeight() > 0) {  // the header row of the table the page continues
            p.save();
            p.translate(0, -page.headerTop);
            layout.doc->drawContents(&p, QRectF(0, page.headerTop, kPdfPageWidth, page.headerHeight()));
            p.restore();
            p.translate(0, page.headerHeight());
        }
        p.translate(0, -page.top);
        layout.doc->drawContents(&p, QRectF(0, page.top, kPdfPageWidth, page.bottom - page.top));
        p.restore();
        // The footer sits in the bottom margin, below the page's text area.
        p.save();
        p.scale(scale, scale);
        p.setFont(footerFont);
        p.setPen(QColor(0x88, 0x88, 0x88));
        const QRectF foot(0, kPdfPageHeight + 8, kPdfPageWidth, 20);
        p.drawText(foot, Qt::AlignLeft | Qt::AlignTop, title);
        p.drawText(foot, Qt::AlignRight | Qt::AlignTop,
                   QStringLiteral("page %1 of %2").arg(i + 1).arg(pages));
        p.restore();
    }
}

}  // namespace

std::vector<KeepTogether> keepTogether(QTextDocument& doc, std::vector<double>* forcedBreaks) {
    doc.documentLayout()->documentSize();  // the layout is lazy: finish it
    std::vector<Span> spans;
    addFlow(*doc.documentLayout(), doc.rootFrame()->begin(), spans, forcedBreaks, kPdfPageHeight);
    std::sort(forcedBreaks->begin(), forcedBreaks->end());
    std::vector<KeepTogether> out;
    double carried = -1;  // the top of a stretch that goes with the next one
    for (const auto& s : spans) {
        const double top = carried >= 0 ? std::min(carried, s.top) : s.top;
        // A stretch that begins with a heading or a header row shows its own header.
        const bool merged = carried >= 0;
        carried = s.withNext ? top : -1;
        if (!s.withNext)
            out.push_back({top, s.bottom, merged ? 0 : s.headerTop, merged ? 0 : s.headerBottom});
    }
    if (carried >= 0 && !spans.empty()) out.push_back({carried, spans.back().bottom});
    std::sort(out.begin(), out.end(),
              [](const KeepTogether& a, const KeepTogether& b) { return a.top < b.top; });
    return out;
}

std::vector<PdfPage> paginate(const std::vector<KeepTogether>& keep,
                              const std::vector<double>& forcedBreaks, double height,
                              double pageHeight) {
    std::vector<PdfPage> pages;
    for (double top = 0; top < height - 0.5;) {
        PdfPage page{top, 0, 0, 0};
        for (const auto& k : keep)  // the stretch the page starts with: inside a table?
            if (k.top >= top - 2 && k.top <= top + 2 && k.headerBottom > k.headerTop &&
                k.headerBottom <= top + 2) {
                page.headerTop = k.headerTop;
                page.headerBottom = k.headerBottom;
                break;
            }
        double end = std::min(top + pageHeight - page.headerHeight(), height);
        for (double f : forcedBreaks)
            if (f > top + 0.5 && f < end) end = f;
        // Move the end up to the top of any stretch it would cut, until none is cut (a stretch
        // that starts at the page's top is taller than a page: it is cut where it must be).
        // Adjacent table rows share their border: a stretch is cut only when the end lies more
        // than a border's width inside it.
        for (bool moved = true; moved;) {
            moved = false;
            for (const auto& k : keep)
                if (k.top > top + 0.5 && k.top < end - 2 && k.bottom > end + 2) {
                    end = k.top;
                    moved = true;
                }
        }
        page.bottom = end;
        pages.push_back(page);
        top = end;
    }
    return pages;
}

PdfLayout layoutPdf(const results::RunResult& run, const ReportOptions& options) {
    PdfLayout out;
    const auto html = detail::buildHtml(run, options, detail::Flavor::RichText);
    out.doc = std::make_unique<QTextDocument>();
    QTextDocument& text = *out.doc;
    text.setDefaultStyleSheet(detail::richTextCss());
    text.setDefaultFont(QFont(QStringLiteral("DejaVu Sans"), 9));
    for (const auto& c : html.charts) {
        const QImage img = renderChart(c.svg);
        if (img.isNull()) {
            out.error = QStringLiteral("cannot render the %1 chart").arg(c.id);
            return out;
        }
        text.addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("chart:") + c.id), img);
    }
    text.setHtml(html.html);
    QTextFrameFormat root = text.rootFrame()->frameFormat();
    root.setMargin(0);
    text.rootFrame()->setFrameFormat(root);
    text.setDocumentMargin(0);
    fitTables(text, kPdfPageWidth);
    // One page wide, unbounded: the pages are cut below, where nothing is cut in two.
    text.setPageSize(QSizeF(kPdfPageWidth, -1));
    std::vector<double> forced;
    const auto keep = keepTogether(text, &forced);
    out.pages = paginate(keep, forced, text.documentLayout()->documentSize().height(),
                         kPdfPageHeight);
    return out;
}

}  // namespace pitlane::report::detail

namespace pitlane::report {

bool writePdf(const QString& path, const results::RunResult& run, const ReportOptions& options,
              QString* error) {
    const detail::PdfLayout layout = detail::layoutPdf(run, options);
    if (!layout.error.isEmpty()) {
        *error = path + QStringLiteral(": ") + layout.error;
        return false;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        *error = path + QStringLiteral(": ") + file.errorString();
        return false;
    }
    const QString title =
        options.title.isEmpty() ? QString::fromStdString(run.preset.name) : options.title;
    {
        QPdfWriter pdf(&file);
        pdf.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Portrait,
                                      QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter));
        pdf.setResolution(300);
        pdf.setTitle(title);
        pdf.setCreator(QStringLiteral("pitlane"));
        detail::paintPages(layout, pdf, title);
    }
    if (!file.commit()) {
        *error = path + QStringLiteral(": ") + file.errorString();
        return false;
    }
    return true;
}

}  // namespace pitlane::report
