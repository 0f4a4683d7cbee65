#pragma once
// A described record (protocol/record.h) as rows of a history table: its columns, their
// definitions (added to an existing file when missing: schema.cpp addRecordColumns), the values
// an INSERT binds and a row read back by column name. A column a file lacks reads as the
// member's default.
#include "pitlane/protocol/record.h"

#include "sql_util.h"

#include <QSqlQuery>
#include <QSqlRecord>
#include <QStringList>
#include <QVariant>

#include <string>
#include <type_traits>
#include <vector>

namespace pitlane::store::detail {

namespace sqlvalue {

using protocol::record::detail::IsVector;

// Its value as bound: numbers as numbers, text never NULL (the columns are NOT NULL), JSON and
// lists as JSON text.
template <class T>
QVariant toSql(const T& v) {
    if constexpr (std::is_same_v<T, bool>)
        return int(v);
    else if constexpr (std::is_integral_v<T>)
        return qint64(v);
    else if constexpr (std::is_floating_point_v<T>)
        return double(v);
    else if constexpr (std::is_same_v<T, std::string>)
        return v.empty() ? QStringLiteral("") : QString::fromStdString(v);
    else if constexpr (std::is_same_v<T, nlohmann::json>)
        return jsonText(v.is_object() || v.is_array() ? v : nlohmann::json::object());
    else
        return jsonText(nlohmann::json(v));
}

template <class T>
void fromSql(const QVariant& v, T& out) {
    if constexpr (std::is_same_v<T, bool>) {
        out = v.toLongLong() != 0;
    } else if constexpr (std::is_integral_v<T>) {
        out = T(v.toLongLong());
    } else if constexpr (std::is_floating_point_v<T>) {
        out = T(v.toDouble());
    } else if constexpr (std::is_same_v<T, std::string>) {
        out = v.toString().toStdString();
    } else if constexpr (std::is_same_v<T, nlohmann::json>) {
        out = parseJsonText(v.toString());
    } else if constexpr (!IsVector<T>::value) {
        // A record stored as JSON text (its from_json decides what a damaged value reads as).
        try {
            out = parseJsonText(v.toString()).template get<T>();
        } catch (const std::exception&) {
            out = T{};
        }
    } else {
        // A damaged list reads as the elements of the right type it has.
        out.clear();
        const auto j = parseJsonText(v.toString(), nlohmann::json::array());
        for (const auto& e : j)
            if ((std::is_arithmetic_v<typename T::value_type> && e.is_number()) ||
                (!std::is_arithmetic_v<typename T::value_type> && !e.is_number()))
                out.push_back(e.template get<typename T::value_type>());
    }
}

template <class T>
const char* sqlType() {
    if constexpr (std::is_integral_v<T>) return "INTEGER";
    if constexpr (std::is_floating_point_v<T>) return "REAL";
    return "TEXT";
}

}  // namespace sqlvalue

// The record's columns, in its table's order.
template <class R>
QStringList recordColumns() {
    QStringList out;
    protocol::record::forEachField<R>([&](const auto& f) { out << QString::fromLatin1(f.sqlName()); });
    return out;
}

// "INSERT OR REPLACE INTO table (lead..., columns...) VALUES (?, ...)"; bind the lead values,
// then bindRecord.
template <class R>
QString insertSql(const char* verb, const char* table, const QStringList& lead) {
    const QStringList columns = lead + recordColumns<R>();
    QStringList marks;
    for (int i = 0; i < columns.size(); ++i) marks << QStringLiteral("?");
    return QStringLiteral("%1 INTO %2 (%3) VALUES (%4)")
        .arg(QString::fromLatin1(verb), QString::fromLatin1(table),
             columns.join(QStringLiteral(", ")), marks.join(QStringLiteral(", ")));
}

template <class R>
void bindRecord(QSqlQuery& q, const R& r) {
    protocol::record::forEachField<R>([&](const auto& f) { q.addBindValue(sqlvalue::toSql(f.of(r))); });
}

// Where each field's column is in a result (SELECT *): -1 where the file lacks it.
template <class R>
std::vector<int> recordIndexes(const QSqlRecord& rec) {
    std::vector<int> out;
    protocol::record::forEachField<R>([&](const auto& f) {
        out.push_back(rec.indexOf(QString::fromLatin1(f.sqlName())));
    });
    return out;
}

template <class R>
R readRecord(const QSqlQuery& q, const std::vector<int>& indexes) {
    R r;
    std::size_t k = 0;
    protocol::record::forEachField<R>([&](const auto& f) {
        const int at = indexes[k++];
        if (at >= 0 && !q.isNull(at)) sqlvalue::fromSql(q.value(at), f.of(r));
    });
    return r;
}

// "name TYPE NOT NULL DEFAULT value" of each column, the default from a default-constructed R.
template <class R>
std::vector<std::pair<QString, QString>> recordColumnDefinitions() {
    std::vector<std::pair<QString, QString>> out;
    const R r{};
    protocol::record::forEachField<R>([&](const auto& f) {
        using T = typename std::decay_t<decltype(f)>::Type;
        const QVariant v = sqlvalue::toSql(f.of(r));
        const QString value = std::is_arithmetic_v<T>
                                  ? v.toString()
                                  : QStringLiteral("'%1'").arg(v.toString().replace(
                                        QLatin1Char('\''), QLatin1String("''")));
        out.emplace_back(QString::fromLatin1(f.sqlName()),
                         QStringLiteral("%1 %2 NOT NULL DEFAULT %3")
                             .arg(QString::fromLatin1(f.sqlName()),
                                  QString::fromLatin1(sqlvalue::sqlType<T>()), value));
    });
    return out;
}

}  // namespace pitlane::store::detail
