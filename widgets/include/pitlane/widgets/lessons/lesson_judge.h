#pragma once
// Judges a run's lesson (results::checkLesson: a bootstrap per speed check, seconds on a large
// run) off the UI thread, once, when the run is over; the answer arrives on the UI thread as a
// signal. One judgement at a time: a request made while one is under way waits for it (latest
// wins); a new request or reset() drops the answers to earlier ones.
#include "pitlane/results/run_result.h"

#include <QObject>

#include <nlohmann/json.hpp>

#include <optional>

class QThreadPool;

namespace pitlane::widgets {

class LessonJudge : public QObject {
    Q_OBJECT
public:
    explicit LessonJudge(QObject* parent = nullptr);
    ~LessonJudge() override;

    // Starts judging a copy of `run`. False (and no signal) when its preset's lesson has no
    // checks: there is nothing to judge.
    bool judge(const results::RunResult& run);
    bool busy() const { return busy_; }
    void reset();

signals:
    // results::toJson(LessonReport).
    void judged(const nlohmann::json& judgement);

private:
    void launch(results::RunResult run);
    void onDone(nlohmann::json judgement, int generation);

    QThreadPool* pool_ = nullptr;  // one judgement at a time; nothing waits for its thread
    bool busy_ = false;
    int generation_ = 0;
    std::optional<results::RunResult> pending_;
};

}  // namespace pitlane::widgets
