#pragma once
// The workbench window, composed of the widgets library: the setup on the left (model, run
// settings, arms), run status, live plots and the verdict on the right. It owns the one
// ExperimentRunner (the orchestration pitlane-cli uses) and wires its signals to the views.
#include "pitlane/widgets/comparison_rows.h"
#include "pitlane/widgets/knob_form.h"

#include <QMainWindow>
#include <QPalette>
#include <QTimer>

class QAction;
class QLabel;
class QSplitter;
class QTabWidget;
class QTableView;

namespace pitlane::session {
class ExperimentRunner;
}
namespace pitlane::widgets {
class AppliedSettingsModel;
class ComparisonTableModel;
class LogPane;
class PlotPanel;
class RunStatusPanel;
class SetupPanel;
class VerdictCalculator;
}  // namespace pitlane::widgets

namespace pitlane::app {

class RecentFiles;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Interactive: problems are shown in message boxes. Scripted runs and tests turn it off:
    // problems go to the log pane and stderr, nothing waits for a click.
    void setInteractive(bool on) { interactive_ = on; }
    void setDatabasePath(const QString& path) { dbPath_ = path; }
    QString databasePath() const { return dbPath_; }

    // By suffix: .pt opens a model, .json a preset.
    bool openPath(const QString& path);
    bool openPreset(const QString& path);
    // A model for the current setup (dialog, drop); `asNewSetup` (command line) starts from the
    // two-arm setup of spec::presetForModel instead.
    bool openModel(const QString& path, bool asNewSetup = false);
    bool savePreset(const QString& path, QString* error = nullptr);
    // The setup of the last session, else the bundled default preset.
    void openStartupSetup();

    bool startRun();
    void stopRun();
    bool isRunning() const;
    bool saveScreenshot(const QString& path, QString* error = nullptr);
    void setDarkPalette(bool dark);

    const session::ExperimentRunner* runner() const { return runner_; }
    widgets::SetupPanel* setupPanel() const { return setup_; }
    widgets::PlotPanel* plotPanel() const { return plots_; }
    widgets::RunStatusPanel* statusPanel() const { return status_; }
    widgets::ComparisonTableModel* comparisonModel() const { return comparison_; }
    widgets::AppliedSettingsModel* appliedModel() const { return applied_; }
    widgets::LogPane* logPane() const { return log_; }
    QAction* runAction() const { return runAction_; }
    QAction* stopAction() const { return stopAction_; }

signals:
    // The run is over and its verdict computed (the moment for screenshots).
    void runFinished(bool allOk);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    QWidget* buildResultsTabs();
    void createActions();
    void createMenus();
    void connectRunner();
    void updateActions();
    void updateTitle();
    void report(const QString& title, const QString& text);
    void onArmEvent(int arm, const nlohmann::json& event);
    void onRunnerFinished();
    void onVerdict(const std::vector<widgets::ComparisonRow>& rows, bool final);
    void refreshApplied();
    void setCuda(const widgets::CudaAvailability& cuda);

    // main_window_files.cpp
    void openPresetDialog();
    void openModelDialog();
    void savePresetDialog();
    void exportResultsDialog();
    QString lastFolder() const;
    void rememberFolder(const QString& path);
    void restoreSettings();
    void saveSettings();
    void saveLastSetup();

    session::ExperimentRunner* runner_;
    widgets::VerdictCalculator* verdict_;
    widgets::SetupPanel* setup_;
    widgets::RunStatusPanel* status_;
    widgets::PlotPanel* plots_;
    widgets::ComparisonTableModel* comparison_;
    widgets::AppliedSettingsModel* applied_;
    widgets::LogPane* log_;
    QTableView* comparisonView_ = nullptr;
    QLabel* verdictLine_ = nullptr;
    QTabWidget* resultsTabs_ = nullptr;
    QSplitter* mainSplitter_ = nullptr;
    QSplitter* rightSplitter_ = nullptr;
    RecentFiles* recent_ = nullptr;
    QAction *runAction_ = nullptr, *stopAction_ = nullptr, *darkAction_ = nullptr;
    QAction *saveAction_ = nullptr, *exportAction_ = nullptr;
    QTimer liveVerdict_;
    std::size_t samplesAtLastVerdict_ = 0;
    QPalette systemPalette_;
    QString systemStyle_;
    QString dbPath_;
    bool interactive_ = true;
};

}  // namespace pitlane::app
