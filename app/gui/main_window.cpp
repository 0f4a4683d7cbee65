#include "main_window.h"

#include "export_controller.h"
#include "history_controller.h"
#include "lessons_controller.h"
#include "recent_files.h"
#include "run_controller.h"

#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/results/applied_settings_model.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/history/history_panel.h"
#include "pitlane/widgets/lessons/lesson_panel.h"
#include "pitlane/widgets/lessons/lessons_browser.h"
#include "pitlane/widgets/live/log_pane.h"
#include "pitlane/widgets/setup/model_panel.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "pitlane/widgets/results/profile_view.h"
#include "pitlane/widgets/live/run_status_panel.h"
#include "pitlane/widgets/setup/setup_panel.h"
#include "pitlane/widgets/common/theme.h"
#include "pitlane/widgets/common/scroll_hint.h"
#include "pitlane/widgets/common/wrapping_label.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QKeyEvent>
#include <QScreen>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QFontDatabase>
#include <QScrollArea>
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

namespace W = widgets;

namespace {
// The setup column scrolls on a short screen instead of setting the window's minimum height
// (the window must fit 1366x768 with a lesson loaded).
QScrollArea* scrollable(QWidget* panel) {
    auto* scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("setupScroll"));
    scroll->setWidget(panel);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(panel->minimumWidth() +
                            scroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent));
    return scroll;
}
}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
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
    // Each arm's model is loaded in a sandboxed worker once the setup is valid (issue 26): what
    // cannot run shows next to the model before any run.
    setup_->setWorkerPath(session::defaultWorkerPath());

    rightSplitter_ = new QSplitter(Qt::Vertical);
    rightSplitter_->addWidget(status_);
    rightSplitter_->addWidget(plots_);
    rightSplitter_->addWidget(buildResultsTabs());
    rightSplitter_->setStretchFactor(0, 0);
    rightSplitter_->setStretchFactor(1, 1);
    rightSplitter_->setStretchFactor(2, 0);
    rightSplitter_->setChildrenCollapsible(false);
    mainSplitter_ = new QSplitter(Qt::Horizontal);
    mainSplitter_->addWidget(scrollable(setup_));
    mainSplitter_->addWidget(rightSplitter_);
    mainSplitter_->setStretchFactor(0, 0);
    mainSplitter_->setStretchFactor(1, 1);
    mainSplitter_->setSizes({400, 1100});
    rightSplitter_->setSizes({70, 600, 190});  // the history dock below takes its share too
    setCentralWidget(mainSplitter_);

    createControllers();
    createMenus();
    connect(setup_, &W::SetupPanel::changed, this, [this] { setWindowModified(true); });
    // Every preset load (open, save, last session, new model) ends in changed(): the lesson
    // follows the preset the setup now holds.
    connect(setup_, &W::SetupPanel::changed, this,
            [this] { lesson_->setLesson(setup_->lesson()); });
    connect(lesson_, &W::LessonPanel::appeared, this, &MainWindow::makeRoomForLesson);
    connect(setup_, &W::SetupPanel::validated, this, &MainWindow::updateActions);
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
    qApp->installEventFilter(this);  // window shortcuts beat a text field's key bindings
    restoreSettings();
    updateActions();
    updateTitle();
    // The history opens once the caller had its chance to choose the file (--db).
    QTimer::singleShot(0, historyCtl_, &HistoryController::ensureHistory);
    statusBar()->showMessage(tr("Open a preset or a model, then Run (Ctrl+R)"));
}

// The controllers are children: whichever goes first, the recorder never outlives the store
// it writes into (~HistoryController).
MainWindow::~MainWindow() = default;

// The runner wired to the views first, then the actions, the history dock (below the views),
// File ▸ Export and the Lessons browser (a dock tabbed with the history); problems any of them
// meets go through report().
void MainWindow::createControllers() {
    WindowViews views{this,     setup_, status_,      plots_,  comparison_,
                      applied_, log_,   verdictLine_, lesson_, resultsTabs_,
                      profile_};
    views.advice = advice_;
    views.servingLevels = servingLevels_;
    runCtl_ = new RunController(views, this);
    createActions();
    historyCtl_ = new HistoryController(views, runCtl_, this);
    exportCtl_ = new ExportController(this, runCtl_, historyCtl_, this);
    lessonsCtl_ = new LessonsController(this, historyCtl_, this);
    connect(runCtl_, &RunController::runFinished, this, &MainWindow::runFinished);
    connect(runCtl_, &RunController::actionsChanged, this, &MainWindow::updateActions);
    connect(runCtl_, &RunController::cudaReported, this, &MainWindow::setCuda);
    connect(historyCtl_, &HistoryController::actionsChanged, this, &MainWindow::updateActions);
    connect(historyCtl_, &HistoryController::problem, this, &MainWindow::report);
    connect(historyPanel(), &W::HistoryPanel::loadSetupRequested, this, &MainWindow::loadSetupOfRun);
    connect(exportCtl_, &ExportController::problem, this, &MainWindow::report);
    connect(profile_, &W::ProfileView::problem, this, &MainWindow::report);
}

