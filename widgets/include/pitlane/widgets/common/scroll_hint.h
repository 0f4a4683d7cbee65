#pragma once
// Tables show every column or say that they scroll (issue 44: at 1366 px the verdict table was cut
// at "Ratio" with nothing but a thin scroll bar saying so). A label that reads "3 more columns of
// the table: scroll →" (the hidden columns' names in its tooltip) while the table is wider than
// its view, hidden otherwise. The caller places the label (a tab bar's corner, under the table).
#include <functional>

class QLabel;
class QTableView;

namespace pitlane::widgets {

// The hint for `view`, named "<view's objectName>ScrollHint". `relevant`: also required for it to
// show (e.g. the table's tab is the current one); it is re-checked when `recheck()` is called.
struct ScrollHint {
    QLabel* label = nullptr;
    std::function<void()> recheck;
};
ScrollHint attachScrollHint(QTableView* view, std::function<bool()> relevant = {});

}  // namespace pitlane::widgets
