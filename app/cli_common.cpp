// pitlane-cli's shared parts (cli_common.h).
#include "cli_common.h"

#include "pitlane/results/advice.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/session/run_plan.h"
#include "pitlane/store/run_recorder.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QSaveFile>
#include <QSet>
#include <QTimer>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

namespace pitlane::cli {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;

// A command's lines of the usage text: its arguments, one "[--flag FILE]" per export format
// (report::exportFormats(): `run` shows each format's runUsageFlag and OUT.<suffix>, `report`
// its first flag and F), then `extra`; wrapped under the command at 92 columns.
std::string usageLines(const QString& command, bool run, const QStringList& extra) {
    QStringList items;
    for (const auto& f : report::exportFormats())
        items << QStringLiteral("[%1 %2]").arg(run ? f.runUsageFlag : f.cliFlags.first(),
                                               run ? "OUT." + f.suffixes.first() : "F");
    items << extra;
    QString text = QStringLiteral("  pitlane-cli ") + command;
    qsizetype lineStart = 0;
    for (const auto& item : items) {
        if (text.size() - lineStart + 1 + item.size() > 92) {
            text += QLatin1Char('\n');
            lineStart = text.size();
            text += QString(17, QLatin1Char(' '));
        }
        text += QLatin1Char(' ') + item;
    }
    return text.toStdString() + "\n";
}

// " (worker pid 123)" / " (worker pids 123, 124)": the arm's current processes whose pid is known
// ("" while none is).
std::string knownPids(const results::ArmResult& a) {
    if (a.processes.empty()) return {};
    std::string pids;
    int n = 0;
    for (const auto& p : a.processes) {
        if (p.replicate != a.processes.back().replicate || p.pid <= 0) continue;
        pids += (n++ ? ", " : "") + std::to_string(p.pid);
    }
    return n == 0 ? std::string() : (n == 1 ? " (worker pid " : " (worker pids ") + pids + ")";
}

// One serving level as the worker reported it: "400 req/s: 731 of 731 requests in 612 batches".
std::string servingLine(const protocol::ServingDone& sv) {
    std::ostringstream o;
    if (sv.arrival == "closed")
        o << sv.clients << " clients";
    else
        o << sv.rate_per_s << " req/s";
    o << ": " << sv.served << " of " << sv.arrived << " requests in " << sv.batches << " batches"
      << (sv.saturated ? ", SATURATED" : "");
    return o.str();
}

// The progress lines of a run on stderr (each worker process loading, with its pid; measured
// blocks against the planned total; each arm's end); none with --quiet.
void printProgress(const session::ExperimentRunner& runner, QObject* context) {
    QObject::connect(&runner, &session::ExperimentRunner::armPhaseChanged, context,
                     [&runner](int arm, session::ArmPhase ph) {
                         // A line per worker process (loading, with its pid) and per arm's end;
                         // the phases in between (starting, ready, warming up, measuring,
                         // waiting) made ~60 lines of a tiny run (issue 27).
                         using P = session::ArmPhase;
                         if (ph != P::Loading && ph != P::Done && ph != P::Failed && ph != P::Cancelled &&
                             ph != P::Compiling)
                             return;
                         const auto& a = runner.result().arms[std::size_t(arm)];
                         std::cerr << "[" << a.name << "] " << session::phaseName(ph).toStdString()
                                   << (ph == session::ArmPhase::Loading ? knownPids(a) : "") << "\n";
                     });
    // A compile takes tens of seconds to minutes: a line every 15 s says it is still going.
    auto* compiling = new QTimer(context);
    QObject::connect(compiling, &QTimer::timeout, context, [&runner] {
        for (int i = 0; i < int(runner.result().arms.size()); ++i)
            if (runner.isRunning() && runner.phase(i) == session::ArmPhase::Compiling)
                std::cerr << "[" << runner.result().arms[std::size_t(i)].name << "] "
                          << runner.phaseLabel(i).toStdString() << "\n";
    });
    compiling->start(15000);
    // A budgeted run: a block line per arm at most every second (and its last): a fast model's
    // budget holds hundreds of blocks, and a screen does not. A fixed plan prints every block
    // (its blocks are what was asked, and scripts wait for them).
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    auto lastLine = std::make_shared<std::map<int, qint64>>();
    QObject::connect(&runner, &session::ExperimentRunner::armEvent, context,
                     [&runner, clock, lastLine](int arm, const protocol::Event& ev) {
                         const auto* done = std::get_if<protocol::BlockDone>(&ev);
                         if (!done) return;
                         const auto& name = runner.result().arms[std::size_t(arm)].name;
                         if (done->serving)
                             std::cerr << "[" << name << "] served " << servingLine(*done->serving)
                                       << " (" << runner.doneIters(arm) << "/" << runner.totalIters(arm)
                                       << " levels)\n";
                         else if (done->phase == "measure") {
                             const qint64 now = clock->elapsed();
                             const auto last = lastLine->find(arm);
                             if (runner.result().preset.run.budgeted() && last != lastLine->end() &&
                                 now - last->second < 1000 &&
                                 runner.doneIters(arm) < runner.totalIters(arm))
                                 return;
                             (*lastLine)[arm] = now;
                             // The whole run's time left (remaining_time.h), once it is known.
                             const std::string left = session::remainingText(runner.remaining());
                             std::cerr << "[" << name << "] block " << done->block << " done ("
                                       << runner.doneIters(arm) << "/" << runner.totalIters(arm)
                                       << " iterations)" << (left.empty() ? "" : ", " + left) << "\n";
                         }
                     });
}

}  // namespace

