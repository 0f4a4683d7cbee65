#include "pitlane/report/export_formats.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace pitlane::report {

const std::vector<ExportFormat>& exportFormats() {
    // clang-format off
    static const std::vector<ExportFormat> formats = {
        // id, name, suffixes, pitlane-cli flags, the flag `run`'s usage shows, writer, needs Gui
        {"html", "HTML report", {"html", "htm"}, {"--html", "--report"}, "--report", writeHtml},
        {"pdf", "PDF report", {"pdf"}, {"--pdf"}, "--pdf", writePdf, true},
        {"markdown", "Markdown summary", {"md"}, {"--md"}, "--md", writeMarkdown},
        {"csv", "CSV of raw samples", {"csv"}, {"--csv"}, "--csv", writeCsv},
        {"json", "Results JSON", {"json"}, {"--json"}, "--json", writeJson},
    };
    // clang-format on
    return formats;
}

QString ExportFormat::fileDialogFilter() const {
    QStringList patterns;
    for (const auto& s : suffixes) patterns << QStringLiteral("*.") + s;
    return QStringLiteral("%1 (%2)").arg(name, patterns.join(QLatin1Char(' ')));
}

const ExportFormat* exportFormatForPath(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix.isEmpty()) return nullptr;
    for (const auto& f : exportFormats())
        if (f.suffixes.contains(suffix)) return &f;
    return nullptr;
}

const ExportFormat* exportFormatForFlag(const QString& flag) {
    for (const auto& f : exportFormats())
        if (f.cliFlags.contains(flag)) return &f;
    return nullptr;
}

QString exportSuffixList() {
    QStringList suffixes;
    for (const auto& f : exportFormats()) suffixes << QLatin1Char('.') + f.suffixes.first();
    const QString last = suffixes.takeLast();
    return suffixes.isEmpty()
               ? last
               : QStringLiteral("%1 or %2").arg(suffixes.join(QStringLiteral(", ")), last);
}

bool writeExport(const QString& path, const results::RunResult& run, const ReportOptions& options,
                 QString* error) {
    const ExportFormat* format = exportFormatForPath(path);
    if (!format) {
        if (error)
            *error =
                QCoreApplication::translate("pitlane::report", "%1: unknown export format (use %2)")
                    .arg(path, exportSuffixList());
        return false;
    }
    return format->write(path, run, options, error);
}

}  // namespace pitlane::report
