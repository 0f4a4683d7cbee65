#include "export_controller.h"

#include "history_controller.h"
#include "run_controller.h"
#include "run_export.h"

#include "pitlane/report/export_formats.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/history/history_panel.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>

namespace pitlane::app {

namespace {
const char* const kExportFolderKey = "files/exportFolder";
}  // namespace

QString ExportController::startFolder() {
    const QString last = QSettings().value(QLatin1String(kExportFolderKey)).toString();
    if (!last.isEmpty() && QFileInfo(last).isDir()) return last;
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (!documents.isEmpty() && QFileInfo(documents).isDir()) return documents;
    return QDir::homePath();
}

ExportController::ExportController(QMainWindow* window, const RunController* run,
                                   HistoryController* history, QObject* parent)
    : QObject(parent), window_(window), run_(run), history_(history) {
    connect(history_->panel(), &widgets::HistoryPanel::exportRequested, this,
            &ExportController::exportStoredRunDialog);
}

report::ReportOptions ExportController::shownRunOptions() const {
    report::ReportOptions options;
    if (const qint64 id = history_->shownRunId()) options.runId = QString::number(id);
    if (run_->shown().isStored()) options.notes = run_->shown().notes();
    return options;
}

bool ExportController::exportShownRun(const QString& path, QString* error) {
    return report::writeExport(path, run_->shown().result(), shownRunOptions(), error);
}

bool ExportController::exportStoredRun(qint64 runId, const QString& path, QString* error) {
    store::RunStore* store = history_->store();
    if (!store) {
        if (error) *error = tr("no run history is open");
        return false;
    }
    const auto run = store->loadRun(runId);
    if (!run) {
        if (error) *error = store->lastError();
        return false;
    }
    report::ReportOptions options;
    options.runId = QString::number(runId);
    return report::writeExport(path, *run, options, error);
}

void ExportController::exportDialog() {
    // The run selected in the history list when the list is where the user is; else the run
    // the plots show.
    const qint64 selected = history_->panel()->currentRun();
    if (selected && history_->dock()->isVisible() &&
        history_->panel()->isAncestorOf(QApplication::focusWidget())) {
        exportStoredRunDialog(selected);
        return;
    }
    if (run_->shown().result().arms.empty()) return;
    exportRunDialog(run_->shown().result(), shownRunOptions());
}

void ExportController::exportStoredRunDialog(qint64 runId) {
    store::RunStore* store = history_->store();
    if (!store) return;
    const auto run = store->loadRun(runId);
    if (!run) {
        emit problem(tr("Cannot export"), store->lastError());
        return;
    }
    report::ReportOptions options;
    options.runId = QString::number(runId);
    exportRunDialog(*run, options);
}

void ExportController::exportRunDialog(const results::RunResult& run,
                                       const report::ReportOptions& options) {
    QSettings s;
    QString filter = s.value(QStringLiteral("files/exportFilter")).toString();
    const QString start = QDir(startFolder())
                              .filePath(exportBaseName(QString::fromStdString(run.preset.name),
                                                       options.runId.toLongLong()) +
                                        QLatin1Char('.') + exportSuffixForFilter(filter));
    QString path =
        QFileDialog::getSaveFileName(window_, tr("Export run"), start, exportFilters(), &filter);
    if (path.isEmpty()) return;
    if (!exportFormatFor(path)) path += QLatin1Char('.') + exportSuffixForFilter(filter);
    s.setValue(QStringLiteral("files/exportFilter"), filter);
    QString error;
    if (!report::writeExport(path, run, options, &error)) {
        emit problem(tr("Cannot export"), error);
        return;
    }
    s.setValue(QLatin1String(kExportFolderKey), QFileInfo(path).absolutePath());
    window_->statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
}

}  // namespace pitlane::app
