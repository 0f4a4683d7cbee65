#pragma once
// Base of every live plot: a QCustomPlot that is restyled from the widget palette (light or dark),
// zooms and pans with the mouse, and follows new data (auto range) until the user drags or
// wheels it; a plain click changes nothing. While the view is the user's, an "Auto range" button
// shows in the corner; it, a double-click or the context menu return to auto range, and so does
// every new run (PlotPanel::beginRun / showRun call followData()). Subclasses pull what changed
// from the live RunResult in refresh(); the PlotPanel decides when (batched on a timer, never per
// event).
#include "pitlane/results/run_result.h"

#include <qcustomplot.h>

#include <functional>

class QMenu;
class QToolButton;

namespace pitlane::widgets {

class LivePlot : public QCustomPlot {
    Q_OBJECT
public:
    LivePlot(const QString& title, QWidget* parent = nullptr);

    // A new run starts (or the window shows a finished one): drop data, make graphs per arm.
    virtual void resetRun(const results::RunResult& run) = 0;
    // Pull what is new from the live result; the caller replots afterwards.
    virtual void refresh(const results::RunResult& run) = 0;

    // Number of data points over every graph and bar chart, decorations such as activity bands
    // excluded (tests use it). A plot that draws a decimated series counts the samples it
    // stands for (LatencyTimelinePlot); drawnPoints() counts what it draws.
    virtual int dataPoints() const { return drawnPoints(); }
    int drawnPoints() const;
    bool followsData() const { return followData_; }
    // Back to auto range: the view follows the data again (new run, "Auto range", double-click).
    void followData();
    QToolButton* autoRangeButton() const { return autoRange_; }
    // QCustomPlot's hints measure every text of the plot's layout (title, legend, tick labels);
    // the window's layout asks for them at each relayout (a status label's new text). Kept
    // until the plot's next layout.
    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

protected:
    // Bar charts with one category tick per bar at x = 1, 2, ... (throughput, energy): after each
    // layout every name is elided to its bar's share of the axis (the whole names belong in the
    // tooltip). `names` is asked at each layout; an empty list leaves the ticks alone.
    void elideCategoryTicksAfterLayout(std::function<QStringList()> names);
    void changeEvent(QEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    // Actions of the right-click menu after "Auto range" (e.g. the timeline's log scale).
    virtual void addMenuActions(QMenu* menu) { Q_UNUSED(menu); }
    // Pixels of the top-left corner a subclass's own buttons take (the Auto range button goes
    // right of them).
    virtual int cornerInUse() const { return 0; }

    // Colours for axes, grid, legend and title from the current palette; subclasses restyle
    // their own items afterwards.
    virtual void restyle();
    // Rescale to the data if the user has not taken over the view. `yFromZero` keeps 0 in view.
    void fitToData(bool yFromZero = false);
    // What "follow the data" means for this plot (double-click restores it).
    virtual void fitView() { fitToData(); }
    void styleAxisRect(QCPAxisRect* rect);
    // The legend in the title row, right of the title, keys side by side: never over the data.
    void placeLegendInTitleRow();
    void setTitle(const QString& title);
    QColor textColor() const;
    QColor faintColor() const;  // grid lines, block boundaries
    // `c` at `alpha` (0-255) over the plot's background, as an opaque colour: what a shade on
    // the background layer looks like, drawn without blending. Qt 6.4's raster engine hands
    // every translucent fill of 96 or more spans to its thread pool and waits for it (a few
    // context switches a fill, each a chance for a busy worker to take the core); opaque fills
    // stay on the calling thread.
    QColor overBase(const QColor& c, int alpha) const;
    QColor baseColor() const;

    QCPTextElement* title_ = nullptr;

private:
    void fitAxisLabels();  // elide labels longer than their axis (afterLayout)
    void takeOverView();  // the user dragged or zoomed: stop following the data
    void placeAutoRangeButton();

    bool followData_ = true;
    QPoint pressPos_;
    QToolButton* autoRange_ = nullptr;
    QString axesTip_;  // the tooltip's tail naming elided labels in full
    mutable QSize minimumHint_, hint_;  // invalid: measure again
};

// Latency is plotted in milliseconds everywhere (ns / 1e6).
inline double toMs(double ns) {
    return ns / 1e6;
}

}  // namespace pitlane::widgets
