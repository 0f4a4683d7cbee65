#include "pitlane/widgets/history/history_model.h"

#include "pitlane/widgets/lessons/lesson_status.h"

#include "pitlane/store/model_names.h"

#include <QDateTime>
#include <QFont>

namespace pitlane::widgets {

QString localDateText(const QString& isoUtc) {
    if (isoUtc.isEmpty()) return {};
    QDateTime t = QDateTime::fromString(isoUtc, Qt::ISODateWithMs);
    if (!t.isValid()) t = QDateTime::fromString(isoUtc, Qt::ISODate);
    if (!t.isValid()) return isoUtc;  // shown as stored rather than hidden
    return t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString armsText(const store::RunInfo& run) {
    QStringList parts;
    for (int i = 0; i < run.arms.size(); ++i) {
        const QString status = i < run.armStatuses.size() ? run.armStatuses[i] : QString();
        parts << (status.isEmpty() || status == QLatin1String(results::kOk)
                      ? run.arms[i]
                      : QStringLiteral("%1 (%2)").arg(run.arms[i], status));
    }
    return parts.join(QStringLiteral(", "));
}

HistoryModel::HistoryModel(QObject* parent) : QAbstractTableModel(parent) {}

void HistoryModel::setStore(const store::RunStore* store) {
    store_ = store;
    beginResetModel();
    runs_.clear();
    endResetModel();
    refresh();
}

void HistoryModel::refresh() {
    // listRuns() reports a failure only through the store's sticky lastError(): an unreadable
    // file shows an empty list, and the panel says why next to it.
    auto runs = store_ && store_->isOpen() ? store_->listRuns() : QList<store::RunInfo>();
    beginResetModel();
    runs_ = std::move(runs);
    endResetModel();
}

void HistoryModel::setRecordingRun(qint64 runId) {
    if (recording_ == runId) return;
    const int before = rowOf(recording_), after = rowOf(runId);
    recording_ = runId;
    for (int row : {before, after})
        if (row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

qint64 HistoryModel::runId(int row) const {
    return row >= 0 && row < runs_.size() ? runs_[row].id : 0;
}

int HistoryModel::rowOf(qint64 runId) const {
    for (int r = 0; r < runs_.size(); ++r)
        if (runs_[r].id == runId) return r;
    return -1;
}

const store::RunInfo* HistoryModel::info(int row) const {
    return row >= 0 && row < runs_.size() ? &runs_[row] : nullptr;
}

int HistoryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(runs_.size());
}

int HistoryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString HistoryModel::text(const store::RunInfo& run, int column) const {
    switch (column) {
        case Baseline:
            return run.baseline ? QStringLiteral("★") : QString();
        case Id:
            return QStringLiteral("#%1").arg(run.id);
        case Date:
            return localDateText(run.startedAt);
        case Model:  // by file name, as `pitlane-cli history` lists them (paths: the tooltip)
            return store::listedModels(run);
        case Preset:
            return run.name;
        case Arms:
            return armsText(run);
        case Verdict:
            // A run whose recorder died has no verdict: say so rather than leave a blank.
            if (run.complete()) return run.verdict;
            return run.id == recording_ ? tr("(recording… the verdict comes when it ends)")
                                        : tr("(interrupted, not finished)");
        case Label:
            return run.label;
        case Lesson:
            return run.lessonStatus().isEmpty() ? QString()
                                                : lessonBadge(run.lessonStatus()).text();
        default:
            return {};
    }
}

QString HistoryModel::toolTip(const store::RunInfo& run) const {
    QStringList lines;
    lines << tr("Run #%1, recorded by %2").arg(run.id).arg(run.source);
    lines << tr("Started %1").arg(localDateText(run.startedAt));
    if (run.complete())
        lines << tr("Finished %1 (%2 s)")
                     .arg(localDateText(run.finishedAt))
                     .arg(run.wallS, 0, 'f', 1);
    else if (run.id == recording_)
        lines << tr("Being recorded by this window now");
    else
        lines << tr("Not finished: still running in another process, or the recording process "
                    "died (every sample committed until then is kept)");
    lines << tr("Model: %1 (as the preset named it)").arg(run.model);
    if (run.baseline) lines << tr("Baseline of %1").arg(run.model);
    if (!run.verdict.isEmpty()) lines << run.verdict;
    if (!run.lessonStatus().isEmpty())
        lines << tr("Lesson %1: %2")
                     .arg(QString::fromStdString(run.lesson.value("title", std::string())),
                          lessonBadge(run.lessonStatus()).text())
              << lessonChecksPlain(run.lesson);
    return lines.join(QLatin1Char('\n'));
}

QVariant HistoryModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& run = runs_[index.row()];
    switch (role) {
        case Qt::DisplayRole:
            return text(run, index.column());
        case Qt::ToolTipRole:
            return toolTip(run);
        case RunIdRole:
            return run.id;
        case Qt::BackgroundRole:
        case Qt::ForegroundRole:
            // The lesson's badge brings its own colours (readable on either palette).
            if (index.column() != Lesson || run.lessonStatus().isEmpty()) return {};
            return role == Qt::BackgroundRole ? lessonBadge(run.lessonStatus()).background
                                              : lessonBadge(run.lessonStatus()).foreground;
        case Qt::TextAlignmentRole:
            if (index.column() == Baseline) return QVariant(Qt::AlignCenter);
            if (index.column() == Id) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
            return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
        case Qt::FontRole:
            if (run.baseline || !run.complete()) {
                QFont f;
                f.setBold(run.baseline);
                f.setItalic(!run.complete());
                return f;
            }
            return {};
        default:
            return {};
    }
}

QVariant HistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) {
        static const char* names[] = {"",
                                      QT_TR_NOOP("Run"),
                                      QT_TR_NOOP("Date"),
                                      QT_TR_NOOP("Model"),
                                      QT_TR_NOOP("Preset"),
                                      QT_TR_NOOP("Label"),
                                      QT_TR_NOOP("Arms"),
                                      QT_TR_NOOP("Lesson"),
                                      QT_TR_NOOP("Verdict")};
        return section == Baseline ? QStringLiteral("★") : tr(names[section]);
    }
    if (role == Qt::ToolTipRole && section == Baseline)
        return tr("★ marks the baseline run of its model (at most one per model)");
    if (role == Qt::ToolTipRole && section == Lesson)
        return tr(
            "For a run of a lesson preset: whether its checks reproduced the lesson's claim "
            "on this run (reproduced, not reproduced, inconclusive, not run)");
    return {};
}

}  // namespace pitlane::widgets
