#pragma once
// Shared by the integration tests: where the real worker, CLI and bundled models are (from the
// environment pitlane_add_test sets), a driver for one real pitlane-worker process, and a way to
// run an in-memory preset through the real ExperimentRunner.
#include "pitlane/results/run_result.h"
#include "pitlane/session/worker_process.h"
#include "pitlane/spec/preset.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace pitlane::itest {

using json = nlohmann::json;

// $PITLANE_WORKER, $PITLANE_BIN_DIR, $PITLANE_MODEL_DIR; "" when unset.
std::string workerPath();
std::string binDir();
std::string modelDir();
std::string mlpPath();
json mlpInput();  // the mlp's input signature: [{"shape": [256], "dtype": "float32"}]

// Cores this process may run on (sched_getaffinity).
std::vector<int> allowedCores();

// Runs the Qt event loop until `done()` holds or `timeoutMs` passes; returns done().
bool spinUntil(const std::function<bool()>& done, int timeoutMs);

// A preset over the bundled mlp, validated by the real parser.
spec::Preset mlpPreset(const json& arms, const json& run);

// Runs `preset` through ExperimentRunner with the real worker; fails the test on a hang.
results::RunResult runPreset(const spec::Preset& preset, int timeoutMs = 60000);

// One real pitlane-worker spoken to through session::WorkerProcess, as the runner does.
class WorkerDriver {
public:
    // `arguments`: the worker's command line (none: the sandbox on, nothing writable).
    explicit WorkerDriver(const QStringList& arguments = {});
    ~WorkerDriver();

    // Starts the worker; returns its hello event (null on failure).
    json start(int timeoutMs = 30000);
    // Sends configure for the mlp (or `modelPath`) with `knobs`; returns the applied or error
    // event (null when neither arrived).
    json configure(const json& knobs, const json& input = mlpInput(),
                   const std::string& modelPath = mlpPath(), int timeoutMs = 30000);
    // Sends run; returns the block_done or error event.
    json run(int block, int iters, const char* phase = "measure", int timeoutMs = 30000);
    // Sends serve (one serving level) with the fields of `load`; returns the block_done or error
    // event. The batches arrive before it as serve_batches events.
    json serve(int block, const json& load, int timeoutMs = 60000);
    // Sends profile (`iters` iterations under libtorch's profiler); returns the profile or error
    // event.
    json profile(int iters, int timeoutMs = 60000);
    // Sends quit and waits for the process to end; true when it said bye and exited 0.
    bool quit(int timeoutMs = 10000);

    std::vector<json> eventsOfType(const std::string& type) const;
    const std::vector<json>& events() const { return events_; }
    bool exited() const { return exited_; }
    session::WorkerProcess& process() { return *process_; }

private:
    json waitFor(const std::set<std::string>& types, std::size_t from, int timeoutMs);

    std::unique_ptr<session::WorkerProcess> process_;
    std::vector<json> events_;
    bool exited_ = false;
    int exitCode_ = -1;
    bool crashed_ = false;
};

}  // namespace pitlane::itest
