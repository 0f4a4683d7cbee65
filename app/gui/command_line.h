#pragma once
// The window's command line (CONTRACT.md "Commands"):
//   pitlane [PRESET.json | MODEL.pt] [--run] [--screenshot OUT.png] [--quit-when-done]
//           [--db PATH] [--dark]
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
    QString error;  // non-empty: bad arguments
};

CommandLine parseCommandLine(const QStringList& arguments);
const char* usage();

}  // namespace pitlane::app
