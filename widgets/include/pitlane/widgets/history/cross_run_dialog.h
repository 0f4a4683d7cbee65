#pragma once
// Picks an arm of one stored run and an arm of another (or the same) run to compare, e.g. last
// week's baseline against today's build. The first pick is the baseline of the comparison.
#include "pitlane/store/run_store.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;

namespace pitlane::widgets {

struct CrossRunChoice {
    qint64 runX = 0;  // the baseline side
    int armX = 0;
    qint64 runY = 0;
    int armY = 0;
};

class CrossRunDialog : public QDialog {
    Q_OBJECT
public:
    // `runs` as listed by the store; the pickers start on runX / runY (0: the newest runs).
    CrossRunDialog(const QList<store::RunInfo>& runs, qint64 runX, qint64 runY,
                   QWidget* parent = nullptr);

    CrossRunChoice choice() const;
    // Select a run and arm on one side (tests, and the panel's preselection).
    void select(bool baselineSide, qint64 runId, int arm);

private:
    void fillArms(QComboBox* runPicker, QComboBox* armPicker);
    void validate();

    QList<store::RunInfo> runs_;
    QComboBox *runX_, *armX_, *runY_, *armY_;
    QLabel* problem_;
    QDialogButtonBox* buttons_;
};

// "#12  2024-05-01 14:03  gui test  (label)": how a run is named in pickers.
QString runPickerText(const store::RunInfo& run);

}  // namespace pitlane::widgets
