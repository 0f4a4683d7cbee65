#pragma once
// How a lesson's status looks wherever the window shows it (lesson panel, Lessons browser, run
// history): a badge with a symbol and the word, never colour alone, in colours that stay apart
// for the common colour-vision deficiencies (bluish green, vermillion, amber, grey) and read the
// same on the light and the dark palette (the badge brings its own background). Statuses are
// results::kReproduced ... (lesson.h); the judgement JSON is results::toJson(LessonReport).
#include <QColor>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

namespace pitlane::widgets {

struct LessonBadge {
    QString symbol;  // ✔ ✘ ? –
    QString word;    // "reproduced", "not reproduced", "inconclusive", "not run"
    QColor background, foreground;
    QString text() const { return symbol + QLatin1Char(' ') + word; }
};

// "" or an unknown status reads as not run.
LessonBadge lessonBadge(const QString& status);
// The badge as rich text (QLabel, QTextBrowser): escaped, bold, coloured background.
QString lessonBadgeHtml(const QString& status);
// The judgement's checks as a rich-text table: badge, expected, measured. "" when it has none.
QString lessonChecksHtml(const nlohmann::json& judgement);
// The judgement's status ("" when it is not a judgement with checks).
QString judgementStatus(const nlohmann::json& judgement);
// One line per check, "✔ reproduced: B is faster than A: 1.31x ..." (tooltips).
QString lessonChecksPlain(const nlohmann::json& judgement);
// A lesson's checks in words before any run ("B is faster than A by at least 1.3x"), from the
// same code that judges them (results::checkLesson), without measuring anything.
QStringList lessonExpectations(const nlohmann::json& lesson);

}  // namespace pitlane::widgets
