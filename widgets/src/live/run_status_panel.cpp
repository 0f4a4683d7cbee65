#include "pitlane/widgets/live/run_status_panel.h"

#include "pitlane/results/run_result.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/session/run_plan.h"
#include "pitlane/widgets/common/arm_palette.h"

#include <QEvent>
#include <QFontMetrics>
#include <QGridLayout>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace pitlane::widgets {

using session::ArmPhase;

namespace {
QString clockText(double ms) {
    if (ms < 0) return QStringLiteral("—");
    const qint64 s = qint64(ms / 1000.0 + 0.5);
    if (s < 60)
        return QStringLiteral("%1.%2 s").arg(qint64(ms) / 1000).arg((qint64(ms) % 1000) / 100);
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QString statusColour(const std::string& status, bool dark) {
    if (status == results::kOk) return dark ? QStringLiteral("#7bd88f") : QStringLiteral("#1e7b34");
    if (status == results::kCancelled)
        return dark ? QStringLiteral("#e0c060") : QStringLiteral("#8a6d00");
    return dark ? QStringLiteral("#ff7b72") : QStringLiteral("#b3261e");
}

// The arm's progress, flat: an outline, the done part in the arm's colour, the percentage. The
// style's bar (Fusion: gradients and translucent highlights) hands its translucent fills to
// Qt 6.4's thread pool and waits for them at each repaint, while samples stream.
class FlatProgressBar : public QProgressBar {
public:
    using QProgressBar::QProgressBar;

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        const QRect r = rect().adjusted(0, 0, -1, -1);
        p.fillRect(r, palette().color(QPalette::Base));
        const double span = double(maximum()) - double(minimum());
        const double done = span > 0 ? std::clamp((double(value()) - double(minimum())) / span, 0.0, 1.0) : 0.0;
        QRect bar = r.adjusted(1, 1, 0, 0);
        bar.setWidth(int(std::lround(done * double(r.width() - 1))));
        if (bar.width() > 0) p.fillRect(bar, palette().color(QPalette::Highlight));
        p.setPen(palette().color(QPalette::Mid));
        p.drawRect(r);
        // The percentage in the text colour, and where the bar is under it in the bar's own
        // text colour (as the styles draw it).
        p.setPen(palette().color(QPalette::Text));
        p.drawText(r, Qt::AlignCenter, text());
        if (bar.width() > 0) {
            p.setClipRect(bar);
            p.setPen(palette().color(QPalette::HighlightedText));
            p.drawText(r, Qt::AlignCenter, text());
        }
    }
};
}  // namespace

RunStatusPanel::RunStatusPanel(QWidget* parent) : QWidget(parent), grid_(new QGridLayout(this)) {
    grid_->setContentsMargins(4, 2, 4, 2);
    grid_->setHorizontalSpacing(12);
    grid_->setVerticalSpacing(2);
    const QStringList headers = {tr("Arm"),       tr("Phase"),    tr("Iterations"), tr("Elapsed"),
                                 tr("Remaining"), tr("Progress"), tr("Status")};
    for (int c = 0; c < headers.size(); ++c) {
        auto* h = new QLabel(QStringLiteral("<b>%1</b>").arg(headers[c]), this);
        grid_->addWidget(h, 0, c);
        if (c == 2) itersHeader_ = h;
    }
    grid_->setColumnStretch(5, 3);
    grid_->setColumnStretch(6, 2);
    reserveColumns();
    // What the run will measure, said before it measures (run_plan.h), below the arms' rows.
    plan_ = new QLabel(this);
    plan_->setObjectName(QStringLiteral("runPlan"));
    plan_->setWordWrap(true);
    // One line at most: the plots below keep their height at 1366x768 however long the plan is
    // (gui_newcomer); the whole plan is in the tooltip and in pitlane-cli's output.
    plan_->setMaximumHeight(plan_->fontMetrics().lineSpacing() + 2);
    plan_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    grid_->addWidget(plan_, kPlanRow, 0, 1, int(headers.size()));
    clockTimer_.setInterval(250);
    connect(&clockTimer_, &QTimer::timeout, this, &RunStatusPanel::onClock);
}

