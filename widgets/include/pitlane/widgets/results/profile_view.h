#pragma once
// The window's "Operators" page (issue 14): a note on how the profile was taken, the operator
// table of the profiled arms side by side (ProfileTableModel), and "Export trace…", which writes
// the chosen arm's Chrome trace (results::profileTraceJson: for chrome://tracing or Perfetto) to
// a .json file the user picks. Clicking a cell of an arm's columns chooses that arm.
#include "pitlane/results/run_result.h"

#include <QWidget>

#include <vector>

class QAction;
class QComboBox;
class QLabel;
class QTableView;

namespace pitlane::widgets {

class ProfileTableModel;

class ProfileView : public QWidget {
    Q_OBJECT
public:
    explicit ProfileView(QWidget* parent = nullptr);

    // The profiles of `run`'s arms (copied; nothing else of the run is kept). A run without any
    // profile empties the view.
    void setRun(const results::RunResult& run);
    bool hasProfile() const;

    ProfileTableModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    // The profiled arm whose trace "Export trace…" writes (index among the profiled arms).
    int traceArm() const;
    void setTraceArm(int k);
    // Enabled when the shown run has a profile; asks for a file, then exportTrace.
    QAction* exportTraceAction() const { return exportTrace_; }
    // Writes the trace of profiled arm `k` to `path` (atomically). False with `error` set when
    // the arm has no trace or the file cannot be written.
    bool exportTrace(int k, const QString& path, QString* error = nullptr) const;

signals:
    // Export trace… failed (the window reports it).
    void problem(const QString& title, const QString& text);

private:
    void exportTraceDialog();

    ProfileTableModel* model_;
    QLabel* note_;
    QComboBox* arm_;
    QTableView* table_;
    QAction* exportTrace_;
    std::vector<results::ArmResult> profiled_;  // name and profile of each profiled arm
    std::string runName_;
};

}  // namespace pitlane::widgets
