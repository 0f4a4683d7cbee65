#pragma once
// Where the window finds what ships beside it: bundled presets (the default one opens on first
// start) and bundled models.
#include <QString>

namespace pitlane::app {

// <exe>/presets, <exe>/../share/pitlane/presets, then the source tree of a developer build.
QString presetsDir();
QString defaultPresetPath();  // presets/default.json, or "" when none is found
QString modelDir();

}  // namespace pitlane::app
