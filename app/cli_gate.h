#pragma once
// The regression gate of `pitlane-cli run PRESET --baseline RUN_ID|latest|baseline
// [--max-slowdown PCT]` (issue 29): each arm against the baseline run's arm of the same name,
// unpaired (runs made at different times share no blocks). An arm fails the gate only when it is
// slower than its baseline by more than PCT *and* the whole 95 % CI of the slowdown lies beyond
// PCT: noise that merely could be a slowdown never fails a CI job.
// Its paired mode (issue 41), `run PRESET --against BASELINE_PRESET|MODEL`: the baseline's arms
// join this run as arms of their own ("A (baseline)"), measured interleaved with the preset's
// arms block by block and in the same replicate processes' rounds, and each arm is gated on the
// run's own paired comparison with its twin: load that comes and goes between runs touches both.
// Either way the gate names what differs between an arm and its baseline besides the code under
// test: knobs, the model file, its input, the machine's load.
#include "cli_common.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace pitlane::cli {

constexpr int kExitGateFailed = 4;

struct GateOptions {
    QString baseline;             // "" = no gate; a run id, "latest" or "baseline"
    QString against;              // --against: a baseline preset or model file ("" = none)
    double maxSlowdownPct = 5.0;  // --max-slowdown
    // --max-energy-increase (issue 46): an arm whose gross joules per inference rose by more
    // than PCT, the whole 95 % CI beyond it, fails too. -1: energy is not gated.
    double maxEnergyIncreasePct = -1;
};

// What an arm's baseline ran differently, besides the code under test: a knob asked ("knob"), the
// model file, its format, input or compile ("model"), and with `load` the 1-minute load average
// when results::kLoadAverageDifference (half a core) or more apart ("load": runs made at different
// times; the twins of a paired run are interleaved, so their start's load says nothing). Values
// as JSON.
struct GateDifference {
    std::string kind, field;
    nlohmann::json baseline, now;
    std::string text;  // "batch_size 1 vs 4"
};
std::vector<GateDifference> gateDifferences(const results::ArmResult& baseline, const results::ArmResult& now,
                                            bool load);

// The name an arm's twin measuring the baseline gets in a paired run: "A (baseline)".
std::string pairedBaselineName(const std::string& arm);

// The preset `run PRESET --against BASELINE` measures: `preset`'s arms, each with its twin from
// the baseline (a preset file: its arm of the same name, with its own model, input and knobs; a
// model file, .pt / .pt2: the same arm with that model) placed before them, with `preset`'s run
// settings. nullopt with `why` ("FILE: FIELD: reason", every reason one line) when the baseline
// is invalid, its arm names do not match the preset's, or the preset cannot take twins.
std::optional<spec::Preset> pairedPreset(const spec::Preset& preset, const QString& against,
                                         const std::string& modelDir, std::string& why);

// The baseline run `g.baseline` names for a run of `presetName`, resolved before anything is
// measured: a run id (it must exist), "latest" (the newest finished run of that preset name) or
// "baseline" (the newest run of that preset name marked as baseline). nullopt with `why` set.
std::optional<qint64> resolveBaseline(const store::RunStore& history, const GateOptions& g,
                                      const QString& presetName, std::string& why);

struct GateResult {
    bool failed = false;
    nlohmann::json json;  // "gate": baseline run, threshold, one entry per arm
    std::string table;    // the printed lines
};
// Compares every arm of the stored run `runId` with its namesake in `baselineId`.
GateResult runGate(const store::RunStore& history, qint64 runId, qint64 baselineId, const GateOptions& g);
// The paired gate of a run of pairedPreset(): every arm against its twin "ARM (baseline)", the
// run's own comparison (paired by block and process, compareArms on the two arms).
GateResult runPairedGate(const results::RunResult& run, const GateOptions& g);

}  // namespace pitlane::cli
