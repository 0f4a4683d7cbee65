#include "pitlane/widgets/live_plot.h"

#include "pitlane/widgets/arm_palette.h"

namespace pitlane::widgets {

LivePlot::LivePlot(const QString& title, QWidget* parent) : QCustomPlot(parent) {
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    setNoAntialiasingOnDrag(true);
    // Wide antialiased polylines of tens of thousands of points cost ~100 ms per replot; the
    // fast path draws them in a few ms (measured with 2 x 15 000 samples).
    setPlottingHint(QCP::phFastPolylines, true);
    setMinimumSize(170, 140);  // four side by side still fit a 1280-pixel screen
    plotLayout()->insertRow(0);
    title_ =
        new QCPTextElement(this, title, QFont(font().family(), font().pointSize(), QFont::Bold));
    plotLayout()->addElement(0, 0, title_);
    setToolTip(tr("Drag to pan, wheel to zoom, double-click to follow the data again"));
    restyle();
}

int LivePlot::dataPoints() const {
    int n = 0;
    auto* self = const_cast<LivePlot*>(this);  // QCustomPlot has no const accessors
    for (int i = 0; i < plottableCount(); ++i) {
        auto* p = self->plottable(i);
        if (p->property("pitlaneDecoration").toBool()) continue;  // e.g. activity bands
        if (auto* g = qobject_cast<QCPGraph*>(p))
            n += g->dataCount();
        else if (auto* b = qobject_cast<QCPBars*>(p))
            n += b->dataCount();
    }
    return n;
}

void LivePlot::setTitle(const QString& title) {
    title_->setText(title);
}

QColor LivePlot::textColor() const {
    return palette().color(QPalette::WindowText);
}
QColor LivePlot::baseColor() const {
    return palette().color(QPalette::Base);
}

QColor LivePlot::faintColor() const {
    const QColor t = textColor(), b = baseColor();
    // 22 % of the way from background to text: visible but quiet in both palettes.
    return QColor::fromRgbF(b.redF() + 0.22f * (t.redF() - b.redF()),
                            b.greenF() + 0.22f * (t.greenF() - b.greenF()),
                            b.blueF() + 0.22f * (t.blueF() - b.blueF()));
}

void LivePlot::styleAxisRect(QCPAxisRect* rect) {
    const QColor text = textColor(), grid = faintColor();
    for (QCPAxis* axis : rect->axes()) {
        axis->setBasePen(QPen(text, 1));
        axis->setTickPen(QPen(text, 1));
        axis->setSubTickPen(QPen(text, 1));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
        axis->grid()->setZeroLinePen(QPen(grid, 1));
        axis->grid()->setSubGridVisible(false);
    }
    rect->setBackground(QBrush(baseColor()));
}

void LivePlot::restyle() {
    setBackground(QBrush(baseColor()));
    for (QCPAxisRect* rect : axisRects()) styleAxisRect(rect);
    if (title_) title_->setTextColor(textColor());
    legend->setBrush(QBrush(baseColor()));
    legend->setBorderPen(QPen(faintColor()));
    legend->setTextColor(textColor());
    legend->setFont(font());
}

void LivePlot::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        restyle();
        replot(rpQueuedReplot);
    }
    QCustomPlot::changeEvent(event);
}

void LivePlot::mousePressEvent(QMouseEvent* event) {
    followData_ = false;
    QCustomPlot::mousePressEvent(event);
}

void LivePlot::wheelEvent(QWheelEvent* event) {
    followData_ = false;
    QCustomPlot::wheelEvent(event);
}

void LivePlot::mouseDoubleClickEvent(QMouseEvent* event) {
    followData_ = true;
    fitView();
    replot(rpQueuedReplot);
    QCustomPlot::mouseDoubleClickEvent(event);
}

void LivePlot::fitToData(bool yFromZero) {
    if (!followData_) return;
    rescaleAxes(true);
    for (QCPAxisRect* rect : axisRects()) {
        for (QCPAxis* axis : rect->axes(QCPAxis::atLeft | QCPAxis::atRight)) {
            if (!axis->visible() && axis->axisType() == QCPAxis::atRight) continue;
            QCPRange r = axis->range();
            const double pad = std::max(r.size() * 0.06, std::abs(r.upper) * 1e-3 + 1e-12);
            r.lower = yFromZero && r.lower >= 0 ? 0 : r.lower - pad;
            r.upper += pad;
            axis->setRange(r);
        }
    }
}

}  // namespace pitlane::widgets
