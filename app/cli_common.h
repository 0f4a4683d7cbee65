#pragma once
// What pitlane-cli's commands share: exit codes, usage, output flags, the run history, and
// running one preset to the end (progress on stderr, every event recorded as it arrives).
#include "pitlane/report/export_formats.h"
#include "pitlane/results/run_result.h"
#include "pitlane/spec/preset.h"
#include "pitlane/store/run_store.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <string>
#include <vector>

namespace pitlane::cli {

// 3: measured, and every file asked for written, but the run history could not store the run
// (the file could not be opened, or a write failed mid-run). It wins over 1: a result that is
// not where the user will look for it is the finding a script must not miss.
constexpr int kExitOk = 0, kExitArmFailed = 1, kExitUsage = 2, kExitNotStored = 3;

const std::string& usage();
// `pitlane-cli COMMAND --help`: that command's lines of usage() ("" for an unknown command).
std::string commandUsage(const QString& command);
// The command main() dispatches to: usageError's hint names its --help.
void setCurrentCommand(const QString& command);
// "pitlane-cli: MSG" and a one-line hint on stderr; kExitUsage.
int usageError(const std::string& msg);

struct Outputs {
    // The file asked for in each export format, in report::exportFormats() order ("" = none).
    std::vector<QString> files = std::vector<QString>(report::exportFormats().size());
    QString db;  // --db as given ("" = not given)
    int profileIters = 0;  // --profile [N]: run.profile_iters (default 10)
    bool advise = false;   // --advise: the advisor's ranked advice after the table
    QString advicePreset;  // --advice-preset FILE: the preset with each arm's first advice added
    QString traceDir;      // --trace DIR: one Chrome trace per profiled arm (implies --profile)
    QString input;         // --input SPEC: a bare model's input ("3x64x64", `run MODEL.pt`)
    bool inputGiven = false;
    QStringList arms;      // --arm NAME:knob=value,... (`run MODEL.pt`): the arms, in order
    QString savePreset;    // --save-preset FILE: the preset built for `run MODEL.pt`
    QString baseline;      // --baseline RUN_ID|latest|baseline: the regression gate (cli_gate.h)
    QString against;       // --against BASELINE_PRESET|MODEL: the paired gate (cli_gate.h)
    // --json -: the results JSON on stdout (written to a temporary file first, printed last, so
    // the gate can add to it); everything else `run` prints goes to stderr.
    bool jsonToStdout = false;
    double maxSlowdownPct = 5.0;  // --max-slowdown PCT
    double maxEnergyIncreasePct = -1;  // --max-energy-increase PCT (issue 46; -1: no energy gate)
    // --time DURATION: run.budget_ms (the run plans its processes and iterations to fit it);
    // --iters N: run.iters exactly (no budget). 0: not given.
    int budgetMs = 0;
    int iters = 0;
    bool any() const {
        return std::any_of(files.begin(), files.end(),
                           [](const QString& f) { return !f.isEmpty(); });
    }
};

// Parses "--flag VALUE" pairs (export formats, --db, --quiet) after the positional argument.
// --profile and --trace are refused unless `allowProfile` (only `run` measures); --trace's
// folder is created here, before anything is measured. --advise and --advice-preset are refused
// unless `allowAdvise` (`run` and `report`).
bool parseOutputs(const QStringList& args, int from, Outputs& out, bool& quiet, std::string& err,
                  bool allowProfile = false, bool allowAdvise = false);
// --advise / --advice-preset: prints the advice, writes the preset; false when the preset could
// not be written (said on stderr).
bool adviseOutputs(const results::RunResult& run, const Outputs& out);
// --trace DIR: DIR/<arm name>.trace.json (results::profileTraceJson; the name made safe for a
// file name) for every arm that was profiled, each written atomically; an arm without a profile
// is named on stderr. False when a file could not be written (the message names it).
bool writeTraces(const results::RunResult& run, const Outputs& out, bool quiet);
// The file name an arm's trace gets in --trace's folder: letters, digits, '.', '-' and '_' kept,
// anything else '_', no leading '.'; "-2", "-3" … when two arms would share one.
std::vector<QString> traceFileNames(const results::RunResult& run);
// Every file asked for, each written atomically; `runId` is the run's id in the history ("" if
// none) and names the run in the CSV and the reports.
bool writeOutputs(const results::RunResult& run, const Outputs& out, const QString& runId = {});
// The run history named by --db / $PITLANE_DB / the default; nullptr for "none" and when it
// cannot be opened: then `problem` says why (printed too), and a run goes on unstored (exit 3).
std::unique_ptr<store::RunStore> openHistory(const QString& dbChoice, QString* problem);
// The bundled model directory next to this executable.
std::string modelDir();

struct RunOutcome {
    results::RunResult result;
    qint64 runId = 0;  // in the history; 0 when not recorded
    QString storeError;  // the first write to the history that failed ("" when none did)
};
// Runs `preset` to the end in fresh worker processes, recording it in `history` (may be null)
// as `source`; progress lines on stderr unless `quiet`. SIGINT / SIGTERM stop the workers and
// keep what was measured.
RunOutcome runPreset(const spec::Preset& preset, store::RunStore* history, const QString& source,
                     bool quiet);

// Says on stderr that the run is not (completely) in the history and why; kExitNotStored, or
// `exitCode` when nothing went wrong with the history (`openProblem` and the outcome's
// storeError both empty).
int reportStorage(const RunOutcome& outcome, const QString& openProblem, int exitCode);

// A SIGINT / SIGTERM arrived during a run.
bool interrupted();

int cmdLessons(const QStringList& args);
// cli_sweep.cpp: a preset's sweep run locally or as a Slurm job array, its tasks' states, and
// its slices' results merged into one history run and report.
int cmdSweep(const QStringList& args);
int cmdSweepStatus(const QStringList& args);
int cmdCollect(const QStringList& args);

}  // namespace pitlane::cli
