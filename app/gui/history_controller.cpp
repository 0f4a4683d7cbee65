#include "history_controller.h"

#include "run_controller.h"

#include "pitlane/results/lesson.h"
#include "pitlane/spec/preset.h"
#include "pitlane/store/history_writer.h"
#include "pitlane/store/run_recorder.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/history/history_model.h"
#include "pitlane/widgets/history/history_panel.h"
#include "pitlane/widgets/lessons/lesson_panel.h"
#include "pitlane/widgets/live/log_pane.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "pitlane/widgets/live/run_status_panel.h"
#include "pitlane/widgets/setup/setup_panel.h"

#include <QAction>
#include <QDockWidget>
#include <QEventLoop>
#include <QMainWindow>
#include <QPointer>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>

#include <malloc.h>

namespace pitlane::app {

namespace W = widgets;

namespace {
const QString kInfo = QStringLiteral("info");
const QString kError = QStringLiteral("error");
const QString kWarning = QStringLiteral("warning");

// A preset as what it measures: parsed (model files resolved, defaults filled in) and written
// back without its name, description and lesson, so that a setup and a stored run's preset
// compare equal when they measure the same thing. A preset that does not parse (a model file
// moved since) is compared as written.
nlohmann::json canonicalSetup(const nlohmann::json& preset, const QString& file, const QString& modelDir) {
    nlohmann::json c;
    try {
        const spec::Preset p = spec::parsePreset(preset, file.toStdString(), modelDir.toStdString());
        c = spec::presetToJson(p);
        c["model"] = p.model_path;
        if (c.contains("arms") && c["arms"].is_array())
            for (std::size_t i = 0; i < p.arms.size() && i < c["arms"].size(); ++i)
                if (c["arms"][i].is_object()) c["arms"][i]["model"] = p.arms[i].model_path;
    } catch (const std::exception&) {
        c = preset;
    }
    if (c.is_object())
        for (const char* key : {"name", "description", "lesson"}) c.erase(key);
    return c;
}
}  // namespace

HistoryController::HistoryController(const WindowViews& views, RunController* run, QObject* parent)
    : QObject(parent), views_(views), run_(run) {
    panel_ = new W::HistoryPanel;
    dock_ = new QDockWidget(tr("Run history"), views_.window);
    dock_->setObjectName(QStringLiteral("historyDock"));
    dock_->setWidget(panel_);
    dock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                       QDockWidget::DockWidgetClosable);
    views_.window->addDockWidget(Qt::BottomDockWidgetArea, dock_);
    views_.window->resizeDocks({dock_}, {170}, Qt::Vertical);
    connect(panel_, &W::HistoryPanel::openRequested, this,
            [this](qint64 id) { requestStoredRun(id); });
    connect(panel_, &W::HistoryPanel::compareChosen, this,
            [this](const W::CrossRunChoice& c) { requestRunComparison(c); });
    connect(panel_, &W::HistoryPanel::storeError, this,
            [this](const QString& why) { emit problem(tr("Run history"), why); });
    // Whose setup it is, while a stored run is shown: checked again after every change of it.
    connect(views_.setup, &W::SetupPanel::validated, this, &HistoryController::updateSetupNote);
    run_->setFinalVerdictGate([this](std::function<void()> request) { afterRunWritten(std::move(request)); });
    connect(views_.setup, &W::SetupPanel::originNoteLinkActivated, this, [this](const QString& link) {
        const qint64 id = run_->shown().storedId();
        if (link != QLatin1String("load") || id <= 0) return;
        panel_->selectRun(id);  // as a user would: the run, then History ▸ Load setup
        panel_->loadSetupAction()->trigger();
    });
}

HistoryController::~HistoryController() {
    // The runner may still report while it goes: the recorder must not write into the history
    // closed before it.
    delete recorder_;
    reader_.reset();
}

