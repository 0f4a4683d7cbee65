#pragma once
// Loads each arm's model before a run, the way a run would (issue 26, "explain a model before the
// run"): one sandboxed pitlane-worker per arm, configured with the arm's model, input and knobs —
// which loads the model, applies the knobs and runs one forward with the arm's input — then told
// to quit. An operator this libtorch lacks, an input of the wrong rank or dtype, or a file
// libtorch refuses then fails validation with the worker's error, not the run. QtCore only.
#include "pitlane/spec/preset.h"

#include <nlohmann/json.hpp>

#include <QString>

#include <string>
#include <vector>

namespace pitlane::session {

struct ArmProbe {
    std::string arm;
    bool ok = false;
    std::string skipped;  // non-empty: not loaded here, and why (an arm on another host)
    std::string code;     // the worker's error code (model_load_failed, bad_input, ...) when not ok
    std::string message;  // the worker's message, or what went wrong starting it
    nlohmann::json loaded;  // the worker's `loaded` event when ok (load ms, output shape, ...)
};

// Probes every arm of `preset` in turn (never two workers at once), each within `timeoutMs`.
// Runs its own event loop: call it where no other event loop is waited on (pitlane-cli).
std::vector<ArmProbe> probeArms(const spec::Preset& preset, const QString& workerPath, int timeoutMs = 120000);

}  // namespace pitlane::session
