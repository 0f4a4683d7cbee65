#pragma once
// The views of the workbench window that its controllers (RunController, HistoryController,
// ExportController) fill: plain pointers, owned by the window's widget tree.
class QMainWindow;
class QPlainTextEdit;
class QTabWidget;

namespace pitlane::widgets {
class AdviceView;
class AppliedSettingsModel;
class ComparisonTableModel;
class LessonPanel;
class LogPane;
class PlotPanel;
class ProfileView;
class RunStatusPanel;
class SetupPanel;
class WrappingLabel;
}  // namespace pitlane::widgets

namespace pitlane::app {

struct WindowViews {
    QMainWindow* window = nullptr;  // parent of dialogs and docks; its status bar
    widgets::SetupPanel* setup = nullptr;
    widgets::RunStatusPanel* status = nullptr;
    widgets::PlotPanel* plots = nullptr;
    widgets::ComparisonTableModel* comparison = nullptr;
    widgets::AppliedSettingsModel* applied = nullptr;
    widgets::LogPane* log = nullptr;
    widgets::WrappingLabel* verdictLine = nullptr;
    widgets::LessonPanel* lesson = nullptr;  // the lesson above the verdict, and its judgement
    QTabWidget* resultsTabs = nullptr;       // Verdict, Applied settings, Log, Operators, Advice
    widgets::ProfileView* profile = nullptr;  // the Operators tab, shown when a profile exists
    widgets::AdviceView* advice = nullptr;   // the Advice tab: filled with the final verdict
    QPlainTextEdit* servingLevels = nullptr;  // the Levels tab: a serving run's table per level
};

}  // namespace pitlane::app
