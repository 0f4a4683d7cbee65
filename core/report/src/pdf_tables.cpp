// Column widths of the PDF's tables (pdf_layout.h). QTextDocument sizes a table's columns from
// their minimum widths, and with its wrap mode (between words, or anywhere when a word does not
// fit) every wrapping column's minimum is one character: a wide table squeezed its arm names
// into a column of single letters. Here each column gets at least its longest word (capped, so
// one long identifier cannot take the page; it then wraps inside the word), the rest of the page
// shared by what the columns would need unwrapped.
#include "pdf_layout.h"

#include <QFontMetricsF>
#include <QTextBlock>
#include <QTextFrame>
#include <QTextTable>

#include <algorithm>
#include <numeric>

namespace pitlane::report::detail {

namespace {

struct ColumnNeed {
    double natural = 0;  // widest cell content on one line
    double word = 0;     // widest word (a nowrap cell: its whole line)
    double hard = 0;     // widest nowrap line (Qt never makes the column narrower)
};

// One block of a cell: its width on one line and its widest word.
ColumnNeed blockNeed(const QTextBlock& block, const QFont& base) {
    ColumnNeed need;
    double word = 0;
    for (auto it = block.begin(); !it.atEnd(); ++it) {
        const QTextFragment f = it.fragment();
        const QFontMetricsF fm(f.charFormat().font().resolve(base));
        const QString text = f.text();
        need.natural += fm.horizontalAdvance(text);
        for (const QChar ch : text) {
            if (ch.isSpace() && ch != QChar::Nbsp) {
                need.word = std::max(need.word, word);
                word = fm.horizontalAdvance(ch);
                continue;
            }
            word += fm.horizontalAdvance(ch);
        }
    }
    need.word = std::max(need.word, word);
    if (block.blockFormat().nonBreakableLines()) need.word = need.hard = need.natural;
    return need;
}

std::vector<ColumnNeed> columnNeeds(QTextTable* table, const QFont& base) {
    std::vector<ColumnNeed> needs(std::size_t(table->columns()));
    for (int r = 0; r < table->rows(); ++r)
        for (int c = 0; c < table->columns(); ++c) {
            const QTextTableCell cell = table->cellAt(r, c);
            if (cell.row() != r || cell.column() != c || cell.columnSpan() > 1) continue;
            for (auto it = cell.begin(); !it.atEnd(); ++it) {
                if (!it.currentBlock().isValid()) continue;
                const ColumnNeed n = blockNeed(it.currentBlock(), base);
                auto& col = needs[std::size_t(c)];
                col.natural = std::max(col.natural, n.natural);
                col.word = std::max(col.word, n.word);
                col.hard = std::max(col.hard, n.hard);
            }
        }
    return needs;
}

// Content widths: what each column needs on one line when that fits, else each at least its
// longest word (at most 30 % of the page) and the rest shared by what they need beyond it. The
// needs get a margin for the difference between these metrics and the layout's.
std::vector<double> shareWidths(std::vector<ColumnNeed> needs, double avail) {
    double natural = 0;
    for (auto& n : needs) {
        n.natural = n.natural * 1.05 + 2;
        n.word = n.word * 1.05 + 2;
        n.hard = n.hard > 0 ? n.hard * 1.05 + 2 : 0;
        natural += n.natural;
    }
    std::vector<double> widths;
    if (natural <= avail) {
        for (const auto& n : needs) widths.push_back(n.natural);
        return widths;
    }
    std::vector<double> floor;
    double hard = 0, soft = 0;
    for (const auto& n : needs) {
        floor.push_back(std::max(n.hard, std::min(n.word, 0.3 * avail)));
        hard += n.hard;
        soft += floor.back() - n.hard;
    }
    // Still too wide: the parts of the floors that may wrap shrink alike (a nowrap line cannot:
    // Qt would widen its column again).
    if (hard + soft > avail && soft > 0)
        for (std::size_t i = 0; i < needs.size(); ++i)
            floor[i] = needs[i].hard + (floor[i] - needs[i].hard) * std::max(0.0, avail - hard) / soft;
    double want = 0;
    for (std::size_t i = 0; i < needs.size(); ++i) want += std::max(0.0, needs[i].natural - floor[i]);
    const double extra = std::max(0.0, avail - std::accumulate(floor.begin(), floor.end(), 0.0));
    for (std::size_t i = 0; i < needs.size(); ++i)
        widths.push_back(floor[i] + (want > 0 ? extra * std::max(0.0, needs[i].natural - floor[i]) /
                                                    want
                                              : extra / double(needs.size())));
    return widths;
}

void fitTable(QTextTable* table, const QFont& base, double pageWidth) {
    QTextTableFormat format = table->format();
    const double perColumn = 2 * format.cellPadding() + 2 * format.border() + format.cellSpacing();
    const int cols = table->columns();
    // The table's own border and spacing, and a few pixels for rounding.
    const double avail = pageWidth - 2 * format.border() - format.cellSpacing() - cols * perColumn - 6;
    if (cols < 2) return;  // one column wraps its text at the page's width
    QVector<QTextLength> constraints;
    for (double w : shareWidths(columnNeeds(table, base), avail))
        constraints << QTextLength(QTextLength::FixedLength, w + perColumn);
    format.setColumnWidthConstraints(constraints);
    table->setFormat(format);
}

}  // namespace

void fitTables(QTextDocument& doc, double pageWidth) {
    for (QTextFrame* frame : doc.rootFrame()->childFrames())
        if (auto* table = qobject_cast<QTextTable*>(frame)) fitTable(table, doc.defaultFont(), pageWidth);
}

}  // namespace pitlane::report::detail
