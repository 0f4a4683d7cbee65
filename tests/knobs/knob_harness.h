#pragma once
// Shared by the knob proofs: bundled models by name, many real workers configured at once (a
// worker spends most of its start-up loading libtorch, so starting them together keeps the suite
// short on a busy 2-core machine), runs by time, and presets over any bundled model.
#include "../integration/harness.h"

#include "pitlane/results/run_result.h"
#include "pitlane/spec/preset.h"

#include <QProcessEnvironment>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pitlane::knobtest {

using json = nlohmann::json;
using itest::WorkerDriver;

std::string modelPath(const std::string& model);  // <model dir>/<model>.pt
json modelInput(const std::string& model);        // the input signature from the sidecar

// One worker to configure: `model` is a bundled model's (or test model's) name.
struct WorkerRequest {
    std::string label;
    std::string model;
    json knobs;
    json input = nullptr;  // null: the model's sidecar input
    // The worker's environment (e.g. session::withAllocator(...)); empty: this process's.
    QProcessEnvironment env = {};
};

// A worker after its configure: `reply` is the applied event or the error event (null when
// neither came). The worker stays alive for runs until the object goes away.
struct ConfiguredWorker {
    std::unique_ptr<WorkerDriver> driver;
    json hello;
    json reply;
    bool ok() const { return reply.value("type", "") == "applied"; }
    // The worker's events of `type` (all of them so far).
    std::vector<json> events(const std::string& type) const;
    // Warning events with this code.
    std::vector<json> warnings(const std::string& code) const;
    // The loaded event of the configure (null when none).
    json loaded() const;
};

// Starts every worker at once, configures each as soon as it says hello and waits for all of
// them. Fails the test (ADD_FAILURE) for a worker that never answered.
std::map<std::string, ConfiguredWorker> configureAll(const std::vector<WorkerRequest>& requests,
                                                     int timeoutMs = 90000);

// Sends `cmd` and waits for the first event of one of `types` sent after it (null on timeout).
json sendAndWait(WorkerDriver& w, const json& cmd, const std::vector<std::string>& types,
                 int timeoutMs = 30000);
// A measured block that runs for `timeMs` instead of a number of iterations.
json runForMs(WorkerDriver& w, int block, double timeMs, int timeoutMs = 30000);

// A preset over a bundled model, validated by the real parser. `input` null: the sidecar's.
// Runs `preset` through ExperimentRunner with `workerPath` as the worker program.
results::RunResult runPresetWith(const spec::Preset& preset, const std::string& workerPath,
                                 int timeoutMs = 60000);

spec::Preset knobPreset(const std::string& model, const json& arms, const json& run,
                        const json& input = nullptr);
json arm(const std::string& name, json knobs);

double median(std::vector<double> v);

}  // namespace pitlane::knobtest
