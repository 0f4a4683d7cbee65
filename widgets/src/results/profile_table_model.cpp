#include "pitlane/widgets/results/profile_table_model.h"

#include <QFont>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace pitlane::widgets {

using json = nlohmann::json;

namespace {

// Per operator name in one arm's profile: calls and "shapes ×calls" lines (names may repeat).
struct OpInfo {
    double calls = 0;
    QStringList shapes;
};

std::map<std::string, OpInfo> opsOf(const json& profile) {
    std::map<std::string, OpInfo> out;
    const json ops = profile.value("ops", json::array());
    if (!ops.is_array()) return out;
    for (const auto& o : ops) {
        if (!o.is_object()) continue;
        auto& info = out[o.value("name", std::string())];
        const auto calls = o.find("calls");
        if (calls != o.end() && calls->is_number()) info.calls += calls->get<double>();
        const auto shapes = o.find("input_shapes");
        if (shapes == o.end() || !shapes->is_array()) continue;
        for (const auto& s : *shapes) {
            if (!s.is_object()) continue;
            const auto text = s.find("shapes");
            const auto n = s.find("calls");
            if (text == s.end() || !text->is_string()) continue;
            QString line = QString::fromStdString(text->get<std::string>());
            if (n != s.end() && n->is_number_integer())
                line += QStringLiteral(" ×%1").arg(n->get<long long>());
            info.shapes << line;
        }
    }
    return out;
}

QString number(double v, bool calls) {
    if (calls) {
        if (v < 0) return QStringLiteral("—");
        return std::fabs(v - std::round(v)) < 1e-9 ? QString::number(std::llround(v))
                                                   : QString::number(v, 'f', 2);
    }
    return QString::number(v, 'f', v >= 100 ? 1 : 3);
}

}  // namespace

ProfileTableModel::ProfileTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProfileTableModel::setRun(const results::RunResult& run) {
    const auto rows = results::profileRows(run, std::numeric_limits<std::size_t>::max());
    std::vector<Arm> arms;
    std::vector<std::map<std::string, OpInfo>> infos;
    for (std::size_t i : rows.arms) {
        const auto& a = run.arms[i];
        arms.push_back({i, a.name, std::max(1, a.profile.value("iters", 1)),
                        a.profile.value("batch_size", 1)});
        infos.push_back(opsOf(a.profile));
    }
    std::vector<Op> ops;
    std::vector<double> totalCalls(arms.size(), 0);
    for (const auto& [name, self] : rows.ops) {
        Op op{name, self, std::vector<double>(arms.size(), -1), QString()};
        QStringList tip{QString::fromStdString(name)};
        for (std::size_t k = 0; k < arms.size(); ++k) {
            const auto it = infos[k].find(name);
            if (it == infos[k].end()) {
                tip << QStringLiteral("%1: not run").arg(QString::fromStdString(arms[k].name));
                continue;
            }
            op.calls[k] = it->second.calls / arms[k].iters;
            totalCalls[k] += op.calls[k];
            tip << QStringLiteral("%1: %2")
                       .arg(QString::fromStdString(arms[k].name),
                            it->second.shapes.isEmpty()
                                ? QStringLiteral("no input shapes recorded")
                                : it->second.shapes.join(QStringLiteral("; ")));
        }
        op.shapes = tip.join(QLatin1Char('\n'));
        ops.push_back(std::move(op));
    }
    beginResetModel();
    arms_ = std::move(arms);
    ops_ = std::move(ops);
    totalMs_ = rows.totals;
    totalCalls_ = std::move(totalCalls);
    endResetModel();
}

QString ProfileTableModel::operatorAt(int row) const {
    return row >= 0 && row < int(ops_.size()) ? QString::fromStdString(ops_[std::size_t(row)].name)
                                              : QString();
}

double ProfileTableModel::selfMs(int row, int k) const {
    if (k < 0 || k >= profiledArms() || row < 0 || row > int(ops_.size())) return 0;
    return isTotalRow(row) ? totalMs_[std::size_t(k)] : ops_[std::size_t(row)].selfMs[std::size_t(k)];
}

double ProfileTableModel::callsPerIter(int row, int k) const {
    if (k < 0 || k >= profiledArms() || row < 0 || row > int(ops_.size())) return -1;
    return isTotalRow(row) ? totalCalls_[std::size_t(k)] : ops_[std::size_t(row)].calls[std::size_t(k)];
}

int ProfileTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || arms_.empty() ? 0 : int(ops_.size()) + 1;
}

int ProfileTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() || arms_.empty() ? 0 : 1 + 2 * profiledArms();
}

QVariant ProfileTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const int row = index.row(), col = index.column();
    const int k = armOfColumn(col);
    const bool calls = col > 0 && col == callsColumn(k);
    switch (role) {
    case Qt::DisplayRole:
        if (col == Operator)
            return isTotalRow(row) ? tr("total (every operator's self time)") : operatorAt(row);
        return calls ? number(callsPerIter(row, k), true) : number(selfMs(row, k), false);
    case ValueRole:
        if (col == Operator) return operatorAt(row);
        return calls ? callsPerIter(row, k) : selfMs(row, k);
    case Qt::ToolTipRole:
        if (isTotalRow(row))
            return tr("Self time of every operator per profiled iteration, and every call");
        return ops_[std::size_t(row)].shapes;
    case Qt::TextAlignmentRole:
        return col == Operator ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
                               : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::FontRole:
        if (isTotalRow(row)) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    default:
        return {};
    }
}

QVariant ProfileTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
    const int k = armOfColumn(section);
    if (role == Qt::DisplayRole) {
        if (section == Operator) return tr("Operator");
        return section == selfColumn(k) ? tr("%1 ms/iter").arg(armName(k))
                                        : tr("%1 calls/iter").arg(armName(k));
    }
    if (role == Qt::ToolTipRole && k >= 0) {
        const auto& a = arms_[std::size_t(k)];
        return section == selfColumn(k)
                   ? tr("%1: self time per profiled iteration (ms), %2 iterations at batch size %3")
                         .arg(armName(k))
                         .arg(a.iters)
                         .arg(a.batchSize)
                   : tr("%1: calls per profiled iteration").arg(armName(k));
    }
    return {};
}

}  // namespace pitlane::widgets
