#pragma once
// The window's Advice tab (issue 14): what the advisor (results::advise) says to try next, per
// arm, ranked: title, what it improves (latency / throughput / start-up), the share it addresses
// (measured or estimated), the evidence, the change, and an "Add arm" button that hands the
// suggested arm (results::suggestedArm: the arm's name with the change, its knobs with the
// change applied, validated) to the window's arm editor, so the next Run measures it. Advice
// that is not a knob shows what to do, its button disabled with the reason. The snapshot is
// computed off the UI thread, with the final verdict (VerdictCalculator::adviceReady), for the
// live run when it ends and for a run opened from the history.
#include "pitlane/results/advice.h"

#include <QWidget>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

class QGridLayout;
class QVBoxLayout;
class QLabel;
class QPushButton;

namespace pitlane::widgets {

class WrappingLabel;

// What the view shows of one run: computed by adviceSnapshot, on the verdict's thread.
struct AdviceSnapshot {
    std::vector<std::string> arms;    // every arm's name, in the order of the run
    std::vector<bool> profiled;       // the arm has an operator profile (ArmResult::profile)
    std::vector<bool> measured;       // the arm measured something (the advisor read it)
    bool serving = false;             // a serving run: the advisor reads per-iteration runs
    std::vector<results::Advice> advice;   // results::advise, ranked per arm
    std::vector<nlohmann::json> suggested; // per advice: results::suggestedArm (null: no knob)
};
AdviceSnapshot adviceSnapshot(const results::RunResult& run);

class AdviceView : public QWidget {
    Q_OBJECT
public:
    explicit AdviceView(QWidget* parent = nullptr);

    // The advice of a finished run (null: none yet).
    void setSnapshot(std::shared_ptr<const AdviceSnapshot> snapshot);
    // No advice shown; `note` says why ("computed when the run finishes").
    void clear(const QString& note);
    const AdviceSnapshot* snapshot() const { return snapshot_.get(); }
    // The "Add arm" button of snapshot()->advice[i] (nullptr when out of range).
    QPushButton* addButton(std::size_t i) const;
    // "Advice" or "Advice (n)": the tab's title.
    QString title() const;

signals:
    // "Add arm" was pressed: an arm for the setup (a preset arm's name and knobs).
    void addArmRequested(const QString& name, const nlohmann::json& knobs);
    void titleChanged(const QString& title);

private:
    void rebuild();
    void addArmRows(std::size_t arm, int& row);
    void addAdviceRow(std::size_t i, int rank, int& row);
    void clearRows();

    std::shared_ptr<const AdviceSnapshot> snapshot_;
    WrappingLabel* hint_;       // no profile: what gives the rules more evidence
    QWidget* rows_;             // the grid, in a scroll area
    QGridLayout* grid_;
    QVBoxLayout* page_ = nullptr;  // the scrolled page: the hint, then the rows
    std::vector<QPushButton*> buttons_;  // per advice, in snapshot order
};

}  // namespace pitlane::widgets
