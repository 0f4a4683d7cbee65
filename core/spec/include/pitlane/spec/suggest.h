#pragma once
// "did you mean …?": the known name nearest to a mistyped one (knobs, commands). No Qt.
#include <string>
#include <vector>

namespace pitlane::spec {

// The candidate with the fewest edits (insert, delete, substitute, swap two neighbours; case
// ignored) from `name`, when it is close enough to be what was meant: at most a third of the
// longer name's length, and at least 1. "" when none is.
std::string nearestName(const std::string& name, const std::vector<std::string>& candidates);

// " (did you mean X?)" for nearestName, or "".
std::string didYouMean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace pitlane::spec