bool HistoryController::setDatabasePath(const QString& choice) {
    if (run_->isRunning()) return false;
    chosen_ = true;
    panel_->setStore(nullptr);
    delete recorder_;
    recorder_ = nullptr;
    reader_.reset();
    ++readToken_;
    store_.reset();
    openError_.clear();
    const QString path = store::RunStore::resolvePath(choice);
    emit storeChanged(nullptr);
    if (path.isEmpty()) {
        panel_->setStore(nullptr, tr("Run history off (--db none): runs are not stored."));
        return true;
    }
    auto db = std::make_unique<store::RunStore>();
    if (!db->open(path)) {
        const QString why = db->lastError();
        openError_ = why;
        panel_->setStore(nullptr, tr("No run history: %1").arg(why));
        emit problem(tr("Run history"),
                     tr("Cannot open the run history (%1). Runs will not be stored.").arg(why));
        return choice.isEmpty();  // like pitlane-cli: only a file named with --db is fatal
    }
    store_ = std::move(db);
    reader_ = std::make_unique<store::HistoryWriter>(store_->path(), this);
    // Its own connection on a thread of its own: SQLite inserts and the stored verdict's
    // bootstraps never hold up the window.
    recorder_ = new store::RunRecorder(store_->path(), QStringLiteral("gui"), this);
    run_->runner()->addFeed(recorder_);
    connectRecorder();
    panel_->setStore(store_.get());
    emit storeChanged(store_.get());
    return true;
}

void HistoryController::connectRecorder() {
    connect(recorder_, &store::RunRecorder::runStarted, this, [this](qint64 id) {
        panel_->model()->setRecordingRun(id);
        panel_->refresh();
        panel_->setLiveRun(true, id);
        views_.log->append(-1, QString(), kInfo,
                           tr("recording run #%1 in %2").arg(id).arg(store_->path()));
    });
    connect(recorder_, &store::RunRecorder::runStored, this, &HistoryController::onRunStored);
    connect(recorder_, &store::RunRecorder::storeError, this, [this](const QString& why) {
        // Recording goes on with the next write; a dialog in the middle of a run would stop
        // nothing, so the log and the status bar say it.
        views_.log->append(-1, QString(), kError, tr("run history: %1").arg(why));
        views_.window->statusBar()->showMessage(tr("Run history: %1").arg(why), 10000);
    });
}

QString HistoryController::runNotStored() {
    if (!openError_.isEmpty()) return tr("the run history cannot be opened: %1").arg(openError_);
    if (!recorder_) return {};
    recorder_->flush();
    return recorder_->runError();
}

QString HistoryController::databasePath() const {
    return store_ ? store_->path() : QString();
}

void HistoryController::ensureHistory() {
    if (!chosen_) setDatabasePath(QString());
}

void HistoryController::refreshList() {
    if (store_) panel_->refresh();
}

void HistoryController::afterRunWritten(std::function<void()> then) {
    if (!recorder_ || !recorder_->writingRunEnd()) {
        then();
        return;
    }
    auto once = std::make_shared<std::function<void()>>(std::move(then));
    auto fire = [once] {
        if (!*once) return;
        auto f = std::move(*once);
        *once = nullptr;
        f();
    };
    connect(recorder_, &store::RunRecorder::runWritten, this, fire, Qt::SingleShotConnection);
    connect(recorder_, &QObject::destroyed, this, fire, Qt::SingleShotConnection);
    // The write waits its turn for the file's lock (another process's, up to RunStore's lock
    // wait): after a second without it, `then` goes on its own. Once begun (the verdict being
    // computed there, seconds for a long run), it is waited for.
    QPointer<store::RunRecorder> recorder = recorder_;
    QTimer::singleShot(1000, this, [recorder, fire] {
        if (!recorder || !recorder->runEndBegun()) fire();
    });
}

void HistoryController::setLiveRun(bool running) {
    panel_->setLiveRun(running, running && recorder_ ? recorder_->runId() : 0);
    updateSetupNote();
}

void HistoryController::updateSetupNote() {
    const ShownRun& shown = run_->shown();
    QString note;
    if (shown.isStored() && !run_->isRunning()) {
        const qint64 id = shown.storedId();
        if (id == 0)
            note = tr("⚠ This setup is not what the comparison on the right measured (arms of two runs).");
        else if (!shownSetup_.is_object())
            note = tr("⚠ This setup is not run #%1's (shown on the right): the history keeps no setup of it.")
                       .arg(id);
        else if (canonicalSetup(views_.setup->presetJson(), views_.setup->presetFile(),
                                views_.setup->modelDir()) != shownSetup_)
            note = tr("⚠ This setup is not run #%1's (shown on the right): <a href=\"load\">load its setup</a>")
                       .arg(id);
    }
    if (note != views_.setup->originNote()) views_.setup->setOriginNote(note);
}

bool HistoryController::openRunWithItsSetup(qint64 runId, bool keepSetup) {
    if (!showStoredRun(runId)) return false;
    // Its preset, unless the history keeps none: then the note says the setup is not the run's.
    if (!keepSetup && shownSetup_.is_object()) {
        panel_->selectRun(runId);
        panel_->loadSetupAction()->trigger();
    }
    return true;
}

