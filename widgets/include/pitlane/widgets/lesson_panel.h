#pragma once
// A preset's lesson ("lesson": {"title", "text", "expect"}), shown above the verdict so the user
// reads what the experiment teaches and what result to expect next to the result itself. Hidden
// when the preset has none. One wrapped label, like the verdict line.
#include "pitlane/widgets/wrapping_label.h"

#include <nlohmann/json.hpp>

namespace pitlane::widgets {

class LessonPanel : public WrappingLabel {
    Q_OBJECT
public:
    explicit LessonPanel(QWidget* parent = nullptr);

    // The preset's "lesson" value; anything but an object with a title or text hides the panel.
    void setLesson(const nlohmann::json& lesson);
    bool hasLesson() const { return !title_.isEmpty() || !text_.isEmpty(); }
    QString lessonTitle() const { return title_; }
    QString lessonText() const { return text_; }
    QString expectText() const { return expect_; }  // "" when the lesson names no expectation

    // The wrapped text's height at the current width: QLabel's own hint for wrapped text is
    // sized for a narrow column and would take the verdict table's room.
    QSize sizeHint() const override;

private:
    QString title_, text_, expect_;
};

}  // namespace pitlane::widgets
