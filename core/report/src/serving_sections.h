#pragma once
// A serving run in the reports (issue 13): its levels instead of the per-iteration sections,
// which have nothing to show for it (its arms have no samples). HTML (both flavours) and
// Markdown say the same things: the load, one row per arm and offered rate (offered and
// achieved rate, p50 / p90 / p99 / p99.9, mean batch, longest queue, saturated, SLO met in how
// many processes), the capacity within the SLO, the p99 comparisons, and the charts.
#include "html_builder.h"

#include <string>

namespace pitlane::report::detail {

// The verdict's headline lines (results::servingVerdict) for the Verdict box; "" when the run
// is not a serving run.
QString servingVerdictRows(const results::RunResult& run);
// "Serving under load": the section and its charts (appended to `images` in RichText).
QString servingSection(const results::RunResult& run, Flavor flavor, std::vector<Chart>* images);
// The Markdown summary's table, capacity and comparisons (no verdict: the caller writes it).
std::string servingMarkdown(const results::RunResult& run);

}  // namespace pitlane::report::detail
