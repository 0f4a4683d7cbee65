#include "pitlane/widgets/common/wrapping_label.h"

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

void WrappingLabel::showEvent(QShowEvent* event) {
    QLabel::showEvent(event);
    fitHeight();
}

void WrappingLabel::fitHeight() {
    // A hidden label (a tab page not shown yet) has no width worth wrapping at: the
    // heightForWidth of its stale, narrow width made a never-seen Advice page ask for 256 px,
    // and a QTabWidget asks for its tallest page, so the window grew past a 768-pixel screen
    // after a run (issue 27). It asks again when shown.
    if (!isVisible()) {
        if (minimumHeight() != 0) setMinimumHeight(0);
        return;
    }
    // An empty label takes no room; otherwise exactly the wrapped text's height at this width.
    int h = text().isEmpty() ? 0 : heightForWidth(width());
    // QLabel::heightForWidth never answers less than the minimum height: when it answers just
    // that, ask again without it, or a long text set while the label was narrow (hidden, before
    // the first layout) would keep that tall height at every later width.
    if (h > 0 && h == minimumHeight()) {
        setMinimumHeight(0);
        h = heightForWidth(width());
    }
    if (h >= 0 && h != minimumHeight()) setMinimumHeight(h);
}

}  // namespace pitlane::widgets