void HistoryController::onRunStored(qint64 runId) {
    panel_->model()->setRecordingRun(0);
    panel_->refresh();
    panel_->selectRun(runId);
    emit runStored(runId);
}

qint64 HistoryController::shownRunId() const {
    const ShownRun& shown = run_->shown();
    if (shown.isStored()) return shown.storedId();
    return recorder_ && !run_->runner()->result().arms.empty() ? recorder_->runId() : 0;
}

namespace {
// What a read on the reader's thread hands back to the UI thread.
struct StoredRunRead {
    std::optional<results::RunResult> run;
    std::optional<store::RunInfo> info;
    std::optional<store::CrossRunComparison> comparison;
    store::SampleCheck check;  // what verifying the stored samples found
    // What the views compute from every sample, computed here rather than on the UI thread.
    std::shared_ptr<W::PreparedRun> prepared;
};
}  // namespace

bool HistoryController::requestStoredRun(qint64 runId) {
    if (run_->isRunning() || !store_ || !reader_) return false;
    auto read = std::make_shared<StoredRunRead>();
    const int token = ++readToken_;
    views_.window->statusBar()->showMessage(tr("Reading run #%1…").arg(runId));
    reader_->post(
        [runId, read](store::RunStore& s) {
            read->run = s.loadRun(runId, &read->check);
            if (!read->run) return false;
            read->info = s.runInfo(runId);
            read->prepared = W::PlotPanel::prepare(*read->run);
            return true;
        },
        [this, runId, read, token](bool ok, const QString& error) {
            if (token != readToken_) return;  // a newer request, or another history
            if (!ok || run_->isRunning()) {
                if (!ok) emit problem(tr("Cannot open the run"), error);
                emit shown(false);
                return;
            }
            showStoredRead(runId, std::move(*read->run), read->info, std::move(read->prepared), read->check);
            emit shown(true);
            returnFreedMemory();
        });
    return true;
}

void HistoryController::returnFreedMemory() {
#ifdef __GLIBC__
    // Reading a long run frees a few hundred MB of transients (the decoded rows, the radix
    // sort's buffers) that glibc keeps in its arenas, resident: 70 MB of a 10 M-sample run's
    // were still held a second after it was shown. The reader's thread, idle then, hands the
    // free pages back (every arena's).
    // Once the plots are drawn: their first refreshes free transients of their own.
    connect(
        views_.plots, &W::PlotPanel::flushed, this,
        [this] {
            if (reader_) reader_->post([](store::RunStore&) { ::malloc_trim(0); return true; }, {});
        },
        Qt::SingleShotConnection);
#endif
}

void HistoryController::showStoredRead(qint64 runId, results::RunResult run,
                                       const std::optional<store::RunInfo>& info,
                                       std::shared_ptr<W::PreparedRun> prepared,
                                       const store::SampleCheck& check) {
    QStringList parts = {tr("Stored run #%1").arg(runId),
                         W::localDateText(QString::fromStdString(run.started_at)),
                         QString::fromStdString(run.preset.name)};
    QStringList notes;
    if (info) {
        if (!info->label.isEmpty()) parts << QStringLiteral("“%1”").arg(info->label);
        if (info->baseline) parts << tr("baseline ★");
        if (!info->complete())
            notes << tr(
                "Its recording stopped before the run finished (the process was killed): "
                "every sample received until then is here.");
    }
    // Stored samples that fail their check (issue 42): the damaged arms are shown failed, code
    // damaged, without figures; said above the verdict. Older runs: unchecked, said once.
    shownDamaged_ = check.isDamaged();
    if (check.isDamaged())
        notes << tr("Damaged in the history: %1. Its damaged arms are shown as failed, without "
                    "figures (pitlane-cli check-history lists every damaged chunk).")
                     .arg(check.damaged.join(QStringLiteral("; ")));
    else if (check.unchecked())
        notes << check.uncheckedNote(runId) + QLatin1Char('.');
    showFinished(std::move(run), runId, parts.join(QStringLiteral(" · ")), notes, std::move(prepared));
    panel_->selectRun(runId);  // the list shows which run the views show
}

