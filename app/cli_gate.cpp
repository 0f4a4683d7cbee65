#include "cli_gate.h"

#include "pitlane/results/run_result.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace pitlane::cli {

using nlohmann::json;

std::optional<qint64> resolveBaseline(const store::RunStore& history, const GateOptions& g,
                                      const QString& presetName, std::string& why) {
    bool numeric = false;
    const qint64 id = g.baseline.toLongLong(&numeric);
    if (numeric) {
        if (id > 0 && history.runInfo(id)) return id;
        why = "--baseline " + g.baseline.toStdString() + ": no run " + g.baseline.toStdString() + " in " +
              history.path().toStdString() + " (pitlane-cli history lists them)";
        return std::nullopt;
    }
    if (g.baseline != QLatin1String("latest") && g.baseline != QLatin1String("baseline")) {
        why = "--baseline " + g.baseline.toStdString() + ": expected a run id, latest or baseline";
        return std::nullopt;
    }
    const bool marked = g.baseline == QLatin1String("baseline");
    for (const auto& r : history.listRuns())  // newest first
        if (r.name == presetName && r.complete() && (!marked || r.baseline)) return r.id;
    why = "--baseline " + g.baseline.toStdString() + ": no " +
          (marked ? std::string("run marked as baseline") : std::string("finished run")) + " of preset \"" +
          presetName.toStdString() + "\" in " + history.path().toStdString() +
          (marked ? " (mark one: pitlane-cli history baseline RUN_ID)" : " (run it once without --baseline first)");
    return std::nullopt;
}

namespace {

std::string pct(double v) {
    std::ostringstream s;
    s << std::showpos << std::fixed << std::setprecision(1) << v << " %";
    return s.str();
}

}  // namespace

GateResult runGate(const store::RunStore& history, qint64 runId, qint64 baselineId, const GateOptions& g) {
    GateResult out;
    const auto now = history.runInfo(runId);
    const auto base = history.runInfo(baselineId);
    const double limit = 1.0 + g.maxSlowdownPct / 100.0;
    json arms = json::array();
    std::ostringstream t;
    t << "\ngate: against run " << baselineId << (base && base->baseline ? " (marked baseline)" : "")
      << ", at most " << g.maxSlowdownPct << " % slower; unpaired process-level bootstrap (runs made at "
      << "different times share no blocks)\n";
    t << std::left << std::setw(16) << "arm" << std::setw(14) << "baseline" << std::setw(14) << "this run"
      << std::setw(12) << "slowdown" << std::setw(22) << "95% CI" << "decision\n";
    for (int i = 0; now && i < int(now->arms.size()); ++i) {
        const QString name = now->arms[i];
        json a = {{"arm", name.toStdString()}};
        const int j = base ? int(base->arms.indexOf(name)) : -1;
        std::string decision;
        if (j < 0) {
            decision = "no counterpart in run " + std::to_string(baselineId);
            a["decision"] = "no_counterpart";
        } else if (auto c = history.compareRuns(baselineId, j, runId, i); !c) {
            decision = "not compared: " + history.lastError().toStdString();
            a["decision"] = "not_compared";
        } else {
            c->run.interleaved = false;
            const auto comps = results::compareArms(c->run);
            if (comps.empty() || !(comps.front().ratio > 0)) {
                decision = "not compared: " + results::notComparedReason(c->run, 1);
                a["decision"] = "not_compared";
            } else {
                // ratio = baseline / this: the slowdown factor is its inverse, its CI the inverted CI.
                const auto& k = comps.front();
                const double slow = 1.0 / k.ratio, lo = 1.0 / k.ci_high, hi = 1.0 / k.ci_low;
                const bool fail = slow > limit && lo > limit;
                out.failed = out.failed || fail;
                a["ratio"] = k.ratio;
                a["ci95"] = {k.ci_low, k.ci_high};
                a["slowdown_pct"] = (slow - 1) * 100;
                a["slowdown_ci95_pct"] = {(lo - 1) * 100, (hi - 1) * 100};
                a["baseline_median_ns"] = results::summarize(c->run.arms[0]).median;
                a["median_ns"] = results::summarize(c->run.arms[1]).median;
                a["decision"] = fail ? "fail" : "pass";
                decision = fail ? "FAIL: slower beyond " + std::to_string(int(std::lround(g.maxSlowdownPct))) +
                                      " % with the whole CI"
                                : (slow > limit ? "pass (the CI reaches below the limit)" : "pass");
                t << std::left << std::setw(16) << name.left(15).toStdString() << std::setw(14)
                  << results::formatDuration(a["baseline_median_ns"].get<double>()) << std::setw(14)
                  << results::formatDuration(a["median_ns"].get<double>()) << std::setw(12) << pct((slow - 1) * 100)
                  << std::setw(22) << (pct((lo - 1) * 100) + " .. " + pct((hi - 1) * 100)) << decision << "\n";
                arms.push_back(a);
                continue;
            }
        }
        t << std::left << std::setw(16) << name.left(15).toStdString() << std::setw(62) << "" << decision << "\n";
        arms.push_back(a);
    }
    if (base)
        for (const QString& name : base->arms)
            if (!now || !now->arms.contains(name)) {
                t << std::left << std::setw(16) << name.left(15).toStdString() << std::setw(62) << ""
                  << "only in the baseline run " << baselineId << "\n";
                arms.push_back({{"arm", name.toStdString()}, {"decision", "only_in_baseline"}});
            }
    t << "gate: " << (out.failed ? "FAILED (exit 4)" : "passed") << "\n";
    out.table = t.str();
    out.json = {{"baseline_run", baselineId}, {"max_slowdown_pct", g.maxSlowdownPct},
                {"paired", false}, {"failed", out.failed}, {"arms", arms}};
    return out;
}

}  // namespace pitlane::cli
