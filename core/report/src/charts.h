#pragma once
// The report's charts, drawn as SVG from a RunResult. Each returns "" when the run has nothing
// to draw (no samples, no metric ticks); arm i is always drawn in armColor(i).
#include "pitlane/results/run_result.h"

#include <QPointF>
#include <QString>

#include <vector>

namespace pitlane::report::detail {

struct Chart {
    QString id;       // "timeline", "histogram", ...
    QString title;    // shown as the figure heading
    QString svg;      // without the xmlns attribute (inline HTML); see withNamespace()
    QString caption;  // what to look at, in words
};

std::vector<Chart> runCharts(const results::RunResult& run);
// Batch-size sweeps (sweep_charts.cpp): one curve per arm that swept, over its measured batch
// sizes (log x axis). Throughput in items/s (id "sweep_throughput"; one polyline per arm) and
// latency per call (id "sweep_latency"; median solid, p99 dashed). Empty svg without a sweep.
Chart sweepThroughputChart(const results::RunResult& run);
Chart sweepLatencyChart(const results::RunResult& run);

// A serving run (serving_charts.cpp): p99 (solid, dots) and p50 (dashed) end-to-end latency
// against the offered rate (or clients), one curve per arm, the SLO as a grey line (id
// "serving_latency"); the share of batches of each size per arm, every level pooled (id
// "serving_batches"). Empty svg when no arm served a request.
Chart servingLatencyChart(const results::RunResult& run);
Chart servingBatchChart(const results::RunResult& run);

// The display unit of a latency axis for a typical value in ns ("µs", divide by 1e3).
struct Unit {
    double div;
    QString name;
};
Unit latencyUnit(double typicalNs);
// The median of each worker process as a dot, one row per arm, every arm on the same scale
// (id "processes"); an empty svg when no process measured anything.
Chart processChart(const results::RunResult& run);
// The CPU chart's process lines (id "cpu"): one per worker process of each arm, its points
// (seconds since the run started, % of one core) the process's own rates
// (results::processCpuRates: differenced within the process, over the worker's clock).
struct CpuLine {
    int arm = 0, worker = 0, process = 0;
    std::vector<QPointF> points;
};
std::vector<CpuLine> cpuChartLines(const results::RunResult& run);
// The same SVG as a standalone document (QSvgRenderer wants the namespace).
QString withNamespace(const QString& svg);

}  // namespace pitlane::report::detail
