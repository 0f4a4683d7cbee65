#pragma once
#include "pitlane/protocol/json_limits.h"
// Small helpers shared by the store's translation units.
#include <nlohmann/json.hpp>

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>

namespace pitlane::store::detail {

inline QString jsonText(const nlohmann::json& j) {
    return QString::fromStdString(j.is_null() ? std::string("{}") : j.dump());
}

// Text written by jsonText; anything unreadable reads as `fallback` (a damaged row must not
// make the whole run unreadable).
inline nlohmann::json parseJsonText(const QString& text,
                                    nlohmann::json fallback = nlohmann::json::object()) {
    // Depth-bounded (protocol::kMaxJsonDepth): a damaged or hostile history must not overflow the
    // stack when the row is copied.
    auto j = protocol::parseJsonBounded(text.toStdString());
    return j.is_discarded() ? fallback : j;
}

// SQLite's "database is locked" (SQLITE_BUSY) and "table is locked" (SQLITE_LOCKED): another
// connection holds the lock. Everything else is a real failure.
bool isBusy(const QSqlError& error);

// How long a step waits for a busy file: each attempt waits SQLite's busy timeout
// (kBusyTimeoutMs, set on every connection), then backs off with jitter and tries again until
// kLockWaitMs have passed (about 40 s in all). 50 runs recording into one file at once commit
// every ~50 ms each; no write there waited more than a second (docs/RELIABILITY.md).
// Some steps are refused as busy at once, without the busy handler: SQLite does not wait where
// waiting could deadlock (a connection holding a read lock that needs the write lock, as
// `PRAGMA journal_mode=WAL` on a file another process is creating). For those the back-off is
// the only wait, so it is bounded by time, not by a count of attempts.
constexpr int kBusyTimeoutMs = 5000;
constexpr int kLockAttempts = 8;
constexpr int kLockWaitMs = kLockAttempts * kBusyTimeoutMs;

// Executes `sql` on `q` (QSqlQuery::exec), again while it fails as busy (isBusy), for at most
// kLockWaitMs. False with `why` set when it failed for another reason (the error's text) or the
// file stayed busy ("the file stayed locked by another connection for 40.2 s (31 attempts):
// database is locked"). Only for statements that are harmless to repeat: a busy statement
// changed nothing, but a read already stepped through (q.next()) would be read again.
bool execRetryingBusy(QSqlQuery& q, const QString& sql, QString* why);

// BEGIN IMMEDIATE with bounded retries (execRetryingBusy): the write lock is taken before the
// first statement, so no write inside the transaction can fail with SQLITE_BUSY (a deferred
// transaction that reads first and then writes gets SQLITE_BUSY_SNAPSHOT at once, without
// waiting, whenever another connection committed meanwhile: "database is locked" in 3 of 48
// concurrent runs). False with `why` set when it never got it.
bool beginImmediate(QSqlDatabase& db, QString* why);

// Rolls back unless committed: every early return of a writer leaves the file as it was.
// The outermost transaction on a connection is BEGIN IMMEDIATE (beginImmediate above); one
// inside it is a SAVEPOINT, so transactions nest: the history writer wraps a batch of writes in
// one, and a write that fails inside it rolls back only its own part.
// Writers check began(): when the lock could not be had, nothing was written and error() says
// why.
class Transaction {
public:
    explicit Transaction(QSqlDatabase db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    bool began() const { return active_; }
    QString error() const { return error_; }  // why began() or commit() failed
    bool commit();

private:
    void rollback();

    QSqlDatabase db_;
    bool outermost_ = false;
    bool active_ = false;
    QString error_;
};

}  // namespace pitlane::store::detail
