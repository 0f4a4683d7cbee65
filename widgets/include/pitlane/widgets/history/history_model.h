#pragma once
// The run history as a table: one row per stored run, newest first (RunStore::listRuns), with
// the columns a user scans to find a run again: baseline mark, run id ("#12", as comparisons
// and reports name it), date, model, preset, the user's
// label, arms (failed ones named with their status), the lesson's status for a run of a lesson
// preset (a badge: symbol, word and colour, lesson_status.h; its checks in the tooltip) and the
// verdict. Reading the list touches no samples, so refreshing after every run is cheap.
#include "pitlane/store/run_store.h"

#include <QAbstractTableModel>

namespace pitlane::widgets {

class HistoryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // The verdict, the longest text, comes last and takes the remaining width.
    enum Column { Baseline, Id, Date, Model, Preset, Label, Arms, Lesson, Verdict, ColumnCount };
    // Qt::UserRole on any column: the run's id (qint64).
    static constexpr int RunIdRole = Qt::UserRole;

    explicit HistoryModel(QObject* parent = nullptr);

    // The history to show (nullptr: none, e.g. --db none). Not owned; must outlive the model or
    // be replaced first.
    void setStore(const store::RunStore* store);
    // Re-reads the list.
    void refresh();
    // The run this window is recording now (0: none): shown as "recording…", not as a run whose
    // recording was interrupted.
    void setRecordingRun(qint64 runId);

    qint64 runId(int row) const;
    int rowOf(qint64 runId) const;  // -1 when absent
    const store::RunInfo* info(int row) const;
    const QList<store::RunInfo>& runs() const { return runs_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QString text(const store::RunInfo& run, int column) const;
    QString toolTip(const store::RunInfo& run) const;

    const store::RunStore* store_ = nullptr;
    QList<store::RunInfo> runs_;
    qint64 recording_ = 0;
};

// "2024-05-01 14:03:07" in local time from the store's ISO 8601 UTC ("" stays "").
QString localDateText(const QString& isoUtc);
// "A, B (killed)": arm names, each failed one with its status.
QString armsText(const store::RunInfo& run);

}  // namespace pitlane::widgets
