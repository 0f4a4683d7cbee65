#pragma once
// The verdict table: one row per arm with its latency summary (median, p90, p99, p99.9), its
// throughput (the whole arm's items/s, as pitlane-cli and the reports), peak memory, page
// faults per iteration, its worker processes (how many, how far apart their medians are; the
// variance shares in the tooltip) and, for every arm after the first, the ratio to the baseline
// with its 95 % CI, p-value and the verdict in words (whole in its tooltip).
#include "pitlane/widgets/results/comparison_rows.h"

#include <QAbstractTableModel>

namespace pitlane::widgets {

class ComparisonTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Arm,
        Status,
        Samples,
        Median,
        P90,
        P99,
        P999,
        Throughput,
        PeakRss,
        FaultsPerIter,
        Processes,
        Ratio,
        Ci,
        PValue,
        Verdict,
        ColumnCount
    };
    explicit ComparisonTableModel(QObject* parent = nullptr);

    void setRows(std::vector<ComparisonRow> rows);
    const std::vector<ComparisonRow>& rows() const { return rows_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    // The rows are a serving run's: the header says p50 / Requests / Rate kept.
    bool servingRows() const;

private:
    QString text(const ComparisonRow& r, int column) const;
    QString servingText(const ComparisonRow& r, int column) const;
    QString toolTip(const ComparisonRow& r, int column) const;
    std::vector<ComparisonRow> rows_;
};

}  // namespace pitlane::widgets
