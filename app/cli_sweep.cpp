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

namespace {

// sweep-status: some tasks are still pending or running.
constexpr int kExitStillRunning = 4;

bool writeManifest(const QString& dir, const json& m, std::string& err) {
    return writeText(manifestPath(dir), m.dump(2) + "\n", err);
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

std::string shellQuote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// "3,5,7": the indices as sbatch --array takes them.
std::string arrayList(const std::vector<std::size_t>& indices) {
    std::string s;
    for (auto i : indices) s += (s.empty() ? "" : ",") + std::to_string(i);
    return s;
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

// ---- task states -------------------------------------------------------------------------

struct TaskState {
    std::string state;    // Slurm's (COMPLETED, FAILED, PENDING, …), or NOT_RUN / NO_RESULTS
    std::string source;   // sacct, squeue, results file, local run
    std::string detail;   // exit code, why
};

// A results file read where Slurm no longer knows the task: "" when every arm in it is ok, else
// which arm did not finish and why (pitlane-cli run writes the file even when an arm failed).
std::string resultsProblem(const QString& file) {
    json j;
    std::string why;
    if (!spec::readJsonFile(file.toStdString(), &j, &why)) return "results file: " + why;
    if (!j.is_object() || !j.contains("arms") || !j["arms"].is_array()) return "results file has no arms";
    for (const auto& a : j["arms"]) {
        if (!a.is_object() || a.value("status", std::string()) == "ok") continue;
        std::string code;
        if (a.contains("error") && a["error"].is_object()) code = " (" + a["error"].value("code", std::string()) + ")";
        return "arm " + a.value("name", std::string("?")) + " " + a.value("status", std::string("?")) + code;
    }
    return "";
}

bool activeState(const std::string& s) {
    static const std::set<std::string> active = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING",
                                                 "REQUEUED", "RESIZING", "SUSPENDED", "REQUEUE_HOLD",
                                                 "REQUEUE_FED", "STAGE_OUT", "SIGNALING"};
    return active.count(s) > 0;
}

// "12_3" -> task 3 of job 12; "12_[0-3,5]" (a pending array) -> tasks 0..3 and 5.
void parseTaskIds(const std::string& id, const std::string& job, std::vector<std::size_t>& tasks) {
    const auto us = id.find('_');
    if (us == std::string::npos || id.substr(0, us) != job) return;
    std::string rest = id.substr(us + 1);
    if (!rest.empty() && rest.front() == '[') {
        rest = rest.substr(1, rest.find(']') - 1);
        rest = rest.substr(0, rest.find('%'));  // a throttle "%2"
        std::stringstream ss(rest);
        std::string part;
        while (std::getline(ss, part, ',')) {
            const auto dash = part.find('-');
            try {
                const std::size_t a = std::stoul(part.substr(0, dash));
                const std::size_t b = dash == std::string::npos ? a : std::stoul(part.substr(dash + 1));
                for (std::size_t t = a; t <= b && t < 100000; ++t) tasks.push_back(t);
            } catch (const std::exception&) {
            }
        }
        return;
    }
    try {
        tasks.push_back(std::stoul(rest));
    } catch (const std::exception&) {
    }
}

// The states Slurm knows of `job`'s array tasks: sacct when accounting is configured, else
// squeue (which remembers finished jobs for MinJobAge, 300 s by default). `source` says which
// answered ("" when neither did).
std::map<std::size_t, TaskState> slurmStates(const std::string& job, std::string& source) {
    std::map<std::size_t, TaskState> states;
    std::string out, err;
    const int rc = runTool("sacct", {"-n", "-P", "-X", "-j", QString::fromStdString(job), "-o",
                                     "JobID,State,ExitCode"}, &out, &err);
    if (rc == 0 && !trim(out).empty()) {
        source = "sacct";
        std::stringstream ss(out);
        std::string line;
        while (std::getline(ss, line)) {
            std::stringstream ls(line);
            std::string id, state, exitCode;
            std::getline(ls, id, '|');
            std::getline(ls, state, '|');
            std::getline(ls, exitCode, '|');
            state = state.substr(0, state.find(' '));  // "CANCELLED by 0"
            std::vector<std::size_t> tasks;
            parseTaskIds(id, job, tasks);
            for (auto t : tasks) states[t] = {state, "sacct", "exit " + trim(exitCode)};
        }
        return states;
    }
    if (runTool("squeue", {"-h", "-r", "-t", "all", "-j", QString::fromStdString(job), "-o", "%i|%T"},
                &out, &err) == 0) {
        source = "squeue";
        std::stringstream ss(out);
        std::string line;
        while (std::getline(ss, line)) {
            const auto bar = line.find('|');
            if (bar == std::string::npos) continue;
            std::vector<std::size_t> tasks;
            parseTaskIds(line.substr(0, bar), job, tasks);
            for (auto t : tasks) states[t] = {trim(line.substr(bar + 1)), "squeue", ""};
        }
    }
    return states;
}

// Every slice's state. Slurm's word wins while it has one; a task Slurm no longer knows is
// COMPLETED when its results file exists, else NO_RESULTS (a failure).
std::vector<TaskState> sliceStates(const QString& dir, const json& m) {
    const auto& slices = m["slices"];
    std::vector<TaskState> states(slices.size());
    const bool slurm = m.value("mode", std::string()) == "slurm";
    std::map<std::string, std::map<std::size_t, TaskState>> byJob;
    std::map<std::string, std::string> sourceOf;
    for (std::size_t i = 0; i < slices.size(); ++i) {
        const auto& s = slices[i];
        const bool haveResults = QFileInfo::exists(QDir(dir).filePath(QString::fromStdString(s.value("results", ""))));
        if (!slurm) {
            // The sweep running the slices is alive (its pid in the manifest, /proc/<pid> there).
            const long pid = m.value("local_pid", 0L);
            const bool sweeping = pid > 0 && QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid));
            const bool started = s.contains("started_at");
            if (!s.contains("exit_code") || s["exit_code"].is_null())
                states[i] = sweeping ? TaskState{started ? "RUNNING" : "PENDING", "local run", ""}
                            : started ? TaskState{"FAILED", "local run", "interrupted: the sweep stopped during this slice"}
                                      : TaskState{"NOT_RUN", "local run", "not run yet"};
            else if (s["exit_code"] == 0 && haveResults)
                states[i] = {"COMPLETED", "local run", "exit 0"};
            else
                states[i] = {"FAILED", "local run", "exit " + s["exit_code"].dump() +
                                                        (haveResults ? "" : ", no results file")};
            continue;
        }
        const std::string job = s.value("job", std::string());
        if (job.empty()) {
            states[i] = {"NOT_RUN", "", "never submitted"};
            continue;
        }
        if (!byJob.count(job)) byJob[job] = slurmStates(job, sourceOf[job]);
        const auto& known = byJob[job];
        const auto it = known.find(s.value("index", i));
        if (it != known.end()) {
            states[i] = it->second;
            if (states[i].state == "COMPLETED" && !haveResults) {
                states[i].state = "NO_RESULTS";
                states[i].detail = "Slurm says COMPLETED but " + s.value("results", std::string()) + " is missing";
            }
        } else if (haveResults) {
            const QString file = QDir(dir).filePath(QString::fromStdString(s.value("results", "")));
            const std::string problem = resultsProblem(file);
            if (problem.empty())
                states[i] = {"COMPLETED", "results file", "no longer in Slurm's queue; results written"};
            else
                states[i] = {"FAILED", "results file", "no longer in Slurm's queue; " + problem};
        } else {
            states[i] = {"NO_RESULTS", sourceOf[job].empty() ? "no sacct or squeue answer" : sourceOf[job],
                         "not in Slurm's queue and no results file"};
        }
    }
    return states;
}

