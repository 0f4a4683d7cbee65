#include "pitlane/widgets/lessons/lessons_browser.h"

#include "pitlane/widgets/common/scroll_hint.h"

#include "pitlane/widgets/history/history_model.h"
#include "pitlane/widgets/lessons/lesson_status.h"
#include "pitlane/widgets/common/wrapping_label.h"
#include "pitlane/protocol/json_limits.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableWidget>
#include <QTextBrowser>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace pitlane::widgets {

using json = nlohmann::json;

namespace {

QString str(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string()
               ? QString::fromStdString(j[key].get<std::string>()).trimmed()
               : QString();
}

LessonPreset readLessonPreset(const QString& path) {
    LessonPreset p;
    p.path = QFileInfo(path).absoluteFilePath();
    p.title = QFileInfo(path).completeBaseName();
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        p.error = QObject::tr("cannot read %1: %2").arg(path, f.errorString());
        return p;
    }
    const json j = protocol::parseJsonBounded(f.readAll().toStdString());  // depth-bounded
    if (!j.is_object()) {
        p.error = QObject::tr("%1 is not a JSON object").arg(QFileInfo(path).fileName());
        return p;
    }
    p.name = str(j, "name");
    const QString model = str(j, "model");
    p.model = model.contains(QLatin1Char('/')) ? QFileInfo(model).fileName() : model;
    p.lesson = j.value("lesson", json());
    if (!p.lesson.is_object()) {
        p.error = QObject::tr("%1 has no \"lesson\"").arg(QFileInfo(path).fileName());
        p.lesson = json();
        return p;
    }
    if (!str(p.lesson, "title").isEmpty()) p.title = str(p.lesson, "title");
    p.text = str(p.lesson, "text");
    p.claim = str(p.lesson, "claim");
    p.expect = str(p.lesson, "expect");
    p.needsCuda = str(p.lesson, "needs") == QLatin1String("cuda");
    return p;
}

QString durationText(double seconds) {
    if (!(seconds > 0)) return QObject::tr("?");
    if (seconds < 90) return QObject::tr("%1 s").arg(qRound(seconds));
    return QObject::tr("%1 min").arg(seconds / 60.0, 0, 'f', 1);
}

QString section(const QString& heading, const QString& body) {
    return QStringLiteral("<p><b>%1</b></p>%2").arg(heading.toHtmlEscaped(), body);
}

QTextBrowser* detailView(const char* name) {
    auto* v = new QTextBrowser;
    v->setObjectName(QLatin1String(name));
    v->setOpenLinks(false);
    v->setFrameShape(QFrame::NoFrame);
    return v;
}

}  // namespace

QList<LessonPreset> scanLessonPresets(const QString& dir) {
    QList<LessonPreset> out;
    if (dir.isEmpty()) return out;
    const QDir d(dir);
    for (const QString& file :
         d.entryList({QStringLiteral("lesson_*.json")}, QDir::Files | QDir::Readable, QDir::Name))
        out << readLessonPreset(d.filePath(file));
    return out;
}

const store::RunInfo* latestLessonRun(const QList<store::RunInfo>& runs, const QString& name) {
    if (name.isEmpty()) return nullptr;
    for (const auto& r : runs)  // newest first
        if (r.name == name && !r.lessonStatus().isEmpty()) return &r;
    return nullptr;
}

