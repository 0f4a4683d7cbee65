#pragma once
// The report's charts, drawn as SVG from a RunResult. Each returns "" when the run has nothing
// to draw (no samples, no metric ticks); arm i is always drawn in armColor(i).
#include "pitlane/results/run_result.h"

#include <QString>

namespace pitlane::report::detail {

struct Chart {
    QString id;       // "timeline", "histogram", ...
    QString title;    // shown as the figure heading
    QString svg;      // without the xmlns attribute (inline HTML); see withNamespace()
    QString caption;  // what to look at, in words
};

std::vector<Chart> runCharts(const results::RunResult& run);
// The median of each worker process as a dot, one row per arm, every arm on the same scale
// (id "processes"); an empty svg when no process measured anything.
Chart processChart(const results::RunResult& run);
// The same SVG as a standalone document (QSvgRenderer wants the namespace).
QString withNamespace(const QString& svg);

}  // namespace pitlane::report::detail
