// pitlane-cli: run / validate / report presets headless (CONTRACT.md "Commands").
#include "pitlane/report/export_formats.h"
#include "pitlane/report/report.h"
#include "pitlane/results/run_result.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/spec/preset.h"
#include "pitlane/store/run_recorder.h"
#include "pitlane/store/run_store.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QGuiApplication>
#include <QTimer>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

using namespace pitlane;

namespace {

constexpr int kExitOk = 0, kExitArmFailed = 1, kExitUsage = 2;

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

const std::string& usage() {
    static const std::string text =
        "usage:\n" + usageLines("run PRESET.json", true, {"[--db PATH|none]", "[--quiet]"}) +
        "  pitlane-cli validate PRESET.json\n" +
        usageLines("report RESULTS.json|RUN_ID", false, {"[--db PATH|none]"}) +
        "--db: the run history (SQLite); default $PITLANE_DB, else the user's data directory;\n"
        "      'none' stores nothing. `run` prints the id its run got; `report RUN_ID` reads it.\n"
        "exit codes: 0 every arm finished, 1 an arm failed, 2 bad arguments or invalid preset\n";
    return text;
}

int usageError(const std::string& msg) {
    std::cerr << "pitlane-cli: " << msg << "\n" << usage();
    return kExitUsage;
}

struct Outputs {
    // The file asked for in each export format, in report::exportFormats() order ("" = none).
    std::vector<QString> files = std::vector<QString>(report::exportFormats().size());
    QString db;  // --db as given ("" = not given)
    bool any() const {
        return std::any_of(files.begin(), files.end(),
                           [](const QString& f) { return !f.isEmpty(); });
    }
};

// Parses "--flag VALUE" pairs after the positional argument.
bool parseOutputs(const QStringList& args, int from, Outputs& out, bool& quiet, std::string& err) {
    for (int i = from; i < args.size(); ++i) {
        const QString a = args[i];
        auto value = [&](QString& dst) {
            if (i + 1 >= args.size() || args[i + 1].startsWith("--")) {
                err = a.toStdString() + " needs a file name";
                return false;
            }
            dst = args[++i];
            return true;
        };
        if (const auto* format = report::exportFormatForFlag(a)) {
            const auto row = std::size_t(format - report::exportFormats().data());
            if (!value(out.files[row])) return false;
        } else if (a == "--quiet" || a == "-q") quiet = true;
        else if (a == "--db") {
            if (!value(out.db)) return false;
        } else {
            err = "unknown option " + a.toStdString();
            return false;
        }
    }
    return true;
}

// Every file asked for, each written atomically; `runId` is the run's id in the history ("" if
// none) and names the run in the CSV and the reports.
bool writeOutputs(const results::RunResult& run, const Outputs& out, const QString& runId = {}) {
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
        }
    }
    return ok;
}

// The run history named by --db / $PITLANE_DB / the default; nullptr for "none". An explicit
// --db that cannot be opened is an error (exit 2); the default one only a warning.
std::unique_ptr<store::RunStore> openHistory(const Outputs& out, bool* fatal) {
    *fatal = false;
    const QString path = store::RunStore::resolvePath(out.db);
    if (path.isEmpty()) return nullptr;
    auto db = std::make_unique<store::RunStore>();
    if (db->open(path)) return db;
    std::cerr << "pitlane-cli: run history: " << db->lastError().toStdString() << "\n";
    *fatal = !out.db.isEmpty();
    if (!*fatal) std::cerr << "pitlane-cli: this run will not be stored (choose a file with --db)\n";
    return nullptr;
}

int cmdValidate(const QStringList& args) {
    if (args.size() < 3) return usageError("validate needs a preset file");
    try {
        const auto modelDir = spec::findModelDir(QCoreApplication::applicationDirPath().toStdString());
        const auto p = spec::loadPresetFile(args[2].toStdString(), modelDir);
        std::cout << args[2].toStdString() << ": ok (" << p.arms.size() << " arms, model "
                  << p.model_path << ")\n";
        return kExitOk;
    } catch (const spec::SpecError& e) {
        std::cerr << "pitlane-cli: invalid preset: " << e.what() << "\n";
        return kExitUsage;
    }
}

int cmdReport(const QStringList& args) {
    if (args.size() < 3) return usageError("report needs a results JSON file or a run id");
    Outputs out;
    bool quiet = false;
    std::string err;
    if (!parseOutputs(args, 3, out, quiet, err)) return usageError(err);
    const QString source = args[2];
    bool isId = false;
    const qint64 runId = source.toLongLong(&isId);
    if (isId && !QFileInfo::exists(source)) {  // RUN_ID: read it from the history
        bool fatal = false;
        const auto db = openHistory(out, &fatal);
        if (!db)
            return usageError("run " + source.toStdString() +
                              ": no run history to read it from (--db none, or it cannot be opened)");
        const auto run = db->loadRun(runId);
        if (!run) return usageError(db->lastError().toStdString() + " in " + db->path().toStdString());
        if (!out.any()) std::cout << results::comparisonTable(*run);
        return writeOutputs(*run, out, QString::number(runId)) ? kExitOk : kExitArmFailed;
    }
    std::ifstream f(source.toStdString());
    if (!f) return usageError("cannot open " + source.toStdString());
    try {
        const auto j = nlohmann::json::parse(f);
        const auto run = results::fromResultsJson(j);
        if (!out.any()) std::cout << results::comparisonTable(run);
        const QString id = QString::fromStdString(j.value("history_id", std::string()));
        return writeOutputs(run, out, id) ? kExitOk : kExitArmFailed;
    } catch (const std::exception& e) {
        std::cerr << "pitlane-cli: " << source.toStdString() << ": " << e.what() << "\n";
        return kExitUsage;
    }
}

