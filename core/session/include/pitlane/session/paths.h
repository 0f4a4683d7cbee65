#pragma once
// Where the programs find what ships beside them. QtCore only.
#include <QString>
#include <QStringList>

namespace pitlane::session {

// The bundled presets: $PITLANE_PRESETS_DIR, else <exe>/presets, else
// <exe>/../share/pitlane/presets, else the source tree of a developer build. "" when none exists.
QString presetsDir();
// The lesson presets (lesson_*.json) of presetsDir(), sorted by file name.
QStringList lessonPresetFiles();

// A scratch folder's QTemporaryDir template: "$TMPDIR/pitlane-<kind>-<pid>-XXXXXX" (kind: run,
// validate). The pid names its owner, so that a folder whose owner was killed with SIGKILL (it
// could not remove its own) is removed by the next run: removeOrphanScratch() removes every such
// folder of a process that no longer exists, and returns how many it removed.
QString scratchTemplate(const QString& kind);
int removeOrphanScratch();

}  // namespace pitlane::session
