#include "pitlane/store/history_writer.h"

#include <QMetaObject>

namespace pitlane::store {

HistoryWriter::HistoryWriter(RunStore* store) : inline_(store), path_(store->path()) {}

HistoryWriter::HistoryWriter(const QString& path, QObject* context)
    : path_(path), context_(context) {
    // At the window's priority: at nice 10 (issue 44) a loaded machine starved it, and a run
    // was not yet complete in the history when the window said it had finished (gui_history
    // beside two busy loops).
    thread_ = std::thread([this, path] { loop(path); });
}

HistoryWriter::~HistoryWriter() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

QString HistoryWriter::path() const {
    return path_;
}

void HistoryWriter::post(Write write, Done done) {
    if (inline_) {
        const bool ok = write(*inline_);
        if (done) done(ok, ok ? QString() : inline_->lastError());
        return;
    }
    bool wasEmpty = false;
    {
        std::lock_guard lock(mutex_);
        wasEmpty = queue_.empty();
        queue_.push_back({std::move(write), std::move(done)});
        ++posted_;
    }
    // A queue that holds writes already has the writer's attention (it takes the whole queue
    // before waiting again): waking it for each write woke a thread that then took the core
    // from the window's UI thread, 50 times a second while samples stream.
    if (wasEmpty) wake_.notify_one();
}

void HistoryWriter::drain() {
    if (inline_) return;
    std::unique_lock lock(mutex_);
    const std::size_t target = posted_;
    idle_.wait(lock, [&] { return finished_ >= target; });
}

void HistoryWriter::report(const Done& done, bool ok, const QString& error) {
    if (!done) return;
    // Queued to the owner's thread; QPointer: an owner already gone is not called.
    QObject* context = context_.data();
    if (!context) return;
    QMetaObject::invokeMethod(
        context, [done, ok, error] { done(ok, error); }, Qt::QueuedConnection);
}

// Everything queued goes in one transaction: one commit (one fsync of the WAL at most) per
// batch instead of one per event. A write that fails rolls back only its own part.
void HistoryWriter::runBatch(RunStore& store, std::deque<Job>& jobs) {
    std::vector<std::pair<Done, std::pair<bool, QString>>> outcomes;
    outcomes.reserve(jobs.size());
    const bool committed = store.inOneTransaction([&] {
        for (auto& job : jobs) {
            const bool ok = job.write(store);
            outcomes.push_back({std::move(job.done), {ok, ok ? QString() : store.lastError()}});
        }
    });
    for (auto& [done, outcome] : outcomes) {
        if (!committed && outcome.first) outcome = {false, store.lastError()};
        report(done, outcome.first, outcome.second);
    }
    // The batch never began (the file stayed locked): none of its writes ran.
    for (std::size_t i = outcomes.size(); i < jobs.size(); ++i)
        report(jobs[i].done, false, store.lastError());
}

void HistoryWriter::loop(QString path) {
    RunStore store;
    const bool open = store.open(path);
    const QString openError = store.lastError();
    for (;;) {
        std::deque<Job> jobs;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) break;  // stopping, and nothing left
            jobs.swap(queue_);
        }
        const std::size_t n = jobs.size();
        if (open) {
            runBatch(store, jobs);
        } else {
            for (const auto& job : jobs) report(job.done, false, openError);
        }
        {
            std::lock_guard lock(mutex_);
            finished_ += n;
        }
        idle_.notify_all();
    }
    store.close();
}

}  // namespace pitlane::store
