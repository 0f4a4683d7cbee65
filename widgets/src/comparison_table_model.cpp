#include "pitlane/widgets/comparison_table_model.h"

#include "pitlane/widgets/arm_palette.h"

#include <QFont>

namespace pitlane::widgets {

namespace {
QString q(const std::string& s) {
    return QString::fromStdString(s);
}
const QString kNone = QStringLiteral("—");
}  // namespace

ComparisonTableModel::ComparisonTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ComparisonTableModel::setRows(std::vector<ComparisonRow> rows) {
    if (rows.size() != rows_.size()) {
        beginResetModel();
        rows_ = std::move(rows);
        endResetModel();
        return;
    }
    rows_ = std::move(rows);
    if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

int ComparisonTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

int ComparisonTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString ComparisonTableModel::text(const ComparisonRow& r, int column) const {
    const bool have = r.n > 0;
    const auto& c = r.comparison;
    switch (column) {
        case Arm:
            return q(r.arm);
        case Status:
            return q(r.status);
        case Samples:
            return QString::number(qulonglong(r.n));
        case Median:
            return have ? q(results::formatDuration(r.median_ns)) : kNone;
        case P90:
            return have ? q(results::formatDuration(r.p90_ns)) : kNone;
        case P99:
            return have ? q(results::formatDuration(r.p99_ns)) : kNone;
        case Throughput:
            return have ? QString::number(r.throughput_per_s, 'f', r.throughput_per_s < 100 ? 1 : 0)
                        : kNone;
        case PeakRss:
            return r.peak_rss_bytes > 0 ? q(results::formatBytes(double(r.peak_rss_bytes))) : kNone;
        case Ratio:
            if (r.baseline) return tr("baseline");
            return c ? QStringLiteral("%1×").arg(c->ratio, 0, 'f', 3) : kNone;
        case Ci:
            return c ? QStringLiteral("%1 – %2")
                           .arg(c->ci_low, 0, 'f', 3)
                           .arg(c->ci_high, 0, 'f', 3)
                     : kNone;
        case PValue:
            if (!c) return kNone;
            return c->p_value < 1e-4 ? QStringLiteral("< 0.0001")
                                     : QString::number(c->p_value, 'g', 3);
        case Verdict:
            if (r.baseline) return r.n > 0 ? tr("the other arms are compared to this one") : kNone;
            return c ? q(c->verdict) : (r.n > 0 ? tr("baseline has no samples") : tr("no samples"));
    }
    return {};
}

QVariant ComparisonTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const auto& r = rows_[std::size_t(index.row())];
    switch (role) {
        case Qt::DisplayRole:
            return text(r, index.column());
        case Qt::DecorationRole:
            return index.column() == Arm ? QVariant(armSwatch(index.row())) : QVariant();
        case Qt::TextAlignmentRole:
            if (index.column() >= Samples && index.column() <= PValue)
                return QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
            return QVariant(int(Qt::AlignLeft | Qt::AlignVCenter));
        case Qt::ToolTipRole:
            if (index.column() == Status && !r.error.empty()) return q(r.error);
            if (r.comparison && index.column() >= Ratio)
                return tr("ratio = median(baseline) / median(%1): > 1 means %1 is faster.\n%2")
                    .arg(q(r.arm), q(r.comparison->method));
            return {};
        case Qt::FontRole:
            if (index.column() == Verdict && r.comparison && r.comparison->significant) {
                QFont f;
                f.setBold(true);
                return f;
            }
            return {};
        default:
            return {};
    }
}

QVariant ComparisonTableModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) {
        static const char* names[] = {"Arm",     "Status",          "n",        "Median", "p90",
                                      "p99",     "Throughput (/s)", "Peak RSS", "Ratio",  "95% CI",
                                      "p-value", "Verdict"};
        return tr(names[section]);
    }
    if (role == Qt::ToolTipRole && section >= Median && section <= P99)
        return tr(
            "latency per iteration; percentiles by linear interpolation (Hyndman-Fan type 7)");
    return {};
}

}  // namespace pitlane::widgets
