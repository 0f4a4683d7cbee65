#include "svg_chart.h"

#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace pitlane::report::detail {

namespace {
QString num(double v) {
    return QString::number(v, 'f', 1);
}
QString col(const QColor& c) {
    return c.name(QColor::HexRgb);
}
}  // namespace

QString tickText(double v) {
    return QString::number(v, 'f', 6).remove(QRegularExpression("\\.?0+$"));
}

std::vector<double> logTicks(double lo, double hi) {
    if (!(lo > 0) || hi / lo < 10) return niceTicks(lo, hi, 6);
    std::vector<double> t;
    for (double dec = std::pow(10.0, std::floor(std::log10(lo))); dec <= hi; dec *= 10)
        for (double m : {1.0, 2.0, 5.0})
            if (m * dec >= lo * 0.999 && m * dec <= hi * 1.001) t.push_back(m * dec);
    return t;
}

std::vector<double> niceTicks(double lo, double hi, int target) {
    std::vector<double> t;
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
    const double raw = (hi - lo) / std::max(1, target);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (raw <= m * mag) {
            step = m * mag;
            break;
        }
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
        t.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    return t;
}

QString svgEscape(const QString& s) {
    QString o = s;
    o.replace('&', QLatin1String("&amp;"));
    o.replace('<', QLatin1String("&lt;"));
    o.replace('>', QLatin1String("&gt;"));
    o.replace('"', QLatin1String("&quot;"));
    return o;
}

SvgChart::SvgChart(int width, int height, QString title)
    : w_(width), h_(height), title_(std::move(title)) {}

void SvgChart::setX(double lo, double hi, QString label, std::function<QString(double)> fmt) {
    x0_ = lo;
    x1_ = hi > lo ? hi : lo + 1;
    xLabel_ = std::move(label);
    xFmt_ = fmt ? std::move(fmt) : tickText;
}

void SvgChart::setY(double lo, double hi, QString label, std::function<QString(double)> fmt) {
    y0_ = lo;
    y1_ = hi > lo ? hi : lo + 1;
    yLabel_ = std::move(label);
    yFmt_ = fmt ? std::move(fmt) : tickText;
}

void SvgChart::setYCategories(const QStringList& names, const std::vector<QColor>& colors) {
    categories_ = names;
    categoryColors_ = colors;
    y0_ = 0;
    y1_ = std::max<double>(1, names.size());
}

void SvgChart::setXLog(double lo, double hi, QString label, std::function<QString(double)> fmt) {
    setX(lo > 0 ? lo : 1e-9, hi, std::move(label), std::move(fmt));
    xLog_ = true;
}

double SvgChart::px(double x) const {
    if (xLog_) {
        const double v = std::log10(std::max(x, x0_));
        return left_ +
               (v - std::log10(x0_)) / (std::log10(x1_) - std::log10(x0_)) * (plotRight() - left_);
    }
    return left_ + (x - x0_) / (x1_ - x0_) * (plotRight() - left_);
}
double SvgChart::py(double y) const {
    const double v = std::clamp(y, y0_, y1_);  // values off the chart sit on its edge
    return plotBottom() - (v - y0_) / (y1_ - y0_) * (plotBottom() - top_);
}

void SvgChart::polyline(const std::vector<QPointF>& pts, const QColor& c, double width,
                        const QString& dash) {
    if (pts.empty()) return;
    QString d;
    d.reserve(int(pts.size()) * 14);
    for (const auto& p : pts) d += num(px(p.x())) + ',' + num(py(p.y())) + ' ';
    body_ << QStringLiteral(
                 "<polyline fill=\"none\" stroke=\"%1\" stroke-width=\"%2\" "
                 "stroke-linejoin=\"round\"%3 points=\"%4\"/>")
                 .arg(col(c), QString::number(width),
                      dash.isEmpty() ? QString()
                                     : QStringLiteral(" stroke-dasharray=\"%1\"").arg(dash),
                      d.trimmed());
}

