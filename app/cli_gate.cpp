#include "cli_gate.h"

#include "pitlane/results/energy.h"
#include "pitlane/results/environment.h"
#include "pitlane/results/run_result.h"

#include <algorithm>
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

// A JSON value as a person reads it: strings without quotes.
std::string shown(const json& v) {
    if (v.is_null()) return "absent";
    return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string loadShown(const json& v) {
    if (!v.is_array() || v.empty() || !v[0].is_number()) return shown(v);
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << v[0].get<double>();
    return s.str();
}

const json& field(const json& j, const char* key) {
    static const json none;
    return j.is_object() && j.contains(key) ? j[key] : none;
}

std::string fit(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n); }

// The gate's decision on one comparison (baseline arm first): the row and the JSON fields.
bool decide(const stats::Comparison& k, const results::ArmResult& base, const results::ArmResult& now,
            const GateOptions& g, json& a, std::ostream& t) {
    const double limit = 1.0 + g.maxSlowdownPct / 100.0;
    // ratio = baseline / this: the slowdown factor is its inverse, its CI the inverted CI.
    const double slow = 1.0 / k.ratio, lo = 1.0 / k.ci_high, hi = 1.0 / k.ci_low;
    const bool fail = slow > limit && lo > limit;
    a["ratio"] = k.ratio;
    a["ci95"] = {k.ci_low, k.ci_high};
    a["p_value"] = k.p_value;
    a["method"] = k.method;
    a["slowdown_pct"] = (slow - 1) * 100;
    a["slowdown_ci95_pct"] = {(lo - 1) * 100, (hi - 1) * 100};
    a["baseline_median_ns"] = results::summarize(base).median;
    a["median_ns"] = results::summarize(now).median;
    a["decision"] = fail ? "fail" : "pass";
    const std::string decision =
        fail ? "FAIL: slower beyond " + std::to_string(int(std::lround(g.maxSlowdownPct))) + " % with the whole CI"
             : (slow > limit ? "pass (the CI reaches below the limit)" : "pass");
    t << std::left << std::setw(16) << fit(now.name, 15) << std::setw(14)
      << results::formatDuration(a["baseline_median_ns"].get<double>()) << std::setw(14)
      << results::formatDuration(a["median_ns"].get<double>()) << std::setw(12) << pct((slow - 1) * 100)
      << std::setw(26) << (pct((lo - 1) * 100) + " .. " + pct((hi - 1) * 100)) << decision << "\n";
    return fail;
}

