#include "pitlane/widgets/common/scroll_hint.h"

#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QStringList>
#include <QTableView>

namespace pitlane::widgets {

ScrollHint attachScrollHint(QTableView* view, std::function<bool()> relevant) {
    auto* label = new QLabel;
    label->setObjectName(view->objectName() + QStringLiteral("ScrollHint"));
    label->setContentsMargins(4, 0, 6, 0);
    label->hide();
    auto update = [view, label, relevant] {
        const QScrollBar* bar = view->horizontalScrollBar();
        const bool cut = bar->maximum() > 0 && (!relevant || relevant());
        if (cut) {
            const QHeaderView* h = view->horizontalHeader();
            const int right = view->viewport()->width();
            QStringList hidden;
            for (int v = 0; v < h->count(); ++v) {
                const int logical = h->logicalIndex(v);
                if (h->isSectionHidden(logical)) continue;
                const int x = h->sectionViewportPosition(logical);
                if (x < 0 || x + h->sectionSize(logical) > right)
                    hidden << view->model()->headerData(logical, Qt::Horizontal, Qt::DisplayRole).toString();
            }
            label->setText(hidden.size() == 1 ? QObject::tr("1 more column of the table: scroll →")
                                              : QObject::tr("%1 more columns of the table: scroll →").arg(hidden.size()));
            label->setToolTip(hidden.join(QStringLiteral(", ")));
        }
        label->setVisible(cut);
    };
    QObject::connect(view->horizontalScrollBar(), &QScrollBar::rangeChanged, label, update);
    QObject::connect(view->horizontalScrollBar(), &QScrollBar::valueChanged, label, update);
    return {label, update};
}

}  // namespace pitlane::widgets