QWidget* MainWindow::buildResultsTabs() {
    resultsTabs_ = new QTabWidget;
    resultsTabs_->setObjectName(QStringLiteral("resultsTabs"));
    resultsTabs_->setDocumentMode(true);

    auto* verdictPage = new QWidget;
    lesson_ = new W::LessonPanel(verdictPage);
    lesson_->setObjectName(QStringLiteral("lessonPanel"));
    // At most three lines tall (then it scrolls): the plots above keep their height however long
    // the verdict's caveats and notes run.
    auto* verdictArea = new W::CappedLabel(3, verdictPage);
    verdictArea->setObjectName(QStringLiteral("verdictArea"));
    verdictLine_ = verdictArea->label();
    verdictLine_->setObjectName(QStringLiteral("verdictLine"));
    verdictLine_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    comparisonView_ = new QTableView(verdictPage);
    comparisonView_->setObjectName(QStringLiteral("comparisonView"));
    comparisonView_->setModel(comparison_);
    comparisonView_->verticalHeader()->hide();
    comparisonView_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    comparisonView_->horizontalHeader()->setStretchLastSection(true);
    // Its header and one row at least (a scroll area's default minimum is 70 px): on a short
    // screen the plots above need those pixels more, and the rows scroll.
    comparisonView_->setMinimumHeight(comparisonView_->horizontalHeader()->sizeHint().height() +
                                      comparisonView_->verticalHeader()->defaultSectionSize() +
                                      2 * comparisonView_->frameWidth());
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
    fitColumns();  // before the first run too: the headers whole, not cut at 100 pixels
    // The verdict's own figures first (issue 44: at 1366 px the table was cut at "Ratio"): ratio,
    // CI and p-value follow the median; the other columns scroll, and the tab bar says so.
    {
        using C = W::ComparisonTableModel;
        QHeaderView* h = comparisonView_->horizontalHeader();
        int to = h->visualIndex(C::Median) + 1;
        for (int c : {int(C::Ratio), int(C::Ci), int(C::PValue)}) h->moveSection(h->visualIndex(c), to++);
    }
    auto* verdictLayout = new QVBoxLayout(verdictPage);
    verdictLayout->setContentsMargins(2, 2, 2, 2);
    verdictLayout->addWidget(lesson_);
    verdictLayout->addWidget(verdictArea);
    verdictLayout->addWidget(comparisonView_, 1);
    resultsTabs_->addTab(verdictPage, tr("Verdict"));
    // "More columns: scroll →" in the tab bar's corner (no height taken from the plots) while the
    // verdict table is wider than its view.
    const W::ScrollHint hint =
        W::attachScrollHint(comparisonView_, [this, verdictPage] { return resultsTabs_->currentWidget() == verdictPage; });
    resultsTabs_->setCornerWidget(hint.label, Qt::TopRightCorner);
    connect(resultsTabs_, &QTabWidget::currentChanged, hint.label, hint.recheck);

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
    // The operator profile (run.profile_iters, pitlane-cli --profile): a tab only while the
    // shown run has one (RunController::refreshProfile).
    profile_ = new W::ProfileView;
    resultsTabs_->addTab(profile_, tr("Operators"));
    resultsTabs_->setTabVisible(resultsTabs_->indexOf(profile_), false);
    addAdviceTab();
    // A serving run's figures per arm and level (the CLI's table): a tab only while the shown
    // run is a serving one (RunController::showServingLevels).
    servingLevels_ = new QPlainTextEdit;
    servingLevels_->setObjectName(QStringLiteral("servingLevels"));
    servingLevels_->setReadOnly(true);
    servingLevels_->setLineWrapMode(QPlainTextEdit::NoWrap);
    servingLevels_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    resultsTabs_->addTab(servingLevels_, tr("Levels"));
    resultsTabs_->setTabVisible(resultsTabs_->indexOf(servingLevels_), false);
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
    file->addAction(tr("&Compare two models…"), this, &MainWindow::compareModelsDialog)
        ->setObjectName(QStringLiteral("compareModelsAction"));
    recent_ = new RecentFiles(file->addMenu(tr("Open &recent")), this);
    connect(recent_, &RecentFiles::chosen, this, &MainWindow::openPath);
    file->addSeparator();
    saveAction_ = file->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton),
                                  tr("&Save preset…"), this, &MainWindow::savePresetDialog);
    saveAction_->setShortcut(QKeySequence::Save);
    exportAction_ = file->addAction(tr("&Export…"), exportCtl_, &ExportController::exportDialog);
    exportAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportAction_->setStatusTip(
        tr("Write the shown run (or the run selected in the history list) as HTML, PDF, "
           "Markdown, CSV or JSON (Ctrl+E)"));
    file->addAction(profile_->exportTraceAction());
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(runAction_);
    run->addAction(stopAction_);
    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* showHistory = historyDock()->toggleViewAction();
    showHistory->setText(tr("Run &history"));
    showHistory->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
    view->addAction(showHistory);
    view->addAction(darkAction_);
    lessonsCtl_->addMenu(menuBar());
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Pitlane"), this, [this] {
        QMessageBox::about(this, tr("About Pitlane"),
                           tr("<b>Pitlane</b> %1<br>A/B benchmarking of TorchScript models: one "
                              "worker process per arm, interleaved blocks, bootstrap confidence "
                              "intervals.")
                               .arg(QCoreApplication::applicationVersion()));
    });

    // In the menu bar's row, at its right: a toolbar row of its own cost the plots 39 pixels
    // of a 768-pixel screen (issue 27).
    auto* tools = new QToolBar(tr("Main"), menuBar());
    tools->setObjectName(QStringLiteral("mainToolBar"));
    tools->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    tools->setIconSize(QSize(16, 16));
    tools->setMovable(false);
    tools->setFloatable(false);
    tools->setContentsMargins(0, 0, 0, 0);
    tools->layout()->setContentsMargins(0, 0, 0, 0);
    tools->setStyleSheet(QStringLiteral("QToolBar { border: 0px; padding: 0px; spacing: 2px; }"));
    menuBar()->setCornerWidget(tools, Qt::TopRightCorner);
    tools->addAction(openPreset);
    tools->addAction(saveAction_);
    tools->addSeparator();
    tools->addAction(runAction_);
    tools->addAction(stopAction_);
}

