#pragma once
// The Lessons menu and its browser: a dock (tabbed with the run history) listing the lesson
// presets of the presets folder (presetsDir(), lesson_*.json) with their status on this machine
// from the history; Open loads one into the setup, Run loads and starts it. The list follows the
// history file and every run stored in it.
#include <QObject>

class QAction;
class QDockWidget;
class QMenuBar;

namespace pitlane::widgets {
class LessonsBrowser;
}

namespace pitlane::app {

class HistoryController;
class MainWindow;

class LessonsController : public QObject {
    Q_OBJECT
public:
    LessonsController(MainWindow* window, HistoryController* history, QObject* parent);

    // Adds the Lessons menu (after View) to `bar`.
    void addMenu(QMenuBar* bar);
    widgets::LessonsBrowser* browser() const { return browser_; }
    QDockWidget* dock() const { return dock_; }
    QAction* browseAction() const { return browse_; }

    // Shows the browser, re-read, in front of the history.
    void showBrowser();
    void setRunning(bool running);
    void setCuda(bool known, bool available);

private:
    void run(const QString& presetPath);

    MainWindow* window_;
    widgets::LessonsBrowser* browser_;
    QDockWidget* dock_;
    QAction* browse_ = nullptr;
};

}  // namespace pitlane::app
