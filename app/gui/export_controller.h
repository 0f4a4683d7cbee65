#pragma once
// File ▸ Export: the dialogs, and writing the shown run or a stored one in the format the file's
// suffix names (report/export_formats.h, the table pitlane-cli's flags come from too). Every
// write is atomic.
#include <QObject>
#include <QString>

class QMainWindow;

namespace pitlane::report {
struct ReportOptions;
}
namespace pitlane::results {
struct RunResult;
}

namespace pitlane::app {

class HistoryController;
class RunController;

class ExportController : public QObject {
    Q_OBJECT
public:
    // The history list's "Export…" opens exportStoredRunDialog.
    ExportController(QMainWindow* window, const RunController* run, HistoryController* history,
                     QObject* parent);

    // Without a dialog (MainWindow::exportShownRun / exportStoredRun).
    bool exportShownRun(const QString& path, QString* error = nullptr);
    bool exportStoredRun(qint64 runId, const QString& path, QString* error = nullptr);
    // File ▸ Export: the run selected in the history list when the list has the focus, else
    // the run the views show.
    void exportDialog();
    void exportStoredRunDialog(qint64 runId);
    // Where the export dialog opens: the folder of the last export (QSettings
    // files/exportFolder) while it exists, else the user's Documents folder, else home. Never
    // the presets folder a preset was opened from.
    static QString startFolder();

signals:
    // Something the user must hear of (MainWindow::report).
    void problem(const QString& title, const QString& text);

private:
    // The shown run's history id and, for a stored one, its notes.
    report::ReportOptions shownRunOptions() const;
    void exportRunDialog(const results::RunResult& run, const report::ReportOptions& options);

    QMainWindow* window_;
    const RunController* run_;
    HistoryController* history_;
};

}  // namespace pitlane::app