// The energy gate (issue 46, --max-energy-increase): the arms' gross joules per inference of the
// same counter, one unit per process, compared as latency is across runs (unpaired bootstrap of
// the median). Not measured on either side: said, never a failure.
bool decideEnergy(const results::ArmResult& base, const json& baseIdle, const results::ArmResult& now,
                  const json& nowIdle, const GateOptions& g, json& a, std::ostream& t) {
    if (!(g.maxEnergyIncreasePct > 0)) return false;
    const auto be = results::armEnergy(base, baseIdle), ne = results::armEnergy(now, nowIdle);
    const results::EnergySource* bs = be.primary();
    const results::EnergySource* ns = ne.primary();
    json e = {{"max_increase_pct", g.maxEnergyIncreasePct}};
    std::string why;
    if (!bs) why = "the baseline measured no energy (" + be.reason + ")";
    else if (!ns) why = "this run measured no energy (" + ne.reason + ")";
    else if (bs->device != ns->device || bs->source != ns->source)
        why = "different counters (" + bs->device + " vs " + ns->device + ")";
    if (!why.empty()) {
        e["decision"] = "not_compared";
        e["reason"] = why;
        a["energy"] = e;
        t << "  " << now.name << ": energy not compared: " << why << "\n";
        return false;
    }
    stats::BlockedSamples x, y;
    for (double v : results::energyUnits(*bs)) x.blocks.push_back({v}), x.process.push_back(int(x.process.size()));
    for (double v : results::energyUnits(*ns)) y.blocks.push_back({v}), y.process.push_back(int(y.process.size()));
    const auto k = stats::compareUnpaired(base.name, x, now.name, y);
    const double limit = 1.0 + g.maxEnergyIncreasePct / 100.0;
    // ratio = baseline / this: the increase factor is its inverse.
    const double up = 1.0 / k.ratio, lo = 1.0 / k.ci_high, hi = 1.0 / k.ci_low;
    const bool fail = k.ratio > 0 && up > limit && lo > limit;
    e.update({{"counter", ns->device + " (" + ns->source + ")"},
              {"baseline_joules_per_inference", bs->j_per_inference},
              {"joules_per_inference", ns->j_per_inference},
              {"increase_pct", (up - 1) * 100},
              {"increase_ci95_pct", {(lo - 1) * 100, (hi - 1) * 100}},
              {"method", k.method},
              {"decision", fail ? "fail" : "pass"}});
    a["energy"] = e;
    t << "  " << now.name << ": energy " << ns->device << " " << bs->j_per_inference << " -> " << ns->j_per_inference
      << " J/inference, " << pct((up - 1) * 100) << " (95% CI " << pct((lo - 1) * 100) << " .. "
      << pct((hi - 1) * 100) << "): "
      << (fail ? "FAIL: more energy beyond " + std::to_string(int(std::lround(g.maxEnergyIncreasePct))) +
                     " % with the whole CI"
               : std::string("pass"))
      << "\n";
    return fail;
}

// What the gate's comparison must be read with (issue 41): where the baseline's arm or this
// run's ran otherwise than asked (results::armCaveats), each named as the gate names it; the
// JSON list, and a line each under the arm's decision.
json gateCaveats(const results::ArmResult& baseline, const std::string& baselineName,
                 const results::ArmResult& now, std::ostream& t) {
    json out = json::array();
    auto named = [](const results::ArmResult& a, const std::string& name) {
        results::ArmResult s = results::armSettings(a);
        s.name = name;
        return s;
    };
    for (const auto& a : {named(baseline, baselineName), named(now, now.name)})
        for (const auto& c : results::armCaveats(a)) {
            const std::string line = results::kCaveatPrefix + c;
            if (std::find(out.begin(), out.end(), json(line)) != out.end()) continue;
            out.push_back(line);
            t << "    caveat: " << line << "\n";
        }
    return out;
}

// The differences as the JSON list and one printed line under the arm's decision.
json differencesJson(const std::vector<GateDifference>& diffs, const std::string& arm, std::ostream& t) {
    json out = json::array();
    std::string line;
    for (const auto& d : diffs) {
        out.push_back({{"kind", d.kind}, {"field", d.field}, {"baseline", d.baseline}, {"this_run", d.now}});
        line += (line.empty() ? "" : "; ") + d.text;
    }
    if (!line.empty())
        t << "  " << arm << " differs from its baseline in more than the code: " << line << "\n";
    return out;
}

void tableHeader(std::ostream& t) {
    t << std::left << std::setw(16) << "arm" << std::setw(14) << "baseline" << std::setw(14) << "this run"
      << std::setw(12) << "slowdown" << std::setw(26) << "95% CI" << "decision\n";
}

}  // namespace

std::string pairedBaselineName(const std::string& arm) { return arm + " (baseline)"; }

