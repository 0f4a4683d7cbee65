#pragma once
// "Where the time goes" in the window (issue 14): the operator profiles of the arms of a run
// (ArmResult::profile, taken with run.profile_iters) side by side. Rows are operators in the
// order of results::profileRows (with one profiled arm, the most self time first; with several,
// the largest difference from the first profiled arm first), then a total row; for each profiled
// arm, two columns: self time per profiled iteration (ms) and calls per iteration. Every cell's
// tooltip gives the operator's most frequent input shapes in each arm.
#include "pitlane/results/run_result.h"

#include <QAbstractTableModel>

#include <string>
#include <vector>

namespace pitlane::widgets {

class ProfileTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int Operator = 0;
    // Raw numbers for tests and sorting: self ms or calls per iteration.
    static constexpr int ValueRole = Qt::UserRole + 1;

    explicit ProfileTableModel(QObject* parent = nullptr);

    // Reads the arms' profiles of `run` (nothing else of it is kept).
    void setRun(const results::RunResult& run);
    bool empty() const { return arms_.empty(); }

    // The profiled arms, in run order: their index in the run and their name.
    int profiledArms() const { return int(arms_.size()); }
    std::size_t armIndex(int k) const { return arms_[std::size_t(k)].index; }
    QString armName(int k) const { return QString::fromStdString(arms_[std::size_t(k)].name); }
    // Which profiled arm a column shows (-1: the operator column).
    int armOfColumn(int column) const { return column <= 0 ? -1 : (column - 1) / 2; }
    static int selfColumn(int k) { return 1 + 2 * k; }
    static int callsColumn(int k) { return 2 + 2 * k; }

    QString operatorAt(int row) const;  // "" for the total row
    bool isTotalRow(int row) const { return row == int(ops_.size()); }
    double selfMs(int row, int k) const;
    double callsPerIter(int row, int k) const;  // -1 when the arm did not run the operator

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    struct Arm {
        std::size_t index = 0;
        std::string name;
        int iters = 1, batchSize = 1;
    };
    struct Op {
        std::string name;
        std::vector<double> selfMs, calls;  // per profiled arm; calls -1: not run there
        QString shapes;                     // the tooltip
    };
    std::vector<Arm> arms_;
    std::vector<Op> ops_;
    std::vector<double> totalMs_, totalCalls_;
};

}  // namespace pitlane::widgets
