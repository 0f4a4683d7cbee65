#pragma once
// A word-wrapped label that asks for the height its text needs at its current width. Layouts
// inside a QTabWidget or QStackedWidget ignore heightForWidth, so a plain wrapped QLabel there
// keeps the height of one line and cuts a long verdict off after the first line.
#include <QLabel>

namespace pitlane::widgets {

class WrappingLabel : public QLabel {
    Q_OBJECT
public:
    explicit WrappingLabel(QWidget* parent = nullptr);
    // QLabel::setText is not virtual: use this one so the height follows the text.
    void setWrappedText(const QString& text);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void fitHeight();
};

}  // namespace pitlane::widgets
