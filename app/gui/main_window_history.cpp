// MainWindow: the run history (recording every run, the History dock, reopening a stored run
// and comparing arms of two runs in the same views) and File ▸ Export.
#include "main_window.h"

#include "run_export.h"

#include "pitlane/report/report.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_recorder.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/comparison_table_model.h"
#include "pitlane/widgets/history_model.h"
#include "pitlane/widgets/history_panel.h"
#include "pitlane/widgets/log_pane.h"
#include "pitlane/widgets/plot_panel.h"
#include "pitlane/widgets/run_status_panel.h"
#include "pitlane/widgets/verdict_calculator.h"
#include "pitlane/widgets/wrapping_label.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QLabel>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>

namespace pitlane::app {

namespace W = widgets;

namespace {
const QString kInfo = QStringLiteral("info");
const QString kError = QStringLiteral("error");
const QString kWarning = QStringLiteral("warning");
}  // namespace

void MainWindow::createHistoryDock() {
    historyPanel_ = new W::HistoryPanel;
    historyDock_ = new QDockWidget(tr("Run history"), this);
    historyDock_->setObjectName(QStringLiteral("historyDock"));
    historyDock_->setWidget(historyPanel_);
    historyDock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                              QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::BottomDockWidgetArea, historyDock_);
    resizeDocks({historyDock_}, {170}, Qt::Vertical);
    connect(historyPanel_, &W::HistoryPanel::openRequested, this,
            [this](qint64 id) { showStoredRun(id); });
    connect(historyPanel_, &W::HistoryPanel::compareChosen, this,
            [this](const W::CrossRunChoice& c) { showRunComparison(c); });
    connect(historyPanel_, &W::HistoryPanel::exportRequested, this,
            &MainWindow::exportStoredRunDialog);
    connect(historyPanel_, &W::HistoryPanel::storeError, this,
            [this](const QString& why) { report(tr("Run history"), why); });
}

bool MainWindow::setDatabasePath(const QString& choice) {
    if (runner_->isRunning()) return false;
    historyChosen_ = true;
    historyPanel_->setStore(nullptr);
    delete recorder_;
    recorder_ = nullptr;
    history_.reset();
    const QString path = store::RunStore::resolvePath(choice);
    if (path.isEmpty()) {
        historyPanel_->setStore(nullptr, tr("Run history off (--db none): runs are not stored."));
        return true;
    }
    auto db = std::make_unique<store::RunStore>();
    if (!db->open(path)) {
        const QString why = db->lastError();
        historyPanel_->setStore(nullptr, tr("No run history: %1").arg(why));
        report(tr("Run history"),
               tr("Cannot open the run history (%1). Runs will not be stored.").arg(why));
        return choice.isEmpty();  // like pitlane-cli: only a file named with --db is fatal
    }
    history_ = std::move(db);
    recorder_ = new store::RunRecorder(history_.get(), QStringLiteral("gui"), this);
    recorder_->attach(runner_);
    connect(recorder_, &store::RunRecorder::runStarted, this, [this](qint64 id) {
        historyPanel_->refresh();
        historyPanel_->setLiveRun(true, id);
        log_->append(-1, QString(), kInfo,
                     tr("recording run #%1 in %2").arg(id).arg(history_->path()));
    });
    connect(recorder_, &store::RunRecorder::runStored, this, &MainWindow::onRunStored);
    connect(recorder_, &store::RunRecorder::storeError, this, [this](const QString& why) {
        // Recording goes on with the next write; a dialog in the middle of a run would stop
        // nothing, so the log and the status bar say it.
        log_->append(-1, QString(), kError, tr("run history: %1").arg(why));
        statusBar()->showMessage(tr("Run history: %1").arg(why), 10000);
    });
    historyPanel_->setStore(history_.get());
    return true;
}

QString MainWindow::databasePath() const {
    return history_ ? history_->path() : QString();
}

void MainWindow::ensureHistory() {
    if (!historyChosen_) setDatabasePath(QString());
}

void MainWindow::changeEvent(QEvent* event) {
    QMainWindow::changeEvent(event);
    // pitlane-cli may have stored runs in the same file meanwhile; listing reads no samples.
    if (event->type() == QEvent::ActivationChange && isActiveWindow() && history_)
        historyPanel_->refresh();
}

void MainWindow::onRunStored(qint64 runId) {
    historyPanel_->refresh();
    historyPanel_->selectRun(runId);
}

const results::RunResult& MainWindow::shownResult() const {
    return stored_ ? *stored_ : runner_->result();
}

qint64 MainWindow::shownRunId() const {
    if (stored_) return storedId_;
    return recorder_ && !runner_->result().arms.empty() ? recorder_->runId() : 0;
}

bool MainWindow::showStoredRun(qint64 runId) {
    if (runner_->isRunning() || !history_) return false;
    auto run = history_->loadRun(runId);
    if (!run) {
        report(tr("Cannot open the run"), history_->lastError());
        return false;
    }
    const auto info = history_->runInfo(runId);
    QStringList parts = {tr("Stored run #%1").arg(runId),
                         W::localDateText(QString::fromStdString(run->started_at)),
                         QString::fromStdString(run->preset.name)};
    QStringList notes;
    if (info) {
        if (!info->label.isEmpty()) parts << QStringLiteral("“%1”").arg(info->label);
        if (info->baseline) parts << tr("baseline ★");
        if (!info->complete())
            notes << tr(
                "Its recording stopped before the run finished (the process was killed): "
                "every sample received until then is here.");
    }
    showFinished(std::move(*run), runId, parts.join(QStringLiteral(" · ")), notes);
    historyPanel_->selectRun(runId);  // the list shows which run the views show
    return true;
}

