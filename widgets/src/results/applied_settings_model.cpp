#include "pitlane/widgets/results/applied_settings_model.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <QColor>
#include <QFont>

#include <algorithm>
#include <map>

namespace pitlane::widgets {

using json = nlohmann::json;

namespace {
// The knobs first, in the order of CONTRACT.md; everything else alphabetically after them.
const std::vector<std::string> kLeading = {"device",
                                           "mode",
                                           "grad",
                                           "jit",
                                           "precision",
                                           "batch_size",
                                           "intra_op_threads",
                                           "inter_op_threads",
                                           "affinity",
                                           "affinity_policy",
                                           "memory_format",
                                           "blas"};

int rank(const std::string& key) {
    const auto it = std::find(kLeading.begin(), kLeading.end(), key);
    return it == kLeading.end() ? int(kLeading.size()) : int(it - kLeading.begin());
}

QString cellText(const json& v, bool full) {
    if (v.is_null()) return QStringLiteral("—");
    QString s = v.is_string() ? QString::fromStdString(v.get<std::string>())
                              : QString::fromStdString(v.dump());
    if (!full) {
        const int nl = s.indexOf(QLatin1Char('\n'));
        if (nl >= 0) s = s.left(nl) + QStringLiteral(" …");
        if (s.size() > 80) s = s.left(77) + QStringLiteral("…");
    }
    return s;
}
}  // namespace

AppliedSettingsModel::AppliedSettingsModel(QObject* parent) : QAbstractTableModel(parent) {}

void AppliedSettingsModel::setArms(const std::vector<std::pair<std::string, json>>& arms) {
    // Flatten one level ("cudnn.enabled") so nested states compare cell by cell.
    std::map<std::string, std::vector<json>> byKey;
    for (std::size_t a = 0; a < arms.size(); ++a) {
        const auto& applied = arms[a].second;
        if (!applied.is_object()) continue;
        auto put = [&](const std::string& key, const json& v) {
            auto& values = byKey[key];
            values.resize(arms.size());
            values[a] = v;
        };
        for (const auto& [key, v] : applied.items()) {
            if (v.is_object() && !v.empty())
                for (const auto& [sub, sv] : v.items()) put(key + "." + sub, sv);
            else
                put(key, v);
        }
    }
    std::vector<Row> rows;
    for (auto& [key, values] : byKey) {
        values.resize(arms.size());
        Row r{key, values, false};
        for (std::size_t a = 1; a < values.size(); ++a) r.differs |= values[a] != values[0];
        rows.push_back(std::move(r));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& x, const Row& y) { return rank(x.key) < rank(y.key); });
    // The same table again (every process of a run reports the same read-backs, and the run's
    // end shows them once more): no reset, which would relay the view out (1.3 ms at a run's end).
    const bool sameRows = std::equal(rows.begin(), rows.end(), rows_.begin(), rows_.end(), [](const Row& x, const Row& y) {
        return x.key == y.key && x.values == y.values;
    });
    const bool sameArms = std::equal(arms.begin(), arms.end(), arms_.begin(), arms_.end(),
                                     [](const auto& a, const std::string& name) { return a.first == name; });
    if (sameRows && sameArms) return;
    beginResetModel();
    arms_.clear();
    for (const auto& a : arms) arms_.push_back(a.first);
    rows_ = std::move(rows);
    endResetModel();
}

bool AppliedSettingsModel::rowDiffers(int row) const {
    return row >= 0 && row < int(rows_.size()) && rows_[std::size_t(row)].differs;
}

QString AppliedSettingsModel::settingName(int row) const {
    return row >= 0 && row < int(rows_.size()) ? QString::fromStdString(rows_[std::size_t(row)].key)
                                               : QString();
}

int AppliedSettingsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

int AppliedSettingsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(arms_.size()) + 1;
}

QVariant AppliedSettingsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
    const auto& r = rows_[std::size_t(index.row())];
    const int arm = index.column() - 1;
    switch (role) {
        case Qt::DisplayRole:
            return arm < 0 ? QString::fromStdString(r.key)
                           : cellText(r.values[std::size_t(arm)], false);
        case Qt::ToolTipRole:
            if (arm < 0) return r.differs ? tr("differs between arms") : QVariant();
            return cellText(r.values[std::size_t(arm)], true);
        case Qt::BackgroundRole:
            // Translucent amber reads on light and dark palettes alike.
            return r.differs ? QVariant(QColor(255, 190, 0, 70)) : QVariant();
        case Qt::FontRole:
            if (r.differs) {
                QFont f;
                f.setBold(true);
                return f;
            }
            return {};
        default:
            return {};
    }
}

QVariant AppliedSettingsModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
    if (role == Qt::DisplayRole)
        return section == 0 ? tr("Applied setting")
                            : QString::fromStdString(arms_[std::size_t(section - 1)]);
    if (role == Qt::DecorationRole && section > 0) return armSwatch(section - 1);
    return {};
}

}  // namespace pitlane::widgets
