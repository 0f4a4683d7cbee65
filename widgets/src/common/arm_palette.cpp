#include "pitlane/widgets/common/arm_palette.h"

#include <QPainter>
#include <QPalette>
#include <QPixmap>

#include <array>

namespace pitlane::widgets {

QColor armColor(int arm) {
    static const std::array<QColor, 8> colours = {
        QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0x59, 0xa1, 0x4f),
        QColor(0xe1, 0x57, 0x59), QColor(0xb0, 0x7a, 0xa1), QColor(0x76, 0xb7, 0xb2),
        QColor(0xed, 0xc9, 0x48), QColor(0x9c, 0x75, 0x5f)};
    if (arm < 0) return QColor(Qt::gray);
    return colours[std::size_t(arm) % colours.size()];
}

QIcon armSwatch(int arm, int size) {
    QPixmap pm(size, size);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(armColor(arm).darker(130));
    p.setBrush(armColor(arm));
    p.drawRoundedRect(QRectF(0.5, 0.5, size - 1, size - 1), 2, 2);
    return QIcon(pm);
}

bool isDarkPalette(const QPalette& palette) {
    return palette.color(QPalette::WindowText).lightness() >
           palette.color(QPalette::Window).lightness();
}

}  // namespace pitlane::widgets
