#include "main_window.h"

#include "recent_files.h"

#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_recorder.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/applied_settings_model.h"
#include "pitlane/widgets/comparison_table_model.h"
#include "pitlane/widgets/history_panel.h"
#include "pitlane/widgets/lesson_panel.h"
#include "pitlane/widgets/log_pane.h"
#include "pitlane/widgets/model_panel.h"
#include "pitlane/widgets/plot_panel.h"
#include "pitlane/widgets/run_status_panel.h"
#include "pitlane/widgets/setup_panel.h"
#include "pitlane/widgets/theme.h"
#include "pitlane/widgets/verdict_calculator.h"
#include "pitlane/widgets/wrapping_label.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

#include <iostream>

namespace pitlane::app {

using json = nlohmann::json;
namespace W = widgets;

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      runner_(new session::ExperimentRunner({session::defaultWorkerPath()}, this)),
      verdict_(new W::VerdictCalculator(this)),
      setup_(new W::SetupPanel),
      status_(new W::RunStatusPanel),
      plots_(new W::PlotPanel),
      comparison_(new W::ComparisonTableModel(this)),
      applied_(new W::AppliedSettingsModel(this)),
      log_(new W::LogPane) {
    setObjectName(QStringLiteral("MainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/pitlane.svg")));
    setAcceptDrops(true);
    systemPalette_ = QApplication::palette();
    systemStyle_ = QApplication::style()->name();

    setup_->setModelDir(QString::fromStdString(
        spec::findModelDir(QCoreApplication::applicationDirPath().toStdString())));
    setup_->setMinimumWidth(340);

    rightSplitter_ = new QSplitter(Qt::Vertical);
    rightSplitter_->addWidget(status_);
    rightSplitter_->addWidget(plots_);
    rightSplitter_->addWidget(buildResultsTabs());
    rightSplitter_->setStretchFactor(0, 0);
    rightSplitter_->setStretchFactor(1, 1);
    rightSplitter_->setStretchFactor(2, 0);
    rightSplitter_->setChildrenCollapsible(false);
    mainSplitter_ = new QSplitter(Qt::Horizontal);
    mainSplitter_->addWidget(setup_);
    mainSplitter_->addWidget(rightSplitter_);
    mainSplitter_->setStretchFactor(0, 0);
    mainSplitter_->setStretchFactor(1, 1);
    mainSplitter_->setSizes({400, 1100});
    rightSplitter_->setSizes({70, 600, 190});  // the history dock below takes its share too
    setCentralWidget(mainSplitter_);

    plots_->attach(runner_);
    status_->attach(runner_);
    createActions();
    createHistoryDock();
    createMenus();
    connectRunner();
    connect(verdict_, &W::VerdictCalculator::ready, this, &MainWindow::onVerdict);
    connect(setup_, &W::SetupPanel::changed, this, [this] { setWindowModified(true); });
    // Every preset load (open, save, last session, new model) ends in changed(): the lesson
    // follows the preset the setup now holds.
    connect(setup_, &W::SetupPanel::changed, this,
            [this] { lesson_->setLesson(setup_->lesson()); });
    connect(setup_, &W::SetupPanel::validityChanged, this, &MainWindow::updateActions);
    connect(setup_, &W::SetupPanel::openModelRequested, this, &MainWindow::openModelDialog);
    connect(log_, &W::LogPane::countsChanged, this, [this](int warnings, int errors) {
        resultsTabs_->setTabText(
            2, warnings + errors == 0
                   ? tr("Log")
                   : tr("Log (%1 %2, %3 %4)")
                         .arg(warnings)
                         .arg(warnings == 1 ? tr("warning") : tr("warnings"))
                         .arg(errors)
                         .arg(errors == 1 ? tr("error") : tr("errors")));
    });
    liveVerdict_.setInterval(1000);
    connect(&liveVerdict_, &QTimer::timeout, this, [this] {
        std::size_t n = 0;
        for (const auto& a : runner_->result().arms) n += a.samples.size();
        if (n == samplesAtLastVerdict_ || verdict_->busy()) return;
        samplesAtLastVerdict_ = n;
        verdict_->request(runner_->result(), false);
    });
    restoreSettings();
    updateActions();
    updateTitle();
    // The history opens once the caller had its chance to choose the file (--db).
    QTimer::singleShot(0, this, &MainWindow::ensureHistory);
    statusBar()->showMessage(tr("Open a preset or a model, then Run (Ctrl+R)"));
}

