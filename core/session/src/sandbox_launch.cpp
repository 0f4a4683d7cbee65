#include "pitlane/session/sandbox_launch.h"

namespace pitlane::session {

QStringList sandboxArguments(const spec::Knobs& knobs, const QString& scratch) {
    const bool on = knobs.sandbox == "on";
    QStringList args{QStringLiteral("--sandbox"), on ? QStringLiteral("on") : QStringLiteral("off")};
    if (on && !scratch.isEmpty()) args << QStringLiteral("--scratch") << scratch;
    args << QStringLiteral("--memory-limit-mb");
    if (knobs.memory_limit_mb)
        args << QString::number(*knobs.memory_limit_mb);
    else
        args << (on && knobs.device == "cpu" ? QStringLiteral("auto") : QStringLiteral("none"));
    return args;
}

}  // namespace pitlane::session
