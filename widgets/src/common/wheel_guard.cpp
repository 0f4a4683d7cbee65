#include "pitlane/widgets/common/wheel_guard.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QWidget>

namespace pitlane::widgets {

namespace {
class WheelGuard : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* event) override {
        auto* w = qobject_cast<QWidget*>(watched);
        if (event->type() != QEvent::Wheel || !w || w->hasFocus()) return false;
        // Ignored and filtered: QApplication passes it on to the parents (the scroll area).
        event->ignore();
        return true;
    }
};

WheelGuard* guard() {
    static auto* g = new WheelGuard;  // one for the process, like the controls' style
    return g;
}

void protect(QWidget* control) {
    control->setFocusPolicy(Qt::StrongFocus);
    control->removeEventFilter(guard());  // once, however often guardWheel is called
    control->installEventFilter(guard());
}
}  // namespace

void guardWheel(QWidget* root) {
    for (auto* c : root->findChildren<QComboBox*>()) protect(c);
    for (auto* s : root->findChildren<QAbstractSpinBox*>()) protect(s);
}

}  // namespace pitlane::widgets