MainWindow::~MainWindow() {
    // The runner (a child, deleted after the members) may still report while it goes: the
    // recorder must not write into the history closed before it.
    delete recorder_;
}

QWidget* MainWindow::buildResultsTabs() {
    resultsTabs_ = new QTabWidget;
    resultsTabs_->setObjectName(QStringLiteral("resultsTabs"));
    resultsTabs_->setDocumentMode(true);

    auto* verdictPage = new QWidget;
    lesson_ = new W::LessonPanel(verdictPage);
    lesson_->setObjectName(QStringLiteral("lessonPanel"));
    verdictLine_ = new W::WrappingLabel(verdictPage);
    verdictLine_->setObjectName(QStringLiteral("verdictLine"));
    verdictLine_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    comparisonView_ = new QTableView(verdictPage);
    comparisonView_->setObjectName(QStringLiteral("comparisonView"));
    comparisonView_->setModel(comparison_);
    comparisonView_->verticalHeader()->hide();
    comparisonView_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    comparisonView_->horizontalHeader()->setStretchLastSection(true);
    comparisonView_->setSelectionBehavior(QAbstractItemView::SelectRows);
    comparisonView_->setWordWrap(false);
    // Numbers fit their contents; the verdict takes the rest (re-applied: a reset forgets it).
    auto fitColumns = [this] {
        comparisonView_->resizeColumnsToContents();
        comparisonView_->horizontalHeader()->setSectionResizeMode(W::ComparisonTableModel::Verdict,
                                                                  QHeaderView::Stretch);
    };
    connect(comparison_, &QAbstractItemModel::modelReset, comparisonView_, fitColumns);
    connect(comparison_, &QAbstractItemModel::dataChanged, comparisonView_, fitColumns);
    auto* verdictLayout = new QVBoxLayout(verdictPage);
    verdictLayout->setContentsMargins(2, 2, 2, 2);
    verdictLayout->addWidget(lesson_);
    verdictLayout->addWidget(verdictLine_);
    verdictLayout->addWidget(comparisonView_, 1);
    resultsTabs_->addTab(verdictPage, tr("Verdict"));

    auto* appliedView = new QTableView;
    appliedView->setObjectName(QStringLiteral("appliedView"));
    appliedView->setModel(applied_);
    appliedView->verticalHeader()->hide();
    appliedView->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    appliedView->horizontalHeader()->setStretchLastSection(true);
    appliedView->setWordWrap(false);
    connect(applied_, &QAbstractItemModel::modelReset, appliedView,
            [appliedView] { appliedView->resizeColumnsToContents(); });
    resultsTabs_->addTab(appliedView, tr("Applied settings"));
    resultsTabs_->addTab(log_, tr("Log"));
    return resultsTabs_;
}

void MainWindow::createActions() {
    runAction_ = new QAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("&Run"), this);
    runAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    runAction_->setStatusTip(tr("Start one worker per arm and measure (Ctrl+R)"));
    connect(runAction_, &QAction::triggered, this, &MainWindow::startRun);
    stopAction_ = new QAction(style()->standardIcon(QStyle::SP_MediaStop), tr("&Stop"), this);
    stopAction_->setShortcut(QKeySequence(Qt::Key_Escape));
    stopAction_->setStatusTip(tr("Stop every worker, keep what was measured (Esc)"));
    connect(stopAction_, &QAction::triggered, this, &MainWindow::stopRun);
    darkAction_ = new QAction(tr("&Dark palette"), this);
    darkAction_->setCheckable(true);
    connect(darkAction_, &QAction::toggled, this, &MainWindow::setDarkPalette);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* openPreset = file->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton),
                                          tr("&Open preset…"), this, &MainWindow::openPresetDialog);
    openPreset->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &model…"), this, &MainWindow::openModelDialog)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    recent_ = new RecentFiles(file->addMenu(tr("Open &recent")), this);
    connect(recent_, &RecentFiles::chosen, this, &MainWindow::openPath);
    file->addSeparator();
    saveAction_ = file->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton),
                                  tr("&Save preset…"), this, &MainWindow::savePresetDialog);
    saveAction_->setShortcut(QKeySequence::Save);
    exportAction_ = file->addAction(tr("&Export…"), this, &MainWindow::exportDialog);
    exportAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportAction_->setStatusTip(
        tr("Write the shown run (or the run selected in the history list) as HTML, PDF, "
           "Markdown, CSV or JSON (Ctrl+E)"));
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(runAction_);
    run->addAction(stopAction_);
    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* showHistory = historyDock_->toggleViewAction();
    showHistory->setText(tr("Run &history"));
    showHistory->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
    view->addAction(showHistory);
    view->addAction(darkAction_);
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Pitlane"), this, [this] {
        QMessageBox::about(this, tr("About Pitlane"),
                           tr("<b>Pitlane</b> %1<br>A/B benchmarking of TorchScript models: one "
                              "worker process per arm, interleaved blocks, bootstrap confidence "
                              "intervals.")
                               .arg(QCoreApplication::applicationVersion()));
    });

    QToolBar* tools = addToolBar(tr("Main"));
    tools->setObjectName(QStringLiteral("mainToolBar"));
    tools->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    tools->addAction(openPreset);
    tools->addAction(saveAction_);
    tools->addSeparator();
    tools->addAction(runAction_);
    tools->addAction(stopAction_);
}

