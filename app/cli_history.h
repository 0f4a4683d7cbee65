#pragma once
// What `pitlane-cli history` (cli_history.cpp) and `pitlane-cli compare` (cli_compare.cpp)
// share: their options, opening an existing history, and errors of one line plus a hint.
#include "cli_common.h"

#include <QStringList>

#include <memory>
#include <optional>
#include <string>

namespace pitlane::cli {

int cmdHistory(const QStringList& args);
int cmdCompare(const QStringList& args);

namespace hist {

// One line naming what is wrong, one line saying what to do; returns `code`.
int failWith(int code, const std::string& what, const std::string& hint);

struct Args {
    QStringList positional;
    QString db;
    bool json = false, off = false, help = false;
    int limit = 0;
    QString preset;
};
// Options anywhere after the command; `allowed` names the ones this command takes (--help is
// always taken). False with `err` on an unknown option or a missing value.
bool parseArgs(const QStringList& args, int from, const QStringList& allowed, Args& a,
               std::string& err);

// The history named by --db / $PITLANE_DB / the default, opened for reading and marking. No
// store, with the exit code said, when it cannot be: "none" or a file that does not exist (2:
// nothing to read, and no empty history is made for a mistyped path), or a file open() refuses
// (3, as `run` exits when it cannot store into it).
struct History {
    std::unique_ptr<store::RunStore> store;
    QString path;
    int exitCode = kExitOk;
};
History openExisting(const QString& dbChoice);

// RUN_ID as a positive integer (exit 2 otherwise, said).
std::optional<qint64> parseRunId(const QString& text, int* exitCode);
// The run is in the history (exit 2 otherwise, with the hint to list the runs).
bool checkRun(const History& h, qint64 id, int* exitCode);
// What loadRun's check of the run's samples found, said on stderr: the unchecked note (a run
// stored before schema v12), each damaged chunk. kExitNotStored (3) when the run is damaged, else
// kExitOk.
int sampleCheckOutcome(qint64 runId, const store::SampleCheck& check);
// A read or write that failed on an opened history: damaged or busy (exit 3).
int storeFailure(const History& h);

}  // namespace hist
}  // namespace pitlane::cli
