#pragma once
// The PDF's layout, apart from the writing so tests can check it: the RichText HTML laid out by
// QTextDocument one A4 text width wide and as tall as it needs (Qt's own pagination would split
// a table row across pages, its lines on one page and the rest on the next), then cut into pages
// at places where nothing is cut: between table rows and between lines of text, a heading kept
// with what follows it, a chart with its caption, a forced break before the h2s that ask for one.
// A page that starts inside a table repeats the table's header row at its top.
#include "pitlane/report/report.h"

#include <QRectF>
#include <QTextDocument>

#include <memory>
#include <vector>

namespace pitlane::report::detail {

// A4 with 15 mm margins in 96-dpi layout pixels: the text area of one page.
inline constexpr double kPdfPageWidth = 794 - 2 * 15 / 25.4 * 96;
inline constexpr double kPdfPageHeight = 1123 - 2 * 15 / 25.4 * 96;

// A page: [top, bottom) of `doc`, below the repeated header row [headerTop, headerBottom) of
// the table it starts in (headerBottom == headerTop: none).
struct PdfPage {
    double top = 0, bottom = 0;
    double headerTop = 0, headerBottom = 0;
    double headerHeight() const { return headerBottom - headerTop; }
};

struct PdfLayout {
    std::unique_ptr<QTextDocument> doc;
    std::vector<PdfPage> pages;
    QString error;  // a chart that could not be rendered
};

// Needs a QGuiApplication (fonts).
PdfLayout layoutPdf(const results::RunResult& run, const ReportOptions& options);

// Gives the columns of every table too wide for `pageWidth` fixed widths: each at least its
// longest word (at most 30 % of the page: a longer identifier wraps inside), the rest shared by
// what the columns need on one line (pdf_tables.cpp).
void fitTables(QTextDocument& doc, double pageWidth);

// A stretch of the laid-out document that a page break must not cut (a table row, a line),
// in document pixels.
struct KeepTogether {
    double top = 0, bottom = 0;
    double headerTop = 0, headerBottom = 0;  // a table row's header row (none: equal)
};
// Every stretch of `doc` that must stay on one page, sorted by top, and the forced breaks.
std::vector<KeepTogether> keepTogether(QTextDocument& doc, std::vector<double>* forcedBreaks);
// Cuts [0, height) into pages of at most `pageHeight` (less a repeated header row), never inside
// a stretch shorter than a page, always at a forced break.
std::vector<PdfPage> paginate(const std::vector<KeepTogether>& keep,
                                                const std::vector<double>& forcedBreaks,
                                                double height, double pageHeight);

}  // namespace pitlane::report::detail
