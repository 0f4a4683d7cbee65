#include "command_line.h"

#include <QtGlobal>

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace pitlane::app {

namespace {
const char* const kHeadless =
    "the window needs a display; without a screen use QT_QPA_PLATFORM=offscreen (scripted "
    "runs, screenshots) or xvfb-run, or pitlane-cli for headless runs\n";

bool envSet(const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
}

QtMessageHandler previousHandler = nullptr;

void displayErrorHandler(QtMsgType type, const QMessageLogContext& context,
                         const QString& message) {
    if (type == QtFatalMsg && (message.contains(QLatin1String("could not connect to display")) ||
                               message.contains(QLatin1String("platform plugin")))) {
        std::cerr << "pitlane: cannot open the display (DISPLAY=" << qgetenv("DISPLAY").constData()
                  << ", WAYLAND_DISPLAY=" << qgetenv("WAYLAND_DISPLAY").constData()
                  << ", QT_QPA_PLATFORM=" << qgetenv("QT_QPA_PLATFORM").constData()
                  << "): " << kHeadless << std::flush;
        std::_Exit(2);
    }
    if (previousHandler)
        previousHandler(type, context, message);
    else
        std::cerr << qFormatLogMessage(type, context, message).toLocal8Bit().constData() << "\n";
}
}  // namespace

int answerBeforeDisplay(int argc, char** argv, const char* version) {
    bool platformArg = false;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) {
            std::cout << usage();
            return 0;
        }
        if (!std::strcmp(a, "--version") || !std::strcmp(a, "-V")) {
            std::cout << "pitlane " << version << "\n";
            return 0;
        }
        platformArg |= !std::strcmp(a, "-platform") || !std::strcmp(a, "--platform");
    }
    if (platformArg || envSet("QT_QPA_PLATFORM") || envSet("DISPLAY") || envSet("WAYLAND_DISPLAY"))
        return -1;
    std::cerr << "pitlane: no display (neither DISPLAY nor WAYLAND_DISPLAY is set): " << kHeadless;
    return 2;
}

void installDisplayErrorHandler() {
    previousHandler = qInstallMessageHandler(displayErrorHandler);
}

const char* usage() {
    return "usage: pitlane [PRESET.json | MODEL.pt | MODEL.pt2] [--run] [--screenshot OUT.png] "
           "[--quit-when-done] [--db PATH] [--dark] [--tab NAME] [--open-run ID]\n"
           "       pitlane --help | --version\n"
           "  --run             start the run as soon as the window is up\n"
           "  --screenshot F    save a PNG of the window when the run is done\n"
           "  --quit-when-done  exit when the run is done: 0 every arm ok, 1 an arm failed,\n"
           "                    2 bad arguments or an invalid preset\n"
           "  --db PATH         run history file ('none': store nothing); default $PITLANE_DB,\n"
           "                    else the user's data directory (the same file as pitlane-cli)\n"
           "  --dark            dark palette\n"
           "  --tab NAME        show that results tab: verdict, applied, log or advice\n"
           "  --open-run ID     show that stored run of the history and, unless a preset or\n"
           "                    model is named too, its own setup; with --quit-when-done, exit\n"
           "                    once its verdict is shown (stderr: the time it took and the\n"
           "                    longest the event loop could not answer)\n"
           "  --version, -V     print the version and exit\n"
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
        } else if (a == QLatin1String("--tab")) {
            if (!value(c.tab)) return c;
        } else if (a == QLatin1String("--open-run")) {
            QString id;
            if (!value(id)) return c;
            bool ok = false;
            c.openRun = id.toLongLong(&ok);
            if (!ok || c.openRun <= 0) {
                c.error = QStringLiteral("--open-run needs a run id (a positive number), not %1").arg(id);
                return c;
            }
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