LessonsBrowser::LessonsBrowser(QWidget* parent)
    : QWidget(parent),
      table_(new QTableWidget(0, ColumnCount)),
      heading_(new WrappingLabel),
      mechanism_(detailView("lessonMechanism")),
      claim_(detailView("lessonClaim")),
      verdict_(detailView("lessonVerdict")) {
    setObjectName(QStringLiteral("lessonsBrowser"));
    table_->setObjectName(QStringLiteral("lessonsTable"));
    table_->setHorizontalHeaderLabels(
        {tr("Status here"), tr("Lesson"), tr("Model"), tr("Needs"), tr("Last run here"), QString()});
    table_->verticalHeader()->hide();
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // A long title wraps in its row instead of ending in "…" (issue 27: "Thread mi…").
    table_->setWordWrap(true);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setHighlightSections(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(Title, QHeaderView::Stretch);
    heading_->setObjectName(QStringLiteral("lessonHeading"));
    heading_->setTextFormat(Qt::RichText);

    auto* details = new QWidget;
    auto* columns = new QHBoxLayout;
    columns->setSpacing(6);
    // The verdict's table of checks needs the most room.
    columns->addWidget(mechanism_, 2);
    columns->addWidget(claim_, 2);
    columns->addWidget(verdict_, 3);
    auto* detailsLayout = new QVBoxLayout(details);
    detailsLayout->setContentsMargins(4, 0, 0, 0);
    detailsLayout->setSpacing(2);
    detailsLayout->addWidget(heading_);
    detailsLayout->addLayout(columns, 1);
    split_ = new QSplitter(Qt::Horizontal);
    // The list, and under it "2 more columns of the table: scroll →" while it is cut.
    auto* list = new QWidget;
    auto* listLayout = new QVBoxLayout(list);
    listLayout->setContentsMargins(0, 0, 0, 0);
    listLayout->setSpacing(0);
    listLayout->addWidget(table_, 1);
    listLayout->addWidget(attachScrollHint(table_).label);
    split_->addWidget(list);
    split_->addWidget(details);
    split_->setStretchFactor(0, 2);
    split_->setStretchFactor(1, 3);
    split_->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(split_);

    connect(table_, &QTableWidget::itemSelectionChanged, this, &LessonsBrowser::showDetails);
    connect(table_, &QTableWidget::itemActivated, this, [this](QTableWidgetItem* item) {
        if (!running_ && item) emit openRequested(lessons_[item->row()].path);
    });
    showDetails();
}

void LessonsBrowser::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (sized_ || width() <= 0) return;
    sized_ = true;
    // The list as wide as its columns need (at most 55 %), the details take the rest.
    int list = 2 * table_->frameWidth() + 4;
    for (int c = 0; c < ColumnCount; ++c)
        list += c == Title ? table_->fontMetrics().averageCharWidth() * 28
                           : table_->horizontalHeader()->sectionSize(c);
    list = std::min(list, width() * 55 / 100);
    split_->setSizes({list, std::max(1, width() - list)});
}

void LessonsBrowser::setPresetsDir(const QString& dir) {
    dir_ = dir;
    refresh();
}

void LessonsBrowser::setStore(const store::RunStore* store) {
    store_ = store;
    refresh();
}

void LessonsBrowser::refresh() {
    const int selected = selectedLesson();
    const QString keep = selected >= 0 ? lessons_[selected].path : QString();
    lessons_ = scanLessonPresets(dir_);
    runs_ = store_ && store_->isOpen() ? store_->listRuns() : QList<store::RunInfo>();
    last_.clear();
    for (const auto& l : lessons_) {
        const auto* r = latestLessonRun(runs_, l.name);
        last_ << (r ? int(r - runs_.constData()) : -1);
    }
    {
        const QSignalBlocker quiet(table_);  // the details follow once, below
        table_->clearContents();
        table_->setRowCount(int(lessons_.size()));
        for (int row = 0; row < lessons_.size(); ++row) fillRow(row);
        int again = lessons_.isEmpty() ? -1 : 0;
        for (int row = 0; row < lessons_.size(); ++row)
            if (lessons_[row].path == keep) again = row;
        table_->clearSelection();
        if (again >= 0) table_->selectRow(again);
    }
    showDetails();
    updateButtons();
}

QString LessonsBrowser::statusOf(int row) const {
    const auto* r = lastRunOf(row);
    return r ? r->lessonStatus() : QString();
}

const store::RunInfo* LessonsBrowser::lastRunOf(int row) const {
    if (row < 0 || row >= last_.size() || last_[row] < 0) return nullptr;
    return &runs_[last_[row]];
}

