#pragma once
// The history file's schema and its migrations (PRAGMA user_version holds the version).
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace pitlane::store::detail {

// Brings `db` from its user_version up to `target`, one step per transaction, so an interrupted
// migration leaves the file at the last complete version. Returns false with `error` set when
// the file is newer than `target` or a step fails.
// At the current version it then adds the columns of the described records (record_sql.h) the
// file lacks: a field added to a record's table is a column of every file this build opens.
bool migrate(QSqlDatabase& db, int target, QString* error);
// The version steps alone (the shape a version's steps create: missingSchema).
bool migrateSteps(QSqlDatabase& db, int target, QString* error);
int userVersion(const QSqlDatabase& db);

// What `db` lacks of the schema its `version` has, compared with the tables, columns and (with
// `indexes`) indexes that version's migration steps create: "table samples is missing",
// "column arms.model is missing", "index samples_by_arm is missing". Empty when nothing is
// missing (or `version` is unknown to this build). A file that says it is at a version but
// lacks a table (dropped by hand, or half recovered) passes SQLite's integrity_check; every
// write to that table would fail.
QStringList missingSchema(const QSqlDatabase& db, int version, bool indexes);

}  // namespace pitlane::store::detail
