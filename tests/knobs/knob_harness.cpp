#include "knob_harness.h"

#include "pitlane/protocol/protocol.h"
#include "pitlane/session/experiment_runner.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace pitlane::knobtest {

using itest::spinUntil;

std::string modelPath(const std::string& model) {
    return itest::modelDir() + "/" + model + ".pt";
}

json modelInput(const std::string& model) {
    const json side = spec::readModelSidecar(modelPath(model));
    return side.is_object() ? side.value("input", json()) : json();
}

std::vector<json> ConfiguredWorker::events(const std::string& type) const {
    return driver ? driver->eventsOfType(type) : std::vector<json>{};
}

std::vector<json> ConfiguredWorker::warnings(const std::string& code) const {
    std::vector<json> out;
    for (const auto& w : events(protocol::kWarning))
        if (w.value("code", "") == code) out.push_back(w);
    return out;
}

json ConfiguredWorker::loaded() const {
    const auto l = events(protocol::kLoaded);
    return l.empty() ? json() : l.front();
}

namespace {

const json* firstOf(const WorkerDriver& w, const std::vector<std::string>& types,
                    std::size_t from) {
    const auto& evs = w.events();
    for (std::size_t i = from; i < evs.size(); ++i)
        if (std::find(types.begin(), types.end(), evs[i].value("type", "")) != types.end())
            return &evs[i];
    return nullptr;
}

json configureCommand(const WorkerRequest& r) {
    auto cmd = protocol::makeCommand(protocol::kConfigure);
    cmd["arm"] = {{"name", r.label},
                  {"model_path", modelPath(r.model)},
                  {"input", r.input.is_null() ? modelInput(r.model) : r.input},
                  {"knobs", r.knobs},
                  {"seed", 1}};
    return cmd;
}

}  // namespace

std::map<std::string, ConfiguredWorker> configureAll(const std::vector<WorkerRequest>& requests,
                                                     int timeoutMs) {
    std::map<std::string, ConfiguredWorker> out;
    if (itest::workerPath().empty()) {
        ADD_FAILURE() << "PITLANE_WORKER is not set (run through ctest)";
        return out;
    }
    for (const auto& r : requests) {
        auto& cw = out[r.label];
        cw.driver = std::make_unique<WorkerDriver>();
        if (!r.env.isEmpty()) cw.driver->process().setEnvironment(r.env);
        cw.driver->process().start();
    }
    // Configure each worker as soon as it has said hello; done when every one has answered.
    std::map<std::string, bool> sent;
    auto step = [&] {
        bool allDone = true;
        for (const auto& r : requests) {
            auto& cw = out[r.label];
            const auto& w = *cw.driver;
            if (cw.hello.is_null())
                if (const json* h = firstOf(w, {protocol::kHello}, 0)) cw.hello = *h;
            if (!cw.hello.is_null() && !sent[r.label]) {
                sent[r.label] = true;
                cw.driver->process().send(configureCommand(r));
            }
            if (cw.reply.is_null() && sent[r.label])
                if (const json* a = firstOf(w, {protocol::kApplied, protocol::kError}, 0))
                    cw.reply = *a;
            if (cw.reply.is_null() && !w.exited()) allDone = false;
        }
        return allDone;
    };
    spinUntil(step, timeoutMs);
    for (const auto& r : requests)
        if (out[r.label].reply.is_null())
            ADD_FAILURE() << "worker \"" << r.label << "\" (" << r.model << ", knobs "
                          << r.knobs.dump() << ") gave neither applied nor error in " << timeoutMs
                          << " ms";
    return out;
}

json sendAndWait(WorkerDriver& w, const json& cmd, const std::vector<std::string>& types,
                 int timeoutMs) {
    const auto from = w.events().size();
    if (!w.process().send(cmd)) return json();
    spinUntil([&] { return firstOf(w, types, from) != nullptr || w.exited(); }, timeoutMs);
    const json* ev = firstOf(w, types, from);
    return ev ? *ev : json();
}

json runForMs(WorkerDriver& w, int block, double timeMs, int timeoutMs) {
    auto cmd = protocol::makeCommand(protocol::kRun);
    cmd["block"] = block;
    cmd["phase"] = "measure";
    cmd["time_ms"] = timeMs;
    return sendAndWait(w, cmd, {protocol::kBlockDone, protocol::kError}, timeoutMs);
}

results::RunResult runPresetWith(const spec::Preset& preset, const std::string& workerPath,
                                 int timeoutMs) {
    session::RunnerOptions opts;
    opts.workerPath = QString::fromStdString(workerPath);
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

spec::Preset knobPreset(const std::string& model, const json& arms, const json& run,
                        const json& input) {
    json j = {{"name", "knobs"}, {"model", model}, {"run", run}, {"arms", arms}};
    if (!input.is_null()) j["input"] = input;
    return spec::parsePreset(j, "", itest::modelDir());
}

json arm(const std::string& name, json knobs) {
    return {{"name", name}, {"knobs", std::move(knobs)}};
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace pitlane::knobtest
