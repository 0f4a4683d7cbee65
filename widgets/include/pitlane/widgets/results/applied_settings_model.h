#pragma once
// What each worker reported after applying its knobs (the "applied" event, read back from torch
// and the OS): rows are settings, columns are arms, and rows where the arms differ are
// highlighted, since those differences are what the comparison measures.
#include <nlohmann/json.hpp>

#include <QAbstractTableModel>

#include <string>
#include <vector>

namespace pitlane::widgets {

class AppliedSettingsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit AppliedSettingsModel(QObject* parent = nullptr);

    // One entry per arm: its name and its applied event (without v/type; null when not yet known).
    void setArms(const std::vector<std::pair<std::string, nlohmann::json>>& arms);
    bool rowDiffers(int row) const;
    QString settingName(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    struct Row {
        std::string key;
        std::vector<nlohmann::json> values;  // per arm; null = not reported
        bool differs = false;
    };
    std::vector<std::string> arms_;
    std::vector<Row> rows_;
};

}  // namespace pitlane::widgets
