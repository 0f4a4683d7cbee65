#pragma once
// Loads each arm's model before a run, the way a run would (issue 26, "explain a model before the
// run"): one sandboxed pitlane-worker per arm, configured with the arm's model, input and knobs —
// which loads the model, applies the knobs and runs one forward with the arm's input — then told
// to quit. An operator this libtorch lacks, an input of the wrong rank or dtype, or a file
// libtorch refuses then fails validation with the worker's error, not the run. QtCore only.
#include "pitlane/spec/preset.h"

#include <nlohmann/json.hpp>

#include <QString>

#include <atomic>
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

// The configure command's "arm" for arm `arm` of `preset`, as a run sends it (its model, input,
// knobs and seed); the runner adds worker_count / worker_index and a remote model path.
nlohmann::json armConfigure(const spec::Preset& preset, std::size_t arm);

// Probes every arm of `preset` in turn (never two workers at once), each within `timeoutMs`.
// Runs its own event loop: call it where no other event loop is waited on (pitlane-cli).
// `cancel` (may be null), polled every 100 ms: set, the worker is killed and the probes not
// yet run are skipped (the window's model check, when a run starts or the window closes).
std::vector<ArmProbe> probeArms(const spec::Preset& preset, const QString& workerPath, int timeoutMs = 120000,
                                const std::atomic<bool>* cancel = nullptr);

}  // namespace pitlane::session