void MainWindow::makeRoomForLesson() {
    // A lesson is read: the results below the plots get two fifths of the height (from the
    // plots), once, when it appears; whatever the user sets afterwards stays.
    const QList<int> s = rightSplitter_->sizes();
    if (s.size() != 3) return;
    const int total = s[0] + s[1] + s[2], want = total * 2 / 5;
    if (total <= 0 || s[2] >= want || s[1] - (want - s[2]) < 200) return;
    rightSplitter_->setSizes({s[0], s[1] - (want - s[2]), want});
}

QSize MainWindow::sizeHint() const {
    const QSize wish = QMainWindow::sizeHint();
    return screen() ? wish.boundedTo(screen()->availableGeometry().size()) : wish;
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::ShortcutOverride) return QMainWindow::eventFilter(watched, event);
    auto* key = static_cast<QKeyEvent*>(event);
    if (!(key->modifiers() & Qt::ControlModifier)) return false;
    // Only for widgets of this window (docks included, floating or not).
    auto* w = qobject_cast<QWidget*>(watched);
    while (w && w != this) w = w->parentWidget();
    if (!w) return false;
    const QKeySequence pressed(key->keyCombination());
    for (const QAction* a : findChildren<QAction*>())  // the menus' actions are the menus' children
        if (a->isEnabled() && a->shortcuts().contains(pressed)) {
            event->ignore();  // not overridden: the shortcut map triggers the action
            return true;
        }
    return false;
}

