#include "pitlane/widgets/history/history_panel.h"

#include "pitlane/store/run_store.h"
#include "pitlane/widgets/history/history_model.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace pitlane::widgets {

HistoryPanel::HistoryPanel(QWidget* parent)
    : QWidget(parent),
      model_(new HistoryModel(this)),
      view_(new QTableView(this)),
      summary_(new QLabel(this)) {
    setObjectName(QStringLiteral("historyPanel"));
    view_->setObjectName(QStringLiteral("historyView"));
    view_->setModel(model_);
    view_->verticalHeader()->hide();
    view_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Two rows selected are the natural pair for Compare.
    view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view_->setWordWrap(false);
    view_->setAlternatingRowColors(true);
    view_->setContextMenuPolicy(Qt::CustomContextMenu);
    auto* header = view_->horizontalHeader();
    header->setHighlightSections(false);
    header->setStretchLastSection(true);  // the verdict
    // Short columns fit their contents; re-applied after each reset, which forgets them.
    auto fit = [this] {
        for (int c :
             {HistoryModel::Baseline, HistoryModel::Id, HistoryModel::Date, HistoryModel::Model,
              HistoryModel::Preset, HistoryModel::Label, HistoryModel::Arms, HistoryModel::Lesson})
            view_->resizeColumnToContents(c);
        // A long preset name or label must not push the verdict out of sight.
        const int cap = fontMetrics().averageCharWidth() * 40;
        for (int c : {HistoryModel::Preset, HistoryModel::Label})
            view_->setColumnWidth(c, std::min(view_->columnWidth(c), cap));
    };
    connect(model_, &QAbstractItemModel::modelReset, this, fit);
    summary_->setObjectName(QStringLiteral("historySummary"));
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    createActions();
    auto* top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->setSpacing(2);
    top->addWidget(summary_, 1);
    for (QAction* a : {open_, loadSetup_, compare_, rename_, baseline_, export_, delete_}) {
        auto* b = new QToolButton(this);
        b->setDefaultAction(a);
        b->setAutoRaise(true);
        top->addWidget(b);
    }
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    layout->addLayout(top);
    layout->addWidget(view_, 1);

    connect(view_, &QAbstractItemView::activated, this, [this](const QModelIndex& index) {
        if (open_->isEnabled()) emit openRequested(model_->runId(index.row()));
    });
    connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &HistoryPanel::updateActions);
    connect(view_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &HistoryPanel::updateActions);
    connect(view_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(this);
        menu.addActions({open_, loadSetup_, compare_});
        menu.addSeparator();
        menu.addActions({rename_, baseline_, export_});
        menu.addSeparator();
        menu.addAction(delete_);
        menu.exec(view_->viewport()->mapToGlobal(pos));
    });
    updateSummary();
    updateActions();
}

void HistoryPanel::createActions() {
    auto make = [this](const QString& text, const QString& tip, const char* name) {
        auto* a = new QAction(text, this);
        a->setStatusTip(tip);
        a->setToolTip(tip);
        a->setObjectName(QLatin1String(name));
        // Shortcuts act only while the list has the focus, not over the whole window.
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(a);
        return a;
    };
    open_ = make(tr("Open"), tr("Show the run in the plots and tables (double-click, Enter)"),
                 "historyOpen");
    loadSetup_ = make(tr("Load setup"),
                      tr("Put the run's preset (model, input, arms, knobs) in the setup: Run then measures it again"),
                      "historyLoadSetup");
    compare_ = make(tr("Compare…"),
                    tr("Compare an arm of one run with an arm of another (select two runs)"),
                    "historyCompare");
    rename_ = make(tr("Rename…"), tr("Give the run a label (F2)"), "historyRename");
    rename_->setShortcut(QKeySequence(Qt::Key_F2));
    baseline_ =
        make(tr("Baseline"), tr("Mark the run as the baseline of its model (one per model)"),
             "historyBaseline");
    baseline_->setCheckable(true);
    export_ = make(tr("Export…"), tr("Write the run as HTML, PDF, Markdown, CSV or JSON"),
                   "historyExport");
    delete_ =
        make(tr("Delete…"), tr("Delete the run and every sample of it (Del)"), "historyDelete");
    delete_->setShortcut(QKeySequence::Delete);
    connect(open_, &QAction::triggered, this, [this] {
        if (const qint64 id = currentRun()) emit openRequested(id);
    });
    connect(loadSetup_, &QAction::triggered, this, [this] {
        if (const qint64 id = currentRun()) emit loadSetupRequested(id);
    });
    connect(compare_, &QAction::triggered, this, &HistoryPanel::askCompare);
    connect(rename_, &QAction::triggered, this, &HistoryPanel::askRename);
    connect(baseline_, &QAction::triggered, this, &HistoryPanel::toggleBaseline);
    connect(export_, &QAction::triggered, this, [this] {
        if (const qint64 id = currentRun()) emit exportRequested(id);
    });
    connect(delete_, &QAction::triggered, this, &HistoryPanel::askDelete);
}

void HistoryPanel::setStore(store::RunStore* store, const QString& why) {
    store_ = store;
    offReason_ = why;
    model_->setStore(store);
    updateSummary();
    updateActions();
}

