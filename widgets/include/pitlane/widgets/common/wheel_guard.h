#pragma once
// Scrolling a form must not change it: combo boxes and spin boxes under `root` take the mouse
// wheel only once they have the focus (click or Tab: Qt::StrongFocus); otherwise the wheel goes
// on to the scroll area around them. (Scrolling the arm editor used to flip memory_format to
// channels_last on the way down.)
class QWidget;

namespace pitlane::widgets {

// Every QComboBox and QAbstractSpinBox under `root` now (call again for controls added later).
void guardWheel(QWidget* root);

}  // namespace pitlane::widgets
