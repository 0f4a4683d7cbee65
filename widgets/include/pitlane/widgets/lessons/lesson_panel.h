#pragma once
// A preset's lesson ("lesson": {title, text, claim, expect, checks, needs}), shown above the
// verdict so the user reads what the experiment teaches next to what it measured. Two columns:
// the lesson in words (title, mechanism, the literature's claim, what to expect), and its checks:
// before a run what each one expects, after a run each one judged (results::checkLesson) as a row
// with a status badge (lesson_status.h), the expectation and the figure measured, under the
// lesson's overall status. Hidden when the preset has no lesson. The panel never judges: the
// window hands it a judgement computed off the UI thread (LessonJudge) or stored in the history.
// A long lesson scrolls inside the panel: it takes at most three fifths of the height of the page
// it sits on (never less than a few lines), so the verdict below stays in sight.
#include <QFrame>

class QScrollArea;

#include <nlohmann/json.hpp>

namespace pitlane::widgets {

class WrappingLabel;

class LessonPanel : public QFrame {
    Q_OBJECT
public:
    explicit LessonPanel(QWidget* parent = nullptr);

    // The preset's "lesson" value; anything but an object with a title or text hides the panel.
    // The same lesson again (an edit of the setup elsewhere) keeps the judgement shown; another
    // one clears it.
    void setLesson(const nlohmann::json& lesson);
    bool hasLesson() const { return !title_.isEmpty() || !text_.isEmpty(); }
    bool hasChecks() const { return !expectations_.isEmpty(); }
    QString lessonTitle() const { return title_; }
    QString lessonText() const { return text_; }
    QString claimText() const { return claim_; }    // "" when the lesson states no claim
    QString expectText() const { return expect_; }  // "" when the lesson names no expectation
    const nlohmann::json& lesson() const { return lesson_; }

    // While no judgement is shown: a word on when there will be one ("judged when the run
    // finishes", "judging…").
    void setNote(const QString& note);
    // results::toJson(LessonReport) of a run of this lesson; `source` says which run ("run #12,
    // as stored"). An object without checks clears the judgement.
    void setJudgement(const nlohmann::json& judgement, const QString& source = {});
    void clearJudgement();
    bool isJudged() const { return !status_.isEmpty(); }
    QString status() const { return status_; }  // results::kReproduced ...; "" when not judged
    const nlohmann::json& judgement() const { return judgement_; }

    // What the two columns show (rich text), for tests and screen readers.
    QString aboutText() const;
    QString checksText() const;

    // The content's height, at most three fifths of the parent's height.
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    // The panel went from hidden to shown (a lesson arrived): the window may make room for it.
    void appeared();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void render();
    int contentHeight() const;

    QScrollArea* scroll_;
    QWidget* content_;
    WrappingLabel* about_;
    WrappingLabel* checks_;
    nlohmann::json lesson_;
    QString title_, text_, claim_, expect_, note_, source_, status_;
    QStringList expectations_;
    bool shown_ = false;
    nlohmann::json judgement_ = nlohmann::json::object();
};

}  // namespace pitlane::widgets