const std::string& usage() {
    static const std::string text =
        "usage:\n" +
        usageLines("run PRESET.json | MODEL.pt | MODEL.pt2", true,
                   {"[--db PATH|none]", "[--quiet]", "[--time DURATION | --iters N]", "[--input SPEC]",
                    "[--arm NAME:knob=value,...]...",
                    "[--save-preset FILE]", "[--baseline RUN_ID|latest|baseline]",
                    "[--against BASELINE_PRESET|MODEL]", "[--max-slowdown PCT]",
                    "[--max-energy-increase PCT]", "[--profile [N]]", "[--trace DIR]", "[--advise]", "[--advice-preset FILE]"}) +
        "      --time 30s: a time budget (run.budget_ms; also 2m, 1500ms): the first forwards and\n"
        "      set-ups are timed, then the iterations per process and the processes that fit are\n"
        "      planned (Kalibera & Jones; at least 3 processes) and said (\"planned: ...\"); a bare\n"
        "      model's quick run has 30 s. --iters N: exactly N measured iterations per arm instead\n"
        "      (in the preset's processes, else 3)\n"
        "      --json -: the results JSON on stdout (the table and the rest then go to stderr)\n"
        "      --baseline: the regression gate: each arm against the baseline run's arm of the same\n"
        "      name (unpaired bootstrap); exit 4 when one is slower by more than --max-slowdown\n"
        "      (default 5 %) with its whole 95 % CI beyond it. latest: the newest finished run of\n"
        "      this preset; baseline: its newest run marked with `history baseline`\n"
        "      --max-energy-increase PCT: both gates also fail (exit 4) an arm whose gross joules per\n"
        "      inference rose by more than PCT with the whole 95 % CI beyond it (docs/ENERGY.md);\n"
        "      where either side measured no energy, the gate says so and does not fail\n"
        "      --against: the paired gate: the baseline preset's arms (or the preset's arms with\n"
        "      the model file MODEL) join this run as \"ARM (baseline)\", interleaved with the arms;\n"
        "      each arm is gated on the run's own paired comparison with its twin (exit 4 as for\n"
        "      --baseline), so load that comes and goes between runs cannot fake or hide a\n"
        "      regression. Both gates name the knobs and model (--baseline: and the load) that\n"
        "      differ from the baseline (\"differences\" in the gate JSON)\n"
        "      MODEL.pt / MODEL.pt2: the window's default A/B for a bare model (grad enabled vs\n"
        "      inference_mode; 1 vs 2 threads for a package (glibc malloc vs jemalloc when its\n"
        "      kernels have a thread count compiled in); NativeRT vs AOTInductor for a\n"
        "      torch.export archive, which brings its example inputs; one thread each; a 30 s\n"
        "      budget);\n"
        "      --arm NAME:knob=value,... (repeatable) gives the arms instead, e.g.\n"
        "      --arm base:intra_op_threads=1 --arm fast:intra_op_threads=1,grad=inference_mode;\n"
        "      the preset is validated as a file would be; --save-preset FILE also writes it\n"
        "      --input SPEC gives its input when it has no sidecar: 3x224x224, [3,224,224]:float32,\n"
        "      Nx3x224x224 (N marks the batch), \"128 int64; 128 int64\" (one input per ';')\n"
        "      --profile: after the measured blocks, N (default 10) iterations of each arm under\n"
        "      libtorch's profiler, never timed: the operator table (a Chrome trace in the JSON)\n"
        "      --trace DIR: each profiled arm's Chrome trace as DIR/<arm>.trace.json (made if\n"
        "      missing), for ui.perfetto.dev or chrome://tracing; implies --profile\n"
        "      --advise: what to try next per arm, ranked by the measured evidence (implies\n"
        "      --profile); --advice-preset FILE also writes the preset with each arm's first\n"
        "      advice added as an arm (run it to measure the advice)\n" +
        "      --quiet: no progress, info or worker output on stderr (warnings and errors stay);\n"
        "      the results table and run id still go to stdout (redirect it if unwanted)\n"
        "  pitlane-cli validate [--no-load] [--input SPEC] PRESET.json|MODEL...\n"
        "      every error of each preset, one 'file: field: reason' line each (a model file:\n"
        "      the A/B `run MODEL` would measure); the format of each model file in words (a\n"
        "      torch.export archive, an AOTInductor package and what it was compiled for,\n"
        "      TorchScript); then the model file's integrity, and each local arm's model\n"
        "      loaded in a sandboxed worker with the arm's knobs and one forward with its input\n"
        "      (an unknown operator, a wrong input rank or dtype fail here, exit 2, not in the\n"
        "      run; an arm with compile aoti is tried as exported); --no-load: no worker\n" +
        usageLines("report RESULTS.json|RUN_ID", false, {"[--db PATH|none]", "[--advise]", "[--advice-preset FILE]"}) +
        "  pitlane-cli lessons [--run] [--only TEXT] [--markdown FILE] [--db PATH|none] [--quiet]\n"
        "      list the lessons (their status on this machine from the history), or run them\n"
        "      all: one verdict line each; exit 1 only when a lesson could not run (a lesson\n"
        "      that does not reproduce is a finding, not an error)\n"
        "  pitlane-cli sweep PRESET.json [--slurm] [--partition P] [--time T] [--sbatch OPTION]...\n"
        "                  [--out DIR] [--quiet]\n"
        "      the preset's sweep block (models x batch sizes) as one preset per slice in\n"
        "      DIR/slices; run one after another here, or with --slurm as an sbatch --array job\n"
        "      (DIR/sweep.sbatch; prints the job id); --sbatch adds an #SBATCH line (--gres=gpu:1)\n"
        "  pitlane-cli sweep DIR --resubmit-failed\n"
        "      the failed slices only (sbatch --array=3,5 for a Slurm sweep; again here otherwise)\n"
        "  pitlane-cli sweep-status DIR    (or collect DIR --status)\n"
        "      each slice's state (sacct, else squeue and the results files) and the failed ones;\n"
        "      exit 0 all completed, 1 finished with failures, 4 still pending or running\n" +
        usageLines("collect DIR", false, {"[--db PATH|none]"}) +
        "      every slice's results JSON as one history run (arms <model>/b<batch>/<arm>, not\n"
        "      interleaved) and one report; missing slices named, exit 1\n"
        "  pitlane-cli check-history [--db PATH]\n"
        "      SQLite's full integrity_check of the run history, read-only, then what sound\n"
        "      pages can still lack: a table, column or index of its schema, the samples of a\n"
        "      finished run; exit 0 when it is sound, 1 when it is damaged (each problem\n"
        "      printed), 2 when it cannot be read\n"
        "  pitlane-cli history [list|show RUN_ID|label RUN_ID TEXT|baseline RUN_ID|delete RUN_ID]\n"
        "                    [--limit N] [--preset NAME] [--json] [--db PATH]\n"
        "      the stored runs, newest first; a run's table or results JSON; the window's marks\n"
        "  pitlane-cli compare RUN[:ARM] RUN[:ARM] [--json] [--db PATH]\n"
        "      two stored arms side by side: ratio, 95 % CI (unpaired process-level bootstrap),\n"
        "      the environment fields that differ; `COMMAND --help` for either's usage\n"
        "  pitlane-cli --help | --version\n" +
        "--db: the run history (SQLite); default $PITLANE_DB, else the user's data directory;\n"
        "      'none' stores nothing. `run` prints the id its run got; `report RUN_ID` reads it.\n"
        "exit codes: 0 every arm finished, 1 an arm failed, 2 bad arguments or invalid preset,\n"
        "      3 measured and every file written, but the run history could not store the run,\n"
        "      4 a gate (--baseline, --against) found a regression: the run is measured and stored\n";
    return text;
}

