#include "pitlane/widgets/lessons/lesson_status.h"

#include "pitlane/results/lesson.h"

#include <QObject>
#include <QStringList>

namespace pitlane::widgets {

using json = nlohmann::json;

namespace {
QString str(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string()
               ? QString::fromStdString(j[key].get<std::string>())
               : QString();
}
}  // namespace

LessonBadge lessonBadge(const QString& status) {
    // White on the dark greens, reds and greys, black on amber: each at least 4.5:1.
    if (status == QLatin1String(results::kReproduced))
        return {QStringLiteral("✔"), QObject::tr("reproduced"), QColor(0x00, 0x73, 0x55),
                Qt::white};
    if (status == QLatin1String(results::kNotReproduced))
        return {QStringLiteral("✘"), QObject::tr("not reproduced"), QColor(0xB0, 0x3A, 0x00),
                Qt::white};
    if (status == QLatin1String(results::kInconclusive))
        return {QStringLiteral("?"), QObject::tr("inconclusive"), QColor(0xE6, 0x9F, 0x00),
                Qt::black};
    return {QStringLiteral("–"), QObject::tr("not run"), QColor(0x5F, 0x63, 0x68), Qt::white};
}

QString lessonBadgeHtml(const QString& status) {
    // Non-breaking spaces: a badge never wraps inside a narrow cell.
    const LessonBadge b = lessonBadge(status);
    const QString word = b.word.toHtmlEscaped().replace(QLatin1Char(' '), QStringLiteral("&nbsp;"));
    return QStringLiteral(
               "<span style=\"background-color:%1; color:%2; font-weight:bold;\">"
               "&nbsp;%3&nbsp;%4&nbsp;</span>")
        .arg(b.background.name(), b.foreground.name(), b.symbol, word);
}

QString judgementStatus(const json& judgement) {
    if (!judgement.is_object() || !judgement.value("checks", json()).is_array() ||
        judgement["checks"].empty())
        return {};
    return str(judgement, "status");
}

QString lessonChecksHtml(const json& judgement) {
    if (judgementStatus(judgement).isEmpty()) return {};
    QString rows;
    for (const auto& c : judgement["checks"])
        rows += QStringLiteral(
                    "<tr><td style=\"white-space:nowrap;\">%1</td><td>%2</td>"
                    "<td>%3</td></tr>")
                    .arg(lessonBadgeHtml(str(c, "status")), str(c, "expected").toHtmlEscaped(),
                         str(c, "measured").toHtmlEscaped());
    return QStringLiteral(
               "<table cellspacing=\"0\" cellpadding=\"2\" width=\"100%\">"
               "<tr><th align=\"left\">%1</th><th align=\"left\">%2</th>"
               "<th align=\"left\">%3</th></tr>%4</table>")
        .arg(QObject::tr("Check"), QObject::tr("Expected"), QObject::tr("Measured"), rows);
}

QString lessonChecksPlain(const json& judgement) {
    if (judgementStatus(judgement).isEmpty()) return {};
    QStringList lines;
    for (const auto& c : judgement["checks"])
        lines << QStringLiteral("%1: %2: %3")
                     .arg(lessonBadge(str(c, "status")).text(), str(c, "expected"),
                          str(c, "measured"));
    return lines.join(QLatin1Char('\n'));
}

QStringList lessonExpectations(const json& lesson) {
    if (!lesson.is_object() || !lesson.value("checks", json()).is_array()) return {};
    // No arms: every check is "not run" at once, and its expectation is written out.
    results::RunResult empty;
    empty.preset.lesson = lesson;
    QStringList out;
    for (const auto& c : results::checkLesson(empty).checks)
        out << QString::fromStdString(c.expected);
    return out;
}

}  // namespace pitlane::widgets
