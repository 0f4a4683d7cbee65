#include "pitlane/widgets/plots/live_plot.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QMenu>
#include <QToolButton>

namespace pitlane::widgets {

LivePlot::LivePlot(const QString& title, QWidget* parent) : QCustomPlot(parent) {
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    setNoAntialiasingOnDrag(true);
    // Wide antialiased polylines of tens of thousands of points cost ~100 ms per replot; the
    // fast path draws them in a few ms (measured with 2 x 15 000 samples).
    setPlottingHint(QCP::phFastPolylines, true);
    // Four side by side still fit a 1280-pixel screen; two rows and the verdict fit 768 pixels.
    setMinimumSize(170, 120);
    plotLayout()->insertRow(0);
    title_ =
        new QCPTextElement(this, title, QFont(font().family(), font().pointSize(), QFont::Bold));
    plotLayout()->addElement(0, 0, title_);
    setToolTip(tr("Drag to pan, wheel to zoom; double-click (or Auto range) to follow the data "
                  "again. Right-click for the plot's options."));
    autoRange_ = new QToolButton(this);
    autoRange_->setObjectName(QStringLiteral("autoRange"));
    autoRange_->setText(tr("Auto range"));
    autoRange_->setToolTip(tr("You zoomed or panned, so the axes stay where you put them. Click "
                              "(or double-click the plot) to follow the data again."));
    autoRange_->setAutoRaise(true);
    autoRange_->hide();
    connect(autoRange_, &QToolButton::clicked, this, [this] {
        followData();
        replot(rpQueuedReplot);
    });
    // Axis labels too long for their axis (a rotated label on a short plot at 1366x768) are
    // elided to fit, after each layout and before drawing; the full text stays the tooltip.
    connect(this, &QCustomPlot::afterLayout, this, &LivePlot::fitAxisLabels);
    connect(this, &QCustomPlot::afterLayout, this, [this] { minimumHint_ = hint_ = QSize(); });
    restyle();
}

QSize LivePlot::minimumSizeHint() const {
    if (!minimumHint_.isValid()) minimumHint_ = QCustomPlot::minimumSizeHint();
    return minimumHint_;
}

QSize LivePlot::sizeHint() const {
    if (!hint_.isValid()) hint_ = QCustomPlot::sizeHint();
    return hint_;
}

void LivePlot::fitAxisLabels() {
    // The full label is kept on the axis; a label a subclass set since (log scale on/off) is
    // the new full one.
    static const char* kFull = "pitlaneFullLabel";
    static const char* kShown = "pitlaneShownLabel";
    QStringList full;
    for (QCPAxisRect* rect : axisRects()) {
        for (QCPAxis* axis : rect->axes()) {
            if (axis->property(kShown).toString() != axis->label() ||
                !axis->property(kFull).isValid())
                axis->setProperty(kFull, axis->label());
            const QString text = axis->property(kFull).toString();
            if (!axis->visible() || text.isEmpty()) continue;
            const bool vertical = axis->orientation() == Qt::Vertical;
            const int room = (vertical ? rect->height() : rect->width()) - 4;
            const QString shown =
                QFontMetrics(axis->labelFont()).elidedText(text, Qt::ElideRight, std::max(room, 0));
            if (shown != text) full << text;
            axis->setLabel(shown);
            axis->setProperty(kShown, shown);
        }
    }
    // The subclass's tooltip, then the elided labels in full.
    QString base = toolTip();
    if (!axesTip_.isEmpty() && base.endsWith(axesTip_)) base.chop(axesTip_.size());
    axesTip_ = full.isEmpty() ? QString()
                              : tr("\nAxes: %1").arg(full.join(QStringLiteral("; ")));
    if (base + axesTip_ != toolTip()) setToolTip(base + axesTip_);
}

void LivePlot::followData() {
    followData_ = true;
    autoRange_->hide();
    fitView();
}

void LivePlot::takeOverView() {
    if (!followData_) return;
    followData_ = false;
    placeAutoRangeButton();
    autoRange_->show();
    autoRange_->raise();
}

void LivePlot::placeAutoRangeButton() {
    // Top left, where the title row has room (the legend sits at its right).
    autoRange_->adjustSize();
    autoRange_->move(2 + cornerInUse(), 2);
}

void LivePlot::placeLegendInTitleRow() {
    // QCustomPlot's documented way out of the axis rect: the legend leaves the inset layout for
    // the title row, right of the title (no row of its own: the plots must fit 768 pixels).
    axisRect()->insetLayout()->take(legend);
    plotLayout()->take(title_);
    auto* row = new QCPLayoutGrid;
    plotLayout()->addElement(0, 0, row);
    row->addElement(0, 0, title_);
    row->addElement(0, 1, legend);
    row->setColumnStretchFactor(1, 0.01);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(3);
    legend->setMargins(QMargins(2, 0, 2, 0));
    legend->setRowSpacing(-2);
    legend->setColumnSpacing(6);
    legend->setIconSize(14, 8);
    legend->setIconTextPadding(3);
    legend->setBorderPen(Qt::NoPen);
    legend->setVisible(true);
}

int LivePlot::drawnPoints() const {
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

QColor LivePlot::overBase(const QColor& c, int alpha) const {
    const QColor b = baseColor();
    const float a = float(alpha) / 255.0f;
    return QColor::fromRgbF(b.redF() + a * (c.redF() - b.redF()), b.greenF() + a * (c.greenF() - b.greenF()),
                            b.blueF() + a * (c.blueF() - b.blueF()));
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
    const bool inset = legend->layout() == axisRect()->insetLayout();
    legend->setBorderPen(inset ? QPen(faintColor()) : QPen(Qt::NoPen));
    legend->setTextColor(textColor());
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * (inset ? 1.0 : 0.9));
    legend->setFont(small);
}

void LivePlot::changeEvent(QEvent* event) {
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)
        minimumHint_ = hint_ = QSize();
    if (event->type() == QEvent::PaletteChange) {
        restyle();
        replot(rpQueuedReplot);
    }
    QCustomPlot::changeEvent(event);
}