bool HistoryController::requestRunComparison(const W::CrossRunChoice& c) {
    if (run_->isRunning() || !store_ || !reader_) return false;
    auto read = std::make_shared<StoredRunRead>();
    const int token = ++readToken_;
    views_.window->statusBar()->showMessage(tr("Reading and comparing the runs…"));
    reader_->post(
        [c, read](store::RunStore& s) {
            read->comparison = s.compareRuns(c.runX, c.armX, c.runY, c.armY);
            if (!read->comparison) return false;
            read->prepared = W::PlotPanel::prepare(read->comparison->run);
            return true;
        },
        [this, read, token](bool ok, const QString& error) {
            if (token != readToken_) return;
            if (!ok || run_->isRunning()) {
                if (!ok) emit problem(tr("Cannot compare"), error);
                emit shown(false);
                return;
            }
            auto& comparison = *read->comparison;
            const QString heading =
                tr("Comparison: %1").arg(QString::fromStdString(comparison.run.preset.name));
            QString note = QString::fromStdString(comparison.note);  // interleaved or not
            if (!note.isEmpty()) note[0] = note[0].toUpper();
            showFinished(std::move(comparison.run), 0, heading, {note}, std::move(read->prepared));
            emit shown(true);
        });
    return true;
}

bool HistoryController::waitShown() {
    QEventLoop loop;
    bool ok = false, answered = false, drawn = false;
    connect(this, &HistoryController::shown, &loop, [&](bool shownOk) {
        ok = shownOk;
        answered = true;
        if (!ok || drawn) loop.quit();
    });
    // A shown run's plots draw one a turn of this loop (PlotPanel::showRun, then flushed()): who
    // waits here reads them drawn, and the window answers meanwhile (--open-run, issue 44).
    connect(views_.plots, &W::PlotPanel::flushed, &loop, [&] {
        drawn = answered && ok;
        if (drawn) loop.quit();
    });
    loop.exec();
    return ok;
}

bool HistoryController::showStoredRun(qint64 runId) {
    return requestStoredRun(runId) && waitShown();
}

bool HistoryController::showRunComparison(const W::CrossRunChoice& c) {
    return requestRunComparison(c) && waitShown();
}

void HistoryController::showFinished(results::RunResult run, qint64 runId, const QString& heading,
                                     const QStringList& notes,
                                     std::shared_ptr<W::PreparedRun> prepared) {
    run_->leaveLiveRun(
        QStringLiteral("%1<br>%2").arg(heading.toHtmlEscaped(), tr("computing the verdict…")));
    // What the stored run measured, to tell the setup on the left from it (none for two runs).
    shownSetup_ = runId > 0 && run.preset_json.is_object()
                      ? canonicalSetup(run.preset_json, QString(), views_.setup->modelDir())
                      : nlohmann::json();
    run_->shown().showStored(std::move(run), runId, heading, notes);
    const auto& shown = *run_->shown().stored();
    views_.plots->showRun(run_->shown().stored(), std::move(prepared));
    views_.status->showRun(shown);
    run_->refreshApplied();
    run_->refreshProfile();
    logShown(shown, heading, notes);
    run_->computeVerdict(shown);
    showLesson(shown, runId);
    views_.resultsTabs->setCurrentIndex(0);
    views_.window->statusBar()->showMessage(
        tr("Showing %1 · History ▸ Load setup puts its preset in the setup, to run it again").arg(heading));
    updateSetupNote();
    emit actionsChanged();
}

void HistoryController::showLesson(const results::RunResult& shown, qint64 runId) {
    W::LessonPanel* lesson = views_.lesson;
    if (runId == 0) {  // arms of two runs: neither run's lesson applies
        lesson->setLesson(nlohmann::json());
        return;
    }
    lesson->setLesson(results::lessonOf(shown));
    lesson->clearJudgement();
    const auto info = store_->runInfo(runId);
    if (info && !info->lessonStatus().isEmpty())
        lesson->setJudgement(info->lesson,
                             tr("(run #%1, as judged when it was stored)").arg(runId));
    else if (!info || !info->complete() || !run_->judgeLesson(shown))
        lesson->setNote(info && !info->complete() ? tr("not judged: the run did not finish")
                                                  : QString());
}

void HistoryController::logShown(const results::RunResult& shown, const QString& heading,
                                 const QStringList& notes) {
    W::LogPane* log = views_.log;
    log->clear();
    log->append(-1, QString(), kInfo, tr("showing %1").arg(heading));
    for (const auto& note : notes) log->append(-1, QString(), kWarning, note);
    for (std::size_t i = 0; i < shown.arms.size(); ++i) {
        const auto& a = shown.arms[i];
        const QString name = QString::fromStdString(a.name);
        for (const auto& w : a.warnings)
            log->append(int(i), name, kWarning, QString::fromStdString(w));
        if (a.error)
            log->append(int(i), name, kError,
                        QString::fromStdString(a.error->code + ": " + a.error->message));
    }
}

}  // namespace pitlane::app
