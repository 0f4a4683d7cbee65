#pragma once
// Computes the comparison rows (bootstrap CI, Mann-Whitney) off the UI thread: a bootstrap over a
// million samples takes seconds. One computation at a time; while one runs, only the latest
// request is kept ("latest request wins"), and results arrive on the UI thread as a signal.
#include "pitlane/widgets/comparison_rows.h"

#include <QObject>

#include <optional>
#include <thread>

namespace pitlane::widgets {

class VerdictCalculator : public QObject {
    Q_OBJECT
public:
    explicit VerdictCalculator(QObject* parent = nullptr);
    ~VerdictCalculator() override;

    // `final`: the run is over; the answer to this request is the one to keep.
    void request(const results::RunResult& run, bool final);
    bool busy() const { return busy_; }
    // A new run: answers to earlier requests are dropped when they arrive.
    void reset();

signals:
    void ready(const std::vector<pitlane::widgets::ComparisonRow>& rows, bool final);

private:
    void launch(results::RunResult snapshot, bool final);
    void onDone(std::vector<ComparisonRow> rows, bool final, int generation);

    std::thread thread_;
    bool busy_ = false;
    int generation_ = 0;
    std::optional<std::pair<results::RunResult, bool>> pending_;
};

}  // namespace pitlane::widgets