void SvgChart::band(const std::vector<QPointF>& lo, const std::vector<QPointF>& hi, const QColor& c,
                    double opacity) {
    if (lo.empty() || lo.size() != hi.size()) return;
    QString d;
    for (const auto& p : hi) d += num(px(p.x())) + ',' + num(py(p.y())) + ' ';
    for (auto it = lo.rbegin(); it != lo.rend(); ++it)
        d += num(px(it->x())) + ',' + num(py(it->y())) + ' ';
    body_ << QStringLiteral(
                 "<polygon fill=\"%1\" fill-opacity=\"%2\" stroke=\"none\" "
                 "points=\"%3\"/>")
                 .arg(col(c), QString::number(opacity), d.trimmed());
}

void SvgChart::vline(double x, const QColor& c, const QString& dash, const QString& label) {
    const double X = px(x);
    body_ << QStringLiteral(
                 "<line x1=\"%1\" y1=\"%2\" x2=\"%1\" y2=\"%3\" stroke=\"%4\" "
                 "stroke-width=\"1\" stroke-dasharray=\"%5\"/>")
                 .arg(num(X), num(top_), num(plotBottom()), col(c), dash);
    if (!label.isEmpty())
        text(X + 3, top_ + 11, label, 10, QStringLiteral("start"), QColor(0x77, 0x77, 0x77));
}

void SvgChart::rect(double x0, double y0, double x1, double y1, const QColor& fill,
                    double opacity) {
    const double X0 = std::min(px(x0), px(x1)), X1 = std::max(px(x0), px(x1));
    const double Y0 = std::min(py(y0), py(y1)), Y1 = std::max(py(y0), py(y1));
    body_ << QStringLiteral(
                 "<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" fill=\"%5\" "
                 "fill-opacity=\"%6\"/>")
                 .arg(num(X0), num(Y0), num(X1 - X0), num(Y1 - Y0), col(fill),
                      QString::number(opacity));
}

void SvgChart::dot(double x, double y, const QColor& c, double r) {
    body_ << QStringLiteral("<circle cx=\"%1\" cy=\"%2\" r=\"%3\" fill=\"%4\"/>")
                 .arg(num(px(x)), num(py(y)), QString::number(r), col(c));
}

void SvgChart::text(double xPx, double yPx, const QString& s, int size, const QString& anchor,
                    const QColor& c, bool bold) {
    body_ << QStringLiteral(
                 "<text x=\"%1\" y=\"%2\" font-family=\"DejaVu Sans, Arial, "
                 "sans-serif\" font-size=\"%3\" text-anchor=\"%4\" fill=\"%5\"%6>%7</text>")
                 .arg(num(xPx), num(yPx), QString::number(size), anchor, col(c),
                      bold ? QStringLiteral(" font-weight=\"bold\"") : QString(), svgEscape(s));
}

void SvgChart::legend(const QStringList& names, const std::vector<QColor>& colors) {
    // One row above the plot, right-aligned, so it never hides data.
    double x = plotRight();
    QStringList items;
    for (int i = int(names.size()) - 1; i >= 0; --i) {
        const double tw = 7.2 * names[i].size() + 26;
        x -= tw;
        items.prepend(
            QStringLiteral("<rect x=\"%1\" y=\"%2\" width=\"14\" height=\"10\" fill=\"%3\"/>"
                           "<text x=\"%4\" y=\"%5\" font-family=\"DejaVu Sans, Arial, sans-serif\" "
                           "font-size=\"12\" fill=\"#222222\">%6</text>")
                .arg(num(x), num(top_ - 20), col(colors[std::size_t(i)]), num(x + 18),
                     num(top_ - 11), svgEscape(names[i])));
    }
    legend_ = items;
}

void SvgChart::caption(const QString& s) {
    caption_ = s;
}