namespace {
QString gCommand;  // the command being run (main sets it): usageError's hint names its --help
}

void setCurrentCommand(const QString& command) { gCommand = command; }

std::string commandUsage(const QString& command) {
    // The command's block of usage(): its "  pitlane-cli COMMAND" line(s) and the indented
    // lines under them, up to the next command.
    std::string out;
    bool in = false;
    std::size_t start = 0;
    const std::string& text = usage();
    const std::string head = "  pitlane-cli " + command.toStdString();
    while (start < text.size()) {
        const auto nl = text.find('\n', start);
        const std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        start = nl == std::string::npos ? text.size() : nl + 1;
        if (line.rfind("  pitlane-cli ", 0) == 0)
            in = line == head || line.rfind(head + " ", 0) == 0;
        if (in) out += line + "\n";
    }
    return out.empty() ? std::string() : "usage:\n" + out;
}

int usageError(const std::string& msg) {
    // One line saying what is wrong and one saying where to look, not the whole usage.
    std::cerr << "pitlane-cli: " << msg << "\n"
              << "pitlane-cli: see `pitlane-cli " << (gCommand.isEmpty() ? std::string() : gCommand.toStdString() + " ")
              << "--help`\n";
    return kExitUsage;
}

bool adviseOutputs(const results::RunResult& run, const Outputs& out) {
    if (!out.advise) return true;
    const auto advice = results::advise(run);
    const auto text = results::adviceText(run, advice);
    std::cout << "\n" << (text.empty() ? "Advice: none (no rule's evidence crossed its threshold; docs/ADVISOR.md)\n" : text)
              << std::flush;
    if (out.advicePreset.isEmpty()) return true;
    QSaveFile f(out.advicePreset);
    const auto doc = results::presetWithSuggestedArms(run, advice).dump(2) + "\n";
    if (!f.open(QIODevice::WriteOnly) || f.write(doc.data(), qint64(doc.size())) != qint64(doc.size()) ||
        !f.commit()) {
        std::cerr << "pitlane-cli: cannot write --advice-preset " << out.advicePreset.toStdString() << ": "
                  << f.errorString().toStdString() << "\n";
        return false;
    }
    std::cout << "advice preset: " << out.advicePreset.toStdString() << " (the run's arms, and each arm's first "
              << "advice that is a knob change as an arm of its own)\n" << std::flush;
    return true;
}

