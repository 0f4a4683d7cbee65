#include "pitlane/widgets/live/log_pane.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTime>
#include <QVBoxLayout>

namespace pitlane::widgets {

namespace {
constexpr int kMaxLines = 5000;  // the view keeps the newest lines
constexpr std::size_t kMaxEntries = 20000;
}  // namespace

LogPane::LogPane(QWidget* parent)
    : QWidget(parent),
      view_(new QPlainTextEdit(this)),
      showStderr_(new QCheckBox(tr("Show worker stderr"), this)) {
    view_->setReadOnly(true);
    view_->setMaximumBlockCount(kMaxLines);
    view_->setObjectName(QStringLiteral("logView"));
    auto* bar = new QHBoxLayout;
    bar->addWidget(showStderr_);
    bar->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(view_);
    showStderr_->setToolTip(
        tr("What libtorch, OpenMP and the model printed (kept off the protocol)"));
    connect(showStderr_, &QCheckBox::toggled, this, &LogPane::rerender);
}

void LogPane::append(int arm, const QString& armName, const QString& level, const QString& text) {
    Entry e{arm, armName, level, text, QTime::currentTime().toString(QStringLiteral("HH:mm:ss"))};
    if (level == QLatin1String("warning")) ++warnings_;
    if (level == QLatin1String("error")) ++errors_;
    if (entries_.size() >= kMaxEntries)
        entries_.erase(entries_.begin(), entries_.begin() + kMaxEntries / 10);
    entries_.push_back(e);
    render(e);
    if (level == QLatin1String("warning") || level == QLatin1String("error"))
        emit countsChanged(warnings_, errors_);
}

void LogPane::clear() {
    entries_.clear();
    warnings_ = errors_ = 0;
    view_->clear();
    emit countsChanged(0, 0);
}

QString LogPane::plainText() const {
    return view_->toPlainText();
}

void LogPane::render(const Entry& e) {
    const bool isStderr = e.level == QLatin1String("stderr");
    if (isStderr && !showStderr_->isChecked()) return;
    const bool dark = isDarkPalette(palette());
    QString colour;
    if (e.level == QLatin1String("error"))
        colour = dark ? QStringLiteral("#ff7b72") : QStringLiteral("#b3261e");
    else if (e.level == QLatin1String("warning"))
        colour = dark ? QStringLiteral("#e3b341") : QStringLiteral("#8a5a00");
    else if (isStderr)
        colour = palette().color(QPalette::PlaceholderText).name();
    const QString who = e.arm >= 0 ? QStringLiteral("<span style='color:%1'>■</span> %2")
                                         .arg(armColor(e.arm).name(), e.armName.toHtmlEscaped())
                                   : tr("window");
    QString body = e.text.toHtmlEscaped();
    if (!colour.isEmpty())
        body = QStringLiteral("<span style='color:%1'>%2</span>").arg(colour, body);
    auto* sb = view_->verticalScrollBar();
    const bool atEnd = sb->value() == sb->maximum();
    view_->appendHtml(QStringLiteral("<span style='white-space:pre'>%1  %2  %3: </span>%4")
                          .arg(e.time, who, e.level, body));
    if (atEnd) sb->setValue(sb->maximum());
}

void LogPane::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) rerender();
}

void LogPane::rerender() {
    view_->clear();
    for (const auto& e : entries_) render(e);
}

}  // namespace pitlane::widgets