// Each column's minimum width is reserved from the start for its usual widest text, and a
// row's labels ask for no more than that: the panel's minimum width is the same before a run,
// when its rows appear and while their texts change. Otherwise the first phases and times
// widened it (454 -> 500 -> 647 px at 1132 px), the splitter took the width from the setup
// panel, and the whole window was laid out and every plot replotted twice while the first
// samples streamed. A longer text still gets its width when there is room (its size hint).
void RunStatusPanel::reserveColumns() {
    const QFontMetrics fm = fontMetrics();
    QFont boldFont = font();
    boldFont.setBold(true);
    const QFontMetrics bold(boldFont);
    auto widest = [](const QFontMetrics& m, std::initializer_list<QString> texts) {
        int w = 0;
        for (const QString& t : texts) w = std::max(w, m.horizontalAdvance(t));
        return w;
    };
    int phase = fm.horizontalAdvance(QStringLiteral("compiling 999 s"));
    for (int p = int(ArmPhase::Pending); p <= int(ArmPhase::Cancelled); ++p)
        phase = std::max(phase, fm.horizontalAdvance(session::phaseName(ArmPhase(p))));
    const int reserved[] = {
        widest(fm, {QStringLiteral("■ inference_mode")}),
        phase,
        widest(fm, {QStringLiteral("99999 / 99999")}),
        widest(fm, {clockText(59900), clockText(59.0 * 60000)}),
        widest(fm, {clockText(59900) + QStringLiteral(" – ") + clockText(59900)}),
        widest(fm, {QStringLiteral("100 %")}) + 16,
        widest(bold, {QStringLiteral("cancelled"), QStringLiteral("timeout")}),
    };
    for (int c = 0; c < int(std::size(reserved)); ++c) grid_->setColumnMinimumWidth(c, reserved[c]);
}

void RunStatusPanel::attach(const session::ExperimentRunner* runner) {
    runner_ = runner;
    using R = session::ExperimentRunner;
    connect(runner, &R::armPhaseChanged, this, [this](int arm, ArmPhase) { onPhase(arm); });
    // Samples come 20+ times a second per arm: their counts and the progress bar (whose
    // setValue repaints at once) follow at the clock's pace.
    connect(runner, &R::samplesAppended, this, [this](int arm, int, int) {
        if (arm >= 0 && arm < int(rows_.size())) rows_[std::size_t(arm)].samplesPending = true;
    });
    connect(runner, &R::armFinished, this, &RunStatusPanel::onFinished);
    // A budgeted run says its design once its first set-ups and forwards are timed.
    connect(runner, &R::planChanged, this, [this](const QString& plan) {
        plan_->setText(plan);
        plan_->setToolTip(plan + QStringLiteral("\n\n") +
                          tr("planned from the time budget: the iterations per process from what a process and "
                             "an iteration cost and how the variance splits between them (Kalibera & Jones), "
                             "then the processes that fit; rounds are added while the budget holds another"));
    });
    connect(runner, &R::finished, this, [this] {
        onClock();  // the samples since the last tick
        clockTimer_.stop();
    });
}

void RunStatusPanel::clearRows() {
    for (auto& r : rows_)
        for (QWidget* w : std::initializer_list<QWidget*>{r.name, r.phase, r.iters, r.elapsed,
                                                          r.remaining, r.progress, r.status})
            delete w;
    rows_.clear();
}

void RunStatusPanel::addRow(int arm, const QString& name) {
    Row r;
    r.name = new QLabel(this);
    r.name->setText(QStringLiteral("<span style='color:%1'>■</span> %2")
                        .arg(armColor(arm).name(), name.toHtmlEscaped()));
    r.phase = new QLabel(this);
    r.iters = new QLabel(this);
    r.elapsed = new QLabel(this);
    r.remaining = new QLabel(this);
    r.progress = new FlatProgressBar(this);
    r.progress->setFormat(QStringLiteral("%p %"));
    r.progress->setMaximumHeight(fontMetrics().height() + 4);
    QPalette pal = r.progress->palette();
    pal.setColor(QPalette::Highlight, armColor(arm));
    r.progress->setPalette(pal);
    r.status = new QLabel(this);
    r.status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    r.phase->setObjectName(QStringLiteral("armPhase%1").arg(arm));
    r.status->setObjectName(QStringLiteral("armStatus%1").arg(arm));
    r.progress->setObjectName(QStringLiteral("armProgress%1").arg(arm));
    r.name->setToolTip(name);
    // Not wider than the column's reserve (reserveColumns) unless there is room.
    for (QWidget* w : std::initializer_list<QWidget*>{r.name, r.phase, r.iters, r.elapsed, r.remaining,
                                                      r.progress, r.status})
        w->setMinimumWidth(1);
    const int row = arm + 1;
    grid_->addWidget(r.name, row, 0);
    grid_->addWidget(r.phase, row, 1);
    grid_->addWidget(r.iters, row, 2);
    grid_->addWidget(r.elapsed, row, 3);
    grid_->addWidget(r.remaining, row, 4);
    grid_->addWidget(r.progress, row, 5);
    grid_->addWidget(r.status, row, 6);
    rows_.push_back(r);
}

