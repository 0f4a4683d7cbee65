#pragma once
// The workbench window, composed of the widgets library: the setup on the left (model, run
// settings, arms), run status, live plots and the verdict on the right, the run history below.
// It builds the views, menus and settings, and hands the rest to three controllers:
// RunController (the one ExperimentRunner, the orchestration pitlane-cli uses, wired to the
// views; the verdict and the lesson's judgement; start/stop), HistoryController (the RunStore and
// the RunRecorder that stores every run as it goes, the CLI's recorder and database file; the
// history dock; stored runs and cross-run comparisons in the views), ExportController (File ▸
// Export) and LessonsController (the Lessons menu and browser). The views show either the live
// run or a finished one from the history.
#include "pitlane/results/run_result.h"
#include "pitlane/widgets/results/comparison_rows.h"
#include "pitlane/widgets/history/cross_run_dialog.h"
#include "pitlane/widgets/setup/knob_form.h"

#include <QMainWindow>
#include <QPalette>

class QAction;
class QDockWidget;
class QSplitter;
class QTabWidget;
class QPlainTextEdit;
class QTableView;

namespace pitlane::session {
class ExperimentRunner;
}
namespace pitlane::store {
class RunStore;
}
namespace pitlane::widgets {
class AdviceView;
class AppliedSettingsModel;
class ComparisonTableModel;
class HistoryPanel;
class LessonPanel;
class LessonsBrowser;
class LogPane;
class PlotPanel;
class ProfileView;
class RunStatusPanel;
class SetupPanel;
class WrappingLabel;
}  // namespace pitlane::widgets

namespace pitlane::app {

class ExportController;
class HistoryController;
class LessonsController;
class RecentFiles;
class RunController;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Interactive: problems are shown in message boxes. Scripted runs and tests turn it off:
    // problems go to the log pane and stderr, nothing waits for a click.
    void setInteractive(bool on) { interactive_ = on; }
    // The run history: `choice` as --db takes it (a path, "none", or "" for $PITLANE_DB, else
    // the default file, RunStore::resolvePath). Without a call, the default is opened once the
    // event loop runs (or at the first run). False when a file was named but cannot be opened
    // (the window then runs without history, as with "none"), or while a run is going.
    bool setDatabasePath(const QString& choice);
    QString databasePath() const;  // "" when no history is open
    store::RunStore* history() const;
    // Why the last run is not (completely) in the history ("" when it is, or with --db none):
    // the history could not be opened, or a write failed. Waits for the run's writes.
    QString runNotStored();

    // By suffix: .pt opens a model, .json a preset.
    bool openPath(const QString& path);
    bool openPreset(const QString& path);
    // A model for the current setup (dialog, drop); `asNewSetup` (command line) starts from the
    // two-arm setup of spec::presetForModel instead.
    bool openModel(const QString& path, bool asNewSetup = false);
    // Two model files as a ready A/B (File > Compare two models…, two files dropped): arm A the
    // first, arm B the second (spec::presetForModels).
    bool compareModels(const QString& first, const QString& second);
    // History ▸ Load setup: the preset a stored run measured, in the setup (as an unsaved
    // preset), so that Run measures it again. False, with the reason reported, when the run's
    // preset cannot be read (not while a run is going).
    bool loadSetupOfRun(qint64 runId);
    bool savePreset(const QString& path, QString* error = nullptr);
    // The setup of the last session, else the bundled default preset.
    void openStartupSetup();

    bool startRun();
    void stopRun();

    // Show a finished run from the history in the plots, tables and status rows (not while a
    // run is going). False, with the reason reported, when it cannot be loaded.
    bool showStoredRun(qint64 runId);
    // Whether the stored run it shows has samples that failed their check (--open-run exits 3).
    bool shownRunDamaged() const;
    // Arm X of one stored run against arm Y of another (RunStore::compareRuns) in the same
    // views, X as the baseline, with the note that the arms were not interleaved.
    bool showRunComparison(const widgets::CrossRunChoice& choice);
    // The run the views show: a stored run or comparison when one was opened, else the live one.
    const results::RunResult& shownResult() const;
    bool showsStoredRun() const;
    // The history id of the shown run (a stored one, or the live one once recorded); 0: none.
    qint64 shownRunId() const;
    // File ▸ Export without the dialog: the format follows the suffix (.html .pdf .md .csv
    // .json); writes are atomic.
    bool exportShownRun(const QString& path, QString* error = nullptr);
    bool exportStoredRun(qint64 runId, const QString& path, QString* error = nullptr);
    bool isRunning() const;
    bool saveScreenshot(const QString& path, QString* error = nullptr);
    void setDarkPalette(bool dark);

