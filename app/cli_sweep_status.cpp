// pitlane-cli sweep-status (cli_sweep.cpp has sweep): each slice's state, from Slurm (sacct, or
// squeue when accounting is off) while it knows the task, else from the slice's results file.
#include "cli_sweep.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace pitlane::cli {

using json = nlohmann::json;

// sweep-status: some tasks are still pending or running.
constexpr int kExitStillRunning = 4;



// A results file read where Slurm no longer knows the task: "" when every arm in it is ok, else
// which arm did not finish and why (pitlane-cli run writes the file even when an arm failed).
static std::string resultsProblem(const QString& file) {
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
static void parseTaskIds(const std::string& id, const std::string& job, std::vector<std::size_t>& tasks) {
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
static std::map<std::size_t, TaskState> slurmStates(const std::string& job, std::string& source) {
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
