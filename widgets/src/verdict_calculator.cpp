#include "pitlane/widgets/verdict_calculator.h"

#include <QMetaObject>

namespace pitlane::widgets {

VerdictCalculator::VerdictCalculator(QObject* parent) : QObject(parent) {}

VerdictCalculator::~VerdictCalculator() {
    // The thread only reads the mirror; its queued delivery dies with this object.
    if (thread_.joinable()) thread_.join();
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
    updateMirror(run);
    launch(final);
}

// What the verdict and the warnings read, copied from `run`: the arm's figures and settings
// (small), and the samples that arrived since the last update.
void VerdictCalculator::updateMirror(const results::RunResult& run) {
    if (mirrorStale_ || mirror_.arms.size() != run.arms.size()) {
        mirror_ = results::RunResult();
        mirror_.arms.resize(run.arms.size());
        mirrorStale_ = false;
    }
    mirror_.comparison_memo.reset();
    mirror_.interleaved = run.interleaved;
    mirror_.stopping = run.stopping;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        auto& c = mirror_.arms[i];
        c.name = a.name;
        c.status = a.status;
        c.error = a.error;
        c.batch_size = a.batch_size;
        c.batch_sizes = a.batch_sizes;
        c.workers = a.workers;
        c.peak_rss_bytes = a.peak_rss_bytes;
        c.processes = a.processes;
        c.environment = a.environment;
        c.applied = a.applied;
        c.warmup_ns = a.warmup_ns;
        if (a.samples.size() < c.samples.size()) c.samples.clear();  // not the same samples
        if (c.samples.capacity() < a.samples.size()) c.samples.reserve(a.samples.capacity());
        c.samples.insert(c.samples.end(),
                         a.samples.begin() + std::ptrdiff_t(c.samples.size()), a.samples.end());
    }
}

void VerdictCalculator::launch(bool final) {
    if (thread_.joinable()) thread_.join();
    busy_ = true;
    thread_ = std::thread([this, final, gen = generation_] {
        auto rows = comparisonRows(mirror_, true);
        QStringList warnings;
        if (final)
            for (const auto& w : results::runWarnings(mirror_))
                warnings << QString::fromStdString(w);
        QMetaObject::invokeMethod(
            this,
            [this, rows = std::move(rows), warnings, final, gen]() mutable {
                onDone(std::move(rows), warnings, final, gen);
            },
            Qt::QueuedConnection);
    });
}

void VerdictCalculator::onDone(std::vector<ComparisonRow> rows, QStringList warnings, bool final,
                               int generation) {
    if (thread_.joinable()) thread_.join();
    busy_ = false;
    if (generation == generation_) {
        if (final) emit warningsReady(warnings);
        emit ready(rows, final);
    }
    if (pending_) {
        const results::RunResult* next = pending_;
        const bool nextFinal = pendingFinal_;
        pending_ = nullptr;
        pendingFinal_ = false;
        updateMirror(*next);
        launch(nextFinal);
    }
}

}  // namespace pitlane::widgets
