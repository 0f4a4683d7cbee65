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

}  // namespace pitlane::session