int cmdRun(QCoreApplication& app, const QStringList& args) {
    if (args.size() < 3) return usageError("run needs a preset file");
    Outputs out;
    bool quiet = false;
    std::string err;
    if (!parseOutputs(args, 3, out, quiet, err)) return usageError(err);
    spec::Preset preset;
    try {
        const auto modelDir = spec::findModelDir(QCoreApplication::applicationDirPath().toStdString());
        preset = spec::loadPresetFile(args[2].toStdString(), modelDir);
    } catch (const spec::SpecError& e) {
        std::cerr << "pitlane-cli: invalid preset: " << e.what() << "\n";
        return kExitUsage;
    }

    bool dbFatal = false;
    const auto history = openHistory(out, &dbFatal);
    if (dbFatal) return kExitUsage;

    session::RunnerOptions opts;
    opts.workerPath = session::defaultWorkerPath();
    session::ExperimentRunner runner(opts);
    const auto& result = runner.result();
    // Connected before the progress output: every sample is committed to the history before
    // the "block done" line that follows it is printed.
    std::unique_ptr<store::RunRecorder> recorder;
    if (history) {
        recorder = std::make_unique<store::RunRecorder>(history.get(), QStringLiteral("cli"));
        recorder->attach(&runner);
        QObject::connect(recorder.get(), &store::RunRecorder::runStarted, &app, [&](qint64 id) {
            std::cerr << "pitlane-cli: recording run " << id << " in " << history->path().toStdString()
                      << "\n";
        });
        QObject::connect(recorder.get(), &store::RunRecorder::storeError, &app,
                         [](const QString& why) {
                             std::cerr << "pitlane-cli: run history: " << why.toStdString() << "\n";
                         });
    }
    auto armName = [&](int arm) { return result.arms[arm].name; };
    QObject::connect(&runner, &session::ExperimentRunner::armPhaseChanged, &app,
                     [&](int arm, session::ArmPhase ph) {
                         if (quiet) return;
                         std::cerr << "[" << armName(arm) << "] " << session::phaseName(ph).toStdString();
                         if (ph == session::ArmPhase::Loading)
                             std::cerr << " (worker pid " << result.arms[arm].pid << ")";
                         std::cerr << "\n";
                     });
    QObject::connect(&runner, &session::ExperimentRunner::armEvent, &app,
                     [&](int arm, const nlohmann::json& ev) {
                         if (quiet) return;
                         const auto type = ev.value("type", std::string());
                         if (type == "hello")
                             std::cerr << "[" << armName(arm) << "] worker pid " << ev.value("pid", 0L) << " ready\n";
                         else if (type == "block_done" && ev.value("phase", "") == "measure")
                             std::cerr << "[" << armName(arm) << "] block " << ev.value("block", 0)
                                       << " done (" << runner.doneIters(arm) << "/" << runner.totalIters(arm)
                                       << " iterations)\n";
                     });
    QObject::connect(&runner, &session::ExperimentRunner::logMessage, &app,
                     [&](int, const QString& level, const QString& text) {
                         if (level == "stderr" && quiet) return;
                         std::cerr << level.toStdString() << ": " << text.toStdString() << "\n";
                     });
    int exitCode = kExitOk;
    QObject::connect(&runner, &session::ExperimentRunner::finished, &app, [&] {
        std::cout << results::comparisonTable(result) << std::flush;
        const QString runId = recorder && recorder->runId() ? QString::number(recorder->runId()) : QString();
        if (!runId.isEmpty())
            std::cout << "\nrun id: " << runId.toStdString() << " (history "
                      << history->path().toStdString() << ")\n" << std::flush;
        const bool wrote = writeOutputs(result, out, runId);
        exitCode = result.allOk() && wrote ? kExitOk : kExitArmFailed;
        app.exit(exitCode);
    });
    std::signal(SIGINT, [](int) { g_interrupted = 1; });
    std::signal(SIGTERM, [](int) { g_interrupted = 1; });
    QTimer interruptPoll;
    QObject::connect(&interruptPoll, &QTimer::timeout, &app, [&] {
        if (g_interrupted && runner.isRunning()) {
            std::cerr << "pitlane-cli: interrupted: stopping workers, keeping what was measured\n";
            runner.stop();
        }
    });
    interruptPoll.start(100);
    QTimer::singleShot(0, &app, [&] { runner.start(preset); });
    return app.exec();
}

}  // namespace

int main(int argc, char** argv) {
    // Writing a PDF needs a QGuiApplication (fonts, painting); everything else runs on a
    // QCoreApplication. A CLI never shows a window: offscreen, so it works without DISPLAY.
    bool wantsGui = false;
    for (int i = 1; i < argc; ++i) {
        const auto* format = report::exportFormatForFlag(QString::fromLocal8Bit(argv[i]));
        wantsGui |= format && format->needsGuiApp;
    }
    std::unique_ptr<QCoreApplication> appHolder;
    if (wantsGui) {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
        appHolder = std::make_unique<QGuiApplication>(argc, argv);
    } else {
        appHolder = std::make_unique<QCoreApplication>(argc, argv);
    }
    QCoreApplication& app = *appHolder;
    QCoreApplication::setApplicationName("pitlane");
    const QStringList args = app.arguments();
    if (args.size() < 2 || args[1] == "--help" || args[1] == "-h") {
        std::cout << usage();
        return args.size() < 2 ? kExitUsage : kExitOk;
    }
    const QString cmd = args[1];
    if (cmd == "run") return cmdRun(app, args);
    if (cmd == "validate") return cmdValidate(args);
    if (cmd == "report") return cmdReport(args);
    return usageError("unknown command " + cmd.toStdString());
}