bool MainWindow::isRunning() const {
    return runCtl_->isRunning();
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
    const bool running = isRunning();
    runAction_->setEnabled(!running && setup_->isValid());
    // Why Run is greyed out, where the eye goes after a click on it (issue 27: the status bar
    // said "Open a preset or a model, then Run" while the reason was below the fold).
    const QString why = setup_->validationMessage();
    if (!running && !why.isEmpty())
        statusBar()->showMessage(tr("Cannot run: %1").arg(setup_->statusMessage()));  // short
    else if (!running && statusBar()->currentMessage().startsWith(tr("Cannot run: ")))
        statusBar()->showMessage(tr("Ready: Run (Ctrl+R)"));
    stopAction_->setEnabled(running);
    setup_->setEnabled(!running);
    exportAction_->setEnabled(!running && !shownResult().arms.empty());
    historyCtl_->setLiveRun(running);
    lessonsCtl_->setRunning(running);
}

void MainWindow::updateTitle() {
    const auto name = setup_->presetJson().value("name", std::string());
    setWindowTitle(
        tr("%1[*] — Pitlane").arg(name.empty() ? tr("untitled") : QString::fromStdString(name)));
}

bool MainWindow::startRun() {
    if (isRunning()) return false;
    const auto built = setup_->build();
    if (!built.preset) {
        report(tr("Cannot run"), tr("The setup is not valid: %1").arg(built.error));
        return false;
    }
    historyCtl_->ensureHistory();  // its recorder hears the run from the start
    runCtl_->start(*built.preset);
    saveLastSetup();
    updateActions();
    return true;
}

void MainWindow::stopRun() {
    if (runCtl_->stop()) updateActions();
}

void MainWindow::setCuda(const W::CudaAvailability& cuda) {
    // Every worker process says it: only a change re-derives the knobs' states and tooltips,
    // the lessons, the plots and the settings file (each a write and an fsync on this thread,
    // while the samples stream).
    if (cudaApplied_ && cuda.known == cuda_.known && cuda.available == cuda_.available &&
        cuda.devices == cuda_.devices)
        return;
    cudaApplied_ = true;
    cuda_ = cuda;
    setup_->setCuda(cuda);
    lessonsCtl_->setCuda(cuda.known, cuda.available);
    if (!cuda.known) return;
    plots_->setGpuAvailable(cuda.available);
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
    runCtl_->stop();  // while a run goes: the workers get SIGTERM, then SIGKILL
    saveSettings();
    saveLastSetup();
    event->accept();
}

void MainWindow::changeEvent(QEvent* event) {
    QMainWindow::changeEvent(event);
    // pitlane-cli may have stored runs in the same file meanwhile; listing reads no samples.
    if (event->type() == QEvent::ActivationChange && isActiveWindow() && historyCtl_) {
        historyCtl_->refreshList();
        if (lessonsDock()->isVisible()) lessonsBrowser()->refresh();
    }
}

// Forwarded to the controllers.

const session::ExperimentRunner* MainWindow::runner() const {
    return runCtl_->runner();
}
const results::RunResult& MainWindow::shownResult() const {
    return runCtl_->shown().result();
}
bool MainWindow::showsStoredRun() const {
    return runCtl_->shown().isStored();
}
bool MainWindow::setDatabasePath(const QString& choice) {
    return historyCtl_->setDatabasePath(choice);
}
QString MainWindow::databasePath() const {
    return historyCtl_->databasePath();
}
store::RunStore* MainWindow::history() const {
    return historyCtl_->store();
}
QString MainWindow::runNotStored() {
    return historyCtl_->runNotStored();
}
W::HistoryPanel* MainWindow::historyPanel() const {
    return historyCtl_->panel();
}
QDockWidget* MainWindow::historyDock() const {
    return historyCtl_->dock();
}
W::LessonsBrowser* MainWindow::lessonsBrowser() const {
    return lessonsCtl_->browser();
}
QDockWidget* MainWindow::lessonsDock() const {
    return lessonsCtl_->dock();
}
QAction* MainWindow::browseLessonsAction() const {
    return lessonsCtl_->browseAction();
}
qint64 MainWindow::shownRunId() const {
    return historyCtl_->shownRunId();
}
bool MainWindow::shownRunDamaged() const {
    return historyCtl_->shownRunDamaged();
}

bool MainWindow::showStoredRun(qint64 runId) {
    return historyCtl_->showStoredRun(runId);
}
bool MainWindow::showRunComparison(const W::CrossRunChoice& choice) {
    return historyCtl_->showRunComparison(choice);
}
bool MainWindow::exportShownRun(const QString& path, QString* error) {
    return exportCtl_->exportShownRun(path, error);
}
bool MainWindow::exportStoredRun(qint64 runId, const QString& path, QString* error) {
    return exportCtl_->exportStoredRun(runId, path, error);
}

}  // namespace pitlane::app