std::vector<GateDifference> gateDifferences(const results::ArmResult& baseline, const results::ArmResult& now,
                                            bool load) {
    std::vector<GateDifference> out;
    // Knobs as they were asked, with the model format's defaults where the preset wrote nothing:
    // "batch_size": 1 written and batch_size left out are the same request.
    const json kb = spec::knobsToJson(baseline.knobs), kn = spec::knobsToJson(now.knobs);
    std::vector<std::string> keys;
    for (const auto& [key, v] : kb.items()) keys.push_back(key);
    for (const auto& [key, v] : kn.items())
        if (!kb.contains(key)) keys.push_back(key);
    for (const auto& key : keys) {
        const json& x = field(kb, key.c_str());
        const json& y = field(kn, key.c_str());
        if (x != y) out.push_back({"knob", key, x, y, key + " " + shown(x) + " vs " + shown(y)});
    }
    // The model: by content where both recorded it, else by path.
    const bool bothHashed = !baseline.model_sha256.empty() && !now.model_sha256.empty();
    if (bothHashed ? baseline.model_sha256 != now.model_sha256 : baseline.model != now.model)
        out.push_back({"model", "model",
                       {{"path", baseline.model}, {"sha256", baseline.model_sha256}},
                       {{"path", now.model}, {"sha256", now.model_sha256}},
                       "model " + results::modelSummary(baseline) + " vs " + results::modelSummary(now)});
    else if (baseline.model_format != now.model_format)
        out.push_back({"model", "model_format", baseline.model_format, now.model_format,
                       "model_format " + baseline.model_format + " vs " + now.model_format});
    const json& ib = field(baseline.loaded, "input");
    const json& in = field(now.loaded, "input");
    if (!ib.is_null() && !in.is_null() && ib != in)
        out.push_back({"model", "input", ib, in, "input " + ib.dump() + " vs " + in.dump()});
    if (baseline.compile && now.compile) {
        if (baseline.compile->torch != now.compile->torch)
            out.push_back({"model", "compile.torch", baseline.compile->torch, now.compile->torch,
                           "compiled by torch " + baseline.compile->torch + " vs " + now.compile->torch});
        if (baseline.compile->target != now.compile->target)
            out.push_back({"model", "compile.target", baseline.compile->target, now.compile->target,
                           "compiled for " + baseline.compile->target + " vs " + now.compile->target});
    }
    // The machine's load when each started: half a core or more apart.
    if (!load) return out;
    const auto avg = results::compareLoadAverage(baseline, now);
    if (avg.compared && avg.differs) {
        const json x = json::parse(avg.first, nullptr, false), y = json::parse(avg.other, nullptr, false);
        out.push_back({"load", "load_average", x, y,
                       "load average " + loadShown(x) + " vs " + loadShown(y) +
                           " (1-minute, when the workers started: half a core or more apart, the "
                           "machine was not equally busy)"});
    }
    return out;
}

GateResult runGate(const store::RunStore& history, qint64 runId, qint64 baselineId, const GateOptions& g) {
    GateResult out;
    const auto now = history.runInfo(runId);
    const auto base = history.runInfo(baselineId);
    json arms = json::array();
    std::ostringstream t;
    t << "\ngate: against run " << baselineId << (base && base->baseline ? " (marked baseline)" : "")
      << ", at most " << g.maxSlowdownPct << " % slower; unpaired process-level bootstrap (runs made at "
      << "different times share no blocks)\n";
    tableHeader(t);
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
            auto& ba = c->run.arms[0];
            auto& na = c->run.arms[1];
            ba.name = na.name = name.toStdString();  // compareRuns named them "#12 A"
            if (comps.empty() || !(comps.front().ratio > 0)) {
                decision = "not compared: " + results::notComparedReason(c->run, 1);
                a["decision"] = "not_compared";
                t << std::left << std::setw(16) << fit(name.toStdString(), 15) << std::setw(66) << "" << decision << "\n";
            } else {
                out.failed = decide(comps.front(), ba, na, g, a, t) || out.failed;
            }
            if (g.maxEnergyIncreasePct > 0) {  // each run's own idle draw (its first arm has it)
                const auto baseRun = history.loadRun(baselineId);
                const auto nowRun = history.loadRun(runId);
                out.failed = decideEnergy(ba, baseRun ? results::runIdle(*baseRun) : json(), na,
                                          nowRun ? results::runIdle(*nowRun) : json(), g, a, t) ||
                             out.failed;
            }
            a["differences"] = differencesJson(gateDifferences(ba, na, true), name.toStdString(), t);
            a["caveats"] = gateCaveats(ba, "the baseline run's " + name.toStdString(), na, t);
            arms.push_back(a);
            continue;
        }
        t << std::left << std::setw(16) << fit(name.toStdString(), 15) << std::setw(66) << "" << decision << "\n";
        arms.push_back(a);
    }
    if (base)
        for (const QString& name : base->arms)
            if (!now || !now->arms.contains(name)) {
                t << std::left << std::setw(16) << fit(name.toStdString(), 15) << std::setw(66) << ""
                  << "only in the baseline run " << baselineId << "\n";
                arms.push_back({{"arm", name.toStdString()}, {"decision", "only_in_baseline"}});
            }
    t << "gate: " << (out.failed ? "FAILED (exit 4)" : "passed") << "\n";
    out.table = t.str();
    out.json = {{"baseline_run", baselineId}, {"max_slowdown_pct", g.maxSlowdownPct},
                {"paired", false}, {"failed", out.failed}, {"arms", arms}};
    return out;
}

