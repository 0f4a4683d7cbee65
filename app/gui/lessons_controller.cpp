#include "lessons_controller.h"

#include "app_paths.h"
#include "history_controller.h"
#include "main_window.h"

#include "pitlane/store/run_store.h"
#include "pitlane/widgets/lessons/lessons_browser.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>

namespace pitlane::app {

LessonsController::LessonsController(MainWindow* window, HistoryController* history,
                                     QObject* parent)
    : QObject(parent),
      window_(window),
      browser_(new widgets::LessonsBrowser),
      dock_(new QDockWidget(tr("Lessons"), window)) {
    dock_->setObjectName(QStringLiteral("lessonsDock"));
    dock_->setWidget(browser_);
    dock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                       QDockWidget::DockWidgetClosable);
    window->addDockWidget(Qt::BottomDockWidgetArea, dock_);
    window->tabifyDockWidget(history->dock(), dock_);
    history->dock()->raise();  // the history stays in front until Lessons ▸ Browse
    dock_->hide();
    browser_->setPresetsDir(presetsDir());
    browser_->setStore(history->store());
    connect(history, &HistoryController::storeChanged, browser_,
            &widgets::LessonsBrowser::setStore);
    connect(history, &HistoryController::runStored, browser_, &widgets::LessonsBrowser::refresh);
    connect(browser_, &widgets::LessonsBrowser::openRequested, window_,
            [this](const QString& path) { window_->openPreset(path); });
    connect(browser_, &widgets::LessonsBrowser::runRequested, this, &LessonsController::run);
    // Shown again (another engineer's new lesson preset, pitlane-cli's runs): read again.
    connect(dock_, &QDockWidget::visibilityChanged, browser_, [this](bool visible) {
        if (visible) browser_->refresh();
    });
}

void LessonsController::addMenu(QMenuBar* bar) {
    QMenu* menu = bar->addMenu(tr("&Lessons"));
    browse_ = menu->addAction(tr("&Browse lessons…"), this, &LessonsController::showBrowser);
    browse_->setObjectName(QStringLiteral("browseLessons"));
    browse_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    browse_->setStatusTip(
        tr("Every lesson preset with its status on this machine; open or run one (Ctrl+L)"));
    QAction* toggle = dock_->toggleViewAction();
    toggle->setText(tr("Show the Lessons &panel"));
    menu->addAction(toggle);
}

void LessonsController::showBrowser() {
    browser_->setPresetsDir(presetsDir());
    dock_->show();
    dock_->raise();
    // Lessons are read: the dock gets a third of the height unless it has that already.
    const int want = window_->height() / 3;
    if (!dock_->isFloating() && dock_->height() < want)
        window_->resizeDocks({dock_}, {want}, Qt::Vertical);
}

void LessonsController::setRunning(bool running) {
    browser_->setRunning(running);
}

void LessonsController::setCuda(bool known, bool available) {
    browser_->setCuda(known, available);
}

void LessonsController::run(const QString& presetPath) {
    if (window_->isRunning() || !window_->openPreset(presetPath)) return;
    window_->startRun();
}

}  // namespace pitlane::app
