#pragma once
// How a stored run's models are named in a list of runs (issue 44: the lists showed full paths
// for bare-model runs, file names for two-model presets and "mlp" for a preset naming a bundled
// model): one rule for pitlane-cli's `history list` and the window's Run history. The paths are
// in `history show`, the results JSON and the reports.
#include "pitlane/store/run_store.h"

#include <QString>

namespace pitlane::store {

// The file name of the model the run's arms measured ("resnet50.pt"). Arms with models of their
// own: "a.pt, b.pt", or "2 models" where that is longer than `width` characters (0: any
// length). A run that recorded no arm's model (none started): its preset's model's file name.
QString listedModels(const RunInfo& run, int width = 0);

}  // namespace pitlane::store
