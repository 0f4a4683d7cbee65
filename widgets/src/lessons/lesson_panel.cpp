#include "pitlane/widgets/lessons/lesson_panel.h"

#include "pitlane/widgets/lessons/lesson_status.h"
#include "pitlane/widgets/common/wrapping_label.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

namespace pitlane::widgets {

namespace {
// A lesson is hand-written JSON: a field of the wrong type reads as absent, never as an error.
QString stringField(const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return QString();
    return QString::fromStdString(j[key].get<std::string>()).trimmed();
}

// Asks for the wrapped text's height at its current width (WrappingLabel keeps its minimum
// height there): QLabel's own hint for wrapped text is sized for a narrow column and would take
// the verdict table's room.
class FittedLabel : public WrappingLabel {
public:
    explicit FittedLabel(QWidget* parent) : WrappingLabel(parent) {
        setTextFormat(Qt::RichText);  // the preset's strings are escaped before they go in
        setTextInteractionFlags(Qt::TextSelectableByMouse);
        setAlignment(Qt::AlignLeft | Qt::AlignTop);
        setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    }
    QSize sizeHint() const override {
        const int h = minimumHeight();
        return {WrappingLabel::sizeHint().width(), h > 0 ? h : WrappingLabel::sizeHint().height()};
    }
};
}  // namespace

LessonPanel::LessonPanel(QWidget* parent)
    : QFrame(parent),
      scroll_(new QScrollArea(this)),
      content_(new QWidget),
      about_(new FittedLabel(content_)),
      checks_(new FittedLabel(content_)) {
    setFrameShape(QFrame::StyledPanel);
    // At most its hint (the text, capped at 3/5 of the page), down to four lines when the
    // window is short (then it scrolls): a fixed height here set the window's minimum height,
    // and a long lesson pushed it past the screen (1100+ px).
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    about_->setObjectName(QStringLiteral("lessonAbout"));
    checks_->setObjectName(QStringLiteral("lessonChecks"));
    auto* columns = new QHBoxLayout(content_);
    columns->setContentsMargins(6, 4, 6, 4);
    columns->setSpacing(12);
    // The checks' measured figures are the longer text: they get a little more of the width.
    columns->addWidget(about_, 5, Qt::AlignTop);
    columns->addWidget(checks_, 6, Qt::AlignTop);
    scroll_->setWidget(content_);
    scroll_->setWidgetResizable(true);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll_);
    // The content's height follows its labels' wrapping; the page's height caps the panel's.
    content_->installEventFilter(this);
    if (parent) parent->installEventFilter(this);
    setVisible(false);
}

bool LessonPanel::eventFilter(QObject* watched, QEvent* event) {
    if ((watched == content_ && event->type() == QEvent::LayoutRequest) ||
        (watched == parentWidget() && event->type() == QEvent::Resize))
        updateGeometry();
    return QFrame::eventFilter(watched, event);
}

int LessonPanel::contentHeight() const {
    // The labels' heights at their current width (WrappingLabel keeps them as minimum heights).
    return content_->layout()->minimumSize().height();
}

QSize LessonPanel::sizeHint() const {
    const int lines = fontMetrics().lineSpacing();
    const int page = parentWidget() ? parentWidget()->height() : 0;
    const int cap = std::max(6 * lines, page * 3 / 5);
    const int frame = 2 * frameWidth();
    return {QFrame::sizeHint().width(), std::min(contentHeight(), cap) + frame};
}

QSize LessonPanel::minimumSizeHint() const {
    const int lines = fontMetrics().lineSpacing();
    return {QFrame::minimumSizeHint().width(),
            std::min(contentHeight(), 4 * lines) + 2 * frameWidth()};
}

void LessonPanel::setLesson(const nlohmann::json& lesson) {
    if (lesson == lesson_ && hasLesson()) return;  // keeps the judgement of this lesson
    lesson_ = lesson.is_object() ? lesson : nlohmann::json();
    title_ = stringField(lesson, "title");
    text_ = stringField(lesson, "text");
    claim_ = stringField(lesson, "claim");
    expect_ = stringField(lesson, "expect");
    expectations_ = lessonExpectations(lesson_);
    note_.clear();
    judgement_ = nlohmann::json::object();
    status_.clear();
    source_.clear();
    if (!hasLesson()) {
        lesson_ = nlohmann::json();
        claim_.clear();
        expect_.clear();
        expectations_.clear();
    }
    render();
}

void LessonPanel::setNote(const QString& note) {
    note_ = note;
    render();
}

void LessonPanel::setJudgement(const nlohmann::json& judgement, const QString& source) {
    status_ = judgementStatus(judgement);
    judgement_ = status_.isEmpty() ? nlohmann::json::object() : judgement;
    source_ = status_.isEmpty() ? QString() : source;
    render();
}

void LessonPanel::clearJudgement() {
    setJudgement(nlohmann::json::object());
}

QString LessonPanel::aboutText() const {
    return about_->text();
}
QString LessonPanel::checksText() const {
    return checks_->isVisibleTo(this) ? checks_->text() : QString();
}

void LessonPanel::render() {
    if (!hasLesson()) {
        about_->setWrappedText(QString());
        checks_->setWrappedText(QString());
        setVisible(false);
        shown_ = false;
        return;
    }
    QStringList about;
    about << QStringLiteral("<b>%1</b>")
                 .arg(title_.isEmpty() ? tr("Lesson")
                                       : tr("Lesson: %1").arg(title_.toHtmlEscaped()));
    if (!text_.isEmpty()) about << text_.toHtmlEscaped();
    if (!claim_.isEmpty())
        about << QStringLiteral("<b>%1</b> %2").arg(tr("Claim:"), claim_.toHtmlEscaped());
    if (!expect_.isEmpty())
        about << QStringLiteral("<i>%1</i>").arg(tr("Expect: %1").arg(expect_.toHtmlEscaped()));
    about_->setWrappedText(about.join(QStringLiteral("<br>")));

    QString checks;
    if (isJudged()) {
        checks =
            QStringLiteral("<b>%1</b> %2").arg(tr("On this machine:"), lessonBadgeHtml(status_));
        if (!source_.isEmpty()) checks += QStringLiteral(" <i>%1</i>").arg(source_.toHtmlEscaped());
        checks += lessonChecksHtml(judgement_);
    } else if (hasChecks()) {
        checks = QStringLiteral("<b>%1</b>").arg(tr("Checks"));
        checks +=
            QStringLiteral(" <i>(%1)</i>")
                .arg((note_.isEmpty() ? tr("judged when a run of this lesson finishes") : note_)
                         .toHtmlEscaped());
        for (const auto& e : expectations_)
            checks += QStringLiteral("<br>&bull;&nbsp;%1").arg(e.toHtmlEscaped());
    }
    checks_->setWrappedText(checks);
    checks_->setVisible(!checks.isEmpty());
    setVisible(true);
    if (!shown_) {
        shown_ = true;
        emit appeared();
    }
}

}  // namespace pitlane::widgets