void LessonsBrowser::fillRow(int row) {
    const LessonPreset& l = lessons_[row];
    const auto* last = lastRunOf(row);
    const LessonBadge badge = lessonBadge(statusOf(row));
    auto* status = new QTableWidgetItem(badge.text());
    status->setBackground(badge.background);
    status->setForeground(badge.foreground);
    status->setToolTip(
        last ? lessonChecksPlain(last->lesson)
             : tr("Never run on this machine (no run of \"%1\" in the history)").arg(l.name));
    table_->setItem(row, Status, status);
    auto* title = new QTableWidgetItem(l.title);
    title->setToolTip(l.error.isEmpty() ? QDir::toNativeSeparators(l.path) : l.error);
    table_->setItem(row, Title, title);
    table_->setItem(row, Model, new QTableWidgetItem(l.model));
    const QString needs = !l.needsCuda                    ? tr("CPU")
                          : cudaKnown_ && !cudaAvailable_ ? tr("CUDA (none here)")
                                                          : tr("CUDA");
    table_->setItem(row, Needs, new QTableWidgetItem(needs));
    // The day is enough in the list; the time is in the tooltip and the details.
    // How long it took here: the expected duration of the next run (issue 27: none was shown).
    auto* lastRun = new QTableWidgetItem(
        last ? QStringLiteral("#%1 · %2 · %3")
                   .arg(last->id)
                   .arg(localDateText(last->startedAt).left(10), durationText(last->wallS))
             : tr("never"));
    lastRun->setToolTip(last ? tr("%1; it took %2 here").arg(localDateText(last->startedAt), durationText(last->wallS))
                             : tr("Not run on this machine yet"));
    table_->setItem(row, LastRun, lastRun);
    table_->setCellWidget(row, Actions, actionsCell(row));
}

QWidget* LessonsBrowser::actionsCell(int row) {
    auto* cell = new QWidget;
    auto* h = new QHBoxLayout(cell);
    h->setContentsMargins(2, 0, 2, 0);
    h->setSpacing(2);
    auto button = [&](const QString& text, const QString& tip, const char* name) {
        auto* b = new QToolButton(cell);
        b->setText(text);
        b->setToolTip(tip);
        b->setObjectName(QLatin1String(name));
        b->setAutoRaise(true);
        h->addWidget(b);
        return b;
    };
    const QString path = lessons_[row].path;
    auto* open = button(tr("Open"), tr("Load the lesson into the setup"), "lessonOpen");
    auto* run = button(tr("Run"), tr("Load the lesson and run it"), "lessonRun");
    // The details follow the lesson whose button was pressed (issue 27: they kept the one
    // selected before).
    connect(open, &QToolButton::clicked, this, [this, path] {
        selectPath(path);
        emit openRequested(path);
    });
    connect(run, &QToolButton::clicked, this, [this, path] {
        selectPath(path);
        emit runRequested(path);
    });
    return cell;
}

QAbstractButton* LessonsBrowser::openButton(int row) const {
    auto* cell = table_->cellWidget(row, Actions);
    return cell ? cell->findChild<QAbstractButton*>(QStringLiteral("lessonOpen")) : nullptr;
}

QAbstractButton* LessonsBrowser::runButton(int row) const {
    auto* cell = table_->cellWidget(row, Actions);
    return cell ? cell->findChild<QAbstractButton*>(QStringLiteral("lessonRun")) : nullptr;
}

void LessonsBrowser::setRunning(bool running) {
    if (running_ == running) return;
    running_ = running;
    updateButtons();
}

void LessonsBrowser::setCuda(bool known, bool available) {
    if (cudaKnown_ == known && cudaAvailable_ == available) return;
    cudaKnown_ = known;
    cudaAvailable_ = available;
    for (int row = 0; row < lessons_.size(); ++row) fillRow(row);
    updateButtons();
}

void LessonsBrowser::updateButtons() {
    for (int row = 0; row < lessons_.size(); ++row) {
        if (auto* b = openButton(row)) b->setEnabled(!running_);
        if (auto* b = runButton(row)) b->setEnabled(!running_ && lessons_[row].error.isEmpty());
    }
}

int LessonsBrowser::selectedLesson() const {
    const auto rows = table_->selectionModel()->selectedRows();
    return rows.isEmpty() || rows.first().row() >= lessons_.size() ? -1 : rows.first().row();
}

