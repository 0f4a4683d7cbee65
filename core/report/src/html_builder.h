#pragma once
// The report's content as HTML, in two flavours from the same code so the HTML and the PDF say
// the same things: Browser (inline SVG, full CSS, collapsible long values) and RichText (the
// HTML subset QTextDocument lays out for the PDF; charts as <img src="chart:ID">).
#include "charts.h"
#include "pitlane/report/report.h"

#include <QString>

#include <vector>

namespace pitlane::report::detail {

enum class Flavor { Browser, RichText };

struct HtmlDocument {
    QString html;
    std::vector<Chart> charts;  // in RichText, the images the <img> tags refer to
};

HtmlDocument buildHtml(const results::RunResult& run, const ReportOptions& options, Flavor flavor);
// QTextDocument's default style sheet for the RichText flavour.
QString richTextCss();

// Sections (html_sections.cpp).
QString esc(const QString& s);
QString esc(const std::string& s);
QString armLabel(const results::RunResult& run, std::size_t arm);  // swatch + name
QString knobsSection(const results::RunResult& run);
QString appliedSection(const results::RunResult& run, Flavor flavor);
QString environmentSection(const results::RunResult& run, Flavor flavor);
QString rawDataSection(const results::RunResult& run);
// "Intel Xeon, 2 cores, 23.6 GiB RAM, Linux 6.1 x86_64, host vm, libtorch 1.13.0, BLAS openblas"
QString machineLine(const results::RunResult& run);

}  // namespace pitlane::report::detail
