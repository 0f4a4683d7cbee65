#include "app_paths.h"

#include "pitlane/session/paths.h"
#include "pitlane/spec/preset.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace pitlane::app {

QString presetsDir() {
    return session::presetsDir();  // the CLI's folder too (pitlane-cli lessons)
}

QString defaultPresetPath() {
    const QString dir = presetsDir();
    const QString path = QDir(dir).filePath(QStringLiteral("default.json"));
    return !dir.isEmpty() && QFileInfo::exists(path) ? path : QString();
}

QString modelDir() {
    return QString::fromStdString(
        spec::findModelDir(QCoreApplication::applicationDirPath().toStdString()));
}

}  // namespace pitlane::app
