#pragma once
// A word-wrapped label that asks for the height its text needs at its current width. Layouts
// inside a QTabWidget or QStackedWidget ignore heightForWidth, so a plain wrapped QLabel there
// keeps the height of one line and cuts a long verdict off after the first line.
#include <QLabel>
#include <QScrollArea>

namespace pitlane::widgets {

class WrappingLabel : public QLabel {
    Q_OBJECT
public:
    explicit WrappingLabel(QWidget* parent = nullptr);
    // QLabel::setText is not virtual: use this one so the height follows the text.
    void setWrappedText(const QString& text);

signals:
    void heightFitted();  // the minimum height followed the text or the width

protected:
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void fitHeight();
};

// A WrappingLabel in a scroll area that takes the text's height up to `maxLines` lines and
// scrolls beyond: a verdict with its caveats, rounds and compile lines grew to eight lines on a
// loaded machine, and the results below the plots took the plots' height with it (at 1366x768
// the distribution plot's title was cut).
class CappedLabel : public QScrollArea {
    Q_OBJECT
public:
    explicit CappedLabel(int maxLines, QWidget* parent = nullptr);
    WrappingLabel* label() const { return label_; }
    void setWrappedText(const QString& text);
    int maxLines() const { return maxLines_; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

private:
    int cappedHeight() const;

    WrappingLabel* label_;
    int maxLines_;
};

}  // namespace pitlane::widgets
