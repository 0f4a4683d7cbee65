#include "pitlane/session/paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <cerrno>
#include <csignal>

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

QString scratchTemplate(const QString& kind) {
    return QDir::tempPath() + QStringLiteral("/pitlane-%1-%2-XXXXXX").arg(kind).arg(QCoreApplication::applicationPid());
}

int removeOrphanScratch() {
    QDir tmp(QDir::tempPath());
    int removed = 0;
    const QStringList names = tmp.entryList({QStringLiteral("pitlane-run-*"), QStringLiteral("pitlane-validate-*")},
                                            QDir::Dirs | QDir::NoDotAndDotDot | QDir::NoSymLinks);
    for (const QString& name : names) {
        const QStringList parts = name.split(QLatin1Char('-'));  // pitlane, kind, pid, XXXXXX
        bool ok = false;
        const qint64 pid = parts.size() == 4 ? parts[2].toLongLong(&ok) : 0;
        if (!ok || pid <= 0) continue;  // an older folder without its owner: left alone
        if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;  // its owner lives (or is not ours)
        if (QDir(tmp.filePath(name)).removeRecursively()) ++removed;
    }
    return removed;
}

}  // namespace pitlane::session
