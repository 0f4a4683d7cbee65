#pragma once
// Where the recorder's writes go. Inline: each write runs at once on a RunStore the caller's
// thread owns (pitlane-cli: a sample is committed before the "block done" line after it is
// printed). On a thread: the writer opens its own connection to the file on a thread of its own
// and commits whatever is queued in one transaction, so a window's UI thread never waits on
// SQLite or on the stored verdict's bootstrap (the window answers within a frame while samples
// stream in and when a run ends). Writes run in the order they were posted.
#include "pitlane/store/run_store.h"

#include <QObject>
#include <QPointer>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace pitlane::store {

class HistoryWriter {
public:
    // A write: true when it succeeded (else the store's lastError() says why).
    using Write = std::function<bool(RunStore&)>;
    // Told how a write went; runs on the thread of `context` (given below).
    using Done = std::function<void(bool ok, const QString& error)>;

    // Inline on `store` (open, owned by the caller's thread, outliving the writer).
    explicit HistoryWriter(RunStore* store);
    // On a thread of its own, with its own connection to `path`. `context` (the owner) receives
    // the Done calls through its event loop; they are dropped if it is gone.
    HistoryWriter(const QString& path, QObject* context);
    // Commits every write posted, then closes: nothing queued is lost.
    ~HistoryWriter();
    HistoryWriter(const HistoryWriter&) = delete;
    HistoryWriter& operator=(const HistoryWriter&) = delete;

    void post(Write write, Done done = {});
    // Blocks until every write posted so far has run (inline: returns at once).
    void drain();
    bool onThread() const { return thread_.joinable(); }
    QString path() const;

private:
    struct Job {
        Write write;
        Done done;
    };
    void loop(QString path);
    void runBatch(RunStore& store, std::deque<Job>& jobs);
    void report(const Done& done, bool ok, const QString& error);

    RunStore* inline_ = nullptr;
    QString path_;
    QPointer<QObject> context_;
    std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::deque<Job> queue_;
    std::size_t posted_ = 0, finished_ = 0;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace pitlane::store
