// The time a run has left (remaining_time.h).
#include "pitlane/session/remaining_time.h"

#include <algorithm>

namespace pitlane::session {

namespace {
double at(const std::vector<double>& v, int i) { return i >= 0 && i < int(v.size()) ? v[std::size_t(i)] : -1; }

// One task run alone; < 0 when nothing measured prices it.
double alone(const Task& t, const ObservedCosts& c) {
    switch (t.kind) {
    case Task::StartRound:
        return 0;
    case Task::Configure:
        return at(c.configureMs, t.arm);
    case Task::Warmup: {
        double per = at(c.warmupMsPerIter, t.arm);
        if (per < 0) per = at(c.blockMsPerIter, t.arm);
        return per < 0 ? -1 : per * t.iters;
    }
    case Task::Block:
    case Task::Profile: {
        // Before the arm's first block: the other arms' block pace (arms of an A/B are alike far
        // more often than a warmup, whose first iterations are the slowest, is like a block;
        // mlp: 10x), else its own warmup's pace.
        double per = at(c.blockMsPerIter, t.arm);
        if (per < 0) {
            double sum = 0;
            int n = 0;
            for (double v : c.blockMsPerIter)
                if (v >= 0) sum += v, ++n;
            per = n > 0 ? sum / n : at(c.warmupMsPerIter, t.arm);
        }
        return per < 0 ? -1 : per * t.iters;
    }
    case Task::Serve:
        return -1;
    }
    return -1;
}

// The tasks' cost as the runner runs them; the first group's cost less `elapsedFirst`; the
// samples their blocks add in *samples. false when some task has no price.
bool cost(const std::vector<Task>& tasks, double elapsedFirst, const ObservedCosts& c,
          const std::vector<int>& workers, double* out, double* samples) {
    double total = 0;
    *samples = 0;
    for (const auto& t : tasks)
        if (t.kind == Task::Block) {
            const int w = t.arm >= 0 && t.arm < int(workers.size()) ? std::max(1, workers[std::size_t(t.arm)]) : 1;
            *samples += double(t.iters) * w;
        }
    bool first = true;
    for (std::size_t i = 0; i < tasks.size();) {
        const Task& t = tasks[i];
        std::size_t j = i + 1;
        double group = 0;
        if (t.concurrent && (t.kind == Task::Configure || t.kind == Task::Warmup)) {
            double longest = 0, shortest = -1;
            bool priced = true;
            for (j = i; j < tasks.size() && tasks[j].concurrent && tasks[j].kind == t.kind &&
                        tasks[j].round == t.round;
                 ++j) {
                const double one = alone(tasks[j], c);
                if (one < 0) priced = false;
                longest = std::max(longest, one);
                shortest = shortest < 0 ? one : std::min(shortest, one);
            }
            const bool added = c.addedFromRound >= 0 && t.round >= c.addedFromRound;
            double measured = t.kind == Task::Configure ? c.concurrentConfigureMs : c.concurrentWarmupMs;
            if (t.kind == Task::Configure && added)  // processes started with the round
                measured = c.addedConfigureMs >= 0 ? c.addedConfigureMs
                           : priced ? std::max(shortest + (longest - shortest) * c.addedStartShare,
                                               c.concurrentConfigureMs)
                                    : -1;
            if (measured >= 0)
                group = measured;
            else if (priced && t.kind == Task::Configure && !added)
                // A planned round's processes were started ahead: its set-up is the loads, like
                // round 0's last arm's alone (the first one's waited for every start).
                group = shortest;
            else if (priced)
                group = longest;
            else
                return false;
        } else {
            group = alone(t, c);
            if (group < 0) return false;
        }
        if (first && t.kind != Task::StartRound) {
            group = std::max(0.0, group - elapsedFirst);
            first = false;
        }
        total += group;
        i = j;
    }
    *out = total;
    return true;
}
}  // namespace

CostLog::CostLog(int arms, int addedFromRound, double addedStartShare)
    : block_(std::size_t(std::max(0, arms))), warmup_(block_.size()), configure_(block_.size()),
      addedFrom_(addedFromRound), addedStartShare_(addedStartShare) {}

void CostLog::record(const std::vector<Task>& group, double ms) {
    if (group.empty() || ms < 0) return;
    const Task& t = group.front();
    const auto ok = [&](int arm) { return arm >= 0 && arm < int(block_.size()); };
    const bool together = group.size() > 1;
    switch (t.kind) {
    case Task::Configure:
        if (together && addedFrom_ >= 0 && t.round >= addedFrom_)
            addedConfigure_.add(ms);
        else if (together)
            concurrentConfigure_.add(ms);
        else if (ok(t.arm))
            configure_[std::size_t(t.arm)].add(ms);
        break;
    case Task::Warmup:
        if (together)
            concurrentWarmup_.add(ms);
        else if (ok(t.arm) && t.iters > 0)
            warmup_[std::size_t(t.arm)].add(ms, t.iters);
        break;
    case Task::Block:
        if (ok(t.arm) && t.iters > 0) block_[std::size_t(t.arm)].add(ms, t.iters);
        break;
    default:
        break;
    }
}

void CostLog::recordDecision(double ms, double samples) {
    if (ms >= 0 && samples > 0) analysis_.add(ms / samples);
}

double analysisMs(const ObservedCosts& c, double samples) {
    samples = std::max(0.0, samples);
    return c.analysisMsPerSample >= 0 ? c.analysisMsPerSample * samples
                                      : kAnalysisPriorMs + kAnalysisPriorMsPerSample * samples;
}

ObservedCosts CostLog::costs() const {
    ObservedCosts c;
    for (const auto& m : block_) c.blockMsPerIter.push_back(m.get());
    for (const auto& m : warmup_) c.warmupMsPerIter.push_back(m.get());
    for (const auto& m : configure_) c.configureMs.push_back(m.get());
    c.concurrentConfigureMs = concurrentConfigure_.get();
    c.addedConfigureMs = addedConfigure_.get();
    c.addedFromRound = addedFrom_;
    c.addedStartShare = addedStartShare_;
    c.concurrentWarmupMs = concurrentWarmup_.get();
    c.analysisMsPerSample = analysis_.get();
    return c;
}

RemainingTime estimateRemaining(const RemainingInput& in, const ObservedCosts& c) {
    RemainingTime r;
    double queued = 0, samples = 0;
    if (!cost(in.pending, in.activeElapsedMs, c, in.workers, &queued, &samples)) return r;
    const double low = in.samplesDone + samples;  // compared by the decision due and at the end
    const double decision = in.decisionDue ? analysisMs(c, low) : 0;
    r.lowMs = queued + decision + (in.finalAnalysis ? analysisMs(c, low) : 0);
    r.highMs = r.lowMs;
    if (in.roundsMayBeAdded > 0) {
        // Each added round, a decision after each but the last (the cap needs none), and the
        // verdict's analysis over every sample.
        double round = 0, per = 0;
        if (!cost(in.addedRound, 0, c, in.workers, &round, &per)) return r;
        const int k = in.roundsMayBeAdded;
        r.highMs = queued + decision + k * round;
        for (int i = 1; i < k; ++i) r.highMs += analysisMs(c, low + i * per);
        if (in.finalAnalysis) r.highMs += analysisMs(c, low + k * per);
    }
    if (in.adaptiveCapLeftMs >= 0) r.highMs = std::max(r.highMs, in.adaptiveCapLeftMs);
    r.known = true;
    return r;
}

std::string clockText(double ms) {
    ms = std::max(0.0, ms);
    if (ms < 9950) {  // tenths below 10 s: "4.2 s"
        const long tenths = long(ms / 100.0 + 0.5);
        return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " s";
    }
    const long s = long(ms / 1000.0 + 0.5);
    if (s < 60) return std::to_string(s) + " s";
    const long sec = s % 60;
    return std::to_string(s / 60) + ":" + (sec < 10 ? "0" : "") + std::to_string(sec);
}

std::string remainingText(const RemainingTime& r) {
    if (!r.known) return {};
    std::string s = "about " + clockText(r.lowMs) + " left";
    if (clockText(r.highMs) != clockText(r.lowMs)) s += " (up to " + clockText(r.highMs) + " if rounds are added)";
    return s;
}

}  // namespace pitlane::session
