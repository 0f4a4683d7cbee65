#include "app_paths.h"

#include "pitlane/spec/preset.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace pitlane::app {

QString presetsDir() {
    const QDir exe(QCoreApplication::applicationDirPath());
    QStringList candidates = {qEnvironmentVariable("PITLANE_PRESETS_DIR"),
                              exe.filePath(QStringLiteral("presets")),
                              exe.filePath(QStringLiteral("../share/pitlane/presets"))};
#ifdef PITLANE_SOURCE_PRESETS
    candidates << QStringLiteral(PITLANE_SOURCE_PRESETS);
#endif
    for (const auto& c : candidates)
        if (!c.isEmpty() && QFileInfo(c).isDir()) return QDir(c).canonicalPath();
    return {};
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
