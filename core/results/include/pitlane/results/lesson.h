#pragma once
// A lesson judged on the run that measured it: each of the preset's lesson.checks (spec/lesson.h)
// is reproduced, not reproduced, inconclusive (the CI is too wide to tell) or not run (an arm
// failed, or the lesson needs CUDA and this machine has none), with the figure measured. Shown by
// the CLI table, the window's lesson panel and Lessons browser, the history and every report.
#include "pitlane/results/run_result.h"

#include <string>
#include <vector>

namespace pitlane::results {

inline constexpr const char* kReproduced = "reproduced";
inline constexpr const char* kNotReproduced = "not_reproduced";
inline constexpr const char* kInconclusive = "inconclusive";
inline constexpr const char* kNotRun = "not_run";

struct LessonCheck {
    json spec;              // the check as written in the preset
    std::string expected;   // in words: "B is at least 1.3x faster than A"
    std::string status;     // kReproduced, ...
    std::string measured;   // in words: "2.41x faster (95% CI 2.20-2.61)"
    double value = 0;       // the ratio (or the metric ratio); 0 when not measured
    double ci_low = 0, ci_high = 0;  // for faster / similar; 0 otherwise
};

struct LessonReport {
    std::string title;
    std::string status;  // every check reproduced -> reproduced; any not reproduced -> not
                         // reproduced; any not run -> not run; else inconclusive
    std::vector<LessonCheck> checks;
    bool empty() const { return checks.empty(); }
};

// The preset's lesson (RunResult::preset.lesson, else preset_json.lesson); empty report when the
// run has no lesson or the lesson has no checks.
json lessonOf(const RunResult& run);
LessonReport checkLesson(const RunResult& run);
json toJson(const LessonReport& report);
// "reproduced" -> "reproduced", "not_reproduced" -> "not reproduced", ...
std::string statusText(const std::string& status);

// A lower/higher check's metric for one arm (-1 when the arm did not report it).
double lessonMetric(const ArmResult& arm, const std::string& metric);

}  // namespace pitlane::results
