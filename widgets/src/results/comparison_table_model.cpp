#include "pitlane/widgets/results/comparison_table_model.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <QFont>
#include <QStringList>

namespace pitlane::widgets {

namespace {
QString q(const std::string& s) {
    return QString::fromStdString(s);
}
const QString kNone = QStringLiteral("—");

// Long tooltips as rich text, so Qt wraps them instead of showing one screen-wide line.
QString richTip(const QStringList& paragraphs) {
    QStringList html;
    for (const auto& p : paragraphs) html << p.toHtmlEscaped();
    return QStringLiteral("<p>%1</p>").arg(html.join(QStringLiteral("</p><p>")));
}

QString percent(double share) {
    return QStringLiteral("%1 %").arg(100 * share, 0, 'f', 0);
}
}  // namespace

ComparisonTableModel::ComparisonTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ComparisonTableModel::setRows(std::vector<ComparisonRow> rows) {
    const bool wasServing = servingRows();
    if (rows.size() != rows_.size() || (!rows.empty() && rows.front().serving != wasServing)) {
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

// A serving run has no per-iteration samples: n is the requests served; the latency columns are
// the end-to-end percentiles at the arm's headline level (servingHeadline: the highest rate within
// the SLO, else the highest it kept up with), the throughput column that level (the rate kept),
// the ratio and CI the arm's p99 against the baseline's there; the verdict column the arm's
// comparisons per level.
QString ComparisonTableModel::servingText(const ComparisonRow& r, int column) const {
    const ServingHeadline& h = r.serving_headline;
    auto ms = [&](double v) { return h.known ? q(results::formatDuration(v * 1e6)) : kNone; };
    switch (column) {
        case Arm:
            return q(r.arm);
        case Status:
            return q(r.status);
        case Samples:
            return QString::number(qlonglong(r.served_requests));
        case Median:
            return ms(h.p50_ms);
        case P90:
            return ms(h.p90_ms);
        case P99:
            return ms(h.p99_ms);
        case P999:
            return ms(h.p999_ms);
        case Throughput:
            if (!h.known) return kNone;
            return h.saturated ? tr("none (saturated at %1)").arg(q(h.level)) : q(h.level);
        case PeakRss:
            return r.peak_rss_bytes > 0 ? q(results::formatBytes(double(r.peak_rss_bytes))) : kNone;
        case Processes:
            return r.processes.empty() ? kNone : QString::number(r.processes.size());
        case Ratio:
            if (r.baseline) return tr("baseline");
            return h.compared ? tr("p99 %1×").arg(h.p99_ratio, 0, 'f', 3) : kNone;
        case Ci:
            return h.compared ? QStringLiteral("%1 – %2").arg(h.p99_lo, 0, 'f', 3).arg(h.p99_hi, 0, 'f', 3) : kNone;
        case Verdict: {
            if (r.serving_levels == 0) return tr("no serving level complete");
            if (r.baseline) return tr("the other arms are compared to this one at each level");
            if (r.serving_comparisons.empty()) return tr("no level compared yet");
            QStringList parts;
            for (const auto& c : r.serving_comparisons) parts << q(c);
            return parts.join(QStringLiteral("; "));
        }
        default:
            return kNone;
    }
}

bool ComparisonTableModel::servingRows() const {
    return !rows_.empty() && rows_.front().serving;
}

QString ComparisonTableModel::text(const ComparisonRow& r, int column) const {
    if (r.serving) return servingText(r, column);
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
        case P999:
            return have ? q(results::formatDuration(r.p999_ns)) : kNone;
        case Throughput:
            return have ? QString::number(r.throughput_per_s, 'f', r.throughput_per_s < 100 ? 1 : 0)
                        : kNone;
        case PeakRss:
            return r.peak_rss_bytes > 0 ? q(results::formatBytes(double(r.peak_rss_bytes))) : kNone;
        case FaultsPerIter:
            return r.minor_faults_per_iter >= 0 ? q(formatPerIter(r.minor_faults_per_iter)) : kNone;
        case Processes:
            if (r.processes.empty()) return kNone;
            if (r.process_spread > 0)
                return QStringLiteral("%1 · %2× apart")
                    .arg(r.processes.size())
                    .arg(r.process_spread, 0, 'f', 2);
            return QString::number(r.processes.size());
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
            return QString::fromStdString(stats::pValueText(c->p_value));
        case Verdict:
            if (r.baseline) return r.n > 0 ? tr("the other arms are compared to this one") : kNone;
            if (c && !r.caveats.empty())  // the caveats are in its tooltip and the verdict line
                return q(c->verdict) + tr(" (⚠ %n caveat(s))", nullptr, int(r.caveats.size()));
            if (c) return q(c->verdict);
            if (!r.not_compared.empty()) return q(r.not_compared);
            return r.n > 0 ? tr("baseline has no samples") : tr("no samples");
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
        case Qt::ToolTipRole: {
            const QString tip = toolTip(r, index.column());
            return tip.isEmpty() ? QVariant() : QVariant(tip);
        }
        case Qt::FontRole: {
            // What needs a look: a significant verdict, processes that disagree, page faults
            // every iteration (the thresholds of the warnings in the Log).
            const bool bold =
                (index.column() == Verdict && r.comparison && r.comparison->significant) ||
                (index.column() == Processes && r.process_spread > results::kProcessSpreadWarn) ||
                (index.column() == FaultsPerIter &&
                 r.minor_faults_per_iter >= results::kFaultsPerIterWarn);
            if (!bold) return {};
            QFont f;
            f.setBold(true);
            return f;
        }
        default:
            return {};
    }
}

QString ComparisonTableModel::toolTip(const ComparisonRow& r, int column) const {
    if (column == Status && !r.error.empty()) return q(r.error);
    if (column == Arm && !r.compile.empty()) return q(r.arm + ": " + r.compile);
    if (r.serving) {
        const ServingHeadline& h = r.serving_headline;
        if (h.known && column >= Median && column <= Throughput)
            return richTip({tr("%1 at %2: %3.").arg(q(r.arm), q(h.level), q(h.why)),
                            tr("End-to-end latency (queue, batch formation, inference) of every request served "
                               "there, every process pooled; %1 requests/s served.")
                                .arg(h.achieved_per_s, 0, 'f', 1)});
        if (column == Ratio || column == Ci) {
            if (r.baseline || !h.known) return {};
            if (!h.compared) return tr("%1 and the baseline were not both measured at %2").arg(q(r.arm), q(h.level));
            return richTip({tr("%1's p99 / the baseline's p99 at %2 (%3): < 1 means %1 answers faster.")
                                .arg(q(r.arm), q(h.level), q(h.why)),
                            tr("95 % CI from a bootstrap over processes and blocks of consecutive requests.")});
        }
        if (column == Samples)
            return tr("requests %1 served in %2 complete serving levels (every process)")
                .arg(q(r.arm))
                .arg(r.serving_levels);
        if (column == Verdict && !r.serving_comparisons.empty()) {
            QStringList paragraphs;
            for (const auto& c : r.serving_comparisons) paragraphs << q(c);
            paragraphs << tr("p99 ratio with a 95 % CI from a bootstrap over processes and "
                             "blocks of consecutive requests");
            return richTip(paragraphs);
        }
        return {};
    }
    if (column == FaultsPerIter) {
        if (r.minor_faults_per_iter < 0)
            return tr("page faults not reported for %1 (none of its processes finished a "
                      "measured block yet)")
                .arg(q(r.arm));
        return richTip(
            {tr("%1: %2 minor page faults per measured iteration over all its processes "
                "(major: %3).")
                 .arg(q(r.arm), q(formatPerIter(r.minor_faults_per_iter)),
                      q(formatPerIter(r.major_faults_per_iter))),
             tr("From %1 per iteration on, the allocator hands memory back to the OS and "
                "faults it in again every iteration: kernel time inside the measurement (see "
                "the warnings in the Log).")
                 .arg(results::kFaultsPerIterWarn, 0, 'f', 0)});
    }
    if (column == Processes) {
        if (r.processes.empty()) return tr("no worker processes recorded for %1").arg(q(r.arm));
        QStringList paragraphs;
        paragraphs << tr("%1 ran in %2 fresh worker processes (rounds A1 B1, B2 A2, …); the CI "
                         "counts processes as its units.")
                          .arg(q(r.arm))
                          .arg(r.processes.size());
        QStringList medians;
        for (const auto& p : r.processes)
            medians << (p.n > 0 ? tr("%1 (pid %2, n %3)")
                                      .arg(q(results::formatDuration(p.median_ns)))
                                      .arg(p.info.pid)
                                      .arg(qulonglong(p.n))
                                : tr("no samples yet (pid %1)").arg(p.info.pid));
        paragraphs << tr("Process medians: %1.").arg(medians.join(QStringLiteral(", ")));
        if (r.process_spread > 0)
            paragraphs << tr("Slowest / fastest: %1×%2.")
                              .arg(r.process_spread, 0, 'f', 2)
                              .arg(r.process_spread > results::kProcessSpreadWarn
                                       ? tr(" (more than %1×: the processes disagree, see the "
                                            "warnings in the Log)")
                                             .arg(results::kProcessSpreadWarn, 0, 'f', 2)
                                       : QString());
        if (r.variance.computed)
            paragraphs << tr("Variance of log latency: %1 between processes, %2 between blocks, "
                             "%3 within blocks (%4).")
                              .arg(percent(r.variance.between_processes),
                                   percent(r.variance.between_blocks),
                                   percent(r.variance.within_blocks),
                                   q(stats::VarianceShares::kEstimator));
        else
            paragraphs << tr("Variance shares not computed (fewer than 2 samples or no spread).");
        return richTip(paragraphs);
    }
    if (r.comparison && column >= Ratio) {
        QStringList paragraphs;
        if (column == Verdict) {
            paragraphs << q(r.comparison->verdict);
            for (const auto& caveat : r.caveats) paragraphs << q(caveat);
        }
        paragraphs
            << tr("ratio = median(baseline) / median(%1): > 1 means %1 is faster.").arg(q(r.arm))
            << q(r.comparison->method);
        return richTip(paragraphs);
    }
    return {};
}

QVariant ComparisonTableModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) {
        static const char* names[] = {
            "Arm",          "Status",   "n",           "Median",    "p90",   "p99",
            "p99.9",        "Throughput (items/s)", "Peak RSS",  "Faults/iter", "Processes",
            "Ratio",        "95% CI",   "p-value",     "Verdict"};
        static_assert(sizeof(names) / sizeof(names[0]) == ColumnCount);
        if (servingRows()) {
            if (section == Samples) return tr("Requests");
            if (section == Median) return tr("p50");
            if (section == Throughput) return tr("Rate kept");
        }
        return tr(names[section]);
    }
    if (role != Qt::ToolTipRole) return {};
    if (servingRows() && section >= Median && section <= Throughput)
        return tr("a serving run: end-to-end latency percentiles at each arm's highest rate within the "
                  "SLO (without an SLO: the highest level it kept up with), and that rate; every "
                  "level is in the Levels tab");
    if (section >= Median && section <= P999)
        return tr(
            "latency per iteration; percentiles by linear interpolation (Hyndman-Fan type 7)");
    if (section == Throughput)
        return tr("items per second of the whole arm: items measured (iterations x batch size) "
                  "/ the sum of their latencies, summed over its concurrent workers; the same "
                  "figure as pitlane-cli and the reports");
    if (section == FaultsPerIter)
        return tr("minor page faults per measured iteration, over every worker process of the arm");
    if (section == Processes)
        return tr(
            "worker processes of the arm (run.processes × workers) and how far apart their "
            "medians are (slowest / fastest); the variance shares are in each cell's "
            "tooltip");
    return {};
}

}  // namespace pitlane::widgets