void LessonsBrowser::selectPath(const QString& path) {
    for (int row = 0; row < lessons_.size(); ++row)
        if (lessons_[row].path == path) return selectLesson(row);
}

void LessonsBrowser::selectLesson(int row) {
    if (row >= 0 && row < lessons_.size()) table_->selectRow(row);
}

QString LessonsBrowser::verdictHtml(int row) const {
    const LessonPreset& l = lessons_[row];
    if (const auto* last = lastRunOf(row)) {
        QString hint;
        const QString status = last->lessonStatus();
        if (status == QLatin1String("not_reproduced") || status == QLatin1String("inconclusive"))
            hint = QStringLiteral("<p><i>%1</i></p>")
                       .arg(tr("A lesson measures this machine: other load while it ran (a busy "
                               "machine shrinks or hides an effect), fewer cores or another CPU "
                               "(its vector units, its cache) change the size of the effect. Run "
                               "it again on an idle machine before you conclude; the checks above "
                               "say what was expected and what was measured.")
                                .toHtmlEscaped());
        return section(tr("On this machine"), QStringLiteral("<p>%1 <i>%2</i></p>%3%4")
                                                  .arg(lessonBadgeHtml(status),
                                                       tr("run #%1, %2, took %3")
                                                           .arg(last->id)
                                                           .arg(localDateText(last->startedAt),
                                                                durationText(last->wallS))
                                                           .toHtmlEscaped(),
                                                       lessonChecksHtml(last->lesson), hint));
    }
    QString body = QStringLiteral("<p>%1 %2</p>")
                       .arg(lessonBadgeHtml(QString()),
                            tr("Not run on this machine yet: Run measures it.").toHtmlEscaped());
    const QStringList checks = lessonExpectations(l.lesson);
    if (!checks.isEmpty()) {
        body += QStringLiteral("<p>%1</p><ul>").arg(tr("Its checks:").toHtmlEscaped());
        for (const auto& c : checks) body += QStringLiteral("<li>%1</li>").arg(c.toHtmlEscaped());
        body += QStringLiteral("</ul>");
    }
    if (l.needsCuda)
        body +=
            QStringLiteral("<p><i>%1</i></p>")
                .arg(
                    tr("Needs a CUDA device: without one its checks are not run.").toHtmlEscaped());
    return section(tr("On this machine"), body);
}

void LessonsBrowser::showDetails() {
    const int row = selectedLesson();
    if (row < 0) {
        heading_->setWrappedText(lessons_.isEmpty() ? tr("No lesson presets (lesson_*.json) in %1")
                                                          .arg(QDir::toNativeSeparators(dir_))
                                                          .toHtmlEscaped()
                                                    : tr("Select a lesson").toHtmlEscaped());
        for (QTextBrowser* v : {mechanism_, claim_, verdict_}) v->clear();
        return;
    }
    const LessonPreset& l = lessons_[row];
    heading_->setWrappedText(QStringLiteral("<b>%1</b> &middot; %2")
                                 .arg(l.title.toHtmlEscaped(), l.model.toHtmlEscaped()));
    if (!l.error.isEmpty()) {
        mechanism_->setHtml(section(tr("Cannot read this preset"), l.error.toHtmlEscaped()));
        claim_->clear();
        verdict_->clear();
        return;
    }
    mechanism_->setHtml(
        section(tr("How it works"), QStringLiteral("<p>%1</p>").arg(l.text.toHtmlEscaped())));
    QString claim = QStringLiteral("<p>%1</p>")
                        .arg((l.claim.isEmpty() ? tr("(this lesson states no claim)") : l.claim)
                                 .toHtmlEscaped());
    if (!l.expect.isEmpty())
        claim +=
            QStringLiteral("<p><i>%1</i></p>").arg(tr("Expect: %1").arg(l.expect).toHtmlEscaped());
    claim_->setHtml(section(tr("The claim"), claim));
    verdict_->setHtml(verdictHtml(row));
}

QString LessonsBrowser::detailsText() const {
    return QStringList{heading_->text(), mechanism_->toPlainText(), claim_->toPlainText(),
                       verdict_->toPlainText()}
        .join(QLatin1Char('\n'));
}

}  // namespace pitlane::widgets