std::vector<QString> traceFileNames(const results::RunResult& run) {
    std::vector<QString> names;
    QSet<QString> taken;
    for (const auto& arm : run.arms) {
        QString base;
        for (const QChar c : QString::fromStdString(arm.name))
            base += (c.isLetterOrNumber() && c.unicode() < 128) || c == '.' || c == '-' || c == '_'
                        ? c
                        : QChar('_');
        while (base.startsWith('.')) base.remove(0, 1);
        base = base.left(100);
        if (base.isEmpty()) base = QStringLiteral("arm");
        QString name = base;
        for (int k = 2; taken.contains(name.toLower()); ++k) name = base + "-" + QString::number(k);
        taken.insert(name.toLower());
        names.push_back(name + ".trace.json");
    }
    return names;
}

bool writeTraces(const results::RunResult& run, const Outputs& out, bool quiet) {
    if (out.traceDir.isEmpty()) return true;
    const auto names = traceFileNames(run);
    bool ok = true;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& arm = run.arms[i];
        const std::string doc = results::profileTraceJson(arm);
        if (doc.empty()) {
            std::cerr
                << "pitlane-cli: --trace: arm " << arm.name
                << " has no profile (it did not finish, or its profile was not taken): no trace\n";
            continue;
        }
        const QString path = QDir(out.traceDir).filePath(names[i]);
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) ||
            file.write(doc.data(), qint64(doc.size())) != qint64(doc.size()) || !file.commit()) {
            std::cerr << "pitlane-cli: cannot write the trace of arm " << arm.name << " to "
                      << path.toStdString() << ": " << file.errorString().toStdString() << "\n";
            ok = false;
            continue;
        }
        if (!quiet)
            std::cerr << "pitlane-cli: trace of arm " << arm.name << ": " << path.toStdString()
                      << " (ui.perfetto.dev, chrome://tracing)\n";
    }
    return ok;
}

bool writeOutputs(const results::RunResult& run, const Outputs& out, const QString& runId) {
    report::ReportOptions opts;
    opts.runId = runId;
    bool ok = true;
    const auto& formats = report::exportFormats();
    for (std::size_t i = 0; i < formats.size(); ++i) {
        if (out.files[i].isEmpty()) continue;
        QString err;
        if (!formats[i].write(out.files[i], run, opts, &err)) {
            std::cerr << "pitlane-cli: cannot write " << err.toStdString() << "\n";
            ok = false;
        } else {
            // Said on stderr (stdout stays the table scripts read): what was written, where.
            const bool toStdout = out.jsonToStdout && formats[i].id == QLatin1String("json");
            std::cerr << "pitlane-cli: wrote " << formats[i].name.toStdString() << " "
                      << (toStdout ? std::string("to stdout") : out.files[i].toStdString()) << " ("
                      << QFileInfo(out.files[i]).size() << " bytes)\n";
        }
    }
    return ok;
}