// A serving run counts levels served (one serve command per arm and level), not iterations.
void RunStatusPanel::setServingHeader(bool serving) {
    itersHeader_->setText(QStringLiteral("<b>%1</b>").arg(serving ? tr("Levels") : tr("Iterations")));
    itersHeader_->setToolTip(serving ? tr("serving levels completed / planned (each offered rate "
                                          "in each round, and the SLO search's steps)")
                                     : QString());
}

void RunStatusPanel::beginRun() {
    clearRows();
    showsStored_ = false;
    if (!runner_) return;
    const auto& result = runner_->result();
    setServingHeader(result.preset.serving.enabled);
    plan_->setText(QString::fromStdString(session::planText(session::measurementPlan(result.preset))));
    plan_->setToolTip(plan_->text() + QStringLiteral("\n\n") +
                      tr("measured iterations per arm as planned: replication adds rounds of fresh "
                         "processes, up to run.max_processes, while a comparison is inconclusive; "
                         "adaptive stopping adds rounds until its target or time cap"));
    for (std::size_t i = 0; i < result.arms.size(); ++i) {
        addRow(int(i), QString::fromStdString(result.arms[i].name));
        rows_.back().startMs = runner_->elapsedMs();
        updateRow(int(i));
    }
    clockTimer_.start();
}

void RunStatusPanel::showRun(const results::RunResult& run) {
    clockTimer_.stop();
    clearRows();
    showsStored_ = true;
    setServingHeader(run.preset.serving.enabled);
    // Stored: what was asked and what was measured (the results' replication record).
    const auto& rep = run.replication;
    plan_->setText(rep.is_object() && rep.contains("plan") ? QString::fromStdString(rep.value("plan", std::string()))
                                                           : QString());
    plan_->setToolTip(plan_->text());
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        addRow(int(i), QString::fromStdString(a.name));
        auto& r = rows_.back();
        const bool ok = a.status == results::kOk;
        // Its status as stored: done, cancelled (stopped by the user), failed, killed, crashed.
        r.phase->setText(ok ? tr("done") : QString::fromStdString(a.status));
        if (run.preset.serving.enabled) {
            int complete = 0;
            for (const auto& l : a.serving) complete += l.complete ? 1 : 0;
            r.iters->setText(QString::number(complete));
            r.iters->setToolTip(tr("serving levels stored (every worker of every round)"));
        } else {
            r.iters->setText(QString::number(qulonglong(a.samples.size())));
            r.iters->setToolTip(tr("measured iterations stored"));
        }
        r.elapsed->setText(QStringLiteral("—"));
        r.remaining->setText(QStringLiteral("—"));
        // Full bar in the arm's colour: nothing is in progress in a stored run.
        r.progress->setMaximum(1);
        r.progress->setValue(1);
        r.progress->setFormat(tr("stored"));
        setStatus(
            r, a.status,
            a.error ? QString::fromStdString(a.error->code + ": " + a.error->message) : QString());
    }
}

QString RunStatusPanel::planText() const { return plan_->text(); }

QString RunStatusPanel::remainingText(int arm) const {
    return arm >= 0 && arm < int(rows_.size()) ? rows_[std::size_t(arm)].remaining->text() : QString();
}

QString RunStatusPanel::statusText(int arm) const {
    return arm >= 0 && arm < int(rows_.size()) ? rows_[std::size_t(arm)].statusPlain : QString();
}

QString RunStatusPanel::phaseText(int arm) const {
    return arm >= 0 && arm < int(rows_.size()) ? rows_[std::size_t(arm)].phase->text() : QString();
}

void RunStatusPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) reserveColumns();
    if (event->type() != QEvent::PaletteChange) return;  // status colours: light or dark
    if (!showsStored_)
        for (std::size_t i = 0; i < rows_.size(); ++i) updateRow(int(i));
    else
        for (auto& r : rows_) setStatus(r, r.statusPlain.toStdString(), r.status->toolTip());
}

void RunStatusPanel::onPhase(int arm) {
    if (!runner_ || showsStored_ || arm >= int(rows_.size())) return;
    auto& r = rows_[std::size_t(arm)];
    const auto p = runner_->phase(arm);
    if ((p == ArmPhase::Measuring) && r.firstMeasureMs < 0) r.firstMeasureMs = runner_->elapsedMs();
    updateRow(arm);
}

void RunStatusPanel::onFinished(int arm) {
    if (!runner_ || showsStored_ || arm >= int(rows_.size())) return;
    rows_[std::size_t(arm)].endMs = runner_->elapsedMs();
    updateRow(arm);
}

void RunStatusPanel::onClock() {
    for (std::size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].samplesPending) updateRow(int(i), false);
    updateTimes();
}

void RunStatusPanel::updateRow(int arm, bool times) {
    if (!runner_ || showsStored_ || arm >= int(rows_.size())) return;
    auto& r = rows_[std::size_t(arm)];
    r.samplesPending = false;
    const auto& a = runner_->result().arms[std::size_t(arm)];
    const int done = runner_->doneIters(arm), total = runner_->totalIters(arm);
    r.phase->setText(runner_->phaseLabel(arm));
    r.iters->setText(QStringLiteral("%1 / %2").arg(done).arg(total));
    r.progress->setMaximum(std::max(total, 1));
    r.progress->setValue(std::min(done, std::max(total, 1)));
    setStatus(
        r, a.status,
        a.error ? QString::fromStdString(a.error->code + ": " + a.error->message) : QString());
    if (times) updateTimes();
}

void RunStatusPanel::setStatus(Row& r, const std::string& status, const QString& error) {
    r.statusPlain = status == results::kPending ? QString() : QString::fromStdString(status);
    if (r.statusPlain.isEmpty()) {
        r.status->setText(QString());
        r.status->setToolTip(QString());
        return;
    }
    r.status->setText(QStringLiteral("<b style='color:%1'>%2</b>")
                          .arg(statusColour(status, isDarkPalette(palette())), r.statusPlain));
    r.status->setToolTip(!error.isEmpty() ? error : tr("every measured iteration finished"));
}

void RunStatusPanel::updateTimes() {
    if (!runner_ || showsStored_) return;
    const double now = runner_->elapsedMs();
    // The whole run's time left (remaining_time.h): every arm's blocks, the rounds to come with
    // their process starts, model loads and warmups as measured so far, and (the high end) the
    // rounds replication may add. A serving run keeps each arm's own pace.
    const session::RemainingTime left = runner_->remaining();
    const bool serving = runner_->result().preset.serving.enabled;
    QString leftText = QStringLiteral("—"), leftTip;
    if (left.known) {
        leftText = clockText(left.lowMs);
        if (clockText(left.highMs) != leftText) leftText += QStringLiteral(" – ") + clockText(left.highMs);
        leftTip = QString::fromStdString(session::remainingText(left)) +
                  tr(": the run's plan priced with the times measured so far");
    }
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        auto& r = rows_[i];
        const double end = r.endMs >= 0 ? r.endMs : now;
        r.elapsed->setText(clockText(end - r.startMs));
        if (runner_->phase(int(i)) == ArmPhase::Compiling) r.phase->setText(runner_->phaseLabel(int(i)));
        const int done = runner_->doneIters(int(i)), total = runner_->totalIters(int(i));
        if (r.endMs >= 0) {
            r.remaining->setText(done >= total ? clockText(0) : QStringLiteral("—"));
        } else if (!serving) {
            r.remaining->setText(leftText);
            r.remaining->setToolTip(leftTip);
        } else if (done > 0 && r.firstMeasureMs >= 0) {
            // The arm's own pace since it started measuring includes waiting for the other arms'
            // interleaved blocks, which is what the wall clock will see.
            const double perIter = (now - r.firstMeasureMs) / done;
            r.remaining->setText(clockText(perIter * (total - done)));
        } else {
            r.remaining->setText(QStringLiteral("—"));
        }
    }
}

}  // namespace pitlane::widgets
