#pragma once
// Reports of a run: one self-contained HTML file (charts as inline SVG, no external resource),
// a PDF with the same content, a Markdown summary for pull requests and chat, the raw samples
// as CSV and the results JSON of CONTRACT.md. Every write is atomic (QSaveFile): an interrupted
// export never leaves a half file over a good one. Qt Core/Gui/Svg, no widgets. The formats as one
// table (suffixes, pitlane-cli flags, writer): export_formats.h. The run of a lesson preset carries
// its lesson right after the verdict in the HTML, the PDF and the Markdown: title, text, claim and
// each check judged on the run (results::checkLesson) with its status word and measured figure.
#include "pitlane/results/run_result.h"

#include <QByteArray>
#include <QColor>
#include <QString>
#include <QStringList>

namespace pitlane::report {

struct ReportOptions {
    // The run's id in the history ("" when it has none): the CSV's run column, the report's
    // subtitle and the JSON's "history_id". The CSV falls back to the run's start time.
    QString runId;
    QString title;      // default: the preset's name
    QStringList notes;  // shown beside the verdict (e.g. "arms from different runs")
};

// Arm i's colour in every chart, table and legend (colour-blind-safe palette).
QColor armColor(int index);

QString htmlReport(const results::RunResult& run, const ReportOptions& options = {});
QString markdownSummary(const results::RunResult& run, const ReportOptions& options = {});
// run,arm,block,iteration,batch_size,latency_ns,process: one row per measured iteration
// (RFC 4180); process = the replicate whose worker process measured it. A serving run (no
// samples): run, then results::servingRequestsCsv's columns, one row per served request.
QByteArray samplesCsv(const results::RunResult& run, const ReportOptions& options = {});
QByteArray resultsJson(const results::RunResult& run, const ReportOptions& options = {});

// Writers return false with `error` naming the file and the reason.
bool writeFileAtomic(const QString& path, const QByteArray& data, QString* error);
bool writeHtml(const QString& path, const results::RunResult& run, const ReportOptions& options,
               QString* error);
// Needs a QGuiApplication (fonts, painting); QT_QPA_PLATFORM=offscreen is enough.
bool writePdf(const QString& path, const results::RunResult& run, const ReportOptions& options,
              QString* error);
bool writeMarkdown(const QString& path, const results::RunResult& run, const ReportOptions& options,
                   QString* error);
bool writeCsv(const QString& path, const results::RunResult& run, const ReportOptions& options,
              QString* error);
bool writeJson(const QString& path, const results::RunResult& run, const ReportOptions& options,
               QString* error);

}  // namespace pitlane::report
