#include "recent_files.h"

#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace pitlane::app {

namespace {
const QString kKey = QStringLiteral("files/recent");
}

QString lastFolder() {
    return QSettings().value(QStringLiteral("files/lastFolder")).toString();
}

void rememberFolder(const QString& path) {
    QSettings().setValue(QStringLiteral("files/lastFolder"), QFileInfo(path).absolutePath());
}

RecentFiles::RecentFiles(QMenu* menu, QObject* parent) : QObject(parent), menu_(menu) {
    files_ = QSettings().value(kKey).toStringList();
    rebuild();
}

void RecentFiles::add(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    files_.removeAll(abs);
    files_.prepend(abs);
    while (files_.size() > kMax) files_.removeLast();
    save();
    rebuild();
}

void RecentFiles::save() const {
    QSettings().setValue(kKey, files_);
}

void RecentFiles::rebuild() {
    menu_->clear();
    files_.erase(std::remove_if(files_.begin(), files_.end(),
                                [](const QString& f) { return !QFileInfo::exists(f); }),
                 files_.end());
    for (int i = 0; i < files_.size(); ++i) {
        const QString path = files_[i];
        QAction* a = menu_->addAction(
            QStringLiteral("&%1 %2").arg((i + 1) % 10).arg(QFileInfo(path).fileName()));
        a->setToolTip(path);
        a->setStatusTip(path);
        connect(a, &QAction::triggered, this, [this, path] { emit chosen(path); });
    }
    if (files_.isEmpty())
        menu_->addAction(tr("(none)"))->setEnabled(false);
    else {
        menu_->addSeparator();
        connect(menu_->addAction(tr("Clear list")), &QAction::triggered, this, [this] {
            files_.clear();
            save();
            rebuild();
        });
    }
    menu_->setEnabled(true);
}

}  // namespace pitlane::app
