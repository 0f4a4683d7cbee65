#include "pitlane/widgets/lesson_panel.h"

namespace pitlane::widgets {

namespace {
// A lesson is hand-written JSON: a field of the wrong type reads as absent, never as an error.
QString stringField(const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return QString();
    return QString::fromStdString(j[key].get<std::string>()).trimmed();
}
}  // namespace

LessonPanel::LessonPanel(QWidget* parent) : WrappingLabel(parent) {
    setTextFormat(Qt::RichText);  // the preset's strings are escaped before they go in
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    setFrameShape(QFrame::StyledPanel);
    setMargin(4);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    setVisible(false);
}

QSize LessonPanel::sizeHint() const {
    const int h = minimumHeight();  // WrappingLabel keeps it at the text's height for the width
    return {WrappingLabel::sizeHint().width(), h > 0 ? h : WrappingLabel::sizeHint().height()};
}

void LessonPanel::setLesson(const nlohmann::json& lesson) {
    title_ = stringField(lesson, "title");
    text_ = stringField(lesson, "text");
    expect_ = stringField(lesson, "expect");
    if (!hasLesson()) {
        expect_.clear();
        setWrappedText(QString());
        setVisible(false);
        return;
    }
    QStringList lines;
    lines << QStringLiteral("<b>%1</b>")
                 .arg(title_.isEmpty() ? tr("Lesson")
                                       : tr("Lesson: %1").arg(title_.toHtmlEscaped()));
    if (!text_.isEmpty()) lines << text_.toHtmlEscaped();
    if (!expect_.isEmpty())
        lines << QStringLiteral("<i>%1</i>").arg(tr("Expect: %1").arg(expect_.toHtmlEscaped()));
    setWrappedText(lines.join(QStringLiteral("<br>")));
    setVisible(true);
}

}  // namespace pitlane::widgets
