// pitlane-cli collect (issue 15, "Cluster sweeps"): every slice's results JSON of a sweep folder
// merged into one history run and one report. The arms are renamed "<model>/b<batch>/<arm>"; the
// run is not interleaved (the slices ran in other processes, at other times, maybe on other
// nodes), and its preset JSON carries `sweep_slices`, from which the history reads it back so.
#include "cli_sweep.h"

#include "pitlane/spec/preset.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <iostream>

namespace pitlane::cli {

using json = nlohmann::json;

namespace {

// The slices' results as they are merged into one run.
struct Merge {
    results::RunResult run;
    json slicesInfo = json::array(), armsJson = json::array();
    std::vector<std::string> missing, models, shas;
    std::string started;
};

// A slice's results file read back, or why it cannot be.
bool readSlice(const std::string& file, results::RunResult& r, std::string& why) {
    json j;
    if (!spec::readJsonFile(file, &j, &why)) return false;
    try {
        r = results::fromResultsJson(j);
    } catch (const std::exception& e) {
        why = e.what();
        return false;
    }
    return true;
}

// One slice of the manifest into the merge: its arms renamed "<label>/<arm>", or it is missing.
void addSlice(const QString& dir, const json& s, Merge& g) {
    const std::string label = s.value("label", std::string());
    const std::string file = QDir(dir).filePath(QString::fromStdString(s.value("results", ""))).toStdString();
    json info = {{"index", s.value("index", 0)}, {"label", label}, {"model", s.value("model", "")},
                 {"batch_size", s.value("batch_size", 0)}, {"results", s.value("results", "")}};
    results::RunResult r;
    std::string why;
    if (!readSlice(file, r, why)) {
        g.missing.push_back(idx3(s.value("index", 0)) + " (" + label + "): " + file + ": " + why);
        info["status"] = "missing";
        g.slicesInfo.push_back(info);
        return;
    }
    info["status"] = r.allOk() ? "ok" : "arm failed";
    g.slicesInfo.push_back(info);
    if (g.run.arms.empty()) {
        g.run.preset = r.preset;
        g.run.preset.input.clear();
    }
    // The model as the labels name it (a file by its stem), not its path.
    const std::string model = QFileInfo(QString::fromStdString(s.value("model", ""))).completeBaseName().toStdString();
    if (std::find(g.models.begin(), g.models.end(), model) == g.models.end()) g.models.push_back(model);
    if (!r.model_sha256.empty() && std::find(g.shas.begin(), g.shas.end(), r.model_sha256) == g.shas.end())
        g.shas.push_back(r.model_sha256);
    if (g.started.empty() || (!r.started_at.empty() && r.started_at < g.started)) g.started = r.started_at;
    g.run.wall_s += r.wall_s;
    for (auto& arm : r.arms) {
        arm.name = label + "/" + arm.name;
        g.armsJson.push_back({{"name", arm.name}, {"knobs", results::knobsJson(arm)}});
        g.run.arms.push_back(std::move(arm));
    }
}

// The merged run's name, model, digest and preset JSON (with `sweep_slices`, from which the
// history reads it back as a sweep).
void finishMerge(const json& m, const QString& dir, Merge& g) {
    auto& merged = g.run;
    std::string modelList;
    for (const auto& x : g.models) modelList += (modelList.empty() ? "" : "+") + x;
    merged.preset.name = m.value("name", std::string()) + " (sweep, " +
                         std::to_string(g.slicesInfo.size() - g.missing.size()) + " of " +
                         std::to_string(g.slicesInfo.size()) + " slices)";
    merged.preset.model = modelList;
    merged.model_sha256 = g.shas.size() == 1 ? g.shas.front() : std::string();
    merged.started_at = g.started;
    json raw;
    std::string why;
    spec::readJsonFile(m.value("preset", std::string()), &raw, &why);
    merged.preset_json = {{"name", merged.preset.name},
                          {"model", modelList},
                          {"sweep", raw.is_object() && raw.contains("sweep") ? raw["sweep"] : json()},
                          {"sweep_folder", QDir(dir).absolutePath().toStdString()},
                          {"sweep_slices", g.slicesInfo},
                          {"arms", g.armsJson}};
    if (raw.is_object() && raw.contains("run")) merged.preset_json["run"] = raw["run"];
}

}  // namespace

int cmdCollect(const QStringList& args) {
    if (args.size() < 3) return usageError("collect needs a sweep folder");
    if (args.contains("--status")) return cmdSweepStatus(QStringList{args[0], "sweep-status", args[2]});
    Outputs out;
    bool quiet = false;
    std::string err;
    if (!parseOutputs(args, 3, out, quiet, err)) return usageError(err);
    const QString dir = args[2];
    json m;
    if (!readManifest(dir, m, err)) return usageError(err);
    Merge g;
    g.run.interleaved = false;  // slices ran in other processes, at other times, maybe on other nodes
    for (const auto& s : m["slices"]) addSlice(dir, s, g);
    for (const auto& line : g.missing) std::cerr << "pitlane-cli collect: missing slice " << line << "\n";
    if (g.run.arms.empty()) {
        std::cerr << "pitlane-cli collect: no slice of " << dir.toStdString() << " has results yet ("
                  << "pitlane-cli sweep-status " << dir.toStdString() << ")\n";
        return kExitArmFailed;
    }
    finishMerge(m, dir, g);
    const auto& merged = g.run;
    std::cout << results::comparisonTable(merged) << std::flush;
    if (!g.missing.empty())
        std::cout << "\nmissing: " << g.missing.size() << " of " << g.slicesInfo.size()
                  << " slices have no results (see stderr); the run holds the others\n";
    QString problem;
    const auto history = openHistory(out.db, &problem);
    QString runId;
    bool stored = problem.isEmpty();
    if (history) {
        const auto id = history->importRun(merged, QStringLiteral("sweep"));
        if (id) {
            runId = QString::number(*id);
            std::cout << "\nrun id: " << *id << " (history " << history->path().toStdString() << ")\n";
        } else {
            stored = false;
            std::cerr << "pitlane-cli collect: run history: " << history->lastError().toStdString() << "\n";
        }
    }
    const bool wrote = writeOutputs(merged, out, runId);
    if (!stored) return kExitNotStored;
    return g.missing.empty() && merged.allOk() && wrote ? kExitOk : kExitArmFailed;
}

}  // namespace pitlane::cli