void MainWindow::connectRunner() {
    using R = session::ExperimentRunner;
    connect(runner_, &R::armEvent, this, &MainWindow::onArmEvent);
    connect(runner_, &R::logMessage, this,
            [this](int arm, const QString& level, const QString& text) {
                const auto& arms = runner_->result().arms;
                const QString name = arm >= 0 && arm < int(arms.size())
                                         ? QString::fromStdString(arms[std::size_t(arm)].name)
                                         : QString();
                log_->append(arm, name, level, text);
            });
    connect(runner_, &R::armFinished, this, [this] { refreshApplied(); });
    // Queued: a worker that cannot even start ends the run inside start(); the window finishes
    // the run after startRun() has set everything up.
    connect(runner_, &R::finished, this, &MainWindow::onRunnerFinished, Qt::QueuedConnection);
}

bool MainWindow::isRunning() const {
    return runner_->isRunning();
}

void MainWindow::report(const QString& title, const QString& text) {
    log_->append(-1, QString(), QStringLiteral("error"), text);
    statusBar()->showMessage(text, 10000);
    if (interactive_)
        QMessageBox::warning(this, title, text);
    else
        std::cerr << "pitlane: " << text.toStdString() << "\n";
}

void MainWindow::updateActions() {
    const bool running = runner_->isRunning();
    runAction_->setEnabled(!running && setup_->isValid());
    stopAction_->setEnabled(running);
    setup_->setEnabled(!running);
    exportAction_->setEnabled(!running && !shownResult().arms.empty());
    historyPanel_->setLiveRun(running, running && recorder_ ? recorder_->runId() : 0);
}

void MainWindow::updateTitle() {
    const auto name = setup_->presetJson().value("name", std::string());
    setWindowTitle(
        tr("%1[*] — Pitlane").arg(name.empty() ? tr("untitled") : QString::fromStdString(name)));
}

bool MainWindow::startRun() {
    if (runner_->isRunning()) return false;
    const auto built = setup_->build();
    if (!built.preset) {
        report(tr("Cannot run"), tr("The setup is not valid: %1").arg(built.error));
        return false;
    }
    ensureHistory();
    // The views follow the live run again.
    stored_.reset();
    storedId_ = 0;
    storedHeading_.clear();
    storedNotes_.clear();
    liveVerdictPending_ = false;
    log_->clear();
    verdict_->reset();
    comparison_->setRows({});
    verdictLine_->setWrappedText(QString());
    samplesAtLastVerdict_ = 0;
    setup_->modelPanel()->clearLoaded();
    runner_->start(*built.preset);
    plots_->beginRun();
    status_->beginRun();
    refreshApplied();
    liveVerdict_.start();
    log_->append(-1, QString(), QStringLiteral("info"),
                 tr("run started: %1 arms of %2")
                     .arg(built.preset->arms.size())
                     .arg(QString::fromStdString(built.preset->model_path)));
    statusBar()->showMessage(tr("Running… (Esc stops)"));
    saveLastSetup();
    updateActions();
    return true;
}

void MainWindow::stopRun() {
    if (!runner_->isRunning()) return;
    statusBar()->showMessage(tr("Stopping: every worker is asked to stop, then killed"));
    runner_->stop();
    updateActions();
}

void MainWindow::onArmEvent(int arm, const json& event) {
    const auto type = event.value("type", std::string());
    if (type == "hello") {
        const auto env = event.value("environment", json::object());
        const auto available = env.is_object() ? env.find("cuda_available") : env.end();
        if (available != env.end() && available->is_boolean()) {
            const auto devices = env.find("cuda_devices");
            setCuda(
                {true, available->get<bool>(),
                 devices != env.end() && devices->is_number_integer() ? devices->get<int>() : 0});
        }
    } else if (type == "loaded" || type == "applied") {
        // armEvent is emitted before the runner stores the event in result(): read it after.
        QTimer::singleShot(0, this, [this] {
            setup_->modelPanel()->showLoaded(runner_->result());
            refreshApplied();
        });
    }
    Q_UNUSED(arm);
}

