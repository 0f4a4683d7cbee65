// ExperimentRunner: what each worker event does to the run (one handler per typed event of
// protocol/events.h). Events of a worker started ahead of its round are held back by
// replicate_rounds.cpp until the round starts.
#include "pitlane/session/experiment_runner.h"

#include "pitlane/protocol/events.h"

#include <QScopeGuard>

#include <algorithm>

namespace pitlane::session {

namespace {

// A message for an error event that came without one: the first line with something on it of
// the worker's detail (torch's text), so no failure prints an empty reason.
std::string reasonFromDetail(const protocol::Error& e) {
    std::string text;
    if (e.detail.is_string()) text = e.detail.get<std::string>();
    for (const char* key : {"torch", "detail", "reason"})
        if (text.empty() && e.detail.is_object() && e.detail.contains(key) && e.detail[key].is_string())
            text = e.detail[key].get<std::string>();
    std::size_t start = 0;
    while (start < text.size()) {
        const auto nl = text.find('\n', start);
        const std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
        if (nl == std::string::npos) break;
        start = nl + 1;
    }
    return "the worker gave no reason (error code " + e.code + ")";
}

}  // namespace

using json = nlohmann::json;
namespace R = results;

void ExperimentRunner::tell(WorkerState& ws, const Task& t) {
    ws.told = WorkerState::Told{int(t.kind), t.kind == Task::Warmup ? -1 : t.block, t.iters, t.batchSize, 0, true};
}

std::string ExperimentRunner::protocolViolation(WorkerState& ws, const json& ev) {
    const std::string type = ev.value("type", std::string());
    auto& told = ws.told;
    const auto kindName = [](int kind) -> std::string {
        switch (kind) {
        case Task::Configure: return "configure";
        case Task::Warmup: return "warmup";
        case Task::Block: return "run";
        case Task::Serve: return "serve";
        case Task::Profile: return "profile";
        default: return "nothing";
        }
    };
    const auto answering = [&](std::initializer_list<int> kinds) -> std::string {
        if (told.open && std::find(kinds.begin(), kinds.end(), told.kind) != kinds.end()) return {};
        return "a \"" + type + "\" event while the worker had " +
               (told.open ? "been sent " + kindName(told.kind) : std::string("no command open"));
    };
    const auto intField = [&](const char* key) { return ev.contains(key) && ev[key].is_number_integer() ? ev[key].get<std::int64_t>() : std::int64_t(-999); };
    if (type == protocol::kHello) return ws.hellos > 0 ? "a second hello" : std::string();
    if (type == protocol::kLoaded) return answering({Task::Configure});
    if (type == protocol::kApplied) {
        auto why = answering({Task::Configure});
        told.open = false;
        return why;
    }
    if (type == protocol::kProfile) {
        auto why = answering({Task::Profile});
        told.open = false;
        return why;
    }
    if (type == protocol::kServeBatches) {
        if (auto why = answering({Task::Serve}); !why.empty()) return why;
        if (intField("block") != told.block)
            return "serve_batches of block " + std::to_string(intField("block")) + " while block " +
                   std::to_string(told.block) + " was served";
        return {};
    }
    if (type == protocol::kSamples) {
        if (auto why = answering({Task::Warmup, Task::Block}); !why.empty()) return why;
        const std::string phase = told.kind == Task::Warmup ? "warmup" : "measure";
        const auto block = intField("block"), first = intField("first_iter"), bs = intField("batch_size");
        const auto n = ev.contains("latency_ns") && ev["latency_ns"].is_array() ? std::int64_t(ev["latency_ns"].size()) : 0;
        if (ev.value("phase", std::string()) != phase)
            return "samples of phase \"" + ev.value("phase", std::string()) + "\" during a " + phase + " block";
        if (block != told.block)
            return "samples of block " + std::to_string(block) + " while block " + std::to_string(told.block) + " ran";
        if (bs != told.batchSize)
            return "samples at batch size " + std::to_string(bs) + " while " + std::to_string(told.batchSize) + " ran";
        if (first != told.samples)
            return "samples from iteration " + std::to_string(first) + " of block " + std::to_string(block) +
                   " after " + std::to_string(told.samples) + " had come";
        if (told.samples + n > told.iters)
            return std::to_string(told.samples + n) + " samples in block " + std::to_string(block) +
                   " of " + std::to_string(told.iters) + " iterations";
        told.samples += int(n);
        return {};
    }
    if (type == protocol::kBlockDone) {
        if (auto why = answering({Task::Warmup, Task::Block, Task::Serve}); !why.empty()) return why;
        told.open = false;
        if (intField("block") != told.block)
            return "block_done of block " + std::to_string(intField("block")) + " while block " +
                   std::to_string(told.block) + " ran";
        if (told.kind != Task::Serve && intField("iters") != told.samples)
            return "block_done of block " + std::to_string(told.block) + " says " +
                   std::to_string(intField("iters")) + " iterations; " + std::to_string(told.samples) +
                   " samples came";
        return {};
    }
    return {};  // metrics, warning, error, bye: at any time
}

void ExperimentRunner::failProtocol(int arm, const std::string& why) {
    auto& a = result_.arms[arm];
    if (a.status != R::kPending) return;
    // What came before may have been forged to fit: none of it is kept.
    const std::size_t dropped = a.samples.size() + a.warmup_ns.size();
    a.samples.clear();
    a.warmup_ns.clear();
    failArm(arm, R::kFailed, protocol::code::kProtocolViolation,
            why + "; the arm is failed and none of its results are used (" + std::to_string(dropped) +
                " samples received before were discarded)");
    abandon(arm);
}

void ExperimentRunner::onEvent(int arm, int worker, const json& ev) {
    const auto type = protocol::eventType(ev);
    auto& a = result_.arms[arm];
    // An arm that broke the protocol hears nothing more from its workers.
    if (a.error && a.error->code == protocol::code::kProtocolViolation) return;
    if (a.status == R::kPending) {
        auto& ws = arms_[arm].workers[std::size_t(worker)];
        if (const std::string why = protocolViolation(ws, ev); !why.empty()) {
            failProtocol(arm, "worker " + std::to_string(worker) + " broke the protocol: " + why);
            return;
        }
        if (type == protocol::EventType::Hello) ++ws.hellos;
    }
    if (activeFor(arm) && type != protocol::EventType::Metrics) armTimer();
    // Observers of armEvent read result(): announce the event only once it is stored there.
    const auto announce = qScopeGuard([&] { emit armEvent(arm, ev); });
    try {
        const auto event = protocol::decodeEvent(ev);
        if (event) std::visit([&](const auto& e) { handle(arm, worker, e); }, *event);
    } catch (const std::exception& e) {
        emit logMessage(arm, QStringLiteral("warning"),
                        QStringLiteral("ignored a bad %1 event: %2")
                            .arg(QString::fromStdString(ev.value("type", std::string())),
                                 QString::fromUtf8(e.what())));
    }
}

R::ProcessInfo& ExperimentRunner::processOf(int arm, int worker) {
    return result_.arms[arm].processes[std::size_t(arms_[arm].workers[worker].procIndex)];
}

void ExperimentRunner::handle(int arm, int worker, const protocol::Hello& e) {
    auto& a = result_.arms[arm];
    const bool firstRound = arms_[arm].round == 0;
    auto& proc = processOf(arm, worker);
    arms_[arm].workers[worker].helloSeen = true;
    if (worker == 0 && firstRound) a.environment = e.environment;
    if (e.pid) proc.pid = long(e.pid);
    if (firstRound) {
        a.worker_pids[worker] = proc.pid;
        a.pid = a.worker_pids.front();
    }
    if (!active_.empty()) sendCurrent();  // a task may have waited for this start-up
}

void ExperimentRunner::handle(int arm, int worker, const protocol::Loaded& e) {
    auto& proc = processOf(arm, worker);
    proc.load_ms = e.load_ms;
    proc.first_forward_ms = e.first_forward_ms;
    if (worker == 0 && arms_[arm].round == 0) result_.arms[arm].loaded = e.fields;
}

void ExperimentRunner::handle(int arm, int worker, const protocol::Applied& e) {
    auto& a = result_.arms[arm];
    if (arms_[arm].round == 0) {
        a.worker_applied[worker] = e;
        if (worker == 0) a.applied = e;
    } else {
        checkApplied(arm, worker, protocol::appliedFields(e));
    }
    const Task* task = activeFor(arm);
    if (task && task->kind == Task::Configure) taskDoneBy(arm, worker);
}

void ExperimentRunner::handle(int arm, int worker, const protocol::Samples& s) {
    auto& a = result_.arms[arm];
    auto& st = arms_[arm];
    if (s.phase == "warmup") {
        // The cold curve of the first batch size, from the first worker of the first round.
        if (worker != 0 || st.round != 0 || s.batch_size != a.batch_size) return;
        a.warmup_ns.insert(a.warmup_ns.end(), s.latency_ns.begin(), s.latency_ns.end());
        emit warmupAppended(arm);
        return;
    }
    const int first = int(a.samples.size());
    // Compact (8 bytes a sample, in chunks: appending never copies what the arm holds).
    a.samples.append(s.block, first, s.batch_size, worker, st.round, s.latency_ns.data(),
                     s.latency_ns.size());
    st.doneIters += int(s.latency_ns.size());
    emit samplesAppended(arm, first, int(s.latency_ns.size()));
}

void ExperimentRunner::handle(int arm, int worker, const protocol::Metrics& e) {
    auto& a = result_.arms[arm];
    R::MetricTick t = R::metricTick(e, elapsedMs(), worker, arms_[arm].round);
    a.peak_rss_bytes = std::max(a.peak_rss_bytes, t.peak_rss_bytes);
    a.metrics.push_back(std::move(t));
    emit metricsAppended(arm);
}

void ExperimentRunner::handle(int arm, int worker, const protocol::BlockDone& e) {
    // A serving level's block_done ends its level (serving_tasks.cpp) before its task.
    if (e.serving) onServeDone(arm, worker, e);
    processOf(arm, worker).addBlock(e);
    const Task* task = activeFor(arm);
    if (task && task->kind != Task::Configure) taskDoneBy(arm, worker);
}

void ExperimentRunner::handle(int arm, int, const protocol::Warning& e) {
    auto& a = result_.arms[arm];
    // A warning can carry a model's text (an exception, a printed name): no control characters.
    const std::string message = protocol::printable(e.message);
    if (std::find(a.warnings.begin(), a.warnings.end(), message) != a.warnings.end())
        return;  // K workers of one arm say the same thing
    a.warnings.push_back(message);
    emit logMessage(arm, QStringLiteral("warning"), QString::fromStdString(a.name + ": " + message));
}

void ExperimentRunner::handle(int arm, int worker, const protocol::Profile& e) {
    if (worker == 0) result_.arms[arm].profile = e.fields;
    const Task* task = activeFor(arm);
    if (task && task->kind == Task::Profile) taskDoneBy(arm, worker);
}

void ExperimentRunner::handle(int arm, int worker, const protocol::Error& e) {
    auto& a = result_.arms[arm];
    const Task* task = activeFor(arm);
    if (task && task->kind == Task::Profile) {
        // The measurements stand: a profile that cannot be taken is a warning, not a failure.
        const std::string msg = "profile not taken: " + (e.message.empty() ? e.code : e.message);
        if (std::find(a.warnings.begin(), a.warnings.end(), msg) == a.warnings.end()) a.warnings.push_back(msg);
        emit logMessage(arm, QStringLiteral("warning"), QString::fromStdString(a.name + ": " + msg));
        taskDoneBy(arm, worker);
        return;
    }
    if (task && task->kind != Task::Configure && a.batch_sizes.size() > 1 &&
        e.code == protocol::code::kOutOfMemory) {
        // One point of the sweep failed: record it, the sweep goes on.
        a.sweep_failures[task->batchSize] = e;
        if (task->kind == Task::Block) {
            // What this worker measured of the block stays; the rest will not come.
            int measured = 0;
            for (std::size_t i = a.samples.size(); i-- > 0;) {
                const auto s = a.samples[i];
                if (s.block != task->block || s.process != arms_[arm].round) break;
                measured += s.worker == worker ? 1 : 0;
            }
            unplan(arm, task->iters - measured);
        }
        emit logMessage(arm, QStringLiteral("warning"),
                        QString::fromStdString(a.name + ": batch size " + std::to_string(task->batchSize) +
                                               " failed: " + e.message));
        taskDoneBy(arm, worker);
        return;
    }
    failArm(arm, R::kFailed, protocol::printable(e.code),
            protocol::printable(e.message.empty() ? reasonFromDetail(e) : e.message), e.detail);
    abandon(arm);
}

void ExperimentRunner::handle(int arm, int, const protocol::Bye& e) {
    auto& a = result_.arms[arm];
    a.peak_rss_bytes = std::max(a.peak_rss_bytes, e.peak_rss_bytes);
}

}  // namespace pitlane::session
