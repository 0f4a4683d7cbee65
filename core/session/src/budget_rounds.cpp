// A run planned from its time budget (budget_plan.h; issue 43). Part of ExperimentRunner.
//
// Round 0's processes start, load, configure and warm up with no blocks queued; what that cost
// (and the warmup's pace) prices a round and an iteration; designRounds chooses the iterations
// per process (Kalibera & Jones, from the variance ratio: the prior until three processes of
// every arm are measured) and the processes that fit, later rounds warming up only as long as
// round 0's warmups took to settle (laterWarmupIters), and round 0's blocks and those rounds are
// queued at once (their processes start ahead, as a fixed plan's do). When they are done, another
// round is added while the budget, priced with what the run measured since, holds one more.
#include "pitlane/session/budget_plan.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/session/worker_process.h"
#include "pitlane/spec/run_limits.h"

#include <algorithm>
#include <deque>

namespace pitlane::session {

using json = nlohmann::json;
namespace R = results;

void ExperimentRunner::startBudgeted() {
    const auto& preset = result_.preset;
    const auto& run = preset.run;
    // Block ids are those of one sweep point (a budget plans no sweep: spec refuses one).
    blocksPerPoint_ = 0;
    nextBlock_ = 0;
    costLog_ = CostLog(int(preset.arms.size()), 1, 1.0);
    laterWarmup_ = -1;
    auto& rep = result_.replication;
    rep["budget_ms"] = run.budget_ms;
    rep["plan"] = budgetPlanText(run.budget_ms);
    rep["processes_min"] = spec::kBudgetMinProcesses;
    rep["processes_max"] = run.max_processes;
    rep["rule"] =
        "a time budget (run.budget_ms): round 0 sets up and warms every arm; the iterations per "
        "process follow Kalibera & Jones 2013, n = sqrt(c_process / c_iteration * T_i^2 / T_p^2), "
        "from the measured costs and the variance ratio (a prior until every arm has 3 processes); "
        "then as many rounds of fresh processes as the budget holds (at least 3, at most "
        "run.max_processes)";
    rep["design"] = json::object();
    queueRound(0, 0, {}, true);  // set-up and warmup only: its blocks wait for the design
    next();
}

bool ExperimentRunner::extendBudget() {
    if (budgetOver_) return false;
    const auto& preset = result_.preset;
    const auto& run = preset.run;
    std::vector<stats::BlockedSamples> blocked;
    double samples = 0;
    for (const auto& a : result_.arms)
        if (a.status == R::kPending) {
            blocked.push_back(a.blocked());
            samples += double(a.samples.size());
        }
    auto& rep = result_.replication;
    auto& design = rep["design"];
    if (blocked.empty()) {
        budgetOver_ = true;
        return false;
    }
    const ObservedCosts costs = costLog_.costs();
    if (!budgetDesigned_) {
        // Round 0's warmups are measured, nothing later is queued: how long a later round warms up.
        std::vector<std::vector<double>> warmups;
        json round0 = json::array();
        for (std::size_t i = 0; i < result_.arms.size(); ++i) {
            const auto& a = result_.arms[i];
            if (a.status != R::kPending) continue;
            round0.push_back(a.warmup_ns.size());
            std::vector<double> w(a.warmup_ns.begin(), a.warmup_ns.end());
            if (preset.arms[i].knobs.workers > 1) w.clear();  // K workers' warmups interleave
            warmups.push_back(std::move(w));
        }
        const LaterWarmup later = laterWarmupIters(run.warmup_iters, warmups);
        laterWarmup_ = later.iters;
        rep["warmup"] = later.toJson(run.warmup_iters);
        rep["warmup"]["round0"] = round0;  // per arm (and worker), round0WarmupIters
        if (later.iters < run.warmup_iters)
            emit logMessage(-1, QStringLiteral("info"), QString::fromStdString(later.reason));
    }
    BudgetInput in;
    in.budgetMs = run.budget_ms;
    in.elapsedMs = elapsedMs();
    in.roundsPlanned = budgetDesigned_ ? rounds_ : 0;
    in.firstRoundOpen = !budgetDesigned_;
    in.blockIters = run.block_iters;
    in.maxProcesses = run.max_processes;
    in.costs = roundCosts(preset, costs, std::max(1, rounds_), laterWarmup_);
    // The verdict's bootstraps over about as many samples again as a round adds.
    in.analysisMs = analysisMs(costs, samples);
    const VarianceSplit split = varianceSplit(blocked);
    if (split.ratio > 0 && split.processes >= spec::kBudgetMinProcesses) {
        in.ratio = split.ratio;
        in.ratioSource = "measured over " + std::to_string(split.processes) + " processes";
    }
    if (!in.costs.known) {
        // Nothing priced a round (an arm's warmup was not measured: warmup_iters 0): its blocks
        // are the first measure of it; a round of block_iters, then priced.
        in.costs.setupMs = 1000;
        in.costs.iterMs = 1000;
    }
    const BudgetDesign d = designRounds(in);
    json step = d.toJson();
    step["at_ms"] = in.elapsedMs;
    step["setup_ms"] = in.costs.setupMs;
    step["iter_ms"] = in.costs.iterMs;
    step["priced"] = in.costs.known;
    if (!budgetDesigned_) {
        budgetDesigned_ = true;
        // Round 0's processes are set up and warm: its blocks now, interleaved as planRound
        // orders them, then the rounds that fit.
        for (const Task& t : planRound(preset, 0, nextBlock_, d.blocks, true, 0))
            if (t.kind == Task::Block) queueTask(t);
        nextBlock_ += int(d.blocks.size());
        for (int r = 1; r < d.processes; ++r) {
            queueRound(r, nextBlock_, d.blocks, true);
            nextBlock_ += int(d.blocks.size());
        }
        design["first"] = step;
        design["added"] = json::array();
        rep["processes"] = rounds_;
        rep["plan"] = designText(d, run.budget_ms);
        emit planChanged(QString::fromStdString(rep["plan"].get<std::string>()));
        emit logMessage(-1, QStringLiteral("info"), QString::fromStdString(rep["plan"].get<std::string>()));
        return true;
    }
    // The planned rounds are measured: one more while the budget holds it.
    if (d.processes > rounds_ && !d.overBudget && rounds_ < run.max_processes) {
        queueRound(rounds_, nextBlock_, d.blocks, true);
        nextBlock_ += int(d.blocks.size());
        design["added"].push_back(step);
        rep["processes"] = rounds_;
        emit logMessage(-1, QStringLiteral("info"),
                        QStringLiteral("adding round %1 (fresh processes, %2 iterations each): the budget holds it "
                                       "(about %3 s of %4 s)")
                            .arg(rounds_)
                            .arg(d.itersPerProcess)
                            .arg(d.predictedMs / 1000.0, 0, 'f', 1)
                            .arg(run.budget_ms / 1000.0, 0, 'f', 1));
        return true;
    }
    budgetOver_ = true;
    design["stopped"] = step;
    rep["processes"] = rounds_;
    // The profile runs in the last round's processes once their blocks are measured.
    if (run.profile_iters > 0) {
        for (int i = 0; i < int(preset.arms.size()); ++i)
            if (result_.arms[std::size_t(i)].status == R::kPending)
                queueTask({Task::Profile, i, -1, run.profile_iters, preset.arms[std::size_t(i)].knobs.batch_size.front(),
                           rounds_ - 1});
        return !tasks_.empty();
    }
    return false;
}

bool ExperimentRunner::trimBudget(int round) {
    const auto& run = result_.preset.run;
    if (!run.budgeted() || result_.preset.serving.enabled || !budgetDesigned_ || round < spec::kBudgetMinProcesses)
        return false;
    // The round's own tasks are still queued (its StartRound was just taken off): drop rounds from
    // the last one while the queue would end past the budget.
    const int from = round;
    int last = round;
    for (const auto& t : tasks_) last = std::max(last, t.round);
    int dropped = 0;
    RemainingTime left = remaining();
    while (last >= from && left.known && elapsedMs() + left.lowMs > double(run.budget_ms)) {
        std::deque<Task> kept;
        for (const auto& t : tasks_) {
            if (t.round != last || t.kind == Task::Profile) {
                kept.push_back(t);
                continue;
            }
            if (t.kind == Task::Block && result_.arms[std::size_t(t.arm)].status == R::kPending)
                unplan(t.arm, t.iters * result_.preset.arms[std::size_t(t.arm)].knobs.workers);
        }
        tasks_ = std::move(kept);
        for (auto& st : arms_) {
            auto it = st.ahead.find(last);
            if (it == st.ahead.end()) continue;
            quitWorkers(it->second);
            for (auto& w : it->second)
                if (w.process) retired_.push_back(std::move(w.process));
            st.ahead.erase(it);
        }
        ++dropped;
        --last;
        left = remaining();
    }
    if (dropped == 0) return false;
    budgetOver_ = true;
    rounds_ = last + 1;
    auto& rep = result_.replication;
    rep["processes"] = rounds_;
    rep["design"]["trimmed"] = {{"at_ms", elapsedMs()}, {"rounds_dropped", dropped}, {"processes", rounds_}};
    emit logMessage(-1, QStringLiteral("info"),
                    QStringLiteral("the budget (%1 s) holds %2 processes per arm, not the %3 planned: the machine "
                                   "runs slower than round 0 measured it (load), so the last %4 round(s) were dropped")
                        .arg(run.budget_ms / 1000.0, 0, 'f', 1)
                        .arg(rounds_)
                        .arg(rounds_ + dropped)
                        .arg(dropped));
    return last < round;
}

}  // namespace pitlane::session
