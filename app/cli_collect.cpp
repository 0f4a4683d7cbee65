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
    results::RunResult merged;
    merged.interleaved = false;  // slices ran in other processes, at other times, maybe on other nodes
    json slicesInfo = json::array(), armsJson = json::array();
    std::vector<std::string> missing, models, shas;
    std::string started;
    for (const auto& s : m["slices"]) {
        const std::string label = s.value("label", std::string());
        const std::string file = QDir(dir).filePath(QString::fromStdString(s.value("results", ""))).toStdString();
        json info = {{"index", s.value("index", 0)}, {"label", label}, {"model", s.value("model", "")},
                     {"batch_size", s.value("batch_size", 0)}, {"results", s.value("results", "")}};
        json j;
        std::string why;
        results::RunResult r;
        bool ok = spec::readJsonFile(file, &j, &why);
        if (ok) {
            try {
                r = results::fromResultsJson(j);
            } catch (const std::exception& e) {
                ok = false;
                why = e.what();
            }
        }
        if (!ok) {
            missing.push_back(idx3(s.value("index", 0)) + " (" + label + "): " + file + ": " + why);
            info["status"] = "missing";
            slicesInfo.push_back(info);
            continue;
        }
        info["status"] = r.allOk() ? "ok" : "arm failed";
        slicesInfo.push_back(info);
        if (merged.arms.empty()) {
            merged.preset = r.preset;
            merged.preset.input.clear();
        }
        // The model as the labels name it (a file by its stem), not its path.
        const std::string model = QFileInfo(QString::fromStdString(s.value("model", ""))).completeBaseName().toStdString();
        if (std::find(models.begin(), models.end(), model) == models.end()) models.push_back(model);
        if (!r.model_sha256.empty() && std::find(shas.begin(), shas.end(), r.model_sha256) == shas.end())
            shas.push_back(r.model_sha256);
        if (started.empty() || (!r.started_at.empty() && r.started_at < started)) started = r.started_at;
        merged.wall_s += r.wall_s;
        for (auto& a : r.arms) {
            a.name = label + "/" + a.name;
            armsJson.push_back({{"name", a.name}, {"knobs", a.knobs}});
            merged.arms.push_back(std::move(a));
        }
    }
    for (const auto& line : missing) std::cerr << "pitlane-cli collect: missing slice " << line << "\n";
    if (merged.arms.empty()) {
        std::cerr << "pitlane-cli collect: no slice of " << dir.toStdString() << " has results yet ("
                  << "pitlane-cli sweep-status " << dir.toStdString() << ")\n";
        return kExitArmFailed;
    }
    std::string modelList;
    for (const auto& x : models) modelList += (modelList.empty() ? "" : "+") + x;
    merged.preset.name = m.value("name", std::string()) + " (sweep, " + std::to_string(slicesInfo.size() - missing.size()) +
                         " of " + std::to_string(slicesInfo.size()) + " slices)";
    merged.preset.model = modelList;
    merged.model_sha256 = shas.size() == 1 ? shas.front() : std::string();
    merged.started_at = started;
    json raw;
    std::string why;
    spec::readJsonFile(m.value("preset", std::string()), &raw, &why);
    merged.preset_json = {{"name", merged.preset.name},
                          {"model", modelList},
                          {"sweep", raw.is_object() && raw.contains("sweep") ? raw["sweep"] : json()},
                          {"sweep_folder", QDir(dir).absolutePath().toStdString()},
                          {"sweep_slices", slicesInfo},
                          {"arms", armsJson}};
    if (raw.is_object() && raw.contains("run")) merged.preset_json["run"] = raw["run"];
    std::cout << results::comparisonTable(merged) << std::flush;
    if (!missing.empty())
        std::cout << "\nmissing: " << missing.size() << " of " << slicesInfo.size()
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
    return missing.empty() && merged.allOk() && wrote ? kExitOk : kExitArmFailed;
}

}  // namespace pitlane::cli
