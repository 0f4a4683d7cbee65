#pragma once
// One row per arm while a run goes: colour, name, phase, iterations done/total, elapsed and
// remaining time (the whole run's, from its plan: remaining_time.h), a progress bar, and how the
// arm ended (ok, failed, crashed, killed, timeout, cancelled, with the error as tooltip); below
// them what the run will measure (run_plan.h). Time labels update at 4 Hz, not per event. A
// finished run from the history can be shown instead (how each arm ended, its sample count).
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <vector>

class QGridLayout;
class QLabel;
class QProgressBar;

namespace pitlane::results {
struct RunResult;
}

namespace pitlane::session {
class ExperimentRunner;
}

namespace pitlane::widgets {

class RunStatusPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunStatusPanel(QWidget* parent = nullptr);
    void attach(const session::ExperimentRunner* runner);
    void beginRun();
    // Show how a finished run's arms ended instead of the runner's (until the next beginRun()).
    void showRun(const results::RunResult& run);

    // For tests and the scripted mode: the text of an arm's status / phase cell.
    QString statusText(int arm) const;
    QString phaseText(int arm) const;
    // What the run will measure (run_plan.h's planText), and an arm's Remaining cell.
    QString planText() const;
    QString remainingText(int arm) const;
    int rows() const { return int(rows_.size()); }

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Row {
        QLabel* name;
        QLabel* phase;
        QLabel* iters;
        QLabel* elapsed;
        QLabel* remaining;
        QProgressBar* progress;
        QLabel* status;
        QString statusPlain;
        double startMs = -1, firstMeasureMs = -1, endMs = -1;
        bool samplesPending = false;  // samples came since the row was last updated
    };
    void clearRows();
    void reserveColumns();
    void addRow(int arm, const QString& name);
    void setStatus(Row& r, const std::string& status, const QString& error);
    // `times`: the time columns too (updateTimes).
    void updateRow(int arm, bool times = true);
    void updateTimes();
    // The clock's tick (4 a second): the rows new samples changed, and the times.
    void onClock();
    void onPhase(int arm);
    void onFinished(int arm);

    QPointer<const session::ExperimentRunner> runner_;
    QGridLayout* grid_;
    QLabel* itersHeader_ = nullptr;  // "Iterations", or "Levels" for a serving run
    QLabel* plan_ = nullptr;         // the run's measurement plan, below the rows
    static constexpr int kPlanRow = 1000;
    void setServingHeader(bool serving);
    std::vector<Row> rows_;
    QTimer clockTimer_;
    bool showsStored_ = false;
};

}  // namespace pitlane::widgets
