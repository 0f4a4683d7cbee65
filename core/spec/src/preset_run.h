#pragma once
// Internal to spec/src: the preset's run block (preset_run.cpp) and the checks of the run's plan
// against its arms, used by parsePreset (preset.cpp).
#include "preset_errors.h"

#include <string>

namespace pitlane::spec::detail {

// An integer field of `obj` between minValue and 100000000 (`def` when absent); SpecError on
// "PREFIX.KEY" otherwise, echoing the value as written.
int intField(const json& obj, const char* key, int def, int minValue, const std::string& where,
             const std::string& prefix);
// Each run field on its own; the rules that combine fields only when none of theirs was refused.
RunSettings parseRunSettings(const json& r, Errors& errs);
// What a run would hold in memory before any worker starts: its blocks and each arm's samples.
void checkRunSize(const Preset& p, Errors& errs);
// What a serving preset asks of its arms; and that the batcher's knobs need a serving block.
void checkServingArms(const Preset& p, Errors& errs);
void checkNotServingArms(const Preset& p, Errors& errs);

}  // namespace pitlane::spec::detail