bool MainWindow::showRunComparison(const W::CrossRunChoice& c) {
    if (runner_->isRunning() || !history_) return false;
    auto comparison = history_->compareRuns(c.runX, c.armX, c.runY, c.armY);
    if (!comparison) {
        report(tr("Cannot compare"), history_->lastError());
        return false;
    }
    const QString heading =
        tr("Comparison: %1").arg(QString::fromStdString(comparison->run.preset.name));
    QString note = QString::fromStdString(comparison->note);  // says "not interleaved"
    if (!note.isEmpty()) note[0] = note[0].toUpper();
    showFinished(std::move(comparison->run), 0, heading, {note});
    return true;
}

void MainWindow::showFinished(results::RunResult run, qint64 runId, const QString& heading,
                              const QStringList& notes) {
    if (liveVerdictPending_) {
        // The live run's verdict is about to be dropped for this one: whoever waits for the
        // end of the run (scripts, screenshots) hears of it now.
        liveVerdictPending_ = false;
        emit runFinished(runner_->result().allOk());
    }
    liveVerdict_.stop();
    stored_ = std::make_shared<const results::RunResult>(std::move(run));
    storedId_ = runId;
    storedHeading_ = heading;
    storedNotes_ = notes;
    const auto& shown = *stored_;

    verdict_->reset();  // answers for the previous run are dropped
    comparison_->setRows({});
    verdictLine_->setWrappedText(
        QStringLiteral("%1<br>%2").arg(heading.toHtmlEscaped(), tr("computing the verdict…")));
    plots_->showRun(stored_);
    status_->showRun(shown);
    refreshApplied();
    log_->clear();
    log_->append(-1, QString(), kInfo, tr("showing %1").arg(heading));
    for (const auto& note : notes) log_->append(-1, QString(), kWarning, note);
    for (std::size_t i = 0; i < shown.arms.size(); ++i) {
        const auto& a = shown.arms[i];
        const QString name = QString::fromStdString(a.name);
        for (const auto& w : a.warnings)
            log_->append(int(i), name, kWarning, QString::fromStdString(w));
        if (a.error)
            log_->append(int(i), name, kError,
                         QString::fromStdString(a.error->code + ": " + a.error->message));
    }
    for (const auto& w : results::runWarnings(shown))
        log_->append(-1, QString(), kWarning, QString::fromStdString(w));
    verdict_->request(shown, true);
    resultsTabs_->setCurrentIndex(0);
    statusBar()->showMessage(tr("Showing %1 (Run measures the setup again)").arg(heading));
    updateActions();
}

bool MainWindow::exportShownRun(const QString& path, QString* error) {
    pitlane::report::ReportOptions options;
    if (const qint64 id = shownRunId()) options.runId = QString::number(id);
    if (stored_) options.notes = storedNotes_;
    return writeExport(path, shownResult(), options, error);
}

bool MainWindow::exportStoredRun(qint64 runId, const QString& path, QString* error) {
    if (!history_) {
        if (error) *error = tr("no run history is open");
        return false;
    }
    const auto run = history_->loadRun(runId);
    if (!run) {
        if (error) *error = history_->lastError();
        return false;
    }
    pitlane::report::ReportOptions options;
    options.runId = QString::number(runId);
    return writeExport(path, *run, options, error);
}

void MainWindow::exportDialog() {
    // The run selected in the history list when the list is where the user is; else the run
    // the plots show.
    const qint64 selected = historyPanel_->currentRun();
    if (selected && historyDock_->isVisible() &&
        historyPanel_->isAncestorOf(QApplication::focusWidget())) {
        exportStoredRunDialog(selected);
        return;
    }
    if (shownResult().arms.empty()) return;
    pitlane::report::ReportOptions options;
    if (const qint64 id = shownRunId()) options.runId = QString::number(id);
    if (stored_) options.notes = storedNotes_;
    exportRunDialog(shownResult(), options);
}

void MainWindow::exportStoredRunDialog(qint64 runId) {
    if (!history_) return;
    const auto run = history_->loadRun(runId);
    if (!run) {
        report(tr("Cannot export"), history_->lastError());
        return;
    }
    pitlane::report::ReportOptions options;
    options.runId = QString::number(runId);
    exportRunDialog(*run, options);
}

void MainWindow::exportRunDialog(const results::RunResult& run,
                                 const pitlane::report::ReportOptions& options) {
    QSettings s;
    QString filter = s.value(QStringLiteral("files/exportFilter")).toString();
    const QString start = QDir(lastFolder())
                              .filePath(exportBaseName(QString::fromStdString(run.preset.name),
                                                       options.runId.toLongLong()) +
                                        QLatin1Char('.') + exportSuffixForFilter(filter));
    QString path =
        QFileDialog::getSaveFileName(this, tr("Export run"), start, exportFilters(), &filter);
    if (path.isEmpty()) return;
    if (!exportFormatFor(path)) path += QLatin1Char('.') + exportSuffixForFilter(filter);
    s.setValue(QStringLiteral("files/exportFilter"), filter);
    QString error;
    if (!writeExport(path, run, options, &error)) {
        report(tr("Cannot export"), error);
        return;
    }
    rememberFolder(path);
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
}

}  // namespace pitlane::app
