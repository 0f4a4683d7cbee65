// pitlane-cli: run / validate / report / lessons / sweep / sweep-status / collect / history /
// compare, headless (CONTRACT.md "Commands").
#include "cli_common.h"
#include "cli_gate.h"
#include "cli_history.h"
#include "pitlane/spec/suggest.h"

#include "pitlane/report/report.h"
#include "pitlane/spec/model_preset.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/session/model_probe.h"
#include "pitlane/spec/arm_model_check.h"
#include "pitlane/spec/model_file.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QSaveFile>
#include <QFile>

#include <optional>
#include <QTemporaryDir>
#include <QGuiApplication>

#include <malloc.h>

#include <cmath>
#include <fstream>
#include <set>
#include <iostream>

using namespace pitlane;
using namespace pitlane::cli;

namespace {

// Every error of the preset file, one "file: field: reason" line each (not only the first), then
// how many; false when there were none.
bool printPresetErrors(const std::string& file) {
    const auto errors = spec::validatePresetFile(file, modelDir());
    for (const auto& e : errors) std::cerr << e.what() << "\n";
    if (!errors.empty())
        std::cerr << "pitlane-cli: invalid preset: " << errors.size()
                  << (errors.size() == 1 ? " error" : " errors") << " in " << file << "\n";
    return !errors.empty();
}

// Each local arm's model loaded as the run would (session/model_probe.h): one line per arm; false
// when one failed.
bool probeModels(const std::string& file, const spec::Preset& p) {
    bool ok = true;
    for (const auto& a : session::probeArms(p, session::defaultWorkerPath())) {
        if (!a.skipped.empty()) {
            std::cout << file << ": arm " << a.arm << ": model not loaded here (" << a.skipped << ")\n";
        } else if (a.ok) {
            std::cout << file << ": arm " << a.arm << ": the model loads and runs a forward";
            if (a.loaded.contains("load_ms") && a.loaded["load_ms"].is_number())
                std::cout << " (load " << std::lround(a.loaded["load_ms"].get<double>()) << " ms";
            if (a.loaded.contains("output") && a.loaded["output"].is_object())
                std::cout << ", output " << a.loaded["output"].value("shape", nlohmann::json::array()).dump()
                          << " " << a.loaded["output"].value("dtype", std::string());
            if (a.loaded.contains("load_ms")) std::cout << ")";
            for (const auto& arm : p.arms)
                if (arm.name == a.arm && arm.knobs.compile == spec::Compile::Aoti)
                    std::cout << " — as exported, through NativeRT: Pitlane compiles it (compile aoti) when the run starts";
            std::cout << "\n";
        } else {
            std::cerr << file << ": arm " << a.arm << ": " << a.code << ": " << a.message << "\n";
            ok = false;
        }
    }
    return ok;
}

// A bare model file (MODEL.pt / MODEL.pt2) as `run MODEL` would measure it (the window's
// default A/B, with --input when given); nullopt with the error printed when it is refused.
std::optional<spec::Preset> modelPreset(const std::string& file, const QString& inputText) {
    if (!QFileInfo(QString::fromStdString(file)).isFile()) {
        std::cerr << file << ": no such file\n";
        return std::nullopt;
    }
    nlohmann::json j = spec::newModelPresetJson(file);
    const nlohmann::json input = spec::parseInputText(inputText.toStdString());
    if (!input.is_null()) j["input"] = input;
    try {
        return spec::parsePreset(j, file, modelDir());
    } catch (const spec::SpecError& e) {
        std::cerr << e.what() << "\n";
        const spec::ModelFormat f = spec::readModelFormat(file);
        std::cerr << file << ": " << spec::describeModelFormat(f) << "\n";
        if (e.field() == "input" || e.field().rfind("input[", 0) == 0)
            std::cerr << "pitlane-cli: give it with --input, e.g. --input 3x224x224\n";
        return std::nullopt;
    }
}

// Exit 2 when any of the presets (or bare model files) is invalid, or (without --no-load) an
// arm's model does not load and run one forward.
int cmdValidate(const QStringList& args) {
    QStringList files;
    bool load = true;
    QString inputText;
    for (int i = 2; i < args.size(); ++i) {
        if (args[i] == QLatin1String("--no-load")) load = false;
        else if (args[i] == QLatin1String("--input") && i + 1 < args.size()) inputText = args[++i];
        else if (args[i].startsWith(QLatin1String("--"))) return usageError("validate: unknown option " + args[i].toStdString());
        else files << args[i];
    }
    if (files.isEmpty()) return usageError("validate needs a preset file or a model file");
    int exitCode = kExitOk;
    for (const QString& f : files) {
        const std::string file = f.toStdString();
        const bool bareModel = f.endsWith(QLatin1String(".pt")) || f.endsWith(QLatin1String(".pt2"));
        std::optional<spec::Preset> loaded;
        if (bareModel) loaded = modelPreset(file, inputText);
        else if (!printPresetErrors(file)) loaded = spec::loadPresetFile(file, modelDir());
        if (!loaded) {
            exitCode = kExitUsage;
            continue;
        }
        const spec::Preset& p = *loaded;
        // The format of each model file, in words (issue 40: a torch.export archive is named as one).
        std::set<std::string> described;
        for (const auto& arm : p.arms) {
            const std::string path = arm.model_path.empty() ? p.model_path : arm.model_path;
            if (described.insert(path).second)
                std::cout << file << ": model " << path << ": " << spec::describeModelFormat(spec::readModelFormat(path)) << "\n";
        }
        // The same check a run makes before starting any worker, of every arm's model
        // (spec::checkArmModels: each arm's own file too, each file once).
        const auto checks = spec::checkArmModels(p);
        spec::ModelFileCheck model = checks.empty() ? spec::ModelFileCheck{} : checks.front().check;
        bool modelsOk = true;
        std::set<std::string> said;
        for (const auto& c : checks) {
            if (c.path == p.model_path) model = c.check;
            if (c.check.ok) continue;
            const bool own = c.path != p.model_path;
            const std::string line = file + ": " + (own ? "arm " + p.arms[c.arm].name + ": model" : std::string("model")) +
                                     ": " + c.check.code + ": " + c.check.message;
            if (said.insert(line).second) std::cerr << line << "\n";
            modelsOk = false;
        }
        if (!modelsOk) {
            exitCode = kExitUsage;
            continue;
        }
        if (load && !probeModels(file, p)) {
            exitCode = kExitUsage;
            continue;
        }
        std::cout << file << ": ok (" << p.arms.size() << " arms, model " << p.model_path << ", format "
                  << model.format << ", SHA-256 " << model.sha256;
        if (p.sweep.enabled) std::cout << "; a sweep of " << spec::expandSweep(p).size() << " slices";
        if (!load) std::cout << "; not loaded: --no-load";
        std::cout << ")\n";
    }
    return exitCode;
}

int cmdReport(const QStringList& args) {
    if (args.size() < 3) return usageError("report needs a results JSON file or a run id");
    Outputs out;
    bool quiet = false;
    std::string err;
    if (!parseOutputs(args, 3, out, quiet, err, /*allowProfile=*/false, /*allowAdvise=*/true))
        return usageError(err);
    const QString source = args[2];
    bool isId = false;
    const qint64 runId = source.toLongLong(&isId);
    if (isId && !QFileInfo::exists(source)) {  // RUN_ID: read it from the history
        // The history's problems exit 3, as for `history` and `compare`: one that cannot be
        // opened, a run it cannot read, a run whose samples fail their check (damaged).
        const QString path = store::RunStore::resolvePath(out.db);
        if (path.isEmpty())
            return usageError("run " + source.toStdString() + ": no run history to read it from (--db none)");
        if (!QFileInfo::exists(path))
            return usageError("run " + source.toStdString() + ": no run history at " + path.toStdString());
        auto db = std::make_unique<store::RunStore>();
        if (!db->open(path)) {
            std::cerr << "pitlane-cli: run history cannot be opened: " << db->lastError().toStdString()
                      << "\npitlane-cli: hint: `pitlane-cli check-history --db " << path.toStdString()
                      << "` lists what is damaged\n";
            return kExitNotStored;
        }
        if (!db->runInfo(runId))
            return usageError("run " + source.toStdString() + ": no such run in " + path.toStdString());
        store::SampleCheck check;
        const auto run = db->loadRun(runId, &check);
        if (!run) {
            std::cerr << "pitlane-cli: " << db->lastError().toStdString() << " in " << path.toStdString() << "\n";
            return kExitNotStored;
        }
        if (!out.any() || out.advise) std::cout << results::comparisonTable(*run);
        const bool advised = adviseOutputs(*run, out);
        const bool wrote = writeOutputs(*run, out, QString::number(runId)) && advised;
        std::cout.flush();
        // Damaged: the files are written (its damaged arms failed, code damaged, no figures), and
        // the exit status says the history let the run down.
        if (const int damaged = hist::sampleCheckOutcome(runId, check)) return damaged;
        return wrote ? kExitOk : kExitArmFailed;
    }
    nlohmann::json j;
    std::string why;
    if (!spec::readJsonFile(source.toStdString(), &j, &why))
        return usageError(source.toStdString() + ": " + why);
    try {
        const auto run = results::fromResultsJson(j);
        if (!out.any() || out.advise) std::cout << results::comparisonTable(run);
        const bool advised = adviseOutputs(run, out);
        const QString id = QString::fromStdString(j.value("history_id", std::string()));
        return writeOutputs(run, out, id) && advised ? kExitOk : kExitArmFailed;
    } catch (const std::exception& e) {
        std::cerr << "pitlane-cli: " << source.toStdString() << ": " << e.what() << "\n";
        return kExitUsage;
    }
}

// --arm NAME:knob=value,knob=value (each value JSON when it reads as a number or a boolean, else
// a string) as a preset's "arms"; `why` says what is wrong with one.
nlohmann::json armsFromText(const QStringList& texts, std::string& why) {
    nlohmann::json arms = nlohmann::json::array();
    for (const QString& text : texts) {
        const qsizetype colon = text.indexOf(QLatin1Char(':'));
        const QString name = (colon < 0 ? text : text.left(colon)).trimmed();
        if (name.isEmpty()) {
            why = "--arm " + text.toStdString() + ": no arm name before ':' (NAME:knob=value,...)";
            return {};
        }
        nlohmann::json knobs = nlohmann::json::object();
        const QString list = colon < 0 ? QString() : text.mid(colon + 1);
        for (const QString& pair : list.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const qsizetype eq = pair.indexOf(QLatin1Char('='));
            const std::string key = pair.left(eq).trimmed().toStdString();
            if (eq < 1 || key.empty()) {
                why = "--arm " + text.toStdString() + ": \"" + pair.toStdString() + "\" is not knob=value";
                return {};
            }
            const std::string value = pair.mid(eq + 1).trimmed().toStdString();
            nlohmann::json v = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
            if (v.is_discarded() || !(v.is_number() || v.is_boolean())) v = value;
            knobs[key] = v;
        }
        arms.push_back({{"name", name.toStdString()}, {"knobs", knobs}});
    }
    return arms;
}

// The gate's decisions as "gate" in the results JSON --json wrote (read back, written atomically).
void addGateToResultsJson(const Outputs& out, const nlohmann::json& gate) {
    for (std::size_t i = 0; i < out.files.size(); ++i) {
        if (out.files[i].isEmpty() || report::exportFormats()[i].suffixes.first() != QLatin1String("json")) continue;
        nlohmann::json j;
        std::string why;
        if (!spec::readJsonFile(out.files[i].toStdString(), &j, &why)) {
            std::cerr << "pitlane-cli: cannot add the gate to " << out.files[i].toStdString() << ": " << why << "\n";
            continue;
        }
        j["gate"] = gate;
        QSaveFile f(out.files[i]);
        const std::string doc = j.dump(2) + "\n";
        if (!f.open(QIODevice::WriteOnly) || f.write(doc.data(), qint64(doc.size())) != qint64(doc.size()) ||
            !f.commit())
            std::cerr << "pitlane-cli: cannot add the gate to " << out.files[i].toStdString() << ": "
                      << f.errorString().toStdString() << "\n";
    }
}

// --save-preset FILE: the preset `run MODEL.pt` built, as a file `run FILE` runs the same way.
bool savePresetFile(const spec::Preset& preset, const QString& path) {
    QSaveFile f(path);
    const std::string doc = spec::presetToJson(preset).dump(2) + "\n";
    if (!f.open(QIODevice::WriteOnly) || f.write(doc.data(), qint64(doc.size())) != qint64(doc.size()) ||
        !f.commit()) {
        std::cerr << "pitlane-cli: cannot write --save-preset " << path.toStdString() << ": "
                  << f.errorString().toStdString() << "\n";
        return false;
    }
    std::cerr << "pitlane-cli: wrote the preset to " << path.toStdString() << "\n";
    return true;
}

// The preset `run` measures: a preset file, or for a bare model file the window's default A/B
// (spec::newModelPresetJson) with --input and --arm. An exit code when it is refused (the error
// printed), nothing when `preset` is ready.
// --time / --iters into a preset's run block: a budget replaces iters and processes (they would
// be exact), --iters replaces the budget.
void applyRunPlanOptions(nlohmann::json& j, const Outputs& out) {
    if (out.budgetMs <= 0 && out.iters <= 0) return;
    if (!j.contains("run") || !j["run"].is_object()) j["run"] = nlohmann::json::object();
    auto& run = j["run"];
    if (out.budgetMs > 0) {
        run.erase("iters");
        run.erase("processes");
        run["budget_ms"] = out.budgetMs;
    } else {
        run.erase("budget_ms");
        run["iters"] = out.iters;
        if (run.contains("block_iters") && run["block_iters"].is_number_integer() &&
            run["block_iters"].get<long long>() > out.iters)
            run["block_iters"] = out.iters;
        // Exactly N: the processes are written too (replication adds rounds only to a preset
        // that left them out), as the preset's own or the default.
        if (!run.contains("processes") || !run["processes"].is_number_integer())
            run["processes"] = spec::RunSettings::kDefaultProcesses;
        if (run["processes"].get<long long>() > out.iters) run["processes"] = out.iters;
        run.erase("max_processes");
    }
}

std::optional<int> loadRunPreset(const QString& source, const Outputs& out, spec::Preset& preset) {
    const bool bareModel = source.endsWith(QLatin1String(".pt")) || source.endsWith(QLatin1String(".pt2"));
    if (out.inputGiven && !bareModel)
        return usageError("--input applies to a model file (run MODEL.pt --input 3x224x224); a "
                          "preset gives its input in its \"input\" field");
    if ((!out.arms.isEmpty() || !out.savePreset.isEmpty()) && !bareModel)
        return usageError("--arm and --save-preset apply to a model file (run MODEL.pt --arm ...); a "
                          "preset gives its arms in its \"arms\" field");
    if (!bareModel) {
        try {
            preset = spec::loadPresetFile(source.toStdString(), modelDir());
        } catch (const spec::SpecError& e) {
            if (!printPresetErrors(source.toStdString()))  // cannot happen: the same checks
                std::cerr << "pitlane-cli: invalid preset: " << e.what() << "\n";
            return kExitUsage;
        }
        if (out.budgetMs > 0 || out.iters > 0) {
            nlohmann::json j = preset.raw;
            applyRunPlanOptions(j, out);
            try {
                preset = spec::parsePreset(j, source.toStdString(), modelDir());
            } catch (const spec::SpecError& e) {
                std::cerr << "pitlane-cli: " << e.what() << " (with " << (out.budgetMs > 0 ? "--time" : "--iters")
                          << ")\n";
                return kExitUsage;
            }
        }
        return std::nullopt;
    }
    // A bare model: the input given on the command line when it has no sidecar.
    if (!QFileInfo(source).isFile()) return usageError(source.toStdString() + ": no such file");
    nlohmann::json j = spec::newModelPresetJson(source.toStdString());
    const nlohmann::json input = spec::parseInputText(out.input.toStdString());
    if (!input.is_null()) j["input"] = input;
    applyRunPlanOptions(j, out);
    if (!out.arms.isEmpty()) {
        std::string why;
        const nlohmann::json arms = armsFromText(out.arms, why);
        if (!why.empty()) return usageError(why);
        j["arms"] = arms;
    }
    try {
        preset = spec::parsePreset(j, source.toStdString(), modelDir());
    } catch (const spec::SpecError& e) {
        std::cerr << "pitlane-cli: " << e.what()
                  << (e.field() == "input" || e.field().rfind("input[", 0) == 0
                          ? "\npitlane-cli: give it with --input, e.g. --input 3x224x224 or "
                            "--input \"[3, 224, 224]:float32\""
                          : "")
                  << "\n";
        return kExitUsage;
    }
    return std::nullopt;
}

// --json -: the results JSON goes to a temporary file, printed on stdout when this is destroyed
// (at the very end); until then whatever would go to stdout goes to stderr.
class StdoutJson {
public:
    explicit StdoutJson(Outputs& out) {
        if (!out.jsonToStdout) return;
        for (std::size_t i = 0; i < out.files.size(); ++i)
            if (report::exportFormats()[i].id == QLatin1String("json"))
                out.files[i] = dir_.filePath(QStringLiteral("results.json"));
        std::cout.flush();
        realStdout_ = std::cout.rdbuf(std::cerr.rdbuf());
    }
    ~StdoutJson() {
        if (!realStdout_) return;
        std::cout.flush();
        std::cout.rdbuf(realStdout_);
        QFile f(dir_.filePath(QStringLiteral("results.json")));
        if (f.open(QIODevice::ReadOnly)) std::cout << f.readAll().toStdString() << std::flush;
    }
    StdoutJson(const StdoutJson&) = delete;
    StdoutJson& operator=(const StdoutJson&) = delete;

private:
    QTemporaryDir dir_;
    std::streambuf* realStdout_ = nullptr;
};

int cmdRun(const QStringList& args) {
    if (args.size() < 3) return usageError("run needs a preset file");
    Outputs out;
    bool quiet = false;
    std::string err;
    if (!parseOutputs(args, 3, out, quiet, err, /*allowProfile=*/true, /*allowAdvise=*/true))
        return usageError(err);
    spec::Preset preset;
    if (const auto refused = loadRunPreset(args[2], out, preset)) return *refused;
    if (!out.savePreset.isEmpty() && !savePresetFile(preset, out.savePreset)) return kExitUsage;
    const GateOptions gate{out.baseline, out.against, out.maxSlowdownPct, out.maxEnergyIncreasePct};
    if (!out.against.isEmpty()) {
        // The paired gate: the baseline's arms join the run, checked before anything is measured.
        std::string why;
        auto paired = pairedPreset(preset, out.against, modelDir(), why);
        if (!paired) {
            std::cerr << (why.rfind("pitlane-cli:", 0) == 0 || why.find('\n') != std::string::npos ? "" : "pitlane-cli: ")
                      << why << "\n";
            return kExitUsage;
        }
        preset = std::move(*paired);
    }
    const StdoutJson stdoutJson(out);
    if (preset.sweep.enabled && !quiet)
        std::cerr << "pitlane-cli: " << preset.file << ": run measures the preset as written; its sweep "
                     "block is run by `pitlane-cli sweep`\n";
    if (out.profileIters > 0) preset.run.profile_iters = out.profileIters;
    // Most rules read the operator profile: --advise takes one unless the preset or --profile did.
    if (out.advise && preset.run.profile_iters == 0 && !preset.serving.enabled) preset.run.profile_iters = 10;
    QString historyProblem;
    const auto history = openHistory(out.db, &historyProblem);
    // The gate's baseline, resolved before anything is measured ("latest" is then the run before
    // this one); it needs the history.
    std::optional<qint64> baselineRun;
    if (!out.baseline.isEmpty()) {
        if (!history && !historyProblem.isEmpty()) {
            // A history that cannot be opened (damaged, not SQLite, newer): 3, as for any run.
            std::cerr << "pitlane-cli: --baseline: the gate cannot read its baseline: nothing measured\n";
            return kExitNotStored;
        }
        if (!history) return usageError("--baseline needs the run history (not --db none)");
        std::string why;
        baselineRun = resolveBaseline(*history, gate, QString::fromStdString(preset.name), why);
        if (!baselineRun) return usageError(why);
        // A baseline whose stored samples fail their check cannot judge anything: refused before
        // anything is measured, with what is damaged (3: the history let the gate down).
        store::SampleCheck check;
        if (!history->loadRun(*baselineRun, &check)) {
            std::cerr << "pitlane-cli: --baseline: the gate cannot read run " << *baselineRun << ": "
                      << history->lastError().toStdString() << ": nothing measured\n";
            return kExitNotStored;
        }
        if (check.isDamaged()) {
            for (const QString& d : check.damaged)
                std::cerr << "pitlane-cli: damaged: " << d.toStdString() << "\n";
            std::cerr << "pitlane-cli: --baseline: the baseline run " << *baselineRun
                      << " is damaged in the history (" << check.damagedArms.join(", ").toStdString()
                      << "): the gate cannot judge against it; nothing measured (exit status 3). "
                         "`pitlane-cli check-history` lists the damage; choose another baseline\n";
            return kExitNotStored;
        }
    }
    const auto outcome = runPreset(preset, history.get(), QStringLiteral("cli"), quiet);
    std::cout << results::comparisonTable(outcome.result) << std::flush;
    const QString runId = outcome.runId ? QString::number(outcome.runId) : QString();
    if (!runId.isEmpty())
        std::cout << "\nrun id: " << runId.toStdString() << " (history " << history->path().toStdString()
                  << ")\n" << std::flush;
    const bool advised = adviseOutputs(outcome.result, out);
    const bool wroteFiles = writeOutputs(outcome.result, out, runId);
    const bool wrote = writeTraces(outcome.result, out, quiet) && wroteFiles && advised;
    int code = outcome.result.allOk() && wrote ? kExitOk : kExitArmFailed;
    if (baselineRun && outcome.runId) {
        const GateResult g = runGate(*history, outcome.runId, *baselineRun, gate);
        std::cout << g.table << std::flush;
        addGateToResultsJson(out, g.json);
        if (g.failed) code = kExitGateFailed;  // a regression is the finding a CI job must see
    } else if (baselineRun) {
        std::cerr << "pitlane-cli: the gate was not run: this run is not in the history\n";
    } else if (!out.against.isEmpty()) {
        const GateResult g = runPairedGate(outcome.result, gate);
        std::cout << g.table << std::flush;
        addGateToResultsJson(out, g.json);
        if (g.failed) code = kExitGateFailed;
    }
    return reportStorage(outcome, historyProblem, code);
}

// SQLite's full integrity_check (every page, index and constraint), read-only: the quick_check
// every open makes skips the cross-checks of indexes against their tables. Then what sound pages
// can still lack: a table, column or index of the file's schema version, and the samples of a
// run stored as finished and ok (RunStore::checkIntegrity).
int cmdCheckHistory(const QStringList& args) {
    Outputs out;
    bool quiet = false;
    std::string err;
    if (!parseOutputs(args, 2, out, quiet, err)) return usageError(err);
    if (out.any()) return usageError("check-history takes only --db");
    const QString path = store::RunStore::resolvePath(out.db);
    if (path.isEmpty()) return usageError("check-history needs a history file (--db none given)");
    const auto check = store::RunStore::checkIntegrity(path);
    if (!check.readable) {
        std::cerr << "pitlane-cli: " << path.toStdString() << ": " << check.error.toStdString()
                  << "\n";
        return kExitUsage;
    }
    for (const auto& problem : check.problems)
        std::cout << path.toStdString() << ": " << problem.toStdString() << "\n";
    const std::string unchecked =
        check.uncheckedChunks > 0
            ? "; " + std::to_string(check.uncheckedChunks) +
                  " sample chunks unchecked: stored before schema v12 kept a checksum per chunk"
            : std::string();
    if (check.problems.isEmpty()) {
        std::cout << path.toStdString() << ": ok (integrity_check; " << check.runs << " runs, "
                  << check.samples << " samples, each chunk's checksum, schema v" << check.schemaVersion
                  << unchecked << ")\n";
        return kExitOk;
    }
    std::cout << path.toStdString() << ": damaged: " << check.problems.size()
              << " problems found (SQLite's integrity_check, the tables and columns of its "
                 "schema, the samples of every finished run and each sample chunk's checksum, "
                 "runs stored incomplete" << unchecked << "); a damaged file: move it aside and "
                 "recover what it holds with sqlite3's .recover; an incomplete run: delete it "
                 "(pitlane-cli history delete ID) or keep it as the part it is\n";
    return kExitArmFailed;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef M_MMAP_THRESHOLD
    // A long run's statistics take copies of its samples tens of MB at a time (issue 31): with a
    // fixed threshold they are mapped and unmapped whole, so freed copies leave the process
    // instead of raising glibc's dynamic threshold and staying in its heap.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
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
    if (args[1] == "--version" || args[1] == "-V") {
        std::cout << "pitlane-cli " << PITLANE_VERSION << "\n";
        return kExitOk;
    }
    const QString cmd = args[1];
    setCurrentCommand(cmd);
    const std::vector<std::string> commands{"run", "lessons", "validate", "report", "check-history",
                                            "sweep", "sweep-status", "collect", "history", "compare"};
    // history and compare print their own, longer usage.
    if (args.size() > 2 && (args[2] == "--help" || args[2] == "-h") && cmd != "history" && cmd != "compare") {
        const std::string text = commandUsage(cmd);
        if (text.empty()) {
            setCurrentCommand({});
            return usageError("unknown command " + cmd.toStdString() + spec::didYouMean(cmd.toStdString(), commands));
        }
        std::cout << text;
        return kExitOk;
    }
    if (cmd == "run") return cmdRun(args);
    if (cmd == "lessons") return cmdLessons(args);
    if (cmd == "validate") return cmdValidate(args);
    if (cmd == "report") return cmdReport(args);
    if (cmd == "check-history") return cmdCheckHistory(args);
    if (cmd == "sweep") return cmdSweep(args);
    if (cmd == "sweep-status") return cmdSweepStatus(args);
    if (cmd == "collect") return cmdCollect(args);
    if (cmd == "history") return cmdHistory(args);
    if (cmd == "compare") return cmdCompare(args);
    setCurrentCommand({});
    return usageError("unknown command " + cmd.toStdString() + spec::didYouMean(cmd.toStdString(), commands));
}
