#pragma once
// The Markdown summary's sections after the verdict and the summary table: page faults and
// context switches, every batch size of a sweep (one row per arm x batch size), the knobs and
// the applied (read-back) settings of each arm, and the environment in one line. Only what the
// run measured; "not measured" where the workers did not report a figure.
#include "pitlane/results/run_result.h"

#include <string>

namespace pitlane::report::detail {

// printf of one number ("%.2f").
std::string formatNumber(double v, const char* format);
// A per-iteration count ("0.25", "12.5", "300"), `missing` for -1 (not reported).
std::string perIterMarkdown(double perIter, const char* missing);

std::string countersMarkdown(const results::RunResult& run);
std::string sweepMarkdown(const results::RunResult& run);  // "" without a sweep
std::string settingsMarkdown(const results::RunResult& run);
std::string environmentMarkdown(const results::RunResult& run);

}  // namespace pitlane::report::detail
