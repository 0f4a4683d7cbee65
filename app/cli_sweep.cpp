// pitlane-cli sweep / sweep-status / collect (issue 15, "Cluster sweeps"): a preset's `sweep`
// block expanded into one preset per slice (spec::expandSweep), run locally one after another or
// as a Slurm job array (sbatch --array), its tasks' states from sacct (or squeue and the results
// files when accounting is off), failed tasks resubmitted, and every slice's results JSON merged
// into one history run and one report.
//
// collect is in cli_collect.cpp. A sweep folder DIR holds sweep.json (the manifest: the preset, each slice's label, files and
// the Slurm job that last ran it), slices/NNN.json, results/NNN.json, logs/ and sweep.sbatch.
#include "cli_sweep.h"

#include "pitlane/spec/preset.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QSaveFile>

#include <algorithm>
#include <optional>
#include <cctype>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace pitlane::cli {

using json = nlohmann::json;

std::string idx3(std::size_t i) {
    std::ostringstream o;
    o << std::setw(3) << std::setfill('0') << i;
    return o.str();
}

QString manifestPath(const QString& dir) { return QDir(dir).filePath("sweep.json"); }

bool writeText(const QString& path, const std::string& text, std::string& err) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), qint64(text.size())) != qint64(text.size()) ||
        !f.commit()) {
        err = path.toStdString() + ": " + f.errorString().toStdString();
        return false;
    }
    return true;
}

bool readManifest(const QString& dir, json& m, std::string& err) {
    std::string why;
    if (!spec::readJsonFile(manifestPath(dir).toStdString(), &m, &why)) {
        err = dir.toStdString() + " is not a sweep folder (" + manifestPath(dir).toStdString() + ": " + why + ")";
        return false;
    }
    if (!m.is_object() || !m.contains("slices") || !m["slices"].is_array()) {
        err = manifestPath(dir).toStdString() + ": not a sweep manifest (no slices)";
        return false;
    }
    return true;
}

// Runs a program to its end: its exit code, or -1 when it could not be started.
int runTool(const QString& program, const QStringList& args, std::string* out, std::string* err) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForStarted(10000)) {
        if (err) *err = program.toStdString() + ": " + p.errorString().toStdString();
        return -1;
    }
    p.waitForFinished(120000);
    if (out) *out = p.readAllStandardOutput().toStdString();
    if (err) *err = p.readAllStandardError().toStdString();
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

std::string trim(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t b = 0;
    while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    return s.substr(b);
}

// "3,5,7": the indices as sbatch --array takes them.
std::string arrayList(const std::vector<std::size_t>& indices) {
    std::string s;
    for (auto i : indices) s += (s.empty() ? "" : ",") + std::to_string(i);
    return s;
}

