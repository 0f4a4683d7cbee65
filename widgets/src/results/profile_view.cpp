#include "pitlane/widgets/results/profile_view.h"

#include "pitlane/widgets/results/profile_table_model.h"
#include "pitlane/widgets/common/wheel_guard.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace pitlane::widgets {

namespace {
// The folder File ▸ Export last wrote to: traces go beside the reports.
const char* const kExportFolderKey = "files/exportFolder";

QString fileSafe(QString s) {
    s.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    return s.isEmpty() ? QStringLiteral("run") : s;
}
}  // namespace

ProfileView::ProfileView(QWidget* parent)
    : QWidget(parent),
      model_(new ProfileTableModel(this)),
      note_(new QLabel(this)),
      arm_(new QComboBox(this)),
      table_(new QTableView(this)),
      exportTrace_(new QAction(tr("Export &trace…"), this)) {
    setObjectName(QStringLiteral("profileView"));
    note_->setObjectName(QStringLiteral("profileNote"));
    note_->setWordWrap(true);
    note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    arm_->setObjectName(QStringLiteral("profileTraceArm"));
    arm_->setToolTip(tr("The arm whose Chrome trace Export trace… writes"));
    arm_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    exportTrace_->setObjectName(QStringLiteral("exportTraceAction"));
    exportTrace_->setStatusTip(
        tr("Write the chosen arm's profiled iterations as a Chrome trace (.json) for "
           "chrome://tracing or Perfetto"));
    exportTrace_->setEnabled(false);
    connect(exportTrace_, &QAction::triggered, this, &ProfileView::exportTraceDialog);
    auto* button = new QToolButton(this);
    button->setDefaultAction(exportTrace_);
    button->setToolButtonStyle(Qt::ToolButtonTextOnly);

    table_->setObjectName(QStringLiteral("profileTable"));
    table_->setModel(model_);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    table_->horizontalHeader()->setStretchLastSection(false);
    table_->setSelectionBehavior(QAbstractItemView::SelectItems);
    table_->setWordWrap(false);
    // Operator names fit their contents (up to a third of the width); numbers theirs.
    connect(model_, &QAbstractItemModel::modelReset, table_, [this] {
        table_->resizeColumnsToContents();
        const int cap = std::max(160, table_->viewport()->width() / 3);
        if (table_->columnWidth(ProfileTableModel::Operator) > cap)
            table_->setColumnWidth(ProfileTableModel::Operator, cap);
    });
    // A cell of an arm's columns chooses that arm's trace.
    connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) {
        const int k = model_->armOfColumn(index.column());
        if (k >= 0) setTraceArm(k);
    });

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(note_, 1);
    bar->addWidget(new QLabel(tr("Trace of"), this));
    bar->addWidget(arm_);
    bar->addWidget(button);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(bar);
    layout->addWidget(table_, 1);
    guardWheel(this);
}

void ProfileView::setRun(const results::RunResult& run) {
    profiled_.clear();
    runName_ = run.preset.name;
    for (const auto& a : run.arms)
        if (a.profile.is_object()) {
            results::ArmResult p;
            p.name = a.name;
            p.profile = a.profile;
            profiled_.push_back(std::move(p));
        }
    model_->setRun(run);
    const int keep = arm_->currentIndex();
    arm_->clear();
    for (const auto& a : profiled_) arm_->addItem(QString::fromStdString(a.name));
    if (keep >= 0 && keep < arm_->count()) arm_->setCurrentIndex(keep);
    exportTrace_->setEnabled(hasProfile());
    if (!hasProfile()) {
        note_->clear();
        return;
    }
    const auto& first = profiled_.front().profile;
    QString note = tr("Self time per profiled iteration (ms) and calls per iteration, %1 "
                      "iterations at batch size %2, profiled after the measured blocks, never "
                      "timed.")
                       .arg(first.value("iters", 1))
                       .arg(first.value("batch_size", 1));
    if (profiled_.size() > 1)
        note += QLatin1Char(' ') + tr("Operators whose time differs most from %1 first.")
                                       .arg(QString::fromStdString(profiled_.front().name));
    note += QLatin1Char(' ') + tr("Hover an operator for its input shapes.");
    note_->setText(note);
}

bool ProfileView::hasProfile() const {
    return !profiled_.empty();
}

int ProfileView::traceArm() const {
    return arm_->currentIndex();
}

void ProfileView::setTraceArm(int k) {
    if (k >= 0 && k < arm_->count()) arm_->setCurrentIndex(k);
}

bool ProfileView::exportTrace(int k, const QString& path, QString* error) const {
    auto failed = [&](const QString& why) {
        if (error) *error = why;
        return false;
    };
    if (k < 0 || k >= int(profiled_.size())) return failed(tr("no profiled arm %1").arg(k));
    const std::string trace = results::profileTraceJson(profiled_[std::size_t(k)]);
    if (trace.empty())
        return failed(tr("%1's profile has no trace")
                          .arg(QString::fromStdString(profiled_[std::size_t(k)].name)));
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) ||
        f.write(trace.data(), qint64(trace.size())) != qint64(trace.size()) || !f.commit())
        return failed(tr("cannot write %1: %2").arg(path, f.errorString()));
    return true;
}

void ProfileView::exportTraceDialog() {
    const int k = traceArm();
    if (k < 0 || k >= int(profiled_.size())) return;
    QSettings s;
    QString folder = s.value(QLatin1String(kExportFolderKey)).toString();
    if (folder.isEmpty() || !QFileInfo(folder).isDir())
        folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (folder.isEmpty() || !QFileInfo(folder).isDir()) folder = QDir::homePath();
    const QString name = fileSafe(QString::fromStdString(runName_)) + QLatin1Char('-') +
                         fileSafe(QString::fromStdString(profiled_[std::size_t(k)].name)) +
                         QStringLiteral("-trace.json");
    QString path = QFileDialog::getSaveFileName(this, tr("Export Chrome trace"),
                                                QDir(folder).filePath(name),
                                                tr("Chrome trace (*.json)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    QString error;
    if (!exportTrace(k, path, &error)) {
        emit problem(tr("Cannot export the trace"), error);
        return;
    }
    s.setValue(QLatin1String(kExportFolderKey), QFileInfo(path).absolutePath());
}

}  // namespace pitlane::widgets
