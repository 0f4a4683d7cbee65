#pragma once
// The window follows the system palette; View ▸ Dark palette (and --dark) switches to a dark
// Fusion palette on desktops that do not offer one.
#include <QPalette>

namespace pitlane::widgets {

QPalette darkPalette();

}  // namespace pitlane::widgets