GateResult runPairedGate(const results::RunResult& run, const GateOptions& g) {
    GateResult out;
    json arms = json::array();
    std::ostringstream t;
    t << "\ngate: against " << g.against.toStdString() << " measured in this run (each arm's twin \""
      << pairedBaselineName("ARM") << "\"), at most " << g.maxSlowdownPct
      << " % slower; the run's own comparison, paired by block and process\n";
    tableHeader(t);
    const std::string suffix = pairedBaselineName("");
    for (const auto& arm : run.arms) {
        if (arm.name.size() >= suffix.size() &&
            arm.name.compare(arm.name.size() - suffix.size(), suffix.size(), suffix) == 0)
            continue;
        const std::string twinName = pairedBaselineName(arm.name);
        json a = {{"arm", arm.name}, {"baseline_arm", twinName}};
        const auto twin = std::find_if(run.arms.begin(), run.arms.end(),
                                       [&](const results::ArmResult& x) { return x.name == twinName; });
        if (twin == run.arms.end()) {  // pairedPreset gives every arm its twin
            a["decision"] = "no_counterpart";
            t << std::left << std::setw(16) << fit(arm.name, 15) << std::setw(66) << ""
              << "no arm \"" << twinName << "\" in this run\n";
            arms.push_back(a);
            continue;
        }
        // The two arms as a run of their own: compareArms pairs them by block and process as the
        // run's table does (arms of one run were interleaved).
        results::RunResult pair;
        pair.preset = run.preset;
        pair.interleaved = run.interleaved;
        pair.arms = {*twin, arm};
        const auto comps = results::compareArms(pair);
        if (comps.empty() || !(comps.front().ratio > 0)) {
            a["decision"] = "not_compared";
            const std::string why = results::notComparedReason(pair, 1);
            t << std::left << std::setw(16) << fit(arm.name, 15) << std::setw(66) << ""
              << "not compared: " << (why.empty() ? "no samples" : why) << "\n";
        } else {
            out.failed = decide(comps.front(), *twin, arm, g, a, t) || out.failed;
        }
        out.failed = decideEnergy(*twin, results::runIdle(run), arm, results::runIdle(run), g, a, t) || out.failed;
        a["differences"] = differencesJson(gateDifferences(*twin, arm, false), arm.name, t);
        a["caveats"] = gateCaveats(*twin, twin->name, arm, t);
        arms.push_back(a);
    }
    t << "gate: " << (out.failed ? "FAILED (exit 4)" : "passed") << "\n";
    out.table = t.str();
    out.json = {{"against", g.against.toStdString()}, {"max_slowdown_pct", g.maxSlowdownPct},
                {"paired", true}, {"failed", out.failed}, {"arms", arms}};
    return out;
}

}  // namespace pitlane::cli
