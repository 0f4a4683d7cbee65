#include "pitlane/session/event_fold.h"

#include <algorithm>

namespace pitlane::session {

namespace R = results;

std::string errorReason(const protocol::Error& e) {
    if (!e.message.empty()) return e.message;
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

namespace {

// One overload per event; each changes the arm's result and says what the runner must do.
struct Folder {
    R::ArmResult& a;
    const FoldSource& from;
    FoldEffects fx;

    R::ProcessInfo& process() { return a.processes.at(from.process); }
    bool taskIs(Task::Kind kind) const { return from.task && from.task->kind == kind; }
    bool firstRound() const { return from.round == 0; }

    // A warning kept once per arm (K workers of one arm say the same thing) and logged.
    void warn(const std::string& message) {
        if (std::find(a.warnings.begin(), a.warnings.end(), message) != a.warnings.end()) return;
        a.warnings.push_back(message);
        fx.warnings.push_back(a.name + ": " + message);
    }

    void operator()(const protocol::Hello& e) {
        auto& proc = process();
        fx.helloSeen = true;
        if (from.worker == 0 && firstRound()) a.environment = e.environment;
        if (e.pid) proc.pid = long(e.pid);
        if (firstRound() && std::size_t(from.worker) < a.worker_pids.size()) {
            a.worker_pids[std::size_t(from.worker)] = proc.pid;
            a.pid = a.worker_pids.front();
        }
    }
    void operator()(const protocol::Loaded& e) {
        auto& proc = process();
        proc.load_ms = e.load_ms;
        proc.first_forward_ms = e.first_forward_ms;
        if (from.worker == 0 && firstRound()) a.loaded = e.fields;
    }
    void operator()(const protocol::Applied& e) {
        if (firstRound()) {
            if (std::size_t(from.worker) < a.worker_applied.size()) a.worker_applied[std::size_t(from.worker)] = e;
            if (from.worker == 0) a.applied = e;
        } else {
            fx.checkApplied = protocol::appliedFields(e);
        }
        fx.taskDone = taskIs(Task::Configure);
    }
    void operator()(const protocol::Samples& s) {
        if (s.phase == "warmup") {
            // The cold curve of the first batch size, from the first worker of the first round.
            if (from.worker != 0 || !firstRound() || s.batch_size != a.batch_size) return;
            a.warmup_ns.insert(a.warmup_ns.end(), s.latency_ns.begin(), s.latency_ns.end());
            fx.warmupAppended = true;
            return;
        }
        fx.samplesFirst = int(a.samples.size());
        fx.samplesCount = int(s.latency_ns.size());
        // Compact (8 bytes a sample, in chunks: appending never copies what the arm holds).
        a.samples.append(s.block, fx.samplesFirst, s.batch_size, from.worker, from.round, s.latency_ns.data(),
                         s.latency_ns.size());
    }
    void operator()(const protocol::Metrics& e) {
        R::MetricTick t = R::metricTick(e, from.elapsedMs, from.worker, from.round);
        a.peak_rss_bytes = std::max(a.peak_rss_bytes, t.peak_rss_bytes);
        a.metrics.push_back(std::move(t));
        fx.metricsAppended = true;
    }
    void operator()(const protocol::BlockDone& e) {
        process().addBlock(e);
        fx.taskDone = from.task && !taskIs(Task::Configure);
    }
    void operator()(const protocol::ServeBatches&) {}  // serving_tasks.cpp
    // The profile task's answer (run.profile_iters): the first worker's kept.
    void operator()(const protocol::Profile& e) {
        if (from.worker == 0) a.profile = e.fields;
        fx.taskDone = taskIs(Task::Profile);
    }
    void operator()(const protocol::Warning& e) {
        // A warning can carry a model's text (an exception, a printed name): no control characters.
        const std::string message = protocol::printable(e.message);
        // What did not run as asked is a caveat of every comparison of this arm (issue 41).
        if (R::isCaveatCode(e.code) && std::find(a.caveats.begin(), a.caveats.end(), message) == a.caveats.end())
            a.caveats.push_back(message);
        warn(message);
    }
    void operator()(const protocol::Error& e);
    void operator()(const protocol::Bye& e) { a.peak_rss_bytes = std::max(a.peak_rss_bytes, e.peak_rss_bytes); }
};

void Folder::operator()(const protocol::Error& e) {
    if (taskIs(Task::Profile)) {
        // The measurements stand: a profile that cannot be taken is a warning, not a failure.
        warn("profile not taken: " + (e.message.empty() ? e.code : e.message));
        fx.taskDone = true;
        return;
    }
    if (from.task && !taskIs(Task::Configure) && a.batch_sizes.size() > 1 && e.code == protocol::code::kOutOfMemory) {
        // One point of the sweep failed: record it, the sweep goes on.
        a.sweep_failures[from.task->batchSize] = e;
        if (taskIs(Task::Block)) {
            // What this worker measured of the block stays; the rest will not come.
            int measured = 0;
            for (std::size_t i = a.samples.size(); i-- > 0;) {
                const auto s = a.samples[i];
                if (s.block != from.task->block || s.process != from.round) break;
                measured += s.worker == from.worker ? 1 : 0;
            }
            fx.unplan = from.task->iters - measured;
        }
        fx.warnings.push_back(a.name + ": batch size " + std::to_string(from.task->batchSize) + " failed: " + e.message);
        fx.taskDone = true;
        return;
    }
    fx.failure = protocol::Error{protocol::printable(e.code), protocol::printable(errorReason(e)), e.detail};
}

}  // namespace

std::size_t discardMeasurements(R::ArmResult& arm) {
    const std::size_t dropped = arm.samples.size() + arm.warmup_ns.size();
    arm.samples.clear();
    arm.warmup_ns.clear();
    return dropped;
}

FoldEffects foldEvent(R::ArmResult& arm, const FoldSource& from, const protocol::Event& event) {
    Folder folder{arm, from, {}};
    std::visit(folder, event);
    return std::move(folder.fx);
}

}  // namespace pitlane::session
