#pragma once
// The run history panel: the stored runs (HistoryModel) with what a user does with them: reopen
// one into the plots and tables, put its preset in the setup (to measure it again), compare an arm of one run with an arm of another, rename
// (label), mark a baseline, export, delete (after asking). Rename, baseline and delete are done
// here on the RunStore; reopening, loading the setup, comparing and exporting are the window's,
// asked by signals.
#include "pitlane/widgets/history/cross_run_dialog.h"

#include <QWidget>

class QAction;
class QLabel;
class QTableView;

namespace pitlane::store {
class RunStore;
}

namespace pitlane::widgets {

class HistoryModel;

class HistoryPanel : public QWidget {
    Q_OBJECT
public:
    explicit HistoryPanel(QWidget* parent = nullptr);

    // The history to show and edit (not owned). nullptr: none; `why` says why (e.g. "--db none").
    void setStore(store::RunStore* store, const QString& why = {});
    store::RunStore* store() const { return store_; }
    // Re-reads the list, keeping the selection.
    void refresh();
    // While a run is live the views belong to it: no reopening or comparing, and the run being
    // recorded (`recordingId`, 0: none) cannot be deleted under its recorder.
    void setLiveRun(bool active, qint64 recordingId = 0);

    HistoryModel* model() const { return model_; }
    QTableView* view() const { return view_; }
    QList<qint64> selectedRuns() const;  // in list order (newest first)
    qint64 currentRun() const;           // the selected run under the cursor; 0 when none
    void selectRun(qint64 id);

    // Direct edits, no questions asked (the actions ask first). False: the store said no, and
    // storeError() was emitted.
    bool renameRun(qint64 id, const QString& label);
    bool setBaseline(qint64 id, bool on);
    bool deleteRun(qint64 id);

    QAction* openAction() const { return open_; }
    QAction* loadSetupAction() const { return loadSetup_; }
    QAction* compareAction() const { return compare_; }
    QAction* renameAction() const { return rename_; }
    QAction* baselineAction() const { return baseline_; }
    QAction* exportAction() const { return export_; }
    QAction* deleteAction() const { return delete_; }

signals:
    void openRequested(qint64 runId);
    void loadSetupRequested(qint64 runId);
    void compareChosen(const pitlane::widgets::CrossRunChoice& choice);
    void exportRequested(qint64 runId);
    void storeError(const QString& message);
    void historyChanged();  // a run was renamed, deleted or (un)marked as baseline

private:
    void createActions();
    void updateActions();
    void updateSummary();
    void askRename();
    void askDelete();
    void askCompare();
    void toggleBaseline();
    bool check(bool ok);

    store::RunStore* store_ = nullptr;
    QString offReason_;
    HistoryModel* model_;
    QTableView* view_;
    QLabel* summary_;
    QAction *open_, *loadSetup_, *compare_, *rename_, *baseline_, *export_, *delete_;
    bool liveRun_ = false;
    qint64 recordingId_ = 0;
};

}  // namespace pitlane::widgets
