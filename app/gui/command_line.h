#pragma once
// The window's command line (CONTRACT.md "Commands"):
//   pitlane [PRESET.json | MODEL.pt] [--run] [--screenshot OUT.png] [--quit-when-done]
//           [--db PATH] [--dark] [--tab NAME] [--open-run ID]
#include <QString>
#include <QStringList>

namespace pitlane::app {

struct CommandLine {
    QString path;        // preset or model to open
    bool run = false;    // start the run once the window is up
    QString screenshot;  // PNG of the window when the run is done
    bool quitWhenDone = false;
    QString db;  // run history file (kept for the RunStore; "none" stores nothing)
    bool dark = false;
    QString tab;  // the results tab to show (verdict, applied, log, advice)
    qint64 openRun = 0;  // a stored run to show (its id in the history); 0: none
    QString error;  // non-empty: bad arguments
};

CommandLine parseCommandLine(const QStringList& arguments);
const char* usage();

// What the window can answer before QApplication looks for a display: --help / -h (usage, 0),
// --version / -V ("pitlane VERSION", 0), and a start without any display (no DISPLAY, no
// WAYLAND_DISPLAY, no QT_QPA_PLATFORM or -platform): one line naming them on stderr, 2.
// -1: go on and create the QApplication.
int answerBeforeDisplay(int argc, char** argv, const char* version);
// Qt's fatal "could not connect to display" / "no Qt platform plugin could be initialized"
// (which would abort, rc 134) becomes that one line and exit code 2.
void installDisplayErrorHandler();

}  // namespace pitlane::app
