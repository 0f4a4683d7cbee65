#pragma once
// Shared by the GUI tests (issue 44, "readable at 1366x768 in every state"): what a user cannot
// read in the real window at a given size — a plot's title or axis label cut, tick labels
// running into each other, a plot squashed below a readable size, the window outgrowing the
// screen, the results tabs moving, a table cut with nothing saying it scrolls, a control cut at
// the setup column's edge — and a PNG of the window for docs/screenshots/ when
// PITLANE_SCREENSHOT_DIR is set.
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/widgets/plots/live_plot.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "pitlane/widgets/setup/arm_editor.h"
#include "pitlane/widgets/setup/knob_form.h"
#include "pitlane/widgets/setup/setup_panel.h"

#include <QComboBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>

namespace pitlane::testing {

// A plot smaller than this is not read, whatever its labels say: the distribution plot at
// 60 px high. Width: a title and three tick labels.
inline constexpr int kMinPlotHeight = 140;
inline constexpr int kMinPlotWidth = 220;

// Every problem with the text the user reads on one plot: its title cut (in either direction),
// or an axis label that does not fit its axis or lost the part before its first " · ".
inline QStringList textProblems(widgets::LivePlot* plot) {
    QStringList out;
    const QString name = plot->objectName();
    const QRect inside = plot->rect();
    for (QCPLayoutElement* e : plot->plotLayout()->elements(true)) {
        auto* title = qobject_cast<QCPTextElement*>(e);
        if (!title || title->text().isEmpty()) continue;
        const QFontMetrics fm(title->font());
        const QRect r = title->rect();
        if (!inside.contains(r))
            out << QStringLiteral("%1: title rect %2,%3 %4x%5 outside the plot")
                       .arg(name)
                       .arg(r.x())
                       .arg(r.y())
                       .arg(r.width())
                       .arg(r.height());
        if (r.height() < fm.height() - 1 || r.width() < fm.horizontalAdvance(title->text()))
            out << QStringLiteral("%1: title \"%2\" cut (%3x%4 for %5x%6)")
                       .arg(name, title->text())
                       .arg(r.width())
                       .arg(r.height())
                       .arg(fm.horizontalAdvance(title->text()))
                       .arg(fm.height());
    }
    for (QCPAxisRect* rect : plot->axisRects()) {
        if (!rect->visible()) continue;
        for (QCPAxis* axis : rect->axes()) {
            if (!axis->visible() || axis->label().isEmpty()) continue;
            const bool vertical = axis->orientation() == Qt::Vertical;
            const int room = vertical ? rect->height() : rect->width();
            const int need = QFontMetrics(axis->labelFont()).horizontalAdvance(axis->label());
            if (need > room)
                out << QStringLiteral("%1: label \"%2\" needs %3 px, its axis is %4")
                           .arg(name, axis->label())
                           .arg(need)
                           .arg(room);
            // Tick labels of a horizontal axis do not run into each other ("5 s10 s", "163264").
            if (!vertical && axis->tickLabels()) {
                const QFontMetrics tf(axis->tickLabelFont());
                const QVector<double> ticks = axis->tickVector();
                const QVector<QString> labels = axis->tickVectorLabels();
                double prevRight = -1e9;
                for (int t = 0; t < ticks.size() && t < labels.size(); ++t) {
                    const double x = axis->coordToPixel(ticks[t]);
                    if (x < rect->left() - 1 || x > rect->right() + 1 || labels[t].isEmpty()) continue;
                    const double half = tf.horizontalAdvance(labels[t]) / 2.0;
                    if (x - half < prevRight + 2)
                        out << QStringLiteral("%1: tick label \"%2\" runs into the one before it")
                                   .arg(name, labels[t]);
                    prevRight = x + half;
                }
            }
            const QString full = axis->property("pitlaneFullLabel").toString();
            const QString core = full.section(QStringLiteral(" · "), 0, 0);
            if (!full.isEmpty() && !axis->label().startsWith(core))
                out << QStringLiteral("%1: label \"%2\" lost \"%3\"").arg(name, axis->label(), core);
        }
    }
    return out;
}

// The window at `size` (a screen less a title bar and a panel): it keeps that size, its
// minimum fits, and every shown plot reads whole. Each results tab is visited (a hidden tab
// page asked for 256 px once), and the tab bar stays where it was.
inline QStringList layoutProblems(app::MainWindow& w, QSize size) {
    QStringList out;
    w.resize(size);
    auto settle = [] {
        for (int i = 0; i < 3; ++i) {
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            QTest::qWait(30);
        }
    };
    settle();
    auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("resultsTabs"));
    const int tabsTop = tabs->mapTo(&w, QPoint(0, 0)).y();
    for (int i = 0; i < tabs->count(); ++i) {
        if (!tabs->isTabVisible(i)) continue;
        tabs->setCurrentIndex(i);
        settle();
        const int top = tabs->mapTo(&w, QPoint(0, 0)).y();
        if (top != tabsTop)
            out << QStringLiteral("the results tabs moved %1 px on tab \"%2\"")
                       .arg(top - tabsTop)
                       .arg(tabs->tabText(i));
        const QSize min = w.minimumSizeHint();
        if (min.height() > size.height() || min.width() > size.width())
            out << QStringLiteral("tab \"%1\": minimum %2x%3 over %4x%5")
                       .arg(tabs->tabText(i))
                       .arg(min.width())
                       .arg(min.height())
                       .arg(size.width())
                       .arg(size.height());
    }
    tabs->setCurrentIndex(0);
    settle();
    if (w.size() != size)
        out << QStringLiteral("the window is %1x%2, not %3x%4")
                   .arg(w.width())
                   .arg(w.height())
                   .arg(size.width())
                   .arg(size.height());
    int shownPlots = 0;
    for (widgets::LivePlot* plot : w.plotPanel()->plots()) {
        if (!plot->isVisible()) continue;
        ++shownPlots;
        plot->replot();
        out << textProblems(plot);
        if (plot->height() < kMinPlotHeight || plot->width() < kMinPlotWidth)
            out << QStringLiteral("%1 squashed to %2x%3 (at least %4x%5 to be read)")
                       .arg(plot->objectName())
                       .arg(plot->width())
                       .arg(plot->height())
                       .arg(kMinPlotWidth)
                       .arg(kMinPlotHeight);
    }
    if (shownPlots == 0) out << QStringLiteral("no plot shown");
    // The open docks and the status bar are on screen.
    for (QWidget* part : {static_cast<QWidget*>(w.historyDock()), static_cast<QWidget*>(w.lessonsDock()),
                          static_cast<QWidget*>(w.statusBar())}) {
        if (!part->isVisible() || part->visibleRegion().isEmpty()) continue;  // hidden, or behind a tab
        const QRect r(part->mapTo(&w, QPoint(0, 0)), part->size());
        if (!w.rect().contains(r)) out << QStringLiteral("%1 off screen").arg(part->objectName());
    }
    if (!w.statusBar()->isVisible()) out << QStringLiteral("the status bar is hidden");
    // Tables show every column, or say that they scroll (a visible hint next to them).
    for (auto* view : w.findChildren<QTableView*>()) {
        if (!view->isVisible()) continue;
        const bool cut = view->horizontalScrollBar()->maximum() > 0;
        const auto* hint = w.findChild<QLabel*>(view->objectName() + QStringLiteral("ScrollHint"));
        if (cut && !(hint && hint->isVisible()))
            out << QStringLiteral("table %1 cut (%2 px more to scroll) and nothing says so")
                       .arg(view->objectName())
                       .arg(view->horizontalScrollBar()->maximum());
        if (view->height() < view->horizontalHeader()->height() + 10)
            out << QStringLiteral("table %1 is %2 px high: not even a row").arg(view->objectName()).arg(view->height());
    }
    // A column of a tree (the history, the lessons browser) narrower than its header's text.
    for (auto* tree : w.findChildren<QTreeView*>()) {
        if (!tree->isVisible()) continue;
        const QHeaderView* h = tree->header();
        for (int c = 0; c < h->count(); ++c) {
            if (h->isSectionHidden(c) || c == h->count() - 1) continue;
            const QString title = tree->model()->headerData(c, Qt::Horizontal).toString();
            const int need = h->fontMetrics().horizontalAdvance(title) + 12;
            if (h->sectionSize(c) < std::min(need, 120))
                out << QStringLiteral("%1: column \"%2\" %3 px wide").arg(tree->objectName(), title).arg(h->sectionSize(c));
        }
    }
    // Every control of the shown arm is whole within the setup column (combo boxes showed no
    // arrow: their right edge was cut).
    auto* scroll = w.findChild<QScrollArea*>(QStringLiteral("setupScroll"));
    const int right = scroll->viewport()->mapTo(&w, QPoint(scroll->viewport()->width(), 0)).x();
    for (auto* box : w.setupPanel()->armEditor()->form(0)->findChildren<QComboBox*>()) {
        const int edge = box->mapTo(&w, QPoint(box->width(), 0)).x();
        if (edge > right)
            out << QStringLiteral("combo %1 ends at %2, the column at %3").arg(box->objectName()).arg(edge).arg(right);
    }
    // A spin box's default in words fits its field (issue 44: "dbox on, CPU); none otherwise").
    for (auto* spin : w.setupPanel()->armEditor()->form(0)->findChildren<QSpinBox*>()) {
        if (!spin->isVisible() || spin->specialValueText().isEmpty() || spin->value() != spin->minimum()) continue;
        const int need = spin->fontMetrics().horizontalAdvance(spin->specialValueText()) + 28;  // + arrows
        if (need > spin->width())
            out << QStringLiteral("spin box %1 shows \"%2\" in %3 px (needs %4)")
                       .arg(spin->objectName(), spin->specialValueText())
                       .arg(spin->width())
                       .arg(need);
    }
    return out;
}

// The window as it is, to $PITLANE_SCREENSHOT_DIR/NAME.png (docs/screenshots/ when refreshed);
// nothing when it is not set.
inline void saveScreenshot(QWidget& w, const QString& name) {
    const QString dir = qEnvironmentVariable("PITLANE_SCREENSHOT_DIR");
    if (dir.isEmpty()) return;
    QDir().mkpath(dir);
    const QString path = QDir(dir).filePath(name + QStringLiteral(".png"));
    if (!w.grab().save(path)) qWarning("cannot write %s", qPrintable(path));
}

}  // namespace pitlane::testing
