#include "pitlane/widgets/history/cross_run_dialog.h"

#include "pitlane/widgets/common/arm_palette.h"
#include "pitlane/widgets/history/history_model.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace pitlane::widgets {

QString runPickerText(const store::RunInfo& run) {
    QString text =
        QStringLiteral("#%1  %2  %3").arg(run.id).arg(localDateText(run.startedAt), run.name);
    if (!run.label.isEmpty()) text += QStringLiteral("  (%1)").arg(run.label);
    if (run.baseline) text += QStringLiteral("  ★");
    return text;
}

CrossRunDialog::CrossRunDialog(const QList<store::RunInfo>& runs, qint64 runX, qint64 runY,
                               QWidget* parent)
    : QDialog(parent),
      runs_(runs),
      runX_(new QComboBox),
      armX_(new QComboBox),
      runY_(new QComboBox),
      armY_(new QComboBox),
      problem_(new QLabel),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel)) {
    setWindowTitle(tr("Compare arms of two runs"));
    runX_->setObjectName(QStringLiteral("runX"));
    armX_->setObjectName(QStringLiteral("armX"));
    runY_->setObjectName(QStringLiteral("runY"));
    armY_->setObjectName(QStringLiteral("armY"));
    for (auto* picker : {runX_, runY_}) {
        for (const auto& r : runs_) picker->addItem(runPickerText(r), r.id);
        picker->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    }
    buttons_->button(QDialogButtonBox::Ok)->setText(tr("Compare"));
    connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(runX_, &QComboBox::currentIndexChanged, this, [this] { fillArms(runX_, armX_); });
    connect(runY_, &QComboBox::currentIndexChanged, this, [this] { fillArms(runY_, armY_); });
    connect(armX_, &QComboBox::currentIndexChanged, this, &CrossRunDialog::validate);
    connect(armY_, &QComboBox::currentIndexChanged, this, &CrossRunDialog::validate);

    auto* form = new QFormLayout;
    form->addRow(tr("Baseline run:"), runX_);
    form->addRow(tr("Baseline arm:"), armX_);
    form->addRow(tr("Compared run:"), runY_);
    form->addRow(tr("Compared arm:"), armY_);
    auto* note = new QLabel(
        tr("Arms of different runs were not interleaved: anything that changed on the machine "
           "between the runs (load, clocks, temperature, a new build) is part of the difference."));
    note->setWordWrap(true);
    problem_->setObjectName(QStringLiteral("problem"));
    problem_->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(problem_);
    layout->addWidget(buttons_);

    // Start on the requested runs, else the two newest (the older one as the baseline).
    const qint64 y = runY ? runY : (runs_.isEmpty() ? 0 : runs_.first().id);
    const qint64 x = runX ? runX : (runs_.size() > 1 ? runs_[1].id : y);
    select(true, x, 0);
    select(false, y, x == y ? 1 : 0);
    validate();
}

void CrossRunDialog::select(bool baselineSide, qint64 runId, int arm) {
    QComboBox* runPicker = baselineSide ? runX_ : runY_;
    QComboBox* armPicker = baselineSide ? armX_ : armY_;
    const int row = runPicker->findData(runId);
    if (row >= 0) runPicker->setCurrentIndex(row);
    fillArms(runPicker, armPicker);  // also when the index did not change
    if (arm >= 0 && arm < armPicker->count()) armPicker->setCurrentIndex(arm);
    validate();
}

void CrossRunDialog::fillArms(QComboBox* runPicker, QComboBox* armPicker) {
    const qint64 id = runPicker->currentData().toLongLong();
    const QSignalBlocker block(armPicker);
    armPicker->clear();
    for (const auto& r : runs_)
        if (r.id == id)
            for (int i = 0; i < r.arms.size(); ++i) {
                const QString status = i < r.armStatuses.size() ? r.armStatuses[i] : QString();
                armPicker->addItem(armSwatch(i),
                                   status == QLatin1String(results::kOk) || status.isEmpty()
                                       ? r.arms[i]
                                       : QStringLiteral("%1 (%2)").arg(r.arms[i], status),
                                   i);
            }
    validate();
}

CrossRunChoice CrossRunDialog::choice() const {
    return {runX_->currentData().toLongLong(), armX_->currentIndex(),
            runY_->currentData().toLongLong(), armY_->currentIndex()};
}

void CrossRunDialog::validate() {
    const auto c = choice();
    QString why;
    if (c.runX == 0 || c.runY == 0 || c.armX < 0 || c.armY < 0)
        why = tr("Pick a run and an arm on both sides.");
    else if (c.runX == c.runY && c.armX == c.armY)
        why = tr("That is the same arm twice: pick another arm or run.");
    problem_->setText(why);
    problem_->setVisible(!why.isEmpty());
    buttons_->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
}

}  // namespace pitlane::widgets