bool failedState(const TaskState& t) {
    return t.state != "COMPLETED" && !activeState(t.state);
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

}  // namespace

int cmdSweep(const QStringList& args) {
    if (args.size() < 3) return usageError("sweep needs a preset file with a sweep block (or a sweep folder)");
    bool slurm = false, resubmit = false, quiet = false;
    QString partition, time, outDir;
    QStringList extra;  // --sbatch ARG: more #SBATCH lines (--gres=gpu:1, --cpus-per-task=8, …)
    for (int i = 3; i < args.size(); ++i) {
        const QString a = args[i];
        auto value = [&](QString& dst) {
            if (i + 1 >= args.size() || args[i + 1].startsWith("--")) return false;
            dst = args[++i];
            return !dst.isEmpty();
        };
        if (a == "--slurm") slurm = true;
        else if (a == "--resubmit-failed") resubmit = true;
        else if (a == "--quiet" || a == "-q") quiet = true;
        else if (a == "--partition") { if (!value(partition)) return usageError("--partition needs a partition name"); }
        else if (a == "--time") { if (!value(time)) return usageError("--time needs a time limit (e.g. 30, 1:00:00)"); }
        else if (a == "--out") { if (!value(outDir)) return usageError("--out needs a folder"); }
        else if (a == "--sbatch") {
            if (i + 1 >= args.size() || !args[i + 1].startsWith("--") || args[i + 1].contains('\n'))
                return usageError("--sbatch needs one sbatch option, e.g. --sbatch --gres=gpu:1");
            extra << args[++i];
        }
        else return usageError("sweep: unknown option " + a.toStdString());
    }
    const QString source = args[2];
    if (resubmit) {
        if (!QFileInfo(source).isDir()) return usageError("--resubmit-failed needs a sweep folder, not " + source.toStdString());
        return resubmitFailed(source, quiet);
    }
    if (QFileInfo(source).isDir())
        return usageError(source.toStdString() + " is a folder: sweep takes a preset (sweep DIR --resubmit-failed "
                                                  "resubmits a sweep's failed slices)");
    if (!extra.isEmpty() && !slurm) return usageError("--sbatch applies to --slurm sweeps only");
    for (const QString& v : {partition, time})
        if (v.contains(QRegularExpression("[\\s'\"\\\\]")))
            return usageError("--partition / --time: " + v.toStdString() + " holds a space or a quote");
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
    if (outDir.isEmpty()) {
        QString stem = QString::fromStdString(preset.name);
        stem.replace(QRegularExpression("[^A-Za-z0-9._-]+"), "_");
        outDir = "sweep-" + stem.left(40) + "-" + QDateTime::currentDateTimeUtc().toString("yyyyMMdd-HHmmss");
    }
    const QString dir = QDir(outDir).absolutePath();
    if (slurm && dir.contains(QRegularExpression("[\\s%]")))
        return usageError("--out " + dir.toStdString() + ": a Slurm sweep's folder cannot hold a space or % "
                                                         "(sbatch's --output pattern)");
    if (QFileInfo::exists(manifestPath(dir)))
        return usageError(dir.toStdString() + " already holds a sweep (sweep.json); choose another --out");
    for (const char* sub : {"slices", "results", "logs"})
        if (!QDir().mkpath(QDir(dir).filePath(sub)))
            return usageError("--out " + dir.toStdString() + ": cannot create " + sub + "/");
    json m = {{"version", 1},
              {"preset", QFileInfo(source).absoluteFilePath().toStdString()},
              {"name", preset.name},
              {"mode", slurm ? "slurm" : "local"},
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
    std::cout << "sweep " << dir.toStdString() << ": " << slices.size() << " slices of " << preset.name << "\n";
    if (!slurm) {
        std::vector<std::size_t> all(slices.size());
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
        const bool ok = runLocally(dir, m, all, quiet);
        std::cout << "collect them: pitlane-cli collect " << dir.toStdString() << "\n";
        return ok ? kExitOk : kExitArmFailed;
    }
    if (!writeText(QDir(dir).filePath("sweep.sbatch"), sbatchScript(dir, slices.size(), partition, time, extra), err))
        return std::cerr << "pitlane-cli: " << err << "\n", kExitUsage;
    m["slurm"] = {{"partition", partition.toStdString()}, {"time", time.toStdString()}, {"script", "sweep.sbatch"}};
    std::string job;
    if (!submit(dir, {}, job, err)) {
        std::string manifestErr;
        writeManifest(dir, m, manifestErr);  // no job: sweep-status says so, --resubmit-failed submits all
        std::cerr << "pitlane-cli: " << err << "\n";
        return kExitArmFailed;
    }
    for (auto& s : m["slices"]) s["job"] = job;
    m["jobs"].push_back({{"id", job}, {"array", "0-" + std::to_string(slices.size() - 1)}});
    if (!writeManifest(dir, m, err)) return std::cerr << "pitlane-cli: " << err << "\n", kExitArmFailed;
    std::cout << "submitted Slurm job " << job << " (array 0-" << slices.size() - 1 << ")\n"
              << "status: pitlane-cli sweep-status " << dir.toStdString() << "\n"
              << job << "\n";
    return kExitOk;
}

int cmdSweepStatus(const QStringList& args) {
    if (args.size() < 3) return usageError("sweep-status needs a sweep folder");
    const QString dir = args[2];
    json m;
    std::string err;
    if (!readManifest(dir, m, err)) return usageError(err);
    const auto states = sliceStates(dir, m);
    std::map<std::string, int> counts;
    std::vector<std::size_t> failed;
    bool active = false;
    std::cout << "sweep " << QDir(dir).absolutePath().toStdString() << ": " << states.size() << " slices ("
              << m.value("mode", std::string()) << ")\n";
    for (std::size_t i = 0; i < states.size(); ++i) {
        const auto& s = m["slices"][i];
        const auto& t = states[i];
        const std::string task = s.contains("job") ? s["job"].get<std::string>() + "_" + std::to_string(i) : "-";
        std::cout << "  " << idx3(i) << "  " << std::left << std::setw(24) << s.value("label", std::string())
                  << std::setw(12) << task << std::setw(12) << t.state << " " << t.detail
                  << (t.source.empty() ? "" : " [" + t.source + "]") << "\n";
        ++counts[activeState(t.state) ? t.state : failedState(t) ? "FAILED" : "COMPLETED"];
        active |= activeState(t.state);
        if (failedState(t)) failed.push_back(i);
    }
    std::cout << "completed " << counts["COMPLETED"] << ", failed " << counts["FAILED"] << ", pending "
              << counts["PENDING"] << ", running " << (counts["RUNNING"] + counts["COMPLETING"] + counts["CONFIGURING"])
              << "\n";
    if (!failed.empty()) {
        std::cout << "failed slices: " << arrayList(failed) << "\n";
        for (auto i : failed) {
            const auto& s = m["slices"][i];
            const QString log = QDir(dir).filePath(QString::fromStdString(
                "logs/" + s.value("job", std::string()) + "_" + std::to_string(i) + ".out"));
            std::cout << "  " << idx3(i) << " " << s.value("label", std::string()) << ": " << states[i].state
                      << (QFileInfo::exists(log) ? ", log " + log.toStdString() : std::string()) << "\n";
        }
        std::cout << "resubmit them: pitlane-cli sweep " << dir.toStdString() << " --resubmit-failed\n";
    }
    if (active) return kExitStillRunning;
    return failed.empty() ? kExitOk : kExitArmFailed;
}

}  // namespace pitlane::cli