void HistoryPanel::refresh() {
    const QList<qint64> selected = selectedRuns();
    const qint64 current = currentRun();
    model_->refresh();
    for (qint64 id : selected) {
        const int row = model_->rowOf(id);
        if (row >= 0)
            view_->selectionModel()->select(
                model_->index(row, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
    const int row = model_->rowOf(current);
    if (row >= 0)
        view_->selectionModel()->setCurrentIndex(model_->index(row, 0),
                                                 QItemSelectionModel::NoUpdate);
    updateSummary();
    updateActions();
}

void HistoryPanel::setLiveRun(bool active, qint64 recordingId) {
    liveRun_ = active;
    recordingId_ = recordingId;
    updateActions();
}

QList<qint64> HistoryPanel::selectedRuns() const {
    QList<int> rows;
    for (const auto& index : view_->selectionModel()->selectedRows()) rows << index.row();
    std::sort(rows.begin(), rows.end());
    QList<qint64> ids;
    for (int r : rows) ids << model_->runId(r);
    return ids;
}

qint64 HistoryPanel::currentRun() const {
    const QModelIndex current = view_->selectionModel()->currentIndex();
    if (current.isValid() && view_->selectionModel()->isRowSelected(current.row()))
        return model_->runId(current.row());
    const auto selected = selectedRuns();
    return selected.isEmpty() ? 0 : selected.first();
}

void HistoryPanel::selectRun(qint64 id) {
    const int row = model_->rowOf(id);
    if (row < 0) return;
    view_->selectionModel()->setCurrentIndex(
        model_->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    view_->scrollTo(model_->index(row, 0));
}

bool HistoryPanel::check(bool ok) {
    if (!ok && store_) emit storeError(store_->lastError());
    return ok;
}

bool HistoryPanel::renameRun(qint64 id, const QString& label) {
    if (!store_ || !check(store_->renameRun(id, label.trimmed()))) return false;
    refresh();
    emit historyChanged();
    return true;
}

bool HistoryPanel::setBaseline(qint64 id, bool on) {
    if (!store_ || !check(store_->setBaseline(id, on))) return false;
    refresh();
    emit historyChanged();
    return true;
}

bool HistoryPanel::deleteRun(qint64 id) {
    if (!store_ || id == recordingId_) return false;
    if (!check(store_->deleteRun(id))) return false;
    refresh();
    emit historyChanged();
    return true;
}

void HistoryPanel::askRename() {
    const qint64 id = currentRun();
    const auto* info = model_->info(model_->rowOf(id));
    if (!info) return;
    bool ok = false;
    const QString label = QInputDialog::getText(
        this, tr("Rename run"), tr("Label of run #%1 (%2):").arg(id).arg(info->name),
        QLineEdit::Normal, info->label, &ok);
    if (ok) renameRun(id, label);
}

void HistoryPanel::toggleBaseline() {
    const qint64 id = currentRun();
    const auto* info = model_->info(model_->rowOf(id));
    if (info) setBaseline(id, !info->baseline);
    updateActions();  // the checked state follows the store, not the click
}

void HistoryPanel::askDelete() {
    const QList<qint64> ids = selectedRuns();
    if (ids.isEmpty()) return;
    const QString what = ids.size() == 1
                             ? tr("Delete run #%1 and every sample of it?").arg(ids.first())
                             : tr("Delete %1 runs and every sample of them?").arg(ids.size());
    if (QMessageBox::question(
            this, tr("Delete runs"), what + QLatin1Char('\n') + tr("This cannot be undone."),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) != QMessageBox::Yes)
        return;
    for (qint64 id : ids)
        if (!deleteRun(id)) break;
}

void HistoryPanel::askCompare() {
    if (model_->rowCount() == 0) return;
    const QList<qint64> selected = selectedRuns();
    // Two selected runs: the older one is the baseline. One: against its model's baseline run.
    qint64 x = 0, y = selected.isEmpty() ? 0 : selected.first();
    if (selected.size() >= 2)
        x = selected[1];
    else if (const auto* info = model_->info(model_->rowOf(y)); info && store_)
        x = store_->baselineRun(info->model).value_or(0);
    CrossRunDialog dialog(model_->runs(), x, y, this);
    if (dialog.exec() == QDialog::Accepted) emit compareChosen(dialog.choice());
}

void HistoryPanel::updateActions() {
    const QList<qint64> selected = selectedRuns();
    const qint64 current = currentRun();
    const auto* info = model_->info(model_->rowOf(current));
    const bool have = store_ && info;
    open_->setEnabled(have && !liveRun_);
    loadSetup_->setEnabled(have && !liveRun_);
    compare_->setEnabled(store_ && !liveRun_ && model_->rowCount() > 0);
    rename_->setEnabled(have);
    baseline_->setEnabled(have && info->complete());
    baseline_->setChecked(have && info->baseline);
    export_->setEnabled(have);
    delete_->setEnabled(have && !selected.contains(recordingId_));
}

void HistoryPanel::updateSummary() {
    if (!store_) {
        summary_->setText(offReason_.isEmpty() ? tr("No run history") : offReason_);
        summary_->setToolTip({});
        return;
    }
    const int n = model_->rowCount();
    summary_->setText(n == 0   ? tr("No runs stored yet: every run is recorded here as it goes.")
                      : n == 1 ? tr("1 run stored")
                               : tr("%1 runs stored").arg(n));
    summary_->setToolTip(store_->path());
}

}  // namespace pitlane::widgets
