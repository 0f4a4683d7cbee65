#include "pitlane/widgets/wrapping_label.h"

namespace pitlane::widgets {

WrappingLabel::WrappingLabel(QWidget* parent) : QLabel(parent) {
    setWordWrap(true);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
}

void WrappingLabel::setWrappedText(const QString& text) {
    setText(text);
    fitHeight();
}

void WrappingLabel::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    fitHeight();
}

void WrappingLabel::fitHeight() {
    // An empty label takes no room; otherwise exactly the wrapped text's height at this width.
    const int h = text().isEmpty() ? 0 : heightForWidth(width());
    if (h >= 0 && h != minimumHeight()) setMinimumHeight(h);
}

}  // namespace pitlane::widgets
