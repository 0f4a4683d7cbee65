#pragma once
// File ▸ Export: which report format a file name asks for, and writing it through core/report
// (the writers pitlane-cli uses; every write is atomic).
#include <QString>

#include <optional>

namespace pitlane::results {
struct RunResult;
}
namespace pitlane::report {
struct ReportOptions;
}

namespace pitlane::app {

enum class ExportFormat { Html, Pdf, Markdown, Csv, Json };

// By suffix (.html/.htm, .pdf, .md, .csv, .json); nullopt for anything else.
std::optional<ExportFormat> exportFormatFor(const QString& path);
// The file dialog's name filters, HTML first.
QString exportFilters();
// The suffix ("html", ...) of a filter from exportFilters(); "html" when unknown.
QString exportSuffixForFilter(const QString& filter);
// A file name from the run's name: "resnet18 grad vs no_grad #12" -> "resnet18-grad-vs-no_grad-12".
QString exportBaseName(const QString& runName, qint64 runId);

// Writes `run` in the format the suffix of `path` names. False with `error` set (an unknown
// suffix, or the writer's reason).
bool writeExport(const QString& path, const results::RunResult& run,
                 const report::ReportOptions& options, QString* error);

}  // namespace pitlane::app
