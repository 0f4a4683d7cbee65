#pragma once
// The reports' energy section (issue 46, results/energy.h, docs/ENERGY.md): HTML (and so the
// PDF, built from the same HTML) and Markdown. Empty when no arm's worker reported energy
// counters; one sentence when none could be read.
#include "pitlane/results/run_result.h"

#include <QString>

#include <string>

namespace pitlane::report::detail {

QString energySectionHtml(const results::RunResult& run);
std::string energyMarkdown(const results::RunResult& run);

}  // namespace pitlane::report::detail
