#pragma once
// Where the window finds what ships beside it: bundled presets (the default one opens on first
// start) and bundled models.
#include <QString>

namespace pitlane::app {

// session::presetsDir(), the folder pitlane-cli uses too: $PITLANE_PRESETS_DIR when set (tests,
// and a teacher's own lesson folder: the Lessons browser lists its lesson_*.json), else
// <exe>/presets, <exe>/../share/pitlane/presets, then the source tree of a developer build. ""
// when none exists.
QString presetsDir();
QString defaultPresetPath();  // presets/default.json, or "" when none is found
QString modelDir();

}  // namespace pitlane::app
