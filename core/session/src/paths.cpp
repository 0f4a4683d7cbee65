#include "pitlane/session/paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace pitlane::session {

QString presetsDir() {
    const QString env = qEnvironmentVariable("PITLANE_PRESETS_DIR");
    if (!env.isEmpty()) return QFileInfo(env).isDir() ? QDir(env).canonicalPath() : QString();
    const QDir exe(QCoreApplication::applicationDirPath());
    QStringList candidates = {exe.filePath(QStringLiteral("presets")),
                              exe.filePath(QStringLiteral("../share/pitlane/presets"))};
#ifdef PITLANE_SOURCE_PRESETS
    candidates << QStringLiteral(PITLANE_SOURCE_PRESETS);
#endif
    for (const auto& c : candidates)
        if (QFileInfo(c).isDir()) return QDir(c).canonicalPath();
    return {};
}

QStringList lessonPresetFiles() {
    const QString dir = presetsDir();
    if (dir.isEmpty()) return {};
    QStringList out;
    for (const auto& name : QDir(dir).entryList({QStringLiteral("lesson_*.json")}, QDir::Files, QDir::Name))
        out << QDir(dir).filePath(name);
    return out;
}

}  // namespace pitlane::session
