#pragma once
// The window's run history: the RunStore (--db), the RunRecorder that stores every run of the
// window's runner as it goes (the CLI's recorder and file format), the Run history dock, and
// opening a stored run, or arm X of one run against arm Y of another, in the views.
#include "window_views.h"

#include "pitlane/widgets/history/cross_run_dialog.h"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

class QDockWidget;

namespace pitlane::results {
struct RunResult;
}
namespace pitlane::store {
class HistoryWriter;
class RunRecorder;
class RunStore;
struct RunInfo;
}  // namespace pitlane::store
namespace pitlane::widgets {
class HistoryPanel;
struct PreparedRun;
}

namespace pitlane::app {

class RunController;

class HistoryController : public QObject {
    Q_OBJECT
public:
    // Adds the Run history dock to `views.window`, below.
    HistoryController(const WindowViews& views, RunController* run, QObject* parent);
    // The recorder goes first: it must not write into the store closed before it.
    ~HistoryController() override;

    // MainWindow::setDatabasePath: `choice` as --db takes it. False when a named file cannot
    // be opened (no history then), or while a run is going.
    bool setDatabasePath(const QString& choice);
    QString databasePath() const;  // "" when no history is open
    // Opens the default history unless setDatabasePath() chose one already.
    void ensureHistory();
    store::RunStore* store() const { return store_.get(); }
    widgets::HistoryPanel* panel() const { return panel_; }
    QDockWidget* dock() const { return dock_; }

    // Why the last run is not (completely) in the history: the history could not be opened, or
    // one of the run's writes failed (waits for every write posted so far). "" when it is
    // stored, or when no history is kept (--db none).
    QString runNotStored();
    // The list again (pitlane-cli may have stored runs in the same file meanwhile).
    void refreshList();
    // The list marks the run being recorded while `running`.
    void setLiveRun(bool running);
    // Calls `then` once the recorder's write of the finished run is back (runWritten), at once
    // when none is on its way, and after a second when that write has not begun by then (the
    // history file locked by another process).
    void afterRunWritten(std::function<void()> then);
    // The history id of the shown run (a stored one, or the live one once recorded); 0: none.
    qint64 shownRunId() const;

    // Opening a stored run or a comparison reads the file (and bootstraps a comparison) on a
    // thread of its own, with its own connection: the window answers meanwhile, and the views
    // change when it is read (shown()). False when it cannot start (a run is going, no
    // history); a failure to read is reported, and shown(false) follows.
    bool requestStoredRun(qint64 runId);
    bool requestRunComparison(const widgets::CrossRunChoice& choice);
    // The same, returning once the views show it (the event loop runs meanwhile): scripts and
    // tests. False when it could not be shown.
    bool showStoredRun(qint64 runId);
    // Whether the stored run shown last has samples that failed their check (issue 42).
    bool shownRunDamaged() const { return shownDamaged_; }
    bool showRunComparison(const widgets::CrossRunChoice& choice);
    // --open-run ID: the stored run in the views and, unless `keepSetup` (a file was named on the
    // command line), its own setup (the preset it measured, read back from the history) in the
    // setup, as History ▸ Load setup puts it. False when the run cannot be shown.
    bool openRunWithItsSetup(qint64 runId, bool keepSetup);

signals:
    // Something the user must hear of (MainWindow::report).
    void problem(const QString& title, const QString& text);
    // What the views show changed: the window's actions follow.
    void actionsChanged();
    // The history file changed (setDatabasePath; nullptr: none), or a run was stored in it.
    void storeChanged(pitlane::store::RunStore* store);
    void runStored(qint64 runId);
    // A request*() finished: the views show it (true), or it could not be read (false).
    void shown(bool ok);

private:
    bool waitShown();
    // After a stored run is shown: malloc's free pages back to the OS (on the reader's thread).
    void returnFreedMemory();
    void connectRecorder();
    // `check`: what verifying its stored samples found (damaged arms, unchecked chunks).
    void showStoredRead(qint64 runId, results::RunResult run,
                        const std::optional<store::RunInfo>& info,
                        std::shared_ptr<widgets::PreparedRun> prepared,
                        const store::SampleCheck& check = {});
    void onRunStored(qint64 runId);
    // The setup's note while a stored run (or a comparison) is shown: that the setup is not the
    // run's, unless it measures what the run measured (issue 44); none for the live run.
    void updateSetupNote();
    nlohmann::json shownSetup_;  // the shown stored run's preset, canonical (null: none)
    // Puts a finished run into every view; `heading` names it above the verdict.
    // `prepared`: what the plots need from every sample, computed on the reader thread
    // (widgets::PlotPanel::prepare).
    void showFinished(results::RunResult run, qint64 runId, const QString& heading,
                      const QStringList& notes, std::shared_ptr<widgets::PreparedRun> prepared);
    // The shown stored run's lesson with its judgement as stored (judged now when the history
    // has none, e.g. a run stored before schema v5); hidden for a comparison of two runs.
    void showLesson(const results::RunResult& shown, qint64 runId);
    void logShown(const results::RunResult& shown, const QString& heading,
                  const QStringList& notes);

    WindowViews views_;
    RunController* run_;
    std::unique_ptr<store::RunStore> store_;
    store::RunRecorder* recorder_ = nullptr;
    std::unique_ptr<store::HistoryWriter> reader_;  // reads for the views, off the UI thread
    int readToken_ = 0;  // a newer request drops the answer of an older one
    bool chosen_ = false;  // setDatabasePath() ran (explicitly or by default)
    QString openError_;    // why the chosen history could not be opened ("" when it was)
    widgets::HistoryPanel* panel_ = nullptr;
    QDockWidget* dock_ = nullptr;
    bool shownDamaged_ = false;
};

}  // namespace pitlane::app
