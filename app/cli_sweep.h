#pragma once
// What pitlane-cli's sweep commands share (cli_sweep.cpp: sweep, sweep-status; cli_collect.cpp:
// collect): the sweep folder's manifest, DIR/sweep.json.
#include "cli_common.h"

#include <nlohmann/json.hpp>

#include <QString>

#include <QStringList>

#include <string>
#include <vector>

namespace pitlane::cli {

// "007": a slice's number in its file names.
std::string idx3(std::size_t i);
QString manifestPath(const QString& dir);
// DIR/sweep.json with its slices; false with `err` saying why DIR is not a sweep folder.
bool readManifest(const QString& dir, nlohmann::json& m, std::string& err);

// Runs a program to its end: its exit code, or -1 when it could not be started.
int runTool(const QString& program, const QStringList& args, std::string* out, std::string* err);
std::string trim(std::string s);
// "3,5,7": the indices as sbatch --array takes them.
std::string arrayList(const std::vector<std::size_t>& indices);

// A slice's state (cli_sweep_status.cpp).
struct TaskState {
    std::string state;    // Slurm's (COMPLETED, FAILED, PENDING, …), or NOT_RUN / NO_RESULTS
    std::string source;   // sacct, squeue, results file, local run
    std::string detail;   // exit code, why
};
// PENDING, RUNNING, COMPLETING, CONFIGURING…: Slurm is not done with it.
bool activeState(const std::string& s);
// Neither completed nor still active.
bool failedState(const TaskState& t);
// Every slice's state. Slurm's word wins while it has one; a task Slurm no longer knows is
// COMPLETED when its results file exists, else NO_RESULTS (a failure).
std::vector<TaskState> sliceStates(const QString& dir, const nlohmann::json& m);

}  // namespace pitlane::cli
