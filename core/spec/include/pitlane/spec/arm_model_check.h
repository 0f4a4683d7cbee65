#pragma once
// The integrity check of every model a run will use (issue 42): each arm's own model gets the
// check the preset's model gets (spec::checkModelFile: the zip's layout, every entry's CRC-32,
// the SHA-256), each file once however many arms use it. One code path for `validate` (with and
// without --no-load), the window's model check (session::probeArms) and `run`
// (ExperimentRunner), so what one refuses the others refuse. No Qt, no torch.
#include "pitlane/spec/model_file.h"
#include "pitlane/spec/preset.h"

#include <cstddef>
#include <string>
#include <vector>

namespace pitlane::spec {

struct ArmModelCheck {
    std::size_t arm = 0;   // index in preset.arms
    std::string path;      // the arm's model (its own, or the preset's)
    ModelFileCheck check;  // of that file (shared by the arms that use it)
};

// One entry per arm, in order.
std::vector<ArmModelCheck> checkArmModels(const Preset& preset);

}  // namespace pitlane::spec