    const session::ExperimentRunner* runner() const;
    widgets::SetupPanel* setupPanel() const { return setup_; }
    widgets::PlotPanel* plotPanel() const { return plots_; }
    widgets::RunStatusPanel* statusPanel() const { return status_; }
    widgets::ComparisonTableModel* comparisonModel() const { return comparison_; }
    widgets::AppliedSettingsModel* appliedModel() const { return applied_; }
    widgets::LogPane* logPane() const { return log_; }
    widgets::LessonPanel* lessonPanel() const { return lesson_; }
    // The Operators tab: the shown run's operator profile, and Export trace….
    widgets::ProfileView* profileView() const { return profile_; }
    QTabWidget* resultsTabs() const { return resultsTabs_; }
    widgets::AdviceView* adviceView() const { return advice_; }
    // Brings a results tab to the front by the start of its title ("verdict", "applied", "log",
    // "advice"; any case): pitlane --tab. False when no tab's title starts so.
    bool showResultsTab(const QString& name);
    widgets::LessonsBrowser* lessonsBrowser() const;
    QDockWidget* lessonsDock() const;
    QAction* browseLessonsAction() const;  // Lessons ▸ Browse lessons…
    widgets::HistoryPanel* historyPanel() const;
    QDockWidget* historyDock() const;
    QAction* runAction() const { return runAction_; }
    QAction* stopAction() const { return stopAction_; }
    QAction* exportAction() const { return exportAction_; }
    // The layout's wish, bounded by the screen: the window fits 1366x768 with a lesson loaded.
    QSize sizeHint() const override;

signals:
    // The run is over and its verdict computed (the moment for screenshots).
    void runFinished(bool allOk);

protected:
    // Ctrl+E, Ctrl+R, Ctrl+S ... reach their actions while a text field has the focus (a line
    // edit would take Ctrl+E as "end of line").
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    QWidget* buildResultsTabs();
    void createControllers();
    void createActions();
    void createMenus();
    void updateActions();
    void updateTitle();
    void report(const QString& title, const QString& text);
    void makeRoomForLesson();
    void setCuda(const widgets::CudaAvailability& cuda);
    // main_window_advice.cpp: the Advice tab, and its "Add arm" into the arm editor.
    void addAdviceTab();

    // main_window_files.cpp
    void openPresetDialog();
    void openModelDialog();
    void compareModelsDialog();
    void savePresetDialog();
    void restoreSettings();
    void saveSettings();
    void saveLastSetup();

    widgets::SetupPanel* setup_;
    widgets::RunStatusPanel* status_;
    widgets::PlotPanel* plots_;
    widgets::ComparisonTableModel* comparison_;
    widgets::AppliedSettingsModel* applied_;
    widgets::LogPane* log_;
    QTableView* comparisonView_ = nullptr;
    widgets::WrappingLabel* verdictLine_ = nullptr;
    QPlainTextEdit* servingLevels_ = nullptr;  // the Levels tab (serving runs)
    widgets::LessonPanel* lesson_ = nullptr;  // the loaded preset's lesson, above the verdict
    widgets::AdviceView* advice_ = nullptr;   // the Advice tab (main_window_advice.cpp)
    QTabWidget* resultsTabs_ = nullptr;
    widgets::ProfileView* profile_ = nullptr;  // the Operators tab
    QSplitter* mainSplitter_ = nullptr;
    QSplitter* rightSplitter_ = nullptr;
    RecentFiles* recent_ = nullptr;
    QAction *runAction_ = nullptr, *stopAction_ = nullptr, *darkAction_ = nullptr;
    QAction *saveAction_ = nullptr, *exportAction_ = nullptr;
    QPalette systemPalette_;
    QString systemStyle_;
    bool interactive_ = true;
    widgets::CudaAvailability cuda_;  // what setCuda applied last
    bool cudaApplied_ = false;

    RunController* runCtl_ = nullptr;          // the live run, the verdict, which run is shown
    HistoryController* historyCtl_ = nullptr;  // the run history and its dock
    ExportController* exportCtl_ = nullptr;    // File ▸ Export
    LessonsController* lessonsCtl_ = nullptr;  // the Lessons menu and browser
};

}  // namespace pitlane::app
