#include "pitlane/widgets/common/wrapping_label.h"

#include <algorithm>

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
    if (h >= 0 && h != minimumHeight()) {
        setMinimumHeight(h);
        emit heightFitted();
    }
}

CappedLabel::CappedLabel(int maxLines, QWidget* parent)
    : QScrollArea(parent), label_(new WrappingLabel), maxLines_(std::max(maxLines, 1)) {
    setWidget(label_);
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    label_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    connect(label_, &WrappingLabel::heightFitted, this, [this] {
        // The label is the text's height; the area is that up to its cap.
        setFixedHeight(cappedHeight());
        updateGeometry();
    });
    setFixedHeight(0);
}

void CappedLabel::setWrappedText(const QString& text) {
    label_->setWrappedText(text);
    setFixedHeight(cappedHeight());
}

int CappedLabel::cappedHeight() const {
    if (label_->text().isEmpty()) return 0;
    const int cap = maxLines_ * label_->fontMetrics().lineSpacing() + 2 * frameWidth();
    return std::min(label_->minimumHeight() + 2 * frameWidth(), cap);
}

QSize CappedLabel::sizeHint() const {
    return {QScrollArea::sizeHint().width(), cappedHeight()};
}

QSize CappedLabel::minimumSizeHint() const {
    return {QScrollArea::minimumSizeHint().width(), cappedHeight()};
}

}  // namespace pitlane::widgets
