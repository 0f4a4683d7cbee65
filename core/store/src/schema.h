#pragma once
// The history file's schema and its migrations (PRAGMA user_version holds the version).
#include <QSqlDatabase>
#include <QString>

namespace pitlane::store::detail {

// Brings `db` from its user_version up to `target`, one step per transaction, so an interrupted
// migration leaves the file at the last complete version. Returns false with `error` set when
// the file is newer than `target` or a step fails.
bool migrate(QSqlDatabase& db, int target, QString* error);
int userVersion(const QSqlDatabase& db);

}  // namespace pitlane::store::detail
