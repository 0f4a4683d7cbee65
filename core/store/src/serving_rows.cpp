// A serving run's rows: levels and their streamed batches (schema v7).
#include "serving_rows.h"

#include "record_sql.h"
#include "sql_util.h"

#include <QSqlError>
#include <QVariant>

#include <algorithm>

namespace pitlane::store::detail {

using nlohmann::json;

namespace {

template <typename T>
std::vector<T> arrayOf(const QVariant& v) {
    const json j = parseJsonText(v.toString(), json::array());
    std::vector<T> out;
    if (!j.is_array()) return out;
    out.reserve(j.size());
    for (const auto& e : j)
        if (e.is_number_integer()) out.push_back(e.get<T>());
    return out;
}

bool exec(QSqlQuery& q, QString* error) {
    if (q.exec()) return true;
    *error = q.lastError().text();
    return false;
}

}  // namespace

bool writeServingLevel(const QSqlDatabase& db, qint64 armId, std::size_t index,
                       const results::ServingLevel& l, QString* error) {
    QSqlQuery q(db);
    q.prepare(insertSql<results::ServingLevel>("INSERT OR REPLACE", "serving_levels",
                                                  {QStringLiteral("arm"), QStringLiteral("idx")}));
    q.addBindValue(armId);
    q.addBindValue(qint64(index));
    bindRecord(q, l);
    return exec(q, error);
}

bool writeServingChunk(const QSqlDatabase& db, qint64 armId, const ServingChunk& c,
                       QString* error) {
    json size = json::array(), freeNs = json::array(), start = json::array(), end = json::array();
    for (const auto& b : c.batches) {
        size.push_back(b.size);
        freeNs.push_back(b.free_ns);
        start.push_back(b.start_ns);
        end.push_back(b.end_ns);
    }
    QSqlQuery q(db);
    q.prepare(QStringLiteral(
        "INSERT INTO serving_batches (arm, level_idx, first_batch, first_request, size, free_ns, "
        "start_ns, end_ns, arrival_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(armId);
    q.addBindValue(qint64(c.level));
    q.addBindValue(qint64(c.first_batch));
    q.addBindValue(qint64(c.first_request));
    q.addBindValue(jsonText(size));
    q.addBindValue(jsonText(freeNs));
    q.addBindValue(jsonText(start));
    q.addBindValue(jsonText(end));
    q.addBindValue(jsonText(json(c.arrival_ns)));
    return exec(q, error);
}

bool writeServingLevelWithRecord(const QSqlDatabase& db, qint64 armId, std::size_t index,
                                 const results::ServingLevel& level, QString* error) {
    if (!writeServingLevel(db, armId, index, level, error)) return false;
    if (level.record.batches.empty() && level.record.arrival_ns.empty()) return true;
    ServingChunk c;
    c.level = index;
    c.batches = level.record.batches;
    c.arrival_ns = level.record.arrival_ns;
    return writeServingChunk(db, armId, c, error);
}

ServingRows::ServingRows(const QSqlDatabase& db) : levels_(db), chunks_(db) {
    levels_.prepare(QStringLiteral("SELECT * FROM serving_levels WHERE arm = ? ORDER BY idx"));
    chunks_.prepare(QStringLiteral(
        "SELECT level_idx, first_batch, first_request, size, free_ns, start_ns, end_ns, "
        "arrival_ns FROM serving_batches WHERE arm = ? ORDER BY rowid"));
}

bool ServingRows::read(qint64 armId, std::vector<results::ServingLevel>* out, QString* error) {
    levels_.bindValue(0, armId);
    if (!exec(levels_, error)) return false;
    std::vector<qint64> index;  // serving_levels.idx of each level read
    const auto columns = recordIndexes<results::ServingLevel>(levels_.record());
    const int idxColumn = levels_.record().indexOf(QStringLiteral("idx"));
    while (levels_.next()) {
        index.push_back(levels_.value(idxColumn).toLongLong());
        out->push_back(readRecord<results::ServingLevel>(levels_, columns));
    }
    if (out->empty()) return true;
    chunks_.bindValue(0, armId);
    if (!exec(chunks_, error)) return false;
    while (chunks_.next()) {
        const qint64 idx = chunks_.value(0).toLongLong();
        const auto at = std::lower_bound(index.begin(), index.end(), idx);
        if (at == index.end() || *at != idx) continue;  // no level row: nothing to attach it to
        auto& l = (*out)[std::size_t(at - index.begin())];
        auto& rec = l.record;
        const auto size = arrayOf<int>(chunks_.value(3));
        const auto freeNs = arrayOf<std::int64_t>(chunks_.value(4));
        const auto start = arrayOf<std::int64_t>(chunks_.value(5));
        const auto end = arrayOf<std::int64_t>(chunks_.value(6));
        const auto arrival = arrayOf<std::int64_t>(chunks_.value(7));
        if (chunks_.value(1).toLongLong() != qint64(rec.batches.size()) ||
            chunks_.value(2).toLongLong() != qint64(rec.arrival_ns.size()) ||
            freeNs.size() != size.size() || start.size() != size.size() ||
            end.size() != size.size()) {
            l.complete = false;
            continue;
        }
        for (std::size_t k = 0; k < size.size(); ++k)
            rec.batches.push_back({size[k], freeNs[k], start[k], end[k]});
        rec.arrival_ns.insert(rec.arrival_ns.end(), arrival.begin(), arrival.end());
    }
    for (auto& l : *out)
        if (l.record.served() > std::int64_t(l.record.arrival_ns.size())) {
            // Requests without an arrival time cannot be timed: keep only what can be.
            l.complete = false;
            std::int64_t kept = 0;
            std::size_t n = 0;
            while (n < l.record.batches.size() &&
                   kept + l.record.batches[n].size <= std::int64_t(l.record.arrival_ns.size()))
                kept += l.record.batches[n++].size;
            l.record.batches.resize(n);
        }
    return true;
}

}  // namespace pitlane::store::detail