namespace {

bool writeManifest(const QString& dir, const json& m, std::string& err) {
    return writeText(manifestPath(dir), m.dump(2) + "\n", err);
}

std::string shellQuote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// sbatch --parsable prints "JOBID" or "JOBID;CLUSTER".
bool submit(const QString& dir, const QStringList& extra, std::string& jobId, std::string& err) {
    std::string out, serr;
    QStringList args{"--parsable"};
    args << extra << QDir(dir).filePath("sweep.sbatch");
    const int rc = runTool("sbatch", args, &out, &serr);
    if (rc != 0) {
        err = "sbatch " + args.join(' ').toStdString() + " failed" +
              (rc < 0 ? ": " + serr : " (exit " + std::to_string(rc) + "): " + trim(serr));
        return false;
    }
    jobId = trim(out.substr(0, out.find(';')));
    if (jobId.empty()) {
        err = "sbatch printed no job id";
        return false;
    }
    return true;
}

// ---- sweep ---------------------------------------------------------------------------------

// The slices given to `pitlane-cli run` one after another (the CLI of this build, in a process
// of its own each, --db none: the sweep's history run is made by collect). Records each exit code.
bool runLocally(const QString& dir, json& m, const std::vector<std::size_t>& which, bool quiet) {
    bool allOk = true;
    m["local_pid"] = QCoreApplication::applicationPid();
    for (auto i : which) m["slices"][i].erase("started_at");
    const QString cli = QCoreApplication::applicationFilePath();
    for (auto i : which) {
        auto& s = m["slices"][i];
        const QString preset = QDir(dir).filePath(QString::fromStdString(s["preset"].get<std::string>()));
        const QString results = QDir(dir).filePath(QString::fromStdString(s["results"].get<std::string>()));
        QFile::remove(results);
        s.erase("exit_code");
        s["started_at"] = results::isoNowUtc();
        std::string startErr;
        if (!writeManifest(dir, m, startErr)) std::cerr << "pitlane-cli: " << startErr << "\n";
        std::cerr << "pitlane-cli sweep: slice " << idx3(i) << " (" << s["label"].get<std::string>()
                  << "): pitlane-cli run " << preset.toStdString() << "\n";
        QProcess p;
        p.setProcessChannelMode(QProcess::ForwardedChannels);
        QStringList args{"run", preset, "--json", results, "--db", "none"};
        if (quiet) args << "--quiet";
        p.start(cli, args);
        int rc = -1;
        if (p.waitForStarted(10000) && p.waitForFinished(-1) && p.exitStatus() == QProcess::NormalExit)
            rc = p.exitCode();
        s["exit_code"] = rc;
        allOk &= rc == 0;
        std::string err;
        if (!writeManifest(dir, m, err)) std::cerr << "pitlane-cli: " << err << "\n";
        if (interrupted()) break;
    }
    return allOk;
}

std::string sbatchScript(const QString& dir, std::size_t n, const QString& partition, const QString& time,
                         const QStringList& extra) {
    const std::string d = QDir(dir).absolutePath().toStdString();
    std::ostringstream o;
    o << "#!/bin/bash\n"
      << "#SBATCH --job-name=pitlane-sweep\n"
      << "#SBATCH --array=0-" << (n - 1) << "\n"
      << "#SBATCH --output=" << d << "/logs/%A_%a.out\n";
    if (!partition.isEmpty()) o << "#SBATCH --partition=" << partition.toStdString() << "\n";
    if (!time.isEmpty()) o << "#SBATCH --time=" << time.toStdString() << "\n";
    for (const auto& arg : extra) o << "#SBATCH " << arg.toStdString() << "\n";
    o << "# Written by pitlane-cli sweep: each array task runs one slice of the sweep\n"
      << "# (slices/NNN.json) and writes its results JSON; `pitlane-cli collect` merges them.\n"
      << "set -u\n"
      << "i=$(printf %03d \"$SLURM_ARRAY_TASK_ID\")\n"
      << "exec " << shellQuote(QCoreApplication::applicationFilePath().toStdString()) << " run "
      << shellQuote(d + "/slices/") << "\"$i.json\" --json " << shellQuote(d + "/results/")
      << "\"$i.json\" --db none\n";
    return o.str();
}

int resubmitFailed(const QString& dir, bool quiet) {
    json m;
    std::string err;
    if (!readManifest(dir, m, err)) return usageError(err);
    const auto states = sliceStates(dir, m);
    std::vector<std::size_t> failed;
    for (std::size_t i = 0; i < states.size(); ++i)
        if (failedState(states[i])) failed.push_back(i);
    if (failed.empty()) {
        std::cout << "no failed slices in " << dir.toStdString() << ": nothing to resubmit\n";
        return kExitOk;
    }
    for (auto i : failed)  // a stale results file of a failed task must not be collected
        QFile::remove(QDir(dir).filePath(QString::fromStdString(m["slices"][i]["results"].get<std::string>())));
    if (m.value("mode", std::string()) != "slurm") {
        const bool ok = runLocally(dir, m, failed, quiet);
        return ok ? kExitOk : kExitArmFailed;
    }
    std::string job;
    if (!submit(dir, {"--array=" + QString::fromStdString(arrayList(failed))}, job, err)) {
        std::cerr << "pitlane-cli: " << err << "\n";
        return kExitArmFailed;
    }
    for (auto i : failed) m["slices"][i]["job"] = job;
    m["jobs"].push_back({{"id", job}, {"array", arrayList(failed)}});
    if (!writeManifest(dir, m, err)) return std::cerr << "pitlane-cli: " << err << "\n", kExitArmFailed;
    std::cout << "resubmitted slices " << arrayList(failed) << " as Slurm job " << job << "\n"
              << job << "\n";
    return kExitOk;
}

struct SweepOptions {
    bool slurm = false, resubmit = false, quiet = false;
    QString partition, time, outDir;
    QStringList extra;  // --sbatch ARG: more #SBATCH lines (--gres=gpu:1, --cpus-per-task=8, …)
};

// sweep's options; an exit code when one is wrong (said), nothing when they are read.
std::optional<int> parseSweepOptions(const QStringList& args, SweepOptions& o) {
    for (int i = 3; i < args.size(); ++i) {
        const QString a = args[i];
        auto value = [&](QString& dst) {
            if (i + 1 >= args.size() || args[i + 1].startsWith("--")) return false;
            dst = args[++i];
            return !dst.isEmpty();
        };
        if (a == "--slurm") o.slurm = true;
        else if (a == "--resubmit-failed") o.resubmit = true;
        else if (a == "--quiet" || a == "-q") o.quiet = true;
        else if (a == "--partition") { if (!value(o.partition)) return usageError("--partition needs a partition name"); }
        else if (a == "--time") { if (!value(o.time)) return usageError("--time needs a time limit (e.g. 30, 1:00:00)"); }
        else if (a == "--out") { if (!value(o.outDir)) return usageError("--out needs a folder"); }
        else if (a == "--sbatch") {
            if (i + 1 >= args.size() || !args[i + 1].startsWith("--") || args[i + 1].contains('\n'))
                return usageError("--sbatch needs one sbatch option, e.g. --sbatch --gres=gpu:1");
            o.extra << args[++i];
        }
        else return usageError("sweep: unknown option " + a.toStdString());
    }
    if (!o.extra.isEmpty() && !o.slurm) return usageError("--sbatch applies to --slurm sweeps only");
    for (const QString& v : {o.partition, o.time})
        if (v.contains(QRegularExpression("[\\s'\"\\\\]")))
            return usageError("--partition / --time: " + v.toStdString() + " holds a space or a quote");
    return std::nullopt;
}

// The sweep folder: slices/NNN.json for every slice and the manifest. An exit code when it
// cannot be made (said).
std::optional<int> writeSweepFolder(const QString& source, const spec::Preset& preset,
                                    const std::vector<spec::SweepSlice>& slices, const SweepOptions& o,
                                    const QString& dir, json& m) {
    if (o.slurm && dir.contains(QRegularExpression("[\\s%]")))
        return usageError("--out " + dir.toStdString() + ": a Slurm sweep's folder cannot hold a space or % "
                                                         "(sbatch's --output pattern)");
    if (QFileInfo::exists(manifestPath(dir)))
        return usageError(dir.toStdString() + " already holds a sweep (sweep.json); choose another --out");
    for (const char* sub : {"slices", "results", "logs"})
        if (!QDir().mkpath(QDir(dir).filePath(sub)))
            return usageError("--out " + dir.toStdString() + ": cannot create " + sub + "/");
    m = {{"version", 1},
         {"preset", QFileInfo(source).absoluteFilePath().toStdString()},
         {"name", preset.name},
         {"mode", o.slurm ? "slurm" : "local"},
         {"created_at", results::isoNowUtc()},
         {"jobs", json::array()},
         {"slices", json::array()}};
    std::string err;
    for (const auto& s : slices) {
        const std::string presetFile = "slices/" + idx3(s.index) + ".json";
        if (!writeText(QDir(dir).filePath(QString::fromStdString(presetFile)), s.preset.dump(2) + "\n", err))
            return std::cerr << "pitlane-cli: " << err << "\n", kExitUsage;
        m["slices"].push_back({{"index", s.index}, {"label", s.label}, {"model", s.model},
                               {"batch_size", s.batch_size}, {"preset", presetFile},
                               {"results", "results/" + idx3(s.index) + ".json"}});
    }
    if (!writeManifest(dir, m, err)) return std::cerr << "pitlane-cli: " << err << "\n", kExitUsage;
    return std::nullopt;
}

// The slices as one Slurm job array; the job recorded in the manifest.
int submitSweep(const QString& dir, json& m, std::size_t n, const SweepOptions& o) {
    std::string err;
    if (!writeText(QDir(dir).filePath("sweep.sbatch"), sbatchScript(dir, n, o.partition, o.time, o.extra), err))
        return std::cerr << "pitlane-cli: " << err << "\n", kExitUsage;
    m["slurm"] = {{"partition", o.partition.toStdString()}, {"time", o.time.toStdString()}, {"script", "sweep.sbatch"}};
    std::string job;
    if (!submit(dir, {}, job, err)) {
        std::string manifestErr;
        writeManifest(dir, m, manifestErr);  // no job: sweep-status says so, --resubmit-failed submits all
        std::cerr << "pitlane-cli: " << err << "\n";
        return kExitArmFailed;
    }
    for (auto& s : m["slices"]) s["job"] = job;
    m["jobs"].push_back({{"id", job}, {"array", "0-" + std::to_string(n - 1)}});
    if (!writeManifest(dir, m, err)) return std::cerr << "pitlane-cli: " << err << "\n", kExitArmFailed;
    std::cout << "submitted Slurm job " << job << " (array 0-" << n - 1 << ")\n"
              << "status: pitlane-cli sweep-status " << dir.toStdString() << "\n"
              << job << "\n";
    return kExitOk;
}

}  // namespace