void LivePlot::mousePressEvent(QMouseEvent* event) {
    pressPos_ = event->pos();  // a click alone does not take the view over; a drag does
    QCustomPlot::mousePressEvent(event);
}

void LivePlot::mouseMoveEvent(QMouseEvent* event) {
    if ((event->buttons() & Qt::LeftButton) &&
        (event->pos() - pressPos_).manhattanLength() >= QApplication::startDragDistance())
        takeOverView();
    QCustomPlot::mouseMoveEvent(event);
}

void LivePlot::wheelEvent(QWheelEvent* event) {
    takeOverView();
    QCustomPlot::wheelEvent(event);
}

void LivePlot::mouseDoubleClickEvent(QMouseEvent* event) {
    followData();
    replot(rpQueuedReplot);
    QCustomPlot::mouseDoubleClickEvent(event);
}

void LivePlot::resizeEvent(QResizeEvent* event) {
    QCustomPlot::resizeEvent(event);
    placeAutoRangeButton();
}

void LivePlot::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    QAction* autoRange = menu.addAction(tr("Auto range (double-click)"), this, [this] {
        followData();
        replot(rpQueuedReplot);
    });
    autoRange->setEnabled(!followData_);
    addMenuActions(&menu);
    menu.exec(event->globalPos());
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

void LivePlot::elideCategoryTicksAfterLayout(std::function<QStringList()> names) {
    connect(this, &QCustomPlot::afterLayout, this, [this, names = std::move(names)] {
        auto text = qSharedPointerDynamicCast<QCPAxisTickerText>(xAxis->ticker());
        const QStringList all = names();
        if (!text || all.isEmpty()) return;
        const QFontMetrics fm(xAxis->tickLabelFont());
        const double span = xAxis->range().size();
        const int room = span > 0 ? int(axisRect()->width() / span) - 8 : 0;
        bool changed = false;
        for (int i = 0; i < all.size(); ++i) {
            const QString shown = fm.elidedText(all[i], Qt::ElideRight, std::max(room, 24));
            if (text->ticks().value(double(i + 1)) == shown) continue;
            text->addTick(double(i + 1), shown);
            changed = true;
        }
        if (changed) replot(rpQueuedReplot);
    });
}

}  // namespace pitlane::widgets
