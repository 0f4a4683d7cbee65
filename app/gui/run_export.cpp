#include "run_export.h"

#include "pitlane/report/export_formats.h"

#include <QRegularExpression>
#include <QStringList>

namespace pitlane::app {

const report::ExportFormat* exportFormatFor(const QString& path) {
    return report::exportFormatForPath(path);
}

QString exportFilters() {
    QStringList filters;
    for (const auto& f : report::exportFormats()) filters << f.fileDialogFilter();
    return filters.join(QStringLiteral(";;"));
}

QString exportSuffixForFilter(const QString& filter) {
    for (const auto& f : report::exportFormats())
        if (filter == f.fileDialogFilter()) return f.suffixes.first();
    return report::exportFormats().front().suffixes.first();
}

QString exportBaseName(const QString& runName, qint64 runId) {
    QString base = runName.trimmed();
    base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("-"));
    base.remove(QRegularExpression(QStringLiteral("^[-.]+|-+$")));
    if (base.isEmpty()) base = QStringLiteral("pitlane-run");
    if (runId > 0) base += QStringLiteral("-%1").arg(runId);
    return base;
}

}  // namespace pitlane::app
