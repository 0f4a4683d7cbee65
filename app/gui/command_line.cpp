#include "command_line.h"

namespace pitlane::app {

const char* usage() {
    return "usage: pitlane [PRESET.json | MODEL.pt] [--run] [--screenshot OUT.png] "
           "[--quit-when-done] [--db PATH] [--dark]\n"
           "  --run             start the run as soon as the window is up\n"
           "  --screenshot F    save a PNG of the window when the run is done\n"
           "  --quit-when-done  exit when the run is done: 0 every arm ok, 1 an arm failed,\n"
           "                    2 bad arguments or an invalid preset\n"
           "  --db PATH         run history file ('none': store nothing); default $PITLANE_DB,\n"
           "                    else the user's data directory (the same file as pitlane-cli)\n"
           "  --dark            dark palette\n"
           "environment:\n"
           "  PITLANE_PRESETS_DIR  the presets folder (File > Open preset starts there; the\n"
           "                       Lessons browser lists its lesson_*.json)\n";
}

CommandLine parseCommandLine(const QStringList& arguments) {
    CommandLine c;
    for (int i = 1; i < arguments.size(); ++i) {
        const QString a = arguments[i];
        auto value = [&](QString& out) {
            if (i + 1 >= arguments.size()) {
                c.error = QStringLiteral("%1 needs a value").arg(a);
                return false;
            }
            out = arguments[++i];
            return true;
        };
        if (a == QLatin1String("--run"))
            c.run = true;
        else if (a == QLatin1String("--quit-when-done"))
            c.quitWhenDone = true;
        else if (a == QLatin1String("--dark"))
            c.dark = true;
        else if (a == QLatin1String("--screenshot")) {
            if (!value(c.screenshot)) return c;
        } else if (a == QLatin1String("--db")) {
            if (!value(c.db)) return c;
        } else if (a.startsWith(QLatin1String("--"))) {
            c.error = QStringLiteral("unknown option %1").arg(a);
            return c;
        } else if (c.path.isEmpty())
            c.path = a;
        else {
            c.error = QStringLiteral("more than one file given (%1, %2)").arg(c.path, a);
            return c;
        }
    }
    if (c.run && c.path.isEmpty()) c.error = QStringLiteral("--run needs a preset or model file");
    return c;
}

}  // namespace pitlane::app
