#pragma once
// Every string of a preset, wherever it is (issue 28): no NUL or control character, a length
// limit for each kind (names, paths, free text, values). Private to core/spec.
#include "preset_errors.h"

#include <nlohmann/json.hpp>

#include <set>
#include <string>

namespace pitlane::spec::detail {

// Adds an error for each string that breaks its rule; `refused` collects the fields refused, so
// their own parsers do not judge them again.
void checkStrings(const nlohmann::json& j, Errors& errs, std::set<std::string>& refused);

}  // namespace pitlane::spec::detail
