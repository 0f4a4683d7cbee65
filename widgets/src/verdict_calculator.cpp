#include "pitlane/widgets/verdict_calculator.h"

#include <QMetaObject>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

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
    live_ = &run.arms;
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
        auto samples = std::move(c.samples);  // kept with their reserved capacity
        c = results::armSettings(a);
        c.samples = std::move(samples);
        c.processes = a.processes;
        c.warmup_ns = a.warmup_ns;
        if (a.samples.size() < c.samples.size()) c.samples.clear();  // not the same samples
        if (c.samples.capacity() < a.samples.size()) c.samples.reserve(a.samples.capacity());
        c.samples.insert(c.samples.end(),
                         a.samples.begin() + std::ptrdiff_t(c.samples.size()), a.samples.end());
    }
}

namespace {
// Maps the pages of the mirror's reserved, still unused sample capacity (without writing to
// them): the next update copies the new samples into memory that is already there, instead of
// taking a page fault every 4 KiB on the UI thread (~25 us each on this VM: ~40 ms per second
// of a 200 000 samples/s stream). Linux >= 5.14; elsewhere the pages fault in as before.
void prefaultSpareCapacity(const std::vector<results::Sample>& v) {
#ifdef MADV_POPULATE_WRITE
    static const auto page = std::uintptr_t(sysconf(_SC_PAGESIZE));
    const auto begin = (std::uintptr_t(v.data() + v.size()) + page - 1) / page * page;
    const auto end = std::uintptr_t(v.data() + v.capacity()) / page * page;
    if (v.data() && end > begin)
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
    (void)v;
#endif
}
}  // namespace

void VerdictCalculator::launch(bool final) {
    if (thread_.joinable()) thread_.join();
    busy_ = true;
    // The live arms' capacities: the mirror grows to them on the thread, not at the next update.
    std::vector<std::size_t> capacity;
    for (const auto& arm : *live_) capacity.push_back(arm.samples.capacity());
    thread_ = std::thread([this, final, gen = generation_, capacity = std::move(capacity)] {
        auto rows = comparisonRows(mirror_, true);
        for (std::size_t i = 0; i < mirror_.arms.size() && i < capacity.size(); ++i) {
            auto& samples = mirror_.arms[i].samples;
            if (samples.capacity() < capacity[i]) samples.reserve(capacity[i]);
            prefaultSpareCapacity(samples);
        }
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
        live_ = &next->arms;
        launch(nextFinal);
    }
}

}  // namespace pitlane::widgets