void MainWindow::refreshApplied() {
    std::vector<std::pair<std::string, json>> arms;
    for (const auto& a : shownResult().arms)
        arms.emplace_back(a.name, a.applied.empty() ? json() : a.applied);
    applied_->setArms(arms);
}

void MainWindow::onRunnerFinished() {
    liveVerdict_.stop();
    plots_->flush();
    refreshApplied();
    setup_->modelPanel()->showLoaded(runner_->result());
    const auto& result = runner_->result();
    for (const auto& w : results::runWarnings(result))
        log_->append(-1, QString(), QStringLiteral("warning"), QString::fromStdString(w));
    liveVerdictPending_ = true;
    verdict_->request(result, true);
    updateActions();
}

void MainWindow::onVerdict(const std::vector<W::ComparisonRow>& rows, bool final) {
    comparison_->setRows(rows);
    QStringList lines;
    for (const auto& r : rows)
        if (r.comparison) lines << QString::fromStdString(r.comparison->verdict).toHtmlEscaped();
    const QString prefix = final || stored_ ? QString() : tr("(live) ");
    QString text =
        lines.isEmpty()
            ? QString()
            : QStringLiteral("<b>%1%2</b>").arg(prefix, lines.join(QStringLiteral("<br>")));
    // How many fresh processes stood behind the verdict, and why rounds were added.
    const std::string replication =
        results::replicationSummary(stored_ ? *stored_ : runner_->result());
    if ((final || stored_) && !text.isEmpty() && !replication.empty())
        text += QStringLiteral("<br><i>%1</i>")
                    .arg(QString::fromStdString(replication).toHtmlEscaped());
    if (stored_) {
        // Which run this is, and what the reader must know to trust the verdict.
        QStringList parts = {storedHeading_.toHtmlEscaped()};
        if (!text.isEmpty()) parts << text;
        for (const auto& note : storedNotes_)
            parts << QStringLiteral("<i>%1</i>").arg(note.toHtmlEscaped());
        text = parts.join(QStringLiteral("<br>"));
    }
    verdictLine_->setWrappedText(text);
    if (!final || stored_) return;
    liveVerdictPending_ = false;
    const auto& result = runner_->result();
    const bool ok = result.allOk();
    statusBar()->showMessage(tr("Run %1 in %2 s")
                                 .arg(ok ? tr("finished") : tr("ended with failed arms"))
                                 .arg(result.wall_s, 0, 'f', 1));
    log_->append(-1, QString(), ok ? QStringLiteral("info") : QStringLiteral("warning"),
                 tr("run %1 in %2 s")
                     .arg(ok ? tr("finished") : tr("ended with failed arms"))
                     .arg(result.wall_s, 0, 'f', 1));
    updateActions();
    emit runFinished(ok);
}

void MainWindow::setCuda(const W::CudaAvailability& cuda) {
    setup_->setCuda(cuda);
    if (!cuda.known) return;
    // Remembered so the next session disables CUDA knobs (or not) before any worker has started.
    QSettings s;
    s.setValue(QStringLiteral("worker/cuda_available"), cuda.available);
    s.setValue(QStringLiteral("worker/cuda_devices"), cuda.devices);
}

bool MainWindow::saveScreenshot(const QString& path, QString* error) {
    // The verdict may have just changed size: lay out first, as the next frame would, or the
    // grab shows the old geometry (a wrapped verdict cut in half). A new layout can ask for
    // another one; a few rounds settle it.
    for (int i = 0; i < 3; ++i) QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    plots_->flush();
    const QPixmap pm = grab();
    if (pm.isNull() || !pm.save(path, "PNG")) {
        if (error) *error = tr("cannot write the screenshot %1").arg(path);
        return false;
    }
    return true;
}

void MainWindow::setDarkPalette(bool dark) {
    if (darkAction_->isChecked() != dark) darkAction_->setChecked(dark);  // re-enters once
    if (dark) {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(W::darkPalette());
    } else {
        QApplication::setStyle(QStyleFactory::create(systemStyle_));
        QApplication::setPalette(systemPalette_);
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (runner_->isRunning()) runner_->stop();  // the workers get SIGTERM, then SIGKILL
    saveSettings();
    saveLastSetup();
    event->accept();
}

}  // namespace pitlane::app
