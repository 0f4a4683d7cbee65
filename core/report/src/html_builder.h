#pragma once
// The report's content as HTML, in two flavours from the same code so the HTML and the PDF say
// the same things: Browser (inline SVG, full CSS, collapsible long values) and RichText (the
// HTML subset QTextDocument lays out for the PDF; charts as <img src="chart:ID">).
#include "charts.h"
#include "pitlane/report/report.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <map>
#include <string>
#include <utility>
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

// Formatting shared by the sections (table_sections.cpp): "175.4&nbsp;µs" (a number never
// wraps away from its unit), a per-iteration count with `missing` for -1, a p-value.
QString unitText(const std::string& s);
QString duration(double ns);
QString perIterText(double perIter, const QString& missing);
QString pValue(double p);
// A sweep point's status: "ok", the arm's status when nothing was measured, or
// "failed: [out_of_memory] …" for a batch size that failed.
std::string sweepPointStatus(const results::ArmResult& a, int batchSize, bool measured);
// A chart as a figure: inline SVG in the browser flavour, an image resource in the PDF's.
QString figureHtml(const Chart& c, Flavor flavor);
// "Comparison table": latency, throughput and cold costs, page faults and context switches,
// sweeps and workers (table and curves), comparisons. The sweep charts shown in the RichText
// flavour are appended to `images` (the PDF's image resources).
QString statsSection(const results::RunResult& run, Flavor flavor, std::vector<Chart>* images);

// Sections (html_sections.cpp).
QString esc(const QString& s);
QString esc(const std::string& s);
QString armLabel(const results::RunResult& run, std::size_t arm);  // swatch + name
QString knobsSection(const results::RunResult& run, Flavor flavor);
QString appliedSection(const results::RunResult& run, Flavor flavor);
QString environmentSection(const results::RunResult& run, Flavor flavor);
QString rawDataSection(const results::RunResult& run, Flavor flavor);
// "Intel Xeon, 2 cores, 23.6 GiB RAM, Linux 6.1 x86_64, host vm, libtorch 1.13.0, BLAS openblas,
// allocator system" as plain text (machineLine: HTML-escaped).
QString machineText(const results::RunResult& run);
// "A on this machine; B on gpu1 (over ssh)" when any arm ran on another host (issue 15), "" when
// every arm ran here. The environment table's columns are each arm's own host's manifest.
QString hostsText(const results::RunResult& run);
QString machineLine(const results::RunResult& run);
// The report header's models (issue 44: it named only the preset's): when the arms measured
// models of their own (results::armsDifferInModel), each arm's name and its model file's name
// (the path where two files share a name); else the preset's model, as written, for no arm
// ({"", model}); empty when there is none.
std::vector<std::pair<std::string, std::string>> headerModels(const results::RunResult& run);
// "[3, 224, 224]": a shape with a space after each comma, so a narrow cell can wrap it.
QString shapeText(const nlohmann::json& shape);
// "float32[3, 224, 224], int64[1, 8]": the inputs of the loaded event ("" when none).
QString inputsText(const results::ArmResult& arm);

// A grid table: header cells (<th>…</th>) and rows of cells (<td>…</td>), each row with an
// optional class. In the PDF a table wider than the page squeezes its columns down to single
// characters, so with `maxColumns` > 0 in RichText it is cut into several tables of at most that
// many columns, each repeating the first `keep` columns (the arm).
// The cells of a grid table: a header cell, a cell (with an optional class), a number cell
// (right-aligned: class "num").
QString th(const char* name);
QString td(const QString& v, const QString& cls = {});
QString num(const QString& v);

struct GridRow {
    QString cls;
    QStringList cells;
};
QString gridTable(const QString& cls, const QStringList& headers, const std::vector<GridRow>& rows,
                  Flavor flavor, int maxColumns = 0, int keep = 1);

// Settings of every arm (knobs, applied read-back, environment) flattened to dotted keys
// ("cudnn.enabled"), with the union of the keys, sorted.
struct SettingsTable {
    std::vector<std::map<std::string, nlohmann::json>> perArm;
    std::vector<std::string> keys;
};
SettingsTable collectSettings(const results::RunResult& run,
                              const std::function<nlohmann::json(const results::ArmResult&)>& get);
QString valueText(const nlohmann::json& v);

}  // namespace pitlane::report::detail
