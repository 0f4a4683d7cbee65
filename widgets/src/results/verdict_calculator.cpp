#include "pitlane/widgets/results/verdict_calculator.h"

#include <QMetaObject>
#include <QThreadPool>

#include <malloc.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace pitlane::widgets {

namespace {
void mirrorServing(const std::vector<results::ServingLevel>& live,
                   std::vector<results::ServingLevel>& copy);
}  // namespace

VerdictCalculator::VerdictCalculator(QObject* parent)
    : QObject(parent), livePool_(new QThreadPool(this)), finalPool_(new QThreadPool(this)) {
    livePool_->setMaxThreadCount(1);
    finalPool_->setMaxThreadCount(1);
    // The final verdict's thread ends with its job (once a run): a thread kept for the next
    // one held on to a long run's freed transients, 25 MB of a 10 M-sample run reopened.
    finalPool_->setExpiryTimeout(0);
}

VerdictCalculator::~VerdictCalculator() {
    // The computations read the mirror; their queued deliveries die with this object.
    livePool_->waitForDone();
    finalPool_->waitForDone();
}

void VerdictCalculator::reset() {
    ++generation_;
    pending_ = nullptr;
    pendingFinal_ = false;
    mirrorStale_ = true;  // emptied by the next update (the thread may be reading it now)
}

void VerdictCalculator::request(const results::RunResult& run, bool final) {
    if (busy_) {
        // A final request must not be replaced by a later live one of the same run.
        pending_ = &run;
        pendingFinal_ = pendingFinal_ || final;
        return;
    }
    updateMirror(run, final);
    live_ = &run.arms;
    launch(final);
}

// What the verdict and the warnings read, copied from `run`: the arm's figures and settings
// (small), and the samples that arrived since the last update; for a final request also what
// the advisor reads besides (the metric ticks, the operator profile, the preset as run).
void VerdictCalculator::updateMirror(const results::RunResult& run, bool final) {
    if (mirrorStale_ || mirror_.arms.size() != run.arms.size()) {
        mirror_ = results::RunResult();
        mirror_.arms.resize(run.arms.size());
        mirrorStale_ = false;
    }
    // A stored run brings the comparisons computed when it finished (compareArms checks that
    // they are for these samples): reopening it runs no bootstrap.
    mirror_.comparison_memo = run.comparison_memo;
    mirror_.preset = run.preset;  // kilobytes; the serving block and seed are read from it
    mirror_.interleaved = run.interleaved;
    mirror_.stopping = run.stopping;
    mirror_.preset_json = final ? run.preset_json : nlohmann::json();
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        auto& c = mirror_.arms[i];
        auto samples = std::move(c.samples);
        auto serving = std::move(c.serving);
        c = results::armSettings(a);
        c.samples = std::move(samples);
        c.serving = std::move(serving);
        mirrorServing(a.serving, c.serving);
        c.processes = a.processes;
        c.warmup_ns = a.warmup_ns;
        if (final) {
            c.metrics = a.metrics;
            c.profile = a.profile;
        }
        c.samples = a.samples;  // shares the live series' chunks (copy on write)
    }
}

namespace {
// Serving levels are append-only and each is written until its block_done: a level is copied
// once, when it is complete; until then the mirror holds its settings only (runWarnings counts
// the levels that stay incomplete: cut short).
void mirrorServing(const std::vector<results::ServingLevel>& live,
                   std::vector<results::ServingLevel>& copy) {
    if (copy.size() > live.size()) copy.clear();  // not the same run
    for (std::size_t i = 0; i < live.size(); ++i) {
        const auto& l = live[i];
        if (i == copy.size()) {
            results::ServingLevel settings = results::withoutArrays(l);
            settings.record = {};
            settings.complete = false;
            copy.push_back(std::move(settings));
        }
        if (l.complete && !copy[i].complete) copy[i] = l;
    }
}

}  // namespace

// On the thread. compareServing compares finished arms only; while the run goes, arms still
// pending are compared on the levels they completed (marked ok for the computation).
ServingSnapshot VerdictCalculator::liveServingSnapshot(bool final) {
    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < mirror_.arms.size(); ++i)
        if (!final && mirror_.arms[i].status == results::kPending) {
            pending.push_back(i);
            mirror_.arms[i].status = results::kOk;
        }
    ServingSnapshot s = servingSnapshot(mirror_, !final);
    for (std::size_t i : pending) mirror_.arms[i].status = results::kPending;
    return s;
}

// The table's rows of a serving run: requests served for n, and the arm's comparisons.
void VerdictCalculator::addServing(const ServingSnapshot& s, std::vector<ComparisonRow>& rows) {
    for (std::size_t i = 0; i < rows.size() && i < s.arms.size(); ++i) {
        rows[i].serving = true;
        rows[i].served_requests = s.arms[i].served;
        rows[i].serving_levels = s.arms[i].levels;
        rows[i].serving_comparisons = s.arms[i].comparisons;
        rows[i].serving_headline = s.arms[i].headline;
    }
}

void VerdictCalculator::launch(bool final) {
    busy_ = true;
    (final ? finalPool_ : livePool_)->start([this, final, gen = generation_] {
        // The live verdict's bootstrap runs below the window's UI thread (issue 44: on 2 cores
        // it took the core the next frame needed); the final one, awaited, keeps its priority.
        if (!final) ::setpriority(PRIO_PROCESS, pid_t(::syscall(SYS_gettid)), 10);
        if (final)
            finalReused_ = mirror_.comparison_memo && mirror_.comparison_memo->key == results::comparisonKey(mirror_);
        auto rows = comparisonRows(mirror_, true);
        QStringList warnings;
        if (final)
            for (const auto& w : results::runWarnings(mirror_))
                warnings << QString::fromStdString(w);
        std::shared_ptr<const ServingSnapshot> serving;
        if (mirror_.preset.serving.enabled) {
            serving = std::make_shared<const ServingSnapshot>(liveServingSnapshot(final));
            addServing(*serving, rows);
        }
        std::shared_ptr<const AdviceSnapshot> advice;
        if (final) advice = std::make_shared<const AdviceSnapshot>(adviceSnapshot(mirror_));
        QMetaObject::invokeMethod(
            this,
            [this, rows = std::move(rows), warnings, serving, advice, final, gen]() mutable {
                onDone(std::move(rows), warnings, std::move(serving), std::move(advice), final,
                       gen);
            },
            Qt::QueuedConnection);
#ifdef __GLIBC__
        // The final verdict of a long run frees a few hundred MB of transients (the bootstrap's
        // resamples); glibc keeps freed pages resident in its arenas: handed back here, off the
        // UI thread, once per run.
        if (final) ::malloc_trim(0);
#endif
    });
}

void VerdictCalculator::onDone(std::vector<ComparisonRow> rows, QStringList warnings,
                               std::shared_ptr<const ServingSnapshot> serving,
                               std::shared_ptr<const AdviceSnapshot> advice, bool final,
                               int generation) {
    busy_ = false;
    if (generation == generation_) {
        if (final) emit warningsReady(warnings);
        if (serving) emit servingReady(serving, final);
        if (advice) emit adviceReady(advice);
        emit ready(rows, final);
    }
    if (pending_) {
        const results::RunResult* next = pending_;
        const bool nextFinal = pendingFinal_;
        pending_ = nullptr;
        pendingFinal_ = false;
        updateMirror(*next, nextFinal);
        live_ = &next->arms;
        launch(nextFinal);
    }
}

}  // namespace pitlane::widgets
