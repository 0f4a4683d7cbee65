#include "run_controller.h"

#include <QPlainTextEdit>
#include <QTabWidget>

#include "pitlane/spec/preset.h"
#include "pitlane/widgets/results/advice_view.h"
#include "pitlane/widgets/results/applied_settings_model.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/lessons/lesson_judge.h"
#include "pitlane/widgets/lessons/lesson_panel.h"
#include "pitlane/widgets/live/log_pane.h"
#include "pitlane/widgets/setup/model_panel.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "pitlane/widgets/results/profile_view.h"
#include "pitlane/widgets/live/run_status_panel.h"
#include "pitlane/widgets/setup/setup_panel.h"
#include "pitlane/widgets/results/verdict_calculator.h"
#include "pitlane/widgets/common/wrapping_label.h"

#include <QMainWindow>
#include <QPointer>
#include <QStatusBar>
#include <QTabWidget>

namespace pitlane::app {

using json = nlohmann::json;
namespace W = widgets;

RunController::RunController(const WindowViews& views, QObject* parent)
    : QObject(parent),
      views_(views),
      runner_(new session::ExperimentRunner({session::defaultWorkerPath()}, this)),
      verdict_(new W::VerdictCalculator(this)),
      lessonJudge_(new W::LessonJudge(this)),
      shown_(runner_) {
    views_.plots->attach(runner_);
    views_.status->attach(runner_);
    connectRunner();
    connect(verdict_, &W::VerdictCalculator::ready, this, &RunController::onVerdict);
    // The run's warnings come with its final verdict, computed on the verdict's thread.
    connect(verdict_, &W::VerdictCalculator::warningsReady, this, [this](const QStringList& ws) {
        for (const auto& w : ws) views_.log->append(-1, QString(), QStringLiteral("warning"), w);
    });
    // A serving run's points, capacity and comparisons: plots first, then the verdict's text.
    connect(verdict_, &W::VerdictCalculator::servingReady, this,
            [this](std::shared_ptr<const W::ServingSnapshot> s, bool) {
                serving_ = s;
                showServingLevels();
                views_.plots->setServingSnapshot(std::move(s));
            });
    // The advisor's answer for a finished run (live or stored), computed with the final verdict.
    connect(verdict_, &W::VerdictCalculator::adviceReady, views_.advice, &W::AdviceView::setSnapshot);
    connect(lessonJudge_, &W::LessonJudge::judged, this, &RunController::onLessonJudged);
    connect(views_.plots, &W::PlotPanel::flushed, this, [this] {
        plotsPending_ = false;
        finishIfJudged();
    });
    liveVerdict_.setInterval(1000);
    connect(&liveVerdict_, &QTimer::timeout, this, &RunController::onLiveVerdictTick);
}

void RunController::connectRunner() {
    using R = session::ExperimentRunner;
    connect(runner_, &R::armEvent, this, &RunController::onArmEvent);
    connect(runner_, &R::logMessage, this,
            [this](int arm, const QString& level, const QString& text) {
                const auto& arms = runner_->result().arms;
                const QString name = arm >= 0 && arm < int(arms.size())
                                         ? QString::fromStdString(arms[std::size_t(arm)].name)
                                         : QString();
                views_.log->append(arm, name, level, text);
            });
    connect(runner_, &R::armFinished, this, [this] { refreshApplied(); });
    // Queued: a worker that cannot even start ends the run inside start(); the window finishes
    // the run after start() has set everything up.
    connect(runner_, &R::finished, this, &RunController::onRunnerFinished, Qt::QueuedConnection);
}

void RunController::onLiveVerdictTick() {
    std::size_t n = 0;
    for (const auto& a : runner_->result().arms) {
        n += a.samples.size();
        for (const auto& l : a.serving) n += l.complete ? 1 : 0;
    }
    if (n == samplesAtLastVerdict_ || verdict_->busy()) return;
    samplesAtLastVerdict_ = n;
    verdict_->request(runner_->result(), false);
}

void RunController::start(const spec::Preset& preset) {
    ++runSerial_;
    shown_.followLive();
    endPending_ = verdictPending_ = lessonPending_ = plotsPending_ = false;
    views_.log->clear();
    verdict_->reset();
    lessonJudge_->reset();
    views_.lesson->setLesson(preset.lesson);
    views_.lesson->clearJudgement();
    views_.lesson->setNote(tr("judged when the run finishes"));
    views_.comparison->setRows({});
    views_.verdictLine->setWrappedText(QString());
    views_.advice->clear(tr("Advice is computed when the run finishes."));
    samplesAtLastVerdict_ = 0;
    serving_.reset();
    showServingLevels();
    views_.setup->stopModelCheck();  // nothing but the run's workers while it measures
    views_.setup->modelPanel()->clearLoaded();
    runner_->start(preset);
    views_.plots->beginRun();
    views_.status->beginRun();
    refreshApplied();
    refreshProfile();
    liveVerdict_.start();
    views_.log->append(-1, QString(), QStringLiteral("info"),
                       tr("run started: %1 arms of %2")
                           .arg(preset.arms.size())
                           .arg(QString::fromStdString(preset.model_path)));
    views_.window->statusBar()->showMessage(tr("Running… (Esc stops)"));
}

bool RunController::stop() {
    if (!runner_->isRunning()) return false;
    views_.window->statusBar()->showMessage(
        tr("Stopping: every worker is asked to stop, then killed"));
    runner_->stop();
    return true;
}

void RunController::onArmEvent(int arm, const protocol::Event& event) {
    if (const auto* hello = std::get_if<protocol::Hello>(&event)) {
        const json& env = hello->environment;
        const auto available = env.is_object() ? env.find("cuda_available") : env.end();
        if (available != env.end() && available->is_boolean()) {
            const auto devices = env.find("cuda_devices");
            emit cudaReported(
                {true, available->get<bool>(),
                 devices != env.end() && devices->is_number_integer() ? devices->get<int>() : 0});
        }
    } else if (std::holds_alternative<protocol::Profile>(event)) {
        QTimer::singleShot(0, this, [this] {
            if (!shown_.isStored()) refreshProfile();
        });
    } else if (std::holds_alternative<protocol::Loaded>(event) ||
               std::holds_alternative<protocol::Applied>(event)) {
        // The panels read result(), where the event is stored by now; a loop turn later, off
        // the runner's handling of the event.
        QTimer::singleShot(0, this, [this] {
            views_.setup->modelPanel()->showLoaded(runner_->result());
            refreshApplied();
        });
    }
    Q_UNUSED(arm);
}

void RunController::refreshApplied() {
    std::vector<std::pair<std::string, json>> arms;
    for (const auto& a : shown_.result().arms)
        arms.emplace_back(a.name, a.applied.empty() ? json() : protocol::appliedFields(a.applied));
    views_.applied->setArms(arms);
}

void RunController::refreshProfile() {
    views_.profile->setRun(shown_.result());
    views_.resultsTabs->setTabVisible(views_.resultsTabs->indexOf(views_.profile),
                                      views_.profile->hasProfile());
}

void RunController::onRunnerFinished() {
    liveVerdict_.stop();
    // Plot by plot, between other events: the window answers while the plots catch up.
    plotsPending_ = true;
    views_.plots->flushInSteps();
    refreshApplied();
    refreshProfile();
    views_.setup->modelPanel()->showLoaded(runner_->result());
    const auto& result = runner_->result();
    endPending_ = verdictPending_ = true;
    // The history's write of the run compares the arms for its stored verdict: computed there
    // first, the final verdict reuses it (results::compareArms' memo) instead of a second
    // bootstrap beside it, the two taking both cores from the UI thread as the run ends.
    // Held by the history until then: the window may be closing, this controller gone first.
    auto requestVerdict = [self = QPointer<RunController>(this), serial = runSerial_] {
        if (!self || serial != self->runSerial_ || !self->verdictPending_ || self->shown_.isStored()) return;
        self->verdict_->request(self->runner_->result(), true);
    };
    if (finalVerdictGate_)
        finalVerdictGate_(requestVerdict);
    else
        requestVerdict();
    // Once per run, on a thread of its own: the checks' bootstraps run beside the verdict's.
    lessonPending_ = lessonJudge_->judge(result);
    if (lessonPending_) views_.lesson->setNote(tr("judging the checks…"));
    emit actionsChanged();
}

void RunController::leaveLiveRun(const QString& verdictLine) {
    if (endPending_) {
        // The live run's verdict is about to be dropped for the finished run's: whoever waits
        // for the end of the run (scripts, screenshots) hears of it now.
        endPending_ = verdictPending_ = lessonPending_ = plotsPending_ = false;
        emit runFinished(runner_->result().allOk());
    }
    liveVerdict_.stop();
    verdict_->reset();  // answers for the previous run are dropped
    lessonJudge_->reset();
    serving_.reset();
    showServingLevels();
    views_.comparison->setRows({});
    views_.advice->clear(tr("Computing the advice…"));
    views_.verdictLine->setWrappedText(verdictLine);
}

void RunController::computeVerdict(const results::RunResult& run) {
    verdict_->request(run, true);
}

bool RunController::judgeLesson(const results::RunResult& run) {
    if (!lessonJudge_->judge(run)) return false;
    views_.lesson->setNote(tr("judging the checks…"));
    return true;
}

void RunController::onLessonJudged(const json& judgement) {
    views_.lesson->setJudgement(judgement, shown_.isStored() ? tr("(judged now)") : QString());
    if (shown_.isStored()) return;
    lessonPending_ = false;
    finishIfJudged();
}

void RunController::finishIfJudged() {
    if (!endPending_ || verdictPending_ || lessonPending_ || plotsPending_) return;
    endPending_ = false;
    logRunEnd();
    emit actionsChanged();
    emit runFinished(runner_->result().allOk());
}

// The Levels tab: shown while the views show a serving run, with its table per arm and level.
void RunController::showServingLevels() {
    auto* tabs = views_.resultsTabs;
    auto* levels = views_.servingLevels;
    if (!tabs || !levels) return;
    const bool shown = serving_ && !serving_->table.empty();
    const QString text = shown ? QString::fromStdString(serving_->table) : QString();
    if (levels->toPlainText() != text) levels->setPlainText(text);
    tabs->setTabVisible(tabs->indexOf(levels), shown);
}

QString RunController::verdictText(const std::vector<W::ComparisonRow>& rows, bool final) const {
    QStringList lines;
    for (const auto& r : rows)
        if (r.comparison) {
            lines << QString::fromStdString(r.comparison->verdict).toHtmlEscaped();
            // What ran differs from what was asked (issue 41): said with the verdict it touches.
            for (const auto& caveat : r.caveats)
                lines << QStringLiteral("<span style=\"color:#8a5a00\">&#9888; %1</span>")
                             .arg(QString::fromStdString(caveat).toHtmlEscaped());
        }
    // A serving run: the capacity within the SLO, then each arm against the baseline per level.
    if (serving_)
        for (const auto& line : serving_->verdict)
            lines << QString::fromStdString(line).toHtmlEscaped();
    const bool stored = shown_.isStored();
    const QString prefix = final || stored ? QString() : tr("(live) ");
    QString text =
        lines.isEmpty()
            ? QString()
            : QStringLiteral("<b>%1%2</b>").arg(prefix, lines.join(QStringLiteral("<br>")));
    // How many fresh processes stood behind the verdict, and why rounds were added.
    const std::string replication = results::replicationSummary(shown_.result());
    if ((final || stored) && !text.isEmpty() && !replication.empty())
        text += QStringLiteral("<br><i>%1</i>")
                    .arg(QString::fromStdString(replication).toHtmlEscaped());
    // What Pitlane compiled before measuring (issue 40): a cost the reader weighs with the verdict.
    if ((final || stored) && !text.isEmpty())
        for (const auto& a : shown_.result().arms)
            if (a.compile)
                text += QStringLiteral("<br><i>%1: %2</i>")
                            .arg(QString::fromStdString(a.name).toHtmlEscaped(),
                                 QString::fromStdString(results::compileLine(*a.compile)).toHtmlEscaped());
    if (!stored) return text;
    // Which run this is, and what the reader must know to trust the verdict.
    QStringList parts = {shown_.heading().toHtmlEscaped()};
    if (!text.isEmpty()) parts << text;
    for (const auto& note : shown_.notes())
        parts << QStringLiteral("<i>%1</i>").arg(note.toHtmlEscaped());
    return parts.join(QStringLiteral("<br>"));
}

void RunController::onVerdict(const std::vector<W::ComparisonRow>& rows, bool final) {
    views_.comparison->setRows(rows);
    views_.verdictLine->setWrappedText(verdictText(rows, final));
    if (!final || shown_.isStored()) return;
    verdictPending_ = false;
    finishIfJudged();
}

void RunController::logRunEnd() {
    const auto& result = runner_->result();
    const bool ok = result.allOk();
    int cancelled = 0, failed = 0;
    for (const auto& a : result.arms) {
        if (a.status == results::kCancelled) ++cancelled;
        else if (a.status != results::kOk) ++failed;
    }
    QString outcome = ok ? tr("finished") : tr("ended with failed arms");
    if (runner_->wasStopped())
        outcome = failed ? tr("stopped (%1 cancelled, %2 failed)").arg(cancelled).arg(failed)
                         : tr("stopped: %n arm(s) cancelled, every sample kept", "", cancelled);
    const QString line = tr("Run %1 in %2 s").arg(outcome).arg(result.wall_s, 0, 'f', 1);
    views_.window->statusBar()->showMessage(line);
    views_.log->append(-1, QString(), ok ? QStringLiteral("info") : QStringLiteral("warning"),
                       line.left(1).toLower() + line.mid(1));
}

}  // namespace pitlane::app
