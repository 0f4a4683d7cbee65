#pragma once
// The window's live run: the one ExperimentRunner (the orchestration pitlane-cli uses) and its
// signals wired to the views, the verdict (recomputed every second while samples arrive, final
// when the run ends), the lesson's judgement (once, when the run ends, off the UI thread), then
// runFinished; start and stop. It also holds which run the views show (ShownRun): the verdict
// line of a stored run carries its heading and notes.
#include "shown_run.h"
#include "window_views.h"

#include "pitlane/protocol/events.h"
#include "pitlane/widgets/results/comparison_rows.h"
#include "pitlane/widgets/setup/knob_form.h"
#include "pitlane/widgets/results/serving_snapshot.h"

#include <QObject>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>

namespace pitlane::spec {
struct Preset;
}
namespace pitlane::widgets {
class LessonJudge;
class VerdictCalculator;
}  // namespace pitlane::widgets

namespace pitlane::app {

class RunController : public QObject {
    Q_OBJECT
public:
    // Attaches the plots and the status panel to the runner, then wires the rest.
    RunController(const WindowViews& views, QObject* parent);

    session::ExperimentRunner* runner() const { return runner_; }
    bool isRunning() const { return runner_->isRunning(); }
    ShownRun& shown() { return shown_; }
    const ShownRun& shown() const { return shown_; }

    // Clears the views, which follow the live run again, and starts `preset` (valid).
    void start(const spec::Preset& preset);
    // Every worker is asked to stop, then killed; what was measured is kept. False when no
    // run is going.
    bool stop();
    // The shown run's applied settings into the Applied settings table.
    void refreshApplied();
    // The shown run's operator profiles into the Operators tab, shown only when there is one.
    void refreshProfile();

    // The views leave the live run for a finished one: whoever waits for the live run's end
    // hears of it now (runFinished), the live verdict stops, answers still on their way are
    // dropped, and `verdictLine` shows until computeVerdict's answer arrives.
    void leaveLiveRun(const QString& verdictLine);
    // The final verdict of `run` (the shown stored run) into the verdict line and the table.
    void computeVerdict(const results::RunResult& run);
    // The lesson of `run` (the shown stored run, when the history has no judgement of it) judged
    // off the UI thread into the lesson panel. False when it has no checks.
    bool judgeLesson(const results::RunResult& run);
    // Called with the request of a finished live run's final verdict, to make it when it
    // chooses (the history: once its write of the run, which compared the arms, is back, so
    // the verdict reuses those comparisons). Unset: the request is made at once.
    void setFinalVerdictGate(std::function<void(std::function<void()>)> gate) { finalVerdictGate_ = std::move(gate); }

signals:
    // The live run is over and its verdict computed (the moment for screenshots).
    void runFinished(bool allOk);
    // Running or not, or what is shown, changed: the window's actions follow.
    void actionsChanged();
    // A worker said whether CUDA is available.
    void cudaReported(const pitlane::widgets::CudaAvailability& cuda);

private:
    void connectRunner();
    void onLiveVerdictTick();
    void onArmEvent(int arm, const protocol::Event& event);
    void onRunnerFinished();
    void onVerdict(const std::vector<widgets::ComparisonRow>& rows, bool final);
    void onLessonJudged(const nlohmann::json& judgement);
    // The live run's end once its verdict and its lesson are both in: runFinished.
    void finishIfJudged();
    void showServingLevels();
    QString verdictText(const std::vector<widgets::ComparisonRow>& rows, bool final) const;
    void logRunEnd();

    WindowViews views_;
    session::ExperimentRunner* runner_;
    widgets::VerdictCalculator* verdict_;
    widgets::LessonJudge* lessonJudge_;
    ShownRun shown_;
    QTimer liveVerdict_;
    // Samples plus complete serving levels at the last live request: a serving run's verdict is
    // recomputed when a level completes, never in between.
    std::size_t samplesAtLastVerdict_ = 0;
    // A serving run's latest figures (its verdict lines); null for other runs.
    std::shared_ptr<const widgets::ServingSnapshot> serving_;
    // The live run is over and runFinished() is owed: it follows the final verdict and the
    // lesson's judgement (each pending while computed).
    bool endPending_ = false, verdictPending_ = false, lessonPending_ = false;
    bool plotsPending_ = false;  // the plots catch up with the end of the run step by step
    std::function<void(std::function<void()>)> finalVerdictGate_;
    quint64 runSerial_ = 0;  // start() counts the live runs: a gated request of an earlier one is dropped
};

}  // namespace pitlane::app
