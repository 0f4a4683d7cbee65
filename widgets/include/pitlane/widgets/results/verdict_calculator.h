#pragma once
// Computes the comparison rows (bootstrap CI, Mann-Whitney) off the UI thread: a bootstrap over a
// million samples takes seconds. One computation at a time; while one runs, only the latest
// request is kept ("latest request wins"), and results arrive on the UI thread as a signal.
// The thread reads a mirror of the run that each request brings up to date by copying only
// what is new (samples are append-only), so a request costs the UI thread microseconds per new
// sample, not a copy of the whole run. A final request also gets the run's warnings
// (results::runWarnings: noise, process spread, warmup, drift), computed on the same thread.
// A serving run (issue 13) has no samples: the mirror copies each serving level once it is
// complete, and the thread computes the ServingSnapshot (points, SLO capacity, the bootstrap
// comparisons, the verdict's lines) beside the rows. A final request also gets the advisor's
// AdviceSnapshot (results::advise): for it, the mirror copies the metrics, the operator profile
// and the preset's JSON too.
#include "pitlane/widgets/results/advice_view.h"
#include "pitlane/widgets/results/comparison_rows.h"
#include "pitlane/widgets/results/serving_snapshot.h"

#include <QObject>
#include <QStringList>

#include <atomic>
#include <memory>

class QThreadPool;

namespace pitlane::widgets {

class VerdictCalculator : public QObject {
    Q_OBJECT
public:
    explicit VerdictCalculator(QObject* parent = nullptr);
    ~VerdictCalculator() override;

    // `final`: the run is over; the answer to this request is the one to keep. `run` must stay
    // valid (it may grow) until ready() answers this request or reset() is called.
    void request(const results::RunResult& run, bool final);
    bool busy() const { return busy_; }
    // The last final verdict found its run's comparisons already computed (the history writer's,
    // or those stored with a reopened run: results::compareArms' memo) and ran no bootstrap.
    bool finalReusedComparisons() const { return finalReused_; }
    // A new run: answers to earlier requests are dropped when they arrive.
    void reset();

signals:
    // Before ready() of a final request: the run's warnings.
    void warningsReady(const QStringList& warnings);
    // Before ready(), for a serving run only.
    void servingReady(std::shared_ptr<const pitlane::widgets::ServingSnapshot> snapshot, bool final);
    void ready(const std::vector<pitlane::widgets::ComparisonRow>& rows, bool final);
    // Before ready() of a final request: the advice for the run.
    void adviceReady(std::shared_ptr<const pitlane::widgets::AdviceSnapshot> advice);

private:
    void updateMirror(const results::RunResult& run, bool final);
    void launch(bool final);
    ServingSnapshot liveServingSnapshot(bool final);
    static void addServing(const ServingSnapshot& s, std::vector<ComparisonRow>& rows);
    void onDone(std::vector<ComparisonRow> rows, QStringList warnings,
                std::shared_ptr<const ServingSnapshot> serving,
                std::shared_ptr<const AdviceSnapshot> advice, bool final, int generation);

    // One computation at a time, on a thread of its own pool: the live verdict's at nice 10,
    // the final one's at the window's priority (a thread cannot be raised back once lowered).
    // Nothing waits for them on the UI thread: a thread that posted its answer may still be
    // finishing off, and joining it there waited for a nice-10 thread on busy cores.
    QThreadPool* livePool_ = nullptr;
    QThreadPool* finalPool_ = nullptr;
    bool busy_ = false;
    std::atomic<bool> finalReused_{false};  // written by a final job before it posts its answer
    int generation_ = 0;
    // Read by the thread while busy_, written only while not.
    results::RunResult mirror_;
    bool mirrorStale_ = true;
    const results::RunResult* pending_ = nullptr;  // the latest request made while busy
    bool pendingFinal_ = false;
    const std::vector<results::ArmResult>* live_ = nullptr;  // the arms of the run launched
};

}  // namespace pitlane::widgets
