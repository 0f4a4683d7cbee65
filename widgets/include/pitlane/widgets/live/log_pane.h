#pragma once
// Messages of a run: warnings and errors from workers (and from the window itself), and, when
// asked for, everything the workers wrote on stderr. Each line names its arm in the arm's colour.
#include <QWidget>

#include <vector>

class QCheckBox;
class QPlainTextEdit;

namespace pitlane::widgets {

class LogPane : public QWidget {
    Q_OBJECT
public:
    explicit LogPane(QWidget* parent = nullptr);

    // arm < 0: the window's own message. level: "info", "warning", "error" or "stderr".
    void append(int arm, const QString& armName, const QString& level, const QString& text);
    void clear();
    int warnings() const { return warnings_; }
    int errors() const { return errors_; }
    QString plainText() const;

signals:
    void countsChanged(int warnings, int errors);

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Entry {
        int arm;
        QString armName, level, text, time;
    };
    void render(const Entry& e);
    void rerender();

    QPlainTextEdit* view_;
    QCheckBox* showStderr_;
    std::vector<Entry> entries_;
    int warnings_ = 0, errors_ = 0;
};

}  // namespace pitlane::widgets