std::unique_ptr<store::RunStore> openHistory(const QString& dbChoice, QString* problem) {
    problem->clear();
    const QString path = store::RunStore::resolvePath(dbChoice);
    if (path.isEmpty()) return nullptr;
    auto db = std::make_unique<store::RunStore>();
    if (db->open(path)) return db;
    *problem = db->lastError();
    std::cerr << "pitlane-cli: run history: " << problem->toStdString() << "\n"
              << "pitlane-cli: measuring anyway: the table and every file asked for will be "
                 "written, but nothing is stored in the history (exit status 3)\n";
    return nullptr;
}

int reportStorage(const RunOutcome& outcome, const QString& openProblem, int exitCode) {
    if (!openProblem.isEmpty()) {
        std::cerr << "pitlane-cli: run history: this run was not stored: "
                  << openProblem.toStdString() << "\n";
        return kExitNotStored;
    }
    if (outcome.storeError.isEmpty()) return exitCode;
    std::cerr << "pitlane-cli: run history: "
              << (outcome.runId ? "run " + std::to_string(outcome.runId) + " is incomplete in the history"
                                : std::string("this run was not stored"))
              << " (" << outcome.storeError.toStdString()
              << "); the table and the files asked for hold every sample measured\n";
    return kExitNotStored;
}

std::string modelDir() {
    return spec::findModelDir(QCoreApplication::applicationDirPath().toStdString());
}

RunOutcome runPreset(const spec::Preset& preset, store::RunStore* history, const QString& source,
                     bool quiet) {
    QEventLoop loop;
    auto* app = QCoreApplication::instance();
    session::RunnerOptions opts;
    opts.workerPath = session::defaultWorkerPath();
    session::ExperimentRunner runner(opts);
    const auto& result = runner.result();
    // Connected before the progress output: every sample is committed to the history before
    // the "block done" line that follows it is printed.
    std::unique_ptr<store::RunRecorder> recorder;
    QString storeError;
    if (history) {
        recorder = std::make_unique<store::RunRecorder>(history, source);
        runner.addFeed(recorder.get());
        QObject::connect(recorder.get(), &store::RunRecorder::runStarted, app, [&](qint64 id) {
            if (!quiet)
                std::cerr << "pitlane-cli: recording run " << id << " in "
                          << history->path().toStdString() << "\n";
        });
        QObject::connect(recorder.get(), &store::RunRecorder::storeError, app,
                         [&storeError](const QString& why) {
                             std::cerr << "pitlane-cli: run history: " << why.toStdString() << "\n";
                             if (storeError.isEmpty()) storeError = why;
                         });
    }
    if (!quiet) printProgress(runner, app);
    // --quiet keeps what needs attention (warnings, errors) and drops the chatter (info, the
    // workers' own stderr).
    QObject::connect(&runner, &session::ExperimentRunner::logMessage, app,
                     [&](int, const QString& level, const QString& text) {
                         if (quiet && (level == "stderr" || level == "info")) return;
                         std::cerr << level.toStdString() << ": " << text.toStdString() << "\n";
                     });
    QObject::connect(&runner, &session::ExperimentRunner::finished, &loop, &QEventLoop::quit);
    std::signal(SIGINT, [](int) { g_interrupted = 1; });
    std::signal(SIGTERM, [](int) { g_interrupted = 1; });
    QTimer interruptPoll;
    QObject::connect(&interruptPoll, &QTimer::timeout, app, [&] {
        if (g_interrupted && runner.isRunning() && !runner.wasStopped()) {
            std::cerr << "pitlane-cli: interrupted: stopping workers, keeping what was measured\n";
            runner.stop();
        }
    });
    interruptPoll.start(100);
    // What will be measured, before the first progress line (run_plan.h): "60 asked -> 60-120
    // measured per arm: ..." when replication may add processes.
    if (!quiet && !preset.serving.enabled)
        std::cerr << "pitlane-cli: plan: " << session::planText(session::measurementPlan(preset)) << "\n";
    QTimer::singleShot(0, &loop, [&] { runner.start(preset); });
    loop.exec();
    if (recorder && !recorder->runId() && storeError.isEmpty())
        storeError = QStringLiteral("the run's rows were never written");
    return {result, recorder ? recorder->runId() : 0, storeError};
}

bool interrupted() {
    return g_interrupted != 0;
}

}  // namespace pitlane::cli
