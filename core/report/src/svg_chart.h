#pragma once
// A minimal SVG chart canvas: axes with round-number ticks, lines, bands, bars and a legend.
// Output sticks to SVG Tiny features (attributes, no CSS) so the browser and QSvgRenderer (PDF)
// draw the same picture.
#include <QColor>
#include <QPointF>
#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

namespace pitlane::report::detail {

// Round-number ticks covering [lo, hi] (about `target` of them).
std::vector<double> niceTicks(double lo, double hi, int target = 6);
// 1-2-5 ticks per decade for a log axis (plain niceTicks when [lo, hi] is under a decade).
std::vector<double> logTicks(double lo, double hi);
// Axis labels: the shortest exact form ("0.5", "250", "1e+04" never: 10000).
QString tickText(double v);
QString svgEscape(const QString& s);

class SvgChart {
public:
    SvgChart(int width, int height, QString title);

    // Data ranges; the plot maps them to the inner area. Call before drawing data.
    void setX(double lo, double hi, QString label, std::function<QString(double)> fmt = {});
    void setY(double lo, double hi, QString label, std::function<QString(double)> fmt = {});
    // Logarithmic x axis (lo > 0): for distributions whose tail is orders of magnitude out.
    void setXLog(double lo, double hi, QString label, std::function<QString(double)> fmt = {});
    // Categories on the y axis instead of numbers (horizontal bars): category i is centred on
    // y = n - i - 0.5, so the first is at the top.
    void setYCategories(const QStringList& names, const std::vector<QColor>& colors);
    // Left margin for long category names (bar charts).
    void setLeftMargin(int px) { left_ = px; }

    double px(double x) const;
    double py(double y) const;

    void polyline(const std::vector<QPointF>& pts, const QColor& c, double width = 1.5,
                  const QString& dash = {});
    // Filled area between lo(x) and hi(x) (same x for both).
    void band(const std::vector<QPointF>& lo, const std::vector<QPointF>& hi, const QColor& c,
              double opacity);
    void vline(double x, const QColor& c, const QString& dash, const QString& label = {});
    void rect(double x0, double y0, double x1, double y1, const QColor& fill, double opacity = 1);
    void dot(double x, double y, const QColor& c, double r = 1.6);
    void text(double xPx, double yPx, const QString& s, int size = 12,
              const QString& anchor = QStringLiteral("start"), const QColor& c = Qt::black,
              bool bold = false);
    void legend(const QStringList& names, const std::vector<QColor>& colors);
    void caption(const QString& s);  // a grey line under the plot
    // Draws the frame, grid and ticks; done automatically by svg().
    QString svg(bool withNamespace) const;

    int width() const { return w_; }
    int plotLeft() const { return left_; }
    int plotRight() const { return w_ - right_; }
    int plotTop() const { return top_; }
    int plotBottom() const { return h_ - bottom_; }

private:
    QString axes() const;

    int w_, h_;
    int left_ = 78, right_ = 24, top_ = 52, bottom_ = 58;
    QString title_, caption_;
    double x0_ = 0, x1_ = 1, y0_ = 0, y1_ = 1;
    QString xLabel_, yLabel_;
    std::function<QString(double)> xFmt_, yFmt_;
    bool xAxis_ = true;
    bool xLog_ = false;
    QStringList categories_;
    std::vector<QColor> categoryColors_;
    QStringList body_;
    QStringList legend_;
};

// The legend of a chart's arms: anything with an `index` (its colour) and a `name`.
template <typename Arm>
void armLegend(SvgChart& chart, const std::vector<Arm>& arms, QColor (*color)(int)) {
    QStringList names;
    std::vector<QColor> colors;
    for (const auto& a : arms) {
        names << a.name;
        colors.push_back(color(a.index));
    }
    chart.legend(names, colors);
}

}  // namespace pitlane::report::detail
