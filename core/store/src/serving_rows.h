#pragma once
// A serving run's rows (schema v7): one serving_levels row per level a worker process served,
// its batches and arrivals in serving_batches rows, one per chunk as it streamed in. Written by
// the recorder (as serve_batches and block_done events arrive) and by importRun; read back by
// loadRun into ArmResult::serving.
#include "pitlane/store/run_store.h"

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>

#include <vector>

namespace pitlane::store::detail {

bool writeServingLevel(const QSqlDatabase& db, qint64 armId, std::size_t index,
                       const results::ServingLevel& level, QString* error);
bool writeServingChunk(const QSqlDatabase& db, qint64 armId, const ServingChunk& chunk,
                       QString* error);
// The whole level at once (importRun): its row and one chunk with every batch and arrival.
bool writeServingLevelWithRecord(const QSqlDatabase& db, qint64 armId, std::size_t index,
                                 const results::ServingLevel& level, QString* error);

// An arm's levels in index order. A chunk that does not continue its level where the rows
// before it ended (a write lost in between) is left out and the level marked incomplete, so no
// request is matched with another's batch; so is a level whose batches hold more requests than
// its arrivals.
class ServingRows {
public:
    explicit ServingRows(const QSqlDatabase& db);
    bool read(qint64 armId, std::vector<results::ServingLevel>* levels, QString* error);

private:
    QSqlQuery levels_, chunks_;
};

}  // namespace pitlane::store::detail
