// The lesson section of the HTML/PDF report and the Markdown summary (lesson_sections.h).
#include "lesson_sections.h"

#include <cctype>

#include "pitlane/results/lesson.h"

namespace pitlane::report::detail {

using nlohmann::json;
using results::RunResult;

namespace {

struct Badge {
    const char* symbol;
    const char* background;
    const char* foreground;
};

// Bluish green, vermillion, amber, grey: apart for the common colour-vision deficiencies, and
// the symbol and the word say it without colour (grey print, screen readers).
Badge badge(const std::string& status) {
    if (status == results::kReproduced) return {"\u2714", "#007355", "#ffffff"};
    if (status == results::kNotReproduced) return {"\u2718", "#b03a00", "#ffffff"};
    if (status == results::kInconclusive) return {"?", "#e69f00", "#000000"};
    return {"\u2013", "#5f6368", "#ffffff"};
}

QString badgeHtml(const std::string& status) {
    const Badge b = badge(status);
    return QStringLiteral(
               "<span style=\"background-color:%1; color:%2; font-weight:bold; "
               "padding:1px 5px; border-radius:3px; white-space:nowrap\">"
               "&nbsp;%3&nbsp;%4&nbsp;</span>")
        .arg(QLatin1String(b.background), QLatin1String(b.foreground), QString::fromUtf8(b.symbol),
             esc(results::statusText(status)).replace(QLatin1Char(' '), QLatin1String("&nbsp;")));
}

std::string field(const json& lesson, const char* key) {
    return lesson.contains(key) && lesson[key].is_string() ? lesson[key].get<std::string>()
                                                           : std::string();
}

std::string md(const std::string& s) {
    return markdownCell(s);
}

QString checksTable(const results::LessonReport& report) {
    QString h = QStringLiteral(
        "<table class=\"grid lesson\"><tr><th>status</th><th>expected</th>"
        "<th>measured on this run</th></tr>\n");
    for (const auto& c : report.checks)
        h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td></tr>\n")
                 .arg(badgeHtml(c.status), esc(c.expected), esc(c.measured));
    return h + QStringLiteral("</table>\n");
}

}  // namespace

QString lessonSection(const RunResult& run) {
    const json lesson = results::lessonOf(run);
    if (!lesson.is_object()) return {};
    const std::string title = field(lesson, "title");
    QString h = QStringLiteral("<h2>%1</h2>\n")
                    .arg(title.empty() ? QStringLiteral("Lesson")
                                       : QStringLiteral("Lesson: %1").arg(esc(title)));
    if (!field(lesson, "text").empty())
        h += QStringLiteral("<p>%1</p>\n").arg(esc(field(lesson, "text")));
    if (!field(lesson, "claim").empty())
        h += QStringLiteral("<p><b>Claim:</b> %1</p>\n").arg(esc(field(lesson, "claim")));
    if (!field(lesson, "expect").empty())
        h += QStringLiteral("<p class=\"muted\"><i>Expect: %1</i></p>\n")
                 .arg(esc(field(lesson, "expect")));
    if (field(lesson, "needs") == "cuda")
        h += QStringLiteral(
            "<p class=\"muted\">Needs a CUDA device: without one its checks "
            "are not run.</p>\n");
    const auto report = results::checkLesson(run);
    if (report.empty()) return h;
    const auto n = report.checks.size();
    h += QStringLiteral("<p><b>On this run:</b> %1 (%2 %3)</p>\n")
             .arg(badgeHtml(report.status))
             .arg(n)
             .arg(n == 1 ? QStringLiteral("check") : QStringLiteral("checks"));
    return h + checksTable(report);
}

std::string markdownCell(const std::string& s) {
    // Names and texts come from the preset (or a results JSON read back): a name "<script>" must
    // stay text in any Markdown viewer, and no control character (a newline, "\r", an escape
    // code) may break the table or the terminal it is printed on (issue 28).
    std::string o;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '|') {
            o += "\\|";
        } else if (c == '<' && i + 1 < s.size() &&
                   (std::isalpha(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '/' ||
                    s[i + 1] == '!' || s[i + 1] == '?')) {
            // What could open a tag, a comment or an autolink is escaped ("\<script>" shows
            // "<script>"); "p99 <= 25 ms" stays as it reads in a terminal.
            o += "\\<";
        } else if (c == '\n' || c == '\r' || c == '\t') {
            o += ' ';
        } else if (c < 0x20 || c == 0x7F) {
            // dropped
        } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
            ++i;  // a C1 control (U+0080-U+009F): dropped
        } else {
            o += static_cast<char>(c);
        }
    }
    return o;
}

std::string markdownCode(const std::string& s) {
    // Inside `…` nothing is markup (no HTML, no entities): only the table's "|" is escaped (GFM
    // reads it before the code span), a backtick would end the span early, controls go.
    std::string o;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '|') {
            o += "\\|";
        } else if (c == '`') {
            o += '\'';
        } else if (c == '\n' || c == '\r' || c == '\t') {
            o += ' ';
        } else if (c < 0x20 || c == 0x7F) {
            // dropped
        } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
            ++i;
        } else {
            o += static_cast<char>(c);
        }
    }
    return o;
}

std::string lessonMarkdown(const RunResult& run) {
    const json lesson = results::lessonOf(run);
    if (!lesson.is_object()) return {};
    const std::string title = field(lesson, "title");
    std::string s = "## Lesson" + (title.empty() ? std::string() : ": " + md(title)) + "\n\n";
    if (!field(lesson, "text").empty()) s += md(field(lesson, "text")) + "\n\n";
    if (!field(lesson, "claim").empty()) s += "**Claim:** " + md(field(lesson, "claim")) + "  \n";
    if (!field(lesson, "expect").empty()) s += "_Expect: " + md(field(lesson, "expect")) + "_  \n";
    if (field(lesson, "needs") == "cuda") s += "_Needs a CUDA device._  \n";
    const auto report = results::checkLesson(run);
    if (report.empty()) return s + "\n";
    const auto word = [](const std::string& status) {
        return std::string(badge(status).symbol) + " " + results::statusText(status);
    };
    s += "\n**On this run: " + word(report.status) + "**\n\n";
    s += "| status | expected | measured on this run |\n|---|---|---|\n";
    for (const auto& c : report.checks)
        s += "| " + word(c.status) + " | " + md(c.expected) + " | " + md(c.measured) + " |\n";
    return s + "\n";
}

}  // namespace pitlane::report::detail