QString SvgChart::axes() const {
    QStringList o;
    const QString grid = QStringLiteral("#e4e4e4"), ink = QStringLiteral("#555555");
    const QString font = QStringLiteral("font-family=\"DejaVu Sans, Arial, sans-serif\"");
    for (int i = 0; i < categories_.size(); ++i) {
        const double Y = py(categories_.size() - i - 0.5);
        const QColor c = std::size_t(i) < categoryColors_.size() ? categoryColors_[std::size_t(i)]
                                                                 : QColor(Qt::black);
        o << QStringLiteral(
                 "<text x=\"%1\" y=\"%2\" %3 font-size=\"13\" text-anchor=\"end\" "
                 "font-weight=\"bold\" fill=\"%4\">%5</text>")
                 .arg(num(left_ - 8), num(Y + 5), font, col(c), svgEscape(categories_[i]));
    }
    for (double t : categories_.isEmpty() ? niceTicks(y0_, y1_, 5) : std::vector<double>{}) {
        const double Y = plotBottom() - (t - y0_) / (y1_ - y0_) * (plotBottom() - top_);
        o << QStringLiteral("<line x1=\"%1\" y1=\"%2\" x2=\"%3\" y2=\"%2\" stroke=\"%4\"/>")
                 .arg(num(left_), num(Y), num(plotRight()), grid)
          << QStringLiteral(
                 "<text x=\"%1\" y=\"%2\" %3 font-size=\"11\" text-anchor=\"end\" "
                 "fill=\"%4\">%5</text>")
                 .arg(num(left_ - 6), num(Y + 4), font, ink, svgEscape(yFmt_(t)));
    }
    if (xAxis_)
        for (double t : xLog_ ? logTicks(x0_, x1_) : niceTicks(x0_, x1_, 8)) {
            const double X = px(t);
            if (!categories_.isEmpty())  // bar charts: vertical grid lines for the value axis
                o << QStringLiteral("<line x1=\"%1\" y1=\"%2\" x2=\"%1\" y2=\"%3\" stroke=\"%4\"/>")
                         .arg(num(X), num(top_), num(plotBottom()), grid);
            o << QStringLiteral("<line x1=\"%1\" y1=\"%2\" x2=\"%1\" y2=\"%3\" stroke=\"%4\"/>")
                     .arg(num(X), num(plotBottom()), num(plotBottom() + 5), ink)
              << QStringLiteral(
                     "<text x=\"%1\" y=\"%2\" %3 font-size=\"11\" text-anchor=\"middle\" "
                     "fill=\"%4\">%5</text>")
                     .arg(num(X), num(plotBottom() + 18), font, ink, svgEscape(xFmt_(t)));
        }
    o << QStringLiteral(
             "<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" fill=\"none\" "
             "stroke=\"#999999\"/>")
             .arg(num(left_), num(top_), num(plotRight() - left_), num(plotBottom() - top_));
    o << QStringLiteral(
             "<text x=\"%1\" y=\"%2\" %3 font-size=\"12\" text-anchor=\"middle\" "
             "fill=\"%4\">%5</text>")
             .arg(num((left_ + plotRight()) / 2.0), num(plotBottom() + 36), font, ink,
                  svgEscape(xLabel_));
    // Y label above the axis, not rotated: QSvgRenderer and browsers agree on it.
    o << QStringLiteral("<text x=\"%1\" y=\"%2\" %3 font-size=\"12\" fill=\"%4\">%5</text>")
             .arg(num(left_), num(top_ - 8), font, ink, svgEscape(yLabel_));
    return o.join('\n');
}

QString SvgChart::svg(bool withNamespace) const {
    QString s = QStringLiteral(
                    "<svg %1width=\"%2\" height=\"%3\" viewBox=\"0 0 %2 %3\" "
                    "version=\"1.2\" baseProfile=\"tiny\">\n")
                    .arg(withNamespace ? QStringLiteral("xmlns=\"http://www.w3.org/2000/svg\" ")
                                       : QString())
                    .arg(w_)
                    .arg(h_);
    s += QStringLiteral("<rect x=\"0\" y=\"0\" width=\"%1\" height=\"%2\" fill=\"#ffffff\"/>\n")
             .arg(w_)
             .arg(h_);
    s += QStringLiteral(
             "<text x=\"%1\" y=\"20\" font-family=\"DejaVu Sans, Arial, sans-serif\" "
             "font-size=\"15\" font-weight=\"bold\" fill=\"#222222\">%2</text>\n")
             .arg(left_)
             .arg(svgEscape(title_));
    s += axes() + '\n';
    s += body_.join('\n') + '\n';
    s += legend_.join('\n') + '\n';
    if (!caption_.isEmpty())
        s += QStringLiteral(
                 "<text x=\"%1\" y=\"%2\" font-family=\"DejaVu Sans, Arial, "
                 "sans-serif\" font-size=\"11\" fill=\"#777777\">%3</text>\n")
                 .arg(left_)
                 .arg(h_ - 6)
                 .arg(svgEscape(caption_));
    s += QStringLiteral("</svg>");
    return s;
}

}  // namespace pitlane::report::detail
