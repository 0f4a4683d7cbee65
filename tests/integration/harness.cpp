#include "harness.h"

#include "pitlane/protocol/protocol.h"
#include "pitlane/session/experiment_runner.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QTimer>

#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>

namespace pitlane::itest {

namespace {
std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}
}  // namespace

std::string workerPath() {
    return env("PITLANE_WORKER");
}
std::string binDir() {
    return env("PITLANE_BIN_DIR");
}
std::string modelDir() {
    return env("PITLANE_MODEL_DIR");
}
std::string mlpPath() {
    return modelDir() + "/mlp.pt";
}
json mlpInput() {
    return json::array({{{"shape", {256}}, {"dtype", "float32"}}});
}

std::vector<int> allowedCores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cores;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return cores;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cores.push_back(c);
    return cores;
}

bool spinUntil(const std::function<bool()>& done, int timeoutMs) {
    if (done()) return true;
    QEventLoop loop;
    QTimer poll, deadline;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done()) loop.quit();
    });
    QObject::connect(&deadline, &QTimer::timeout, &loop, &QEventLoop::quit);
    deadline.setSingleShot(true);
    poll.start(5);
    deadline.start(timeoutMs);
    loop.exec();
    return done();
}

spec::Preset mlpPreset(const json& arms, const json& run) {
    const json j = {{"name", "integration"}, {"model", "mlp"}, {"run", run}, {"arms", arms}};
    return spec::parsePreset(j, "", modelDir());
}

results::RunResult runPreset(const spec::Preset& preset, int timeoutMs) {
    session::RunnerOptions opts;
    opts.workerPath = QString::fromStdString(workerPath());
    session::ExperimentRunner runner(opts);
    bool finished = false;
    QObject::connect(&runner, &session::ExperimentRunner::finished, [&] { finished = true; });
    runner.start(preset);
    if (!spinUntil([&] { return finished; }, timeoutMs)) {
        ADD_FAILURE() << "the runner did not finish within " << timeoutMs << " ms";
        runner.stop();
        spinUntil([&] { return finished; }, 5000);
    }
    return runner.result();
}

namespace {

// As the runner starts a worker: allowed to read its models (the sandbox reads nothing else of
// the user's; a worker built elsewhere, worker_only_build's, has no models beside it).
QStringList withModelsReadable(QStringList arguments) {
    if (!arguments.contains(QStringLiteral("--read")))
        arguments << QStringLiteral("--read") << QString::fromStdString(modelDir());
    return arguments;
}

}  // namespace

WorkerDriver::WorkerDriver(const QStringList& arguments)
    : process_(std::make_unique<session::WorkerProcess>(QString::fromStdString(workerPath()),
                                                        withModelsReadable(arguments))) {
    QObject::connect(process_.get(), &session::WorkerProcess::eventReceived,
                     [this](const json& ev) { events_.push_back(ev); });
    QObject::connect(process_.get(), &session::WorkerProcess::exited,
                     [this](int code, bool crashed) {
                         exited_ = true;
                         exitCode_ = code;
                         crashed_ = crashed;
                     });
    QObject::connect(process_.get(), &session::WorkerProcess::startFailed,
                     [this](const QString& why) {
                         exited_ = true;
                         ADD_FAILURE() << why.toStdString();
                     });
}

WorkerDriver::~WorkerDriver() {
    if (!exited_) process_->kill();
}

json WorkerDriver::waitFor(const std::set<std::string>& types, std::size_t from, int timeoutMs) {
    auto found = [&]() -> const json* {
        for (std::size_t i = from; i < events_.size(); ++i)
            if (types.count(events_[i].value("type", ""))) return &events_[i];
        return nullptr;
    };
    spinUntil([&] { return found() != nullptr || exited_; }, timeoutMs);
    // A worker that exited may still have had its last events read by now.
    if (const json* ev = found()) return *ev;
    return json();
}

json WorkerDriver::start(int timeoutMs) {
    if (workerPath().empty()) {
        ADD_FAILURE() << "PITLANE_WORKER is not set (run through ctest)";
        return json();
    }
    process_->start();
    return waitFor({protocol::kHello}, 0, timeoutMs);
}

json WorkerDriver::configure(const json& knobs, const json& input, const std::string& modelPath,
                             int timeoutMs) {
    auto cmd = protocol::makeCommand(protocol::kConfigure);
    cmd["arm"] = {{"name", "itest"},
                  {"model_path", modelPath},
                  {"input", input},
                  {"knobs", knobs},
                  {"seed", 1}};
    const auto from = events_.size();
    if (!process_->send(cmd)) return json();
    return waitFor({protocol::kApplied, protocol::kError}, from, timeoutMs);
}

json WorkerDriver::run(int block, int iters, const char* phase, int timeoutMs) {
    auto cmd = protocol::makeCommand(protocol::kRun);
    cmd["block"] = block;
    cmd["phase"] = phase;
    cmd["iters"] = iters;
    const auto from = events_.size();
    if (!process_->send(cmd)) return json();
    return waitFor({protocol::kBlockDone, protocol::kError}, from, timeoutMs);
}

json WorkerDriver::serve(int block, const json& load, int timeoutMs) {
    auto cmd = protocol::makeCommand(protocol::kServe);
    cmd.update(load);
    cmd["block"] = block;
    const auto from = events_.size();
    if (!process_->send(cmd)) return json();
    return waitFor({protocol::kBlockDone, protocol::kError}, from, timeoutMs);
}

json WorkerDriver::profile(int iters, int timeoutMs) {
    auto cmd = protocol::makeCommand(protocol::kProfileCmd);
    cmd["iters"] = iters;
    const auto from = events_.size();
    if (!process_->send(cmd)) return json();
    return waitFor({protocol::kProfile, protocol::kError}, from, timeoutMs);
}

bool WorkerDriver::quit(int timeoutMs) {
    process_->send(protocol::makeCommand(protocol::kQuit));
    spinUntil([&] { return exited_; }, timeoutMs);
    return exited_ && !crashed_ && exitCode_ == 0 && !eventsOfType(protocol::kBye).empty();
}

std::vector<json> WorkerDriver::eventsOfType(const std::string& type) const {
    std::vector<json> out;
    for (const auto& ev : events_)
        if (ev.value("type", "") == type) out.push_back(ev);
    return out;
}

}  // namespace pitlane::itest