int cmdSweep(const QStringList& args) {
    if (args.size() < 3) return usageError("sweep needs a preset file with a sweep block (or a sweep folder)");
    SweepOptions o;
    if (const auto refused = parseSweepOptions(args, o)) return *refused;
    const QString source = args[2];
    if (o.resubmit) {
        if (!QFileInfo(source).isDir()) return usageError("--resubmit-failed needs a sweep folder, not " + source.toStdString());
        return resubmitFailed(source, o.quiet);
    }
    if (QFileInfo(source).isDir())
        return usageError(source.toStdString() + " is a folder: sweep takes a preset (sweep DIR --resubmit-failed "
                                                  "resubmits a sweep's failed slices)");
    const auto errors = spec::validatePresetFile(source.toStdString(), modelDir());
    if (!errors.empty()) {
        for (const auto& e : errors) std::cerr << e.what() << "\n";
        std::cerr << "pitlane-cli: invalid preset: " << errors.size() << (errors.size() == 1 ? " error" : " errors")
                  << " in " << source.toStdString() << "\n";
        return kExitUsage;
    }
    const auto preset = spec::loadPresetFile(source.toStdString(), modelDir());
    if (!preset.sweep.enabled)
        return usageError(source.toStdString() + ": sweep: the preset has no sweep block (e.g. \"sweep\": "
                                                 "{\"models\": [\"mlp\", \"lstm\"], \"batch_sizes\": [1, 8]})");
    const auto slices = spec::expandSweep(preset);
    QString outDir = o.outDir;
    if (outDir.isEmpty()) {
        QString stem = QString::fromStdString(preset.name);
        stem.replace(QRegularExpression("[^A-Za-z0-9._-]+"), "_");
        outDir = "sweep-" + stem.left(40) + "-" + QDateTime::currentDateTimeUtc().toString("yyyyMMdd-HHmmss");
    }
    const QString dir = QDir(outDir).absolutePath();
    json m;
    if (const auto failed = writeSweepFolder(source, preset, slices, o, dir, m)) return *failed;
    std::cout << "sweep " << dir.toStdString() << ": " << slices.size() << " slices of " << preset.name << "\n";
    if (o.slurm) return submitSweep(dir, m, slices.size(), o);
    std::vector<std::size_t> all(slices.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    const bool ok = runLocally(dir, m, all, o.quiet);
    std::cout << "collect them: pitlane-cli collect " << dir.toStdString() << "\n";
    return ok ? kExitOk : kExitArmFailed;
}

}  // namespace pitlane::cli
