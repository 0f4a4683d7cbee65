#pragma once
// The lesson of a lesson preset in every report, right after the verdict: its title, what it
// teaches (text), the literature's claim it tests, what to expect, and each check judged on this
// run (results::checkLesson) with a status badge (symbol and word, never colour alone) and the
// figure measured. Empty for a run without a lesson.
#include "html_builder.h"

#include <string>

namespace pitlane::report::detail {

// HTML for both flavours (the PDF's RichText takes the same inline styles).
QString lessonSection(const results::RunResult& run);
// The Markdown summary's lesson block ("" without a lesson).
std::string lessonMarkdown(const results::RunResult& run);
// Text for a Markdown table cell or inline run: "|" escaped, a "<" that could open a tag escaped,
// newlines and tabs as spaces, other control characters dropped.
std::string markdownCell(const std::string& s);
// Text inside a code span (`…`): "|" escaped, a backtick as ', controls as above; no entities.
std::string markdownCode(const std::string& s);

}  // namespace pitlane::report::detail
