#pragma once
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
    auto j = nlohmann::json::parse(text.toStdString(), nullptr, false);
    return j.is_discarded() ? fallback : j;
}

// Rolls back unless committed: every early return of a writer leaves the file as it was.
// A SAVEPOINT, so transactions nest: the history writer wraps a batch of writes in one, and a
// write that fails inside it rolls back only its own part.
class Transaction {
public:
    explicit Transaction(QSqlDatabase db) : db_(std::move(db)) {
        active_ = QSqlQuery(db_).exec(QStringLiteral("SAVEPOINT pitlane_tx"));
    }
    ~Transaction() {
        if (active_) rollback();
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    bool began() const { return active_; }
    QString error() const { return error_; }  // why commit() failed
    bool commit() {
        if (!active_) return false;
        active_ = false;
        QSqlQuery q(db_);
        if (q.exec(QStringLiteral("RELEASE pitlane_tx"))) return true;
        error_ = q.lastError().text();
        rollback();  // the outermost RELEASE is the COMMIT: it can fail (busy, disk full)
        return false;
    }

private:
    void rollback() {
        active_ = false;
        QSqlQuery q(db_);
        if (!q.exec(QStringLiteral("ROLLBACK TO pitlane_tx")) ||
            !q.exec(QStringLiteral("RELEASE pitlane_tx")))
            q.exec(QStringLiteral("ROLLBACK"));
    }

    QSqlDatabase db_;
    bool active_ = false;
    QString error_;
};

}  // namespace pitlane::store::detail
