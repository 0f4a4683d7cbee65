#pragma once
// Every export format in one table: the window's File ▸ Export (dialog filters, the format a
// file's suffix asks for, the write) and pitlane-cli's output flags (parsing, usage text, the
// writes) all loop over exportFormats(). A new format is one row in src/export_formats.cpp.
#include "pitlane/report/report.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace pitlane::report {

// One of the writers of report.h: false with `error` naming the file and the reason.
using ExportWriter = bool (*)(const QString& path, const results::RunResult& run,
                              const ReportOptions& options, QString* error);

struct ExportFormat {
    QString id;            // stable: "html", "pdf", "markdown", "csv", "json"
    QString name;          // for people: "HTML report" (the file dialog's filter name)
    QStringList suffixes;  // lower case, no dot; the first is the one added to a bare file name
    // Every pitlane-cli flag that asks for this format ("--html", "--report"); the first is the
    // one `pitlane-cli report`'s usage shows.
    QStringList cliFlags;
    QString runUsageFlag;  // the one `pitlane-cli run`'s usage shows ("--report" for HTML)
    ExportWriter write = nullptr;
    bool needsGuiApp = false;  // the writer paints (PDF): it needs a QGuiApplication

    // "HTML report (*.html *.htm)"
    QString fileDialogFilter() const;
};

// The table, in the order the file dialog lists the formats (HTML first).
const std::vector<ExportFormat>& exportFormats();

// The format the suffix of `path` names, case-insensitive ("R.HTML", "r.htm"); nullptr for
// any other suffix or none.
const ExportFormat* exportFormatForPath(const QString& path);
// The format a pitlane-cli flag ("--pdf", "--report") asks for; nullptr for any other argument.
const ExportFormat* exportFormatForFlag(const QString& flag);
// ".html, .pdf, .md, .csv or .json": every format's first suffix, for messages.
QString exportSuffixList();

// Writes `run` in the format the suffix of `path` names (atomically, like every writer). False
// with `error` set: an unknown suffix (naming the known ones), or the writer's reason.
bool writeExport(const QString& path, const results::RunResult& run, const ReportOptions& options,
                 QString* error);

}  // namespace pitlane::report
