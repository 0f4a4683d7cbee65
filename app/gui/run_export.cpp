#include "run_export.h"

#include "pitlane/report/report.h"

#include <QFileInfo>
#include <QObject>
#include <QRegularExpression>

namespace pitlane::app {

namespace {
struct FormatInfo {
    ExportFormat format;
    const char* suffix;
    const char* filter;
};
const FormatInfo kFormats[] = {
    {ExportFormat::Html, "html", "HTML report (*.html *.htm)"},
    {ExportFormat::Pdf, "pdf", "PDF report (*.pdf)"},
    {ExportFormat::Markdown, "md", "Markdown summary (*.md)"},
    {ExportFormat::Csv, "csv", "CSV of raw samples (*.csv)"},
    {ExportFormat::Json, "json", "Results JSON (*.json)"},
};
}  // namespace

std::optional<ExportFormat> exportFormatFor(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("htm")) return ExportFormat::Html;
    for (const auto& f : kFormats)
        if (suffix == QLatin1String(f.suffix)) return f.format;
    return std::nullopt;
}

QString exportFilters() {
    QStringList filters;
    for (const auto& f : kFormats) filters << QObject::tr(f.filter);
    return filters.join(QStringLiteral(";;"));
}

QString exportSuffixForFilter(const QString& filter) {
    for (const auto& f : kFormats)
        if (filter == QObject::tr(f.filter)) return QLatin1String(f.suffix);
    return QStringLiteral("html");
}

QString exportBaseName(const QString& runName, qint64 runId) {
    QString base = runName.trimmed();
    base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("-"));
    base.remove(QRegularExpression(QStringLiteral("^[-.]+|-+$")));
    if (base.isEmpty()) base = QStringLiteral("pitlane-run");
    if (runId > 0) base += QStringLiteral("-%1").arg(runId);
    return base;
}

bool writeExport(const QString& path, const results::RunResult& run,
                 const report::ReportOptions& options, QString* error) {
    const auto format = exportFormatFor(path);
    if (!format) {
        if (error)
            *error = QObject::tr("%1: unknown export format (use .html, .pdf, .md, .csv or .json)")
                         .arg(path);
        return false;
    }
    switch (*format) {
        case ExportFormat::Html:
            return report::writeHtml(path, run, options, error);
        case ExportFormat::Pdf:
            return report::writePdf(path, run, options, error);
        case ExportFormat::Markdown:
            return report::writeMarkdown(path, run, options, error);
        case ExportFormat::Csv:
            return report::writeCsv(path, run, options, error);
        case ExportFormat::Json:
            return report::writeJson(path, run, options, error);
    }
    return false;
}

}  // namespace pitlane::app
