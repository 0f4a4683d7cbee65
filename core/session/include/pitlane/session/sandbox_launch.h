#pragma once
// The `sandbox` and `memory_limit_mb` knobs, orchestrator side: the worker confines itself when
// it starts (engine/sandbox.h), so these knobs become its command line. QtCore only.
#include "pitlane/spec/preset.h"

#include <QString>
#include <QStringList>

namespace pitlane::session {

// pitlane-worker's arguments for `knobs`: --sandbox on|off, --scratch DIR (only with the sandbox
// on: the one folder the worker may write, its $TMPDIR), and
// --memory-limit-mb N (the knob), auto (sandbox on, CPU device: 75 % of physical memory) or none.
QStringList sandboxArguments(const spec::Knobs& knobs, const QString& scratch);

}  // namespace pitlane::session
