#pragma once
// Reading a history file behind the store's back, on a connection of its own: what the tests
// check the store wrote (row counts, the schema version), and damaging it as a user could.
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QVariant>

namespace pitlane::testing {

// The first column of the first row of `sql` (-1 when it cannot be read).
inline qint64 rawScalar(const QString& path, const QString& sql) {
    const QString name = QStringLiteral("raw-sql-") + path;
    qint64 n = -1;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery q(db);
            if (q.exec(sql) && q.next()) n = q.value(0).toLongLong();
        }
    }
    QSqlDatabase::removeDatabase(name);
    return n;
}

// Runs `sql` (waiting up to 10 s for the write lock): "" when it succeeded, else SQLite's error.
inline QString rawExec(const QString& path, const QString& sql) {
    const QString name = QStringLiteral("raw-exec-") + path;
    QString error;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=10000"));
        if (!db.open()) {
            error = db.lastError().text();
        } else {
            QSqlQuery q(db);
            if (!q.exec(sql)) error = q.lastError().text();
        }
    }
    QSqlDatabase::removeDatabase(name);
    return error;
}

// Rows in `table`.
inline qint64 rawCount(const QString& path, const QString& table) {
    return rawScalar(path, QStringLiteral("SELECT count(*) FROM %1").arg(table));
}

}  // namespace pitlane::testing
