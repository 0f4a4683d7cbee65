#pragma once
// One colour per arm, used by every view (editor tabs, status rows, plots, tables) so that "B" is
// the same orange everywhere. Tableau-10 hues: distinguishable on light and dark backgrounds and
// for the common colour-vision deficiencies.
#include <QColor>
#include <QIcon>
#include <QPalette>

namespace pitlane::widgets {

QColor armColor(int arm);
// A filled square in the arm's colour, for tab bars, headers and legends outside the plots.
QIcon armSwatch(int arm, int size = 12);
// Whether the palette is dark (window text lighter than the window), to pick contrasting tints.
bool isDarkPalette(const QPalette& palette);

}  // namespace pitlane::widgets
