#include "sql_util.h"

#include <QHash>

#include <chrono>
#include <random>
#include <thread>

namespace pitlane::store::detail {

namespace {

// Open transactions per connection. A connection is used only on the thread that opened it
// (QtSql's rule), so the count is per thread.
int& depth(const QSqlDatabase& db) {
    thread_local QHash<QString, int> depths;
    return depths[db.connectionName()];
}

}  // namespace

bool isBusy(const QSqlError& error) {
    // QSQLITE reports sqlite3_errcode(): 5 SQLITE_BUSY, 6 SQLITE_LOCKED (extended codes off).
    const QString code = error.nativeErrorCode();
    return code == QLatin1String("5") || code == QLatin1String("6");
}

bool execRetryingBusy(QSqlQuery& q, const QString& sql, QString* why) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::milliseconds(kLockWaitMs);
    thread_local std::minstd_rand jitter(std::random_device{}());
    QSqlError last;
    int attempt = 1;
    for (;; ++attempt) {
        if (q.exec(sql)) return true;
        last = q.lastError();
        if (!isBusy(last) || Clock::now() >= deadline) break;
        // The busy handler may have waited kBusyTimeoutMs already, or nothing at all (see
        // kLockWaitMs): back off 10-320 ms, doubling, with jitter so connections that were
        // refused together do not all come back together.
        std::this_thread::sleep_for(std::chrono::milliseconds(
            10 * (1 << std::min(attempt - 1, 5)) + int(jitter() % 20)));
    }
    if (!isBusy(last)) {
        *why = last.text();
        return false;
    }
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    *why = QStringLiteral("the file stayed locked by another connection for %1 s (%2 attempts): %3")
               .arg(waited, 0, 'f', 1)
               .arg(attempt)
               .arg(last.text());
    return false;
}

bool beginImmediate(QSqlDatabase& db, QString* why) {
    QSqlQuery q(db);
    QString error;
    if (execRetryingBusy(q, QStringLiteral("BEGIN IMMEDIATE"), &error)) return true;
    *why = isBusy(q.lastError()) ? error
                                 : QStringLiteral("cannot begin a transaction: %1").arg(error);
    return false;
}

Transaction::Transaction(QSqlDatabase db) : db_(std::move(db)) {
    int& open = depth(db_);
    outermost_ = open == 0;
    if (outermost_) {
        active_ = beginImmediate(db_, &error_);
    } else {
        QSqlQuery q(db_);
        active_ = q.exec(QStringLiteral("SAVEPOINT pitlane_tx"));
        if (!active_) error_ = q.lastError().text();
    }
    if (active_) ++open;
}

Transaction::~Transaction() {
    if (active_) rollback();
}

bool Transaction::commit() {
    if (!active_) return false;
    QSqlQuery q(db_);
    // The outer COMMIT holds the write lock already (BEGIN IMMEDIATE): in WAL mode it appends to
    // the log and cannot be refused as busy; it can still fail (disk full, I/O error).
    if (q.exec(outermost_ ? QStringLiteral("COMMIT") : QStringLiteral("RELEASE pitlane_tx"))) {
        active_ = false;
        --depth(db_);
        return true;
    }
    error_ = q.lastError().text();
    rollback();
    return false;
}

void Transaction::rollback() {
    active_ = false;
    --depth(db_);
    QSqlQuery q(db_);
    if (outermost_) {
        q.exec(QStringLiteral("ROLLBACK"));
    } else if (!q.exec(QStringLiteral("ROLLBACK TO pitlane_tx"))) {
        q.exec(QStringLiteral("ROLLBACK"));
    } else {
        q.exec(QStringLiteral("RELEASE pitlane_tx"));
    }
}

}  // namespace pitlane::store::detail
