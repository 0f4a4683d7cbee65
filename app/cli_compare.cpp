// pitlane-cli compare RUN[:ARM] RUN[:ARM]: two stored arms side by side (RunStore::compareRuns,
// the window's "Compare runs…"), the ratio with the CI of the unpaired process-level bootstrap
// (stats::compareUnpaired), and the environment fields that differ between the two runs (the
// drift guard of results::runWarnings, results::environmentDifferences).
#include "cli_history.h"

#include "pitlane/results/environment.h"

#include <iostream>

namespace pitlane::cli {

namespace {

using namespace hist;
using nlohmann::json;

const char* const kCompareUsage =
    "usage:\n"
    "  pitlane-cli compare RUN[:ARM] RUN[:ARM] [--json] [--db PATH]\n"
    "      two stored arms side by side, the first as the baseline: the table of `run`, the ratio\n"
    "      (baseline median / other median: > 1 means the other arm is faster) with its 95 % CI\n"
    "      from the unpaired process-level bootstrap (runs made at different times share no\n"
    "      blocks), and the environment fields that differ between the two runs (the load\n"
    "      average when the 1-minute figures are 0.5 or more apart).\n"
    "      ARM: an arm's name; without it, the first arm of the first run, and the arm of the\n"
    "      same name in the second (else its first arm). --json: the comparison as JSON\n"
    "exit codes: 0 done, 2 bad arguments, no such run or arm, 3 the history cannot be opened or\n"
    "read, or a compared arm's stored samples fail their check (damaged: shown as failed, code\n"
    "damaged, not compared)\n";

// The fields a user looks at first when two runs disagree; said even when they are equal.
// "allocator" is read back per arm (applied.allocator), the others are manifest fields.
const char* const kNamedFields[] = {"cpu", "libtorch", "kernel", "allocator"};

struct Side {
    qint64 run = 0;
    QString arm;  // "" = not named
    int index = -1;
};

bool parseSide(const QString& text, Side& s, int* code) {
    const int colon = text.indexOf(QLatin1Char(':'));
    const auto id = parseRunId(colon < 0 ? text : text.left(colon), code);
    if (!id) return false;
    s.run = *id;
    s.arm = colon < 0 ? QString() : text.mid(colon + 1);
    return true;
}

// The arm's index in its run, or the default (see kCompareUsage); exit 2 when it has no such arm.
bool resolveArm(const History& h, Side& s, const QString& fallbackName, int* code) {
    const auto info = h.store->runInfo(s.run);
    if (!info) return checkRun(h, s.run, code);
    if (info->arms.isEmpty()) {
        *code = failWith(kExitUsage, "run " + std::to_string(s.run) + " has no arms",
                         "compare runs that measured something (pitlane-cli history)");
        return false;
    }
    if (s.arm.isEmpty()) {
        const int same = fallbackName.isEmpty() ? -1 : int(info->arms.indexOf(fallbackName));
        s.index = same >= 0 ? same : 0;
        s.arm = info->arms[s.index];
        return true;
    }
    s.index = int(info->arms.indexOf(s.arm));
    if (s.index >= 0) return true;
    *code = failWith(kExitUsage,
                     "run " + std::to_string(s.run) + " has no arm \"" + s.arm.toStdString() +
                         "\" (its arms: " + info->arms.join(", ").toStdString() + ")",
                     "name one of them: pitlane-cli compare " + std::to_string(s.run) + ":" +
                         info->arms.front().toStdString() + " OTHER_RUN[:ARM]");
    return false;
}

struct EnvironmentReport {
    std::vector<results::EnvironmentDifference> differ;
    std::vector<std::string> same;  // of kNamedFields, and the load average when close
    std::string loadNote;           // why the load average was not compared; "" when it was
};

EnvironmentReport environmentReport(const results::ArmResult& x, const results::ArmResult& y) {
    EnvironmentReport e;
    e.differ = results::environmentDifferences(x, y);
    const auto& xa = x.applied.allocator;
    const auto& ya = y.applied.allocator;
    if (xa != ya)
        e.differ.push_back({"allocator (applied)", xa ? json(*xa).dump() : "absent", ya ? json(*ya).dump() : "absent"});
    const auto load = results::compareLoadAverage(x, y);
    if (load.compared && load.differs)
        e.differ.push_back({"load_average", load.first, load.other});
    else if (!load.compared)
        e.loadNote = "load average: not recorded by " +
                     std::string(load.first == "absent" && load.other == "absent" ? "either run"
                                 : load.first == "absent"                        ? "the baseline"
                                                                                  : "the other run") +
                     " (runs stored before Pitlane recorded it)";
    for (const char* f : kNamedFields) {
        const std::string key = f;
        const bool differs = std::any_of(e.differ.begin(), e.differ.end(), [&](const auto& d) {
            return d.key == key || d.key == key + " (applied)";
        });
        const bool known = key == "allocator" ? xa.has_value() || ya.has_value()
                                              : x.environment.contains(key) || y.environment.contains(key);
        if (!differs && known) e.same.push_back(key);
    }
    if (load.compared && !load.differs)
        e.same.push_back("load_average (1-minute figures within " +
                         std::to_string(results::kLoadAverageDifference).substr(0, 3) + ": " +
                         load.first + " vs " + load.other + ")");
    return e;
}

json sideJson(const Side& s, const results::ArmResult& arm,
              const std::string& startedAt) {
    const auto sum = results::summarize(arm);
    json procs = json::array();
    for (const auto& p : results::processSummaries(arm))
        procs.push_back({{"pid", p.info.pid}, {"median_ns", p.median_ns}, {"n", p.n}});
    return {{"run", s.run},
            {"arm", s.arm.toStdString()},
            {"started_at", startedAt},
            {"status", arm.status},
            {"model", arm.model},
            {"n", sum.n},
            {"median_ns", sum.median},
            {"processes", procs}};
}

}  // namespace

// What compare found, for printing.
struct Comparison {
    Side x, y;
    const results::ArmResult *ax, *ay;
    std::optional<store::RunInfo> runX, runY;
    std::vector<stats::Comparison> comps;
    const results::RunResult* run;
    EnvironmentReport env;
    std::string blocksNote;
};

void printCompareJson(const Comparison& c) {
    json j = {{"baseline", sideJson(c.x, *c.ax, c.runX ? c.runX->startedAt.toStdString() : "")},
              {"other", sideJson(c.y, *c.ay, c.runY ? c.runY->startedAt.toStdString() : "")},
              {"paired", false},
              {"note", c.blocksNote}};
    j["baseline"]["preset"] = c.runX ? c.runX->name.toStdString() : "";
    j["other"]["preset"] = c.runY ? c.runY->name.toStdString() : "";
    if (!c.comps.empty()) {
        const auto& k = c.comps.front();
        j["ratio"] = k.ratio;
        j["ci95"] = {k.ci_low, k.ci_high};
        j["p_value"] = k.p_value;
        j["significant"] = k.significant;
        j["verdict"] = k.verdict;
        j["method"] = k.method;
        j["units"] = k.units;
        j["unit"] = k.unit;
    } else {
        j["not_compared"] = results::notComparedReason(*c.run, 1);
    }
    json diffs = json::array();
    for (const auto& d : c.env.differ)
        diffs.push_back({{"field", d.key}, {"baseline", d.first}, {"other", d.other}});
    j["environment_differences"] = diffs;
    j["environment_same"] = c.env.same;
    j["not_recorded"] = c.env.loadNote.empty() ? json::array() : json::array({"load_average"});
    std::cout << j.dump(2) << "\n";
}

void printCompareText(const Comparison& c) {
    std::cout << "compare: run " << c.x.run << " arm " << c.x.arm.toStdString() << " (baseline, "
              << c.ax->name << ") vs run " << c.y.run << " arm " << c.y.arm.toStdString() << " (" << c.ay->name
              << ")\n\n"
              << results::comparisonTable(*c.run) << "\n"
              << c.blocksNote << "\n";
    if (!c.comps.empty()) std::cout << "method: " << c.comps.front().method << "\n";
    std::cout << "\nenvironment (the fields the drift guard compares; knobs are not listed):\n";
    for (const auto& d : c.env.differ)
        std::cout << "  differs: " << d.key << ": " << d.first << " vs " << d.other << "\n";
    if (c.env.differ.empty()) std::cout << "  no field differs\n";
    if (!c.env.same.empty()) {
        std::string same;
        for (const auto& s : c.env.same) same += (same.empty() ? "" : ", ") + s;
        std::cout << "  the same in both: " << same << "\n";
    }
    if (!c.env.loadNote.empty()) std::cout << "  " << c.env.loadNote << "\n";
}

int cmdCompare(const QStringList& args) {
    Args a;
    std::string err;
    if (!parseArgs(args, 2, {"--db", "--json"}, a, err))
        return failWith(kExitUsage, "compare: " + err, "pitlane-cli compare --help");
    if (a.help) {
        std::cout << kCompareUsage;
        return kExitOk;
    }
    if (a.positional.size() != 2)
        return failWith(kExitUsage,
                        "compare takes two stored arms (got " + std::to_string(a.positional.size()) + ")",
                        "pitlane-cli compare 12:A 15:A (run ids from pitlane-cli history)");
    int code = kExitOk;
    Side x, y;
    if (!parseSide(a.positional[0], x, &code) || !parseSide(a.positional[1], y, &code)) return code;
    const History h = openExisting(a.db);
    if (!h.store) return h.exitCode;
    if (!resolveArm(h, x, {}, &code) || !resolveArm(h, y, x.arm, &code)) return code;
    if (x.run == y.run && x.index == y.index)
        return failWith(kExitUsage, "compare: both sides name run " + std::to_string(x.run) + " arm " +
                                        x.arm.toStdString(),
                        "compare two different arms, e.g. another run's arm of the same name");
    store::SampleCheck check;
    auto c = h.store->compareRuns(x.run, x.index, y.run, y.index, &check);
    if (!c) return storeFailure(h);
    const auto runX = h.store->runInfo(x.run), runY = h.store->runInfo(y.run);
    // Always the unpaired bootstrap, as for arms of different runs: within one run too, so that
    // the figure means the same whatever two arms are named (`history show` has the run's own,
    // paired verdict).
    c->run.interleaved = false;
    const auto comps = results::compareArms(c->run);
    const auto& ax = c->run.arms[0];
    const auto& ay = c->run.arms[1];
    const auto env = environmentReport(ax, ay);
    const std::string blocksNote =
        x.run == y.run
            ? "two arms of run " + std::to_string(x.run) +
                  ", compared unpaired as arms of different runs are (`history show " +
                  std::to_string(x.run) + "` gives the run's verdict, paired by block)"
            : "runs made at different times share no blocks: the CI is the unpaired process-level "
              "bootstrap, and anything that changed on the machine between the runs is part of "
              "the difference";
    const Comparison cmp{x, y, &ax, &ay, runX, runY, comps, &c->run, env, blocksNote};
    if (a.json)
        printCompareJson(cmp);
    else
        printCompareText(cmp);
    std::cout.flush();
    // A compared arm whose stored samples fail their check was loaded as failed (code damaged),
    // without samples: nothing was compared, and the exit status says the history let it down.
    // Damage in another arm of the same runs is said, and does not change the status.
    bool comparedDamaged = false;
    for (const auto* arm : {&ax, &ay})
        comparedDamaged |= arm->error && arm->error->code == "damaged";
    if (check.unchecked())
        std::cerr << "pitlane-cli: note: "
                  << (x.run == y.run ? "run " + std::to_string(x.run)
                                     : "runs " + std::to_string(x.run) + " and " + std::to_string(y.run))
                  << ": " << check.uncheckedChunks + check.uncheckedRows
                  << " stored sample chunks or rows are unchecked: stored before Pitlane kept a "
                     "checksum per sample chunk (schema v12), they are read as stored\n";
    for (const QString& d : check.damaged) std::cerr << "pitlane-cli: damaged: " << d.toStdString() << "\n";
    if (!comparedDamaged) return kExitOk;
    std::cerr << "pitlane-cli: a compared arm is damaged in the history: not compared (exit status 3)\n";
    return kExitNotStored;
}

}  // namespace pitlane::cli
