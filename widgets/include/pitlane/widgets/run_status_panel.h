#pragma once
// One row per arm while a run goes: colour, name, phase, iterations done/total, elapsed and
// remaining time, a progress bar, and how the arm ended (ok, failed, crashed, killed, timeout,
// cancelled, with the error as tooltip). Time labels update at 4 Hz, not per event.
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <vector>

class QGridLayout;
class QLabel;
class QProgressBar;

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

    // For tests and the scripted mode: the text of an arm's status / phase cell.
    QString statusText(int arm) const;
    QString phaseText(int arm) const;
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
    };
    void clearRows();
    void updateRow(int arm);
    void updateTimes();
    void onPhase(int arm);
    void onFinished(int arm);

    QPointer<const session::ExperimentRunner> runner_;
    QGridLayout* grid_;
    std::vector<Row> rows_;
    QTimer clockTimer_;
};

}  // namespace pitlane::widgets
