// pitlane-cli: run / validate / report presets headless (CONTRACT.md "Commands").
#include "pitlane/results/run_result.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/spec/preset.h"

#include <QCoreApplication>
#include <QSaveFile>
#include <QTimer>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

using namespace pitlane;

namespace {

constexpr int kExitOk = 0, kExitArmFailed = 1, kExitUsage = 2;

volatile std::sig_atomic_t g_interrupted = 0;

const char* kUsage =
    "usage:\n"
    "  pitlane-cli run PRESET.json [--json OUT.json] [--csv OUT.csv] [--quiet]\n"
    "  pitlane-cli validate PRESET.json\n"
    "  pitlane-cli report RESULTS.json [--md F] [--csv F] [--json F]\n"
    "exit codes: 0 every arm finished, 1 an arm failed, 2 bad arguments or invalid preset\n";

int usageError(const std::string& msg) {
    std::cerr << "pitlane-cli: " << msg << "\n" << kUsage;
    return kExitUsage;
}

bool writeAtomic(const QString& path, const std::string& data, std::string* error) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        *error = "cannot write " + path.toStdString() + ": " + f.errorString().toStdString();
        return false;
    }
    f.write(data.data(), qint64(data.size()));
    if (!f.commit()) {
        *error = "cannot write " + path.toStdString() + ": " + f.errorString().toStdString();
        return false;
    }
    return true;
}

struct Outputs {
    QString json, csv, md;
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
        if (a == "--json") { if (!value(out.json)) return false; }
        else if (a == "--csv") { if (!value(out.csv)) return false; }
        else if (a == "--md") { if (!value(out.md)) return false; }
        else if (a == "--quiet" || a == "-q") quiet = true;
        else if (a == "--db") {  // run history arrives with the RunStore; accepted for scripts
            QString ignored;
            if (!value(ignored)) return false;
        } else {
            err = "unknown option " + a.toStdString();
            return false;
        }
    }
    return true;
}

bool writeOutputs(const results::RunResult& run, const Outputs& out) {
    std::string err;
    bool ok = true;
    if (!out.json.isEmpty())
        ok &= writeAtomic(out.json, results::toResultsJson(run).dump(2) + "\n", &err);
    if (!out.csv.isEmpty()) ok &= writeAtomic(out.csv, results::samplesCsv(run), &err);
    if (!out.md.isEmpty()) ok &= writeAtomic(out.md, results::comparisonTable(run), &err);
    if (!ok) std::cerr << "pitlane-cli: " << err << "\n";
    return ok;
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
    if (args.size() < 3) return usageError("report needs a results JSON file");
    Outputs out;
    bool quiet = false;
    std::string err;
    if (!parseOutputs(args, 3, out, quiet, err)) return usageError(err);
    std::ifstream f(args[2].toStdString());
    if (!f) return usageError("cannot open " + args[2].toStdString());
    try {
        const auto run = results::fromResultsJson(nlohmann::json::parse(f));
        if (out.json.isEmpty() && out.csv.isEmpty() && out.md.isEmpty())
            std::cout << results::comparisonTable(run);
        return writeOutputs(run, out) ? kExitOk : kExitArmFailed;
    } catch (const std::exception& e) {
        std::cerr << "pitlane-cli: " << args[2].toStdString() << ": " << e.what() << "\n";
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

    session::RunnerOptions opts;
    opts.workerPath = session::defaultWorkerPath();
    session::ExperimentRunner runner(opts);
    const auto& result = runner.result();
    auto armName = [&](int arm) { return result.arms[arm].name; };
    QObject::connect(&runner, &session::ExperimentRunner::armPhaseChanged, &app,
                     [&](int arm, session::ArmPhase ph) {
                         if (quiet) return;
                         std::cerr << "[" << armName(arm) << "] " << session::phaseName(ph).toStdString();
                         if (ph == session::ArmPhase::Starting || ph == session::ArmPhase::Loading)
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
        const bool wrote = writeOutputs(result, out);
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
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("pitlane");
    const QStringList args = app.arguments();
    if (args.size() < 2 || args[1] == "--help" || args[1] == "-h") {
        std::cout << kUsage;
        return args.size() < 2 ? kExitUsage : kExitOk;
    }
    const QString cmd = args[1];
    if (cmd == "run") return cmdRun(app, args);
    if (cmd == "validate") return cmdValidate(args);
    if (cmd == "report") return cmdReport(args);
    return usageError("unknown command " + cmd.toStdString());
}
