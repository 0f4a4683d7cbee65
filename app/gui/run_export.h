#pragma once
// File ▸ Export: the file dialog's side of the export-format table (report/export_formats.h,
// the table pitlane-cli's flags come from too). Writing is report::writeExport: the format
// follows the suffix; every write is atomic.
#include <QString>

namespace pitlane::report {
struct ExportFormat;
}

namespace pitlane::app {

// By suffix (.html/.htm, .pdf, .md, .csv, .json; any case); nullptr for anything else.
const report::ExportFormat* exportFormatFor(const QString& path);
// The file dialog's name filters, one per format, HTML first.
QString exportFilters();
// The suffix ("html", ...) of a filter from exportFilters(); "html" when unknown.
QString exportSuffixForFilter(const QString& filter);
// A file name from the run's name: "resnet18 grad vs no_grad #12" -> "resnet18-grad-vs-no_grad-12".
QString exportBaseName(const QString& runName, qint64 runId);

}  // namespace pitlane::app
