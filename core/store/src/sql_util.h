#pragma once
// Small helpers shared by the store's translation units.
#include <nlohmann/json.hpp>

#include <QSqlDatabase>
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
class Transaction {
public:
    explicit Transaction(QSqlDatabase db) : db_(std::move(db)) { active_ = db_.transaction(); }
    ~Transaction() {
        if (active_) db_.rollback();
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    bool began() const { return active_; }
    bool commit() {
        if (!active_) return false;
        active_ = false;
        if (db_.commit()) return true;
        db_.rollback();
        return false;
    }

private:
    QSqlDatabase db_;
    bool active_ = false;
};

}  // namespace pitlane::store::detail
