#include "pitlane/widgets/lessons/lesson_judge.h"

#include "pitlane/results/lesson.h"

#include <QMetaObject>
#include <QThreadPool>

namespace pitlane::widgets {

LessonJudge::LessonJudge(QObject* parent) : QObject(parent), pool_(new QThreadPool(this)) {
    pool_->setMaxThreadCount(1);
    pool_->setExpiryTimeout(0);  // once a run: the thread ends with its job
}

LessonJudge::~LessonJudge() {
    // The computation only reads its own copy; its queued delivery dies with this object.
    pool_->waitForDone();
}

void LessonJudge::reset() {
    ++generation_;
    pending_.reset();
}

bool LessonJudge::judge(const results::RunResult& run) {
    const auto lesson = results::lessonOf(run);
    if (!lesson.is_object() || !lesson.value("checks", nlohmann::json()).is_array() ||
        lesson["checks"].empty())
        return false;
    ++generation_;
    if (busy_)
        pending_ = run;  // judged when the one under way is done; its answer is dropped
    else
        launch(run);
    return true;
}

void LessonJudge::launch(results::RunResult run) {
    busy_ = true;
    // The copy is freed on the pool's thread after the answer is posted: nothing waits for it.
    pool_->start([this, copy = std::move(run), gen = generation_] {
        auto judgement = results::toJson(results::checkLesson(copy));
        QMetaObject::invokeMethod(
            this,
            [this, judgement = std::move(judgement), gen]() mutable {
                onDone(std::move(judgement), gen);
            },
            Qt::QueuedConnection);
    });
}

void LessonJudge::onDone(nlohmann::json judgement, int generation) {
    busy_ = false;
    if (generation == generation_) emit judged(judgement);
    if (pending_) {
        auto next = std::move(*pending_);
        pending_.reset();
        launch(std::move(next));
    }
}

}  // namespace pitlane::widgets
