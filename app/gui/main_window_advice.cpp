// The window's Advice tab (issue 14): the advisor's suggestions for the shown run (filled by
// RunController with the final verdict), and its "Add arm", which puts the suggested arm into
// the arm editor so the next Run measures it. Also pitlane --tab: a results tab by name.
#include "main_window.h"

#include "pitlane/widgets/results/advice_view.h"
#include "pitlane/widgets/setup/arm_editor.h"
#include "pitlane/widgets/setup/setup_panel.h"

#include <QStatusBar>
#include <QTabWidget>

namespace pitlane::app {

namespace W = widgets;

void MainWindow::addAdviceTab() {
    advice_ = new W::AdviceView;
    const int tab = resultsTabs_->addTab(advice_, advice_->title());
    resultsTabs_->setTabToolTip(
        tab, tr("What to try next, per arm, from what the run measured (the advisor)"));
    connect(advice_, &W::AdviceView::titleChanged, this, [this](const QString& title) {
        resultsTabs_->setTabText(resultsTabs_->indexOf(advice_), title);
    });
    connect(advice_, &W::AdviceView::addArmRequested, this,
            [this](const QString& name, const nlohmann::json& knobs) {
                const QString added = setup_->armEditor()->addArmWith(name, knobs);
                statusBar()->showMessage(
                    tr("Added the arm “%1” to the setup: Run (Ctrl+R) measures it").arg(added),
                    10000);
            });
}

bool MainWindow::showResultsTab(const QString& name) {
    for (int i = 0; i < resultsTabs_->count(); ++i)
        if (!name.isEmpty() && resultsTabs_->tabText(i).startsWith(name, Qt::CaseInsensitive)) {
            resultsTabs_->setCurrentIndex(i);
            return true;
        }
    return false;
}

}  // namespace pitlane::app
