#include "schema.h"

#include "record_sql.h"
#include "sql_util.h"

#include "pitlane/results/run_result.h"

#include <QAtomicInteger>
#include <QMap>
#include <QSqlError>
#include <QSqlQuery>
#include <QStringList>
#include <QVariant>

#include <map>
#include <mutex>

namespace pitlane::store::detail {

namespace {

// Step N brings a file from version N to N + 1. Never edit a shipped step: add one.
// v0 -> v1: the first schema (v0 is an empty or foreign file).
const char* const kV1[] = {
    R"(CREATE TABLE experiments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        wall_s REAL NOT NULL DEFAULT 0,
        name TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL DEFAULT '',
        preset TEXT NOT NULL DEFAULT '{}',
        verdict TEXT NOT NULL DEFAULT '',
        baseline INTEGER NOT NULL DEFAULT 0,
        label TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL DEFAULT ''))",
    R"(CREATE TABLE arms (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        experiment INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        name TEXT NOT NULL,
        knobs TEXT NOT NULL DEFAULT '{}',
        batch_size INTEGER NOT NULL DEFAULT 1,
        applied TEXT NOT NULL DEFAULT '{}',
        environment TEXT NOT NULL DEFAULT '{}',
        loaded TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'pending',
        error_code TEXT,
        error_message TEXT,
        peak_rss_bytes INTEGER NOT NULL DEFAULT 0,
        pid INTEGER NOT NULL DEFAULT 0,
        UNIQUE (experiment, idx)))",
    // block -1: warmup iterations. iter: index within the arm's measured (or warmup) samples.
    R"(CREATE TABLE samples (
        arm INTEGER NOT NULL REFERENCES arms(id) ON DELETE CASCADE,
        block INTEGER NOT NULL,
        iter INTEGER NOT NULL,
        batch_size INTEGER NOT NULL,
        worker INTEGER NOT NULL DEFAULT 0,
        latency_ns INTEGER NOT NULL))",
    "CREATE INDEX samples_by_arm ON samples (arm)",
    // tensor bytes -1: the worker did not report them.
    R"(CREATE TABLE metrics (
        arm INTEGER NOT NULL REFERENCES arms(id) ON DELETE CASCADE,
        t_ms REAL NOT NULL,
        rss INTEGER NOT NULL,
        peak_rss INTEGER NOT NULL DEFAULT 0,
        tensor_bytes INTEGER NOT NULL DEFAULT -1,
        tensor_peak_bytes INTEGER NOT NULL DEFAULT -1,
        cpu_s REAL NOT NULL DEFAULT 0,
        core_util TEXT NOT NULL DEFAULT '[]'))",
    "CREATE INDEX metrics_by_arm ON metrics (arm)",
    // Warnings and errors, from workers (type = the event's) or the orchestrator.
    R"(CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        experiment INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        arm INTEGER REFERENCES arms(id) ON DELETE CASCADE,
        t_ms REAL NOT NULL DEFAULT 0,
        type TEXT NOT NULL,
        code TEXT NOT NULL DEFAULT '',
        message TEXT NOT NULL DEFAULT '',
        detail TEXT NOT NULL DEFAULT '{}'))",
    "CREATE INDEX events_by_experiment ON events (experiment)",
};

// v1 -> v2: batch-size sweeps and concurrent workers per arm; each metric tick's worker and its
// raw event (context switches, migrations, GPU fields). Rows written by v1 read as one worker
// and one batch size.
const char* const kV2[] = {
    "ALTER TABLE arms ADD COLUMN batch_sizes TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE arms ADD COLUMN workers INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE arms ADD COLUMN worker_applied TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE arms ADD COLUMN worker_pids TEXT NOT NULL DEFAULT '[]'",
    // [{"batch_size": N, "code": "...", "message": "..."}]: sweep points that failed.
    "ALTER TABLE arms ADD COLUMN sweep_failures TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE metrics ADD COLUMN worker INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE metrics ADD COLUMN raw TEXT NOT NULL DEFAULT '{}'",
};

// v2 -> v3: process replicates (run.processes fresh workers per arm, in rounds). Each sample's
// and metric tick's replicate, and one row per worker process of an arm (idx: its place in the
// arm's start order) with its identity, its own cold costs and the page faults of its measured
// blocks. Medians per process are not stored: they are the samples'. Rows written by v2 read as
// replicate 0; a v2 arm has no process rows (the loader derives one per worker).
const char* const kV3[] = {
    "ALTER TABLE samples ADD COLUMN process INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE metrics ADD COLUMN process INTEGER NOT NULL DEFAULT 0",
    // load_ms / first_forward_ms -1: not reported (the process failed before loading).
    R"(CREATE TABLE processes (
        arm INTEGER NOT NULL REFERENCES arms(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        replicate INTEGER NOT NULL DEFAULT 0,
        worker INTEGER NOT NULL DEFAULT 0,
        pid INTEGER NOT NULL DEFAULT 0,
        load_ms REAL NOT NULL DEFAULT -1,
        first_forward_ms REAL NOT NULL DEFAULT -1,
        minor_faults INTEGER NOT NULL DEFAULT 0,
        major_faults INTEGER NOT NULL DEFAULT 0,
        fault_iters INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (arm, idx)))",
};

// v3 -> v4: how the run decided to stop (adaptive / timed stopping) and how many rounds of
// processes it ran and why (replication): the results JSON's "stopping" and "replication",
// written when the run finishes. Runs written by v3 read as empty objects.
const char* const kV4[] = {
    "ALTER TABLE experiments ADD COLUMN stopping TEXT NOT NULL DEFAULT '{}'",
    "ALTER TABLE experiments ADD COLUMN replication TEXT NOT NULL DEFAULT '{}'",
};

// v4 -> v5: the lesson judged on the run (results::checkLesson as JSON: title, status and each
// check's expectation, status and measured figure), written when the run finishes, so the
// history and the Lessons browser know each lesson's status without re-running its bootstrap.
// Runs written by v4 read as no lesson.
const char* const kV5[] = {
    "ALTER TABLE experiments ADD COLUMN lesson TEXT NOT NULL DEFAULT '{}'",
};

// v5 -> v6: the SHA-256 of the model file the run measured (spec::checkModelFile before any
// worker started), the results JSON's "model_sha256". Runs written by v5 read as "".
const char* const kV6[] = {
    "ALTER TABLE experiments ADD COLUMN model_sha256 TEXT NOT NULL DEFAULT ''",
};

// v6 -> v7: serving runs (issue 13), everything results::ServingLevel holds. One row per level
// each worker process served (idx: its place in ArmResult::serving): what it was asked (`load`,
// serving::LoadSpec as JSON: the seed is a full 64-bit number) and what its block_done reported.
// Its batches and the arrivals of their requests as they streamed in: one serving_batches row
// per serve_batches event (JSON arrays, read back in rowid order; first_batch / first_request
// say where the row continues the level). Runs written by v6 have no serving rows.
const char* const kV7[] = {
    R"(CREATE TABLE serving_levels (
        arm INTEGER NOT NULL REFERENCES arms(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        level INTEGER NOT NULL DEFAULT 0,
        process INTEGER NOT NULL DEFAULT 0,
        worker INTEGER NOT NULL DEFAULT 0,
        rate_per_s REAL NOT NULL DEFAULT 0,
        clients INTEGER NOT NULL DEFAULT 0,
        load TEXT NOT NULL DEFAULT '{}',
        scheduled INTEGER NOT NULL DEFAULT 0,
        max_queue INTEGER NOT NULL DEFAULT 0,
        stopped_early INTEGER NOT NULL DEFAULT 0,
        complete INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (arm, idx)))",
    R"(CREATE TABLE serving_batches (
        arm INTEGER NOT NULL REFERENCES arms(id) ON DELETE CASCADE,
        level_idx INTEGER NOT NULL,
        first_batch INTEGER NOT NULL,
        first_request INTEGER NOT NULL,
        size TEXT NOT NULL DEFAULT '[]',
        free_ns TEXT NOT NULL DEFAULT '[]',
        start_ns TEXT NOT NULL DEFAULT '[]',
        end_ns TEXT NOT NULL DEFAULT '[]',
        arrival_ns TEXT NOT NULL DEFAULT '[]'))",
    "CREATE INDEX serving_batches_by_arm ON serving_batches (arm, level_idx)",
};

// v7 -> v8: an arm's operator profile (issue 14, run.profile_iters): ArmResult::profile as the
// worker's profile event gave it (iters, batch_size, wall_ms, profiler, ops[], trace), as JSON
// text, one row per profiled arm, written when the event arrives. Its own table: the trace is
// large and the arms rows are rewritten often. Runs written by v7 have no profile.
// And what each process's timed loops cost it (block_done, the advisor's core use and
// preemptions): CPU ms, the loops' wall ms, involuntary context switches (0: not reported).
const char* const kV8[] = {
    R"(CREATE TABLE profiles (
        arm INTEGER PRIMARY KEY REFERENCES arms(id) ON DELETE CASCADE,
        profile TEXT NOT NULL))",
    "ALTER TABLE processes ADD COLUMN cpu_ms REAL NOT NULL DEFAULT 0",
    "ALTER TABLE processes ADD COLUMN cpu_wall_ms REAL NOT NULL DEFAULT 0",
    "ALTER TABLE processes ADD COLUMN involuntary_switches INTEGER NOT NULL DEFAULT 0",
};

// v8 -> v9: each arm's model (issue 26: an arm may measure its own model file): the path it
// measured, the file's SHA-256 (checked before any worker started) and its format
// ("torchscript" or "aoti"). Arms written by v8 read as the run's model (experiments.model_sha256
// and the preset's model), TorchScript: the only format then.
const char* const kV9[] = {
    "ALTER TABLE arms ADD COLUMN model TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE arms ADD COLUMN model_sha256 TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE arms ADD COLUMN model_format TEXT NOT NULL DEFAULT ''",
};

// v9 -> v10: samples stored compactly (issue 31): one sample_chunks row per stretch of an arm's
// samples that share block, batch size, worker and process (a samples event as it arrived), its
// latencies in one BLOB (sample_codec.h: zigzag varints of the differences; n of them), its
// iterations first_iter, first_iter + 1, ... Block -1: warmup iterations. The samples table stays
// for runs written by v1-v9 (read as before; new runs never write it). And the run's comparisons
// as computed when it finished (results::comparisonsToJson: the verdict's bootstrap CIs, with the
// key that says which samples they were computed on), so reopening a run does not redo them.
const char* const kV10[] = {
    R"(CREATE TABLE sample_chunks (
        arm INTEGER NOT NULL REFERENCES arms(id) ON DELETE CASCADE,
        block INTEGER NOT NULL,
        first_iter INTEGER NOT NULL,
        n INTEGER NOT NULL,
        batch_size INTEGER NOT NULL DEFAULT 1,
        worker INTEGER NOT NULL DEFAULT 0,
        process INTEGER NOT NULL DEFAULT 0,
        latency_ns BLOB NOT NULL))",
    "CREATE INDEX sample_chunks_by_arm ON sample_chunks (arm)",
    "ALTER TABLE experiments ADD COLUMN comparisons TEXT NOT NULL DEFAULT '{}'",
};

// v10 -> v11: what Pitlane's compile step did for an arm (issue 40, knob compile "aoti"):
// results::compileJson (seconds, cache_hit, options, torch, package, target), '' when the arm
// was not compiled.
const char* const kV11[] = {
    "ALTER TABLE arms ADD COLUMN compile TEXT NOT NULL DEFAULT ''",
};

// v11 -> v12: each sample chunk's CRC-32 (sample_codec.h: over its arm, block, first iteration,
// n, batch size, worker, process and BLOB), written with the chunk and verified on every read:
// a BLOB changed in place that still decodes to its n latencies is found (issue 42). Chunks
// written by v10 and v11 hold NULL: read as before, labelled unchecked.
const char* const kV12[] = {
    "ALTER TABLE sample_chunks ADD COLUMN crc32 INTEGER",
};

struct Step {
    const char* const* statements;
    std::size_t count;
};
// clang-format off
const Step kSteps[] = {{kV1, sizeof kV1 / sizeof *kV1},
                       {kV2, sizeof kV2 / sizeof *kV2},
                       {kV3, sizeof kV3 / sizeof *kV3},
                       {kV4, sizeof kV4 / sizeof *kV4},
                       {kV5, sizeof kV5 / sizeof *kV5},
                       {kV6, sizeof kV6 / sizeof *kV6},
                       {kV7, sizeof kV7 / sizeof *kV7},
                       {kV8, sizeof kV8 / sizeof *kV8},
                       {kV9, sizeof kV9 / sizeof *kV9},
                       {kV10, sizeof kV10 / sizeof *kV10},
                       {kV11, sizeof kV11 / sizeof *kV11},
                       {kV12, sizeof kV12 / sizeof *kV12}};
// clang-format on
constexpr int kStepCount = int(sizeof kSteps / sizeof *kSteps);

}  // namespace

int userVersion(const QSqlDatabase& db) {
    QSqlQuery q(db);
    QString why;  // a read: busy only while another process holds the file (not yet WAL)
    if (!execRetryingBusy(q, QStringLiteral("PRAGMA user_version"), &why) || !q.next()) return -1;
    return q.value(0).toInt();
}

namespace {

// The columns of the described records (record_sql.h) a file lacks, each with its definition.
template <class R>
void missingRecordColumns(const QSqlDatabase& db, const char* table, QStringList* statements,
                          QString* error) {
    QSqlQuery q(db);
    if (!execRetryingBusy(q, QStringLiteral("PRAGMA table_info(%1)").arg(QLatin1String(table)), error))
        return;
    QStringList have;
    while (q.next()) have << q.value(1).toString();
    if (have.isEmpty()) return;  // no such table (a version before it): nothing to add
    for (const auto& [column, definition] : recordColumnDefinitions<R>())
        if (!have.contains(column))
            *statements << QStringLiteral("ALTER TABLE %1 ADD COLUMN %2").arg(QLatin1String(table), definition);
}

QStringList recordColumnStatements(const QSqlDatabase& db, QString* error) {
    QStringList statements;
    missingRecordColumns<results::ProcessInfo>(db, "processes", &statements, error);
    missingRecordColumns<results::MetricTick>(db, "metrics", &statements, error);
    missingRecordColumns<results::ServingLevel>(db, "serving_levels", &statements, error);
    return statements;
}

// A record's new field (a counter of protocol/loop_counters.h) is a new column: added to a file
// of the current version that lacks it, with its default, so runs stored before read it as not
// reported. No version step: the records' tables are the description of those columns.
bool addRecordColumns(QSqlDatabase& db, QString* error) {
    QString why;
    if (recordColumnStatements(db, &why).isEmpty() && why.isEmpty()) return true;
    if (!beginImmediate(db, &why)) {
        *error = QStringLiteral("cannot begin adding columns: %1").arg(why);
        return false;
    }
    QSqlQuery q(db);
    bool ok = true;
    const QStringList statements = recordColumnStatements(db, &why);  // again, under the lock
    for (const QString& sql : statements) ok = ok && q.exec(sql);
    if (!ok || !why.isEmpty() || !execRetryingBusy(q, QStringLiteral("COMMIT"), &why)) {
        *error = QStringLiteral("adding the columns of this build failed: %1")
                     .arg(ok ? why : q.lastError().text());
        QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
        return false;
    }
    return true;
}

}  // namespace

bool migrate(QSqlDatabase& db, int target, QString* error) {
    if (!migrateSteps(db, target, error)) return false;
    return target != kStepCount || addRecordColumns(db, error);
}

bool migrateSteps(QSqlDatabase& db, int target, QString* error) {
    const int from = userVersion(db);
    if (from < 0) {
        *error = QStringLiteral("cannot read the schema version: %1").arg(db.lastError().text());
        return false;
    }
    if (from > target) {
        *error = QStringLiteral(
                     "the file has schema version %1, written by a newer pitlane; this "
                     "build reads versions up to %2 and leaves the file untouched")
                     .arg(from)
                     .arg(target);
        return false;
    }
    if (target > kStepCount) {
        *error = QStringLiteral("no migration to schema version %1").arg(target);
        return false;
    }
    // Each step under the write lock (BEGIN IMMEDIATE waits for it), the version read again
    // inside it: two processes opening a fresh file at once (30 pitlane-cli runs) must not both
    // create the tables ("table experiments already exists"): the second finds the step done.
    for (int step = from; step < target; ++step) {
        QSqlQuery q(db);
        QString why;
        if (!beginImmediate(db, &why)) {
            *error = QStringLiteral("cannot begin the migration to v%1: %2").arg(step + 1).arg(why);
            return false;
        }
        const int v = userVersion(db);
        bool ok = v >= 0;
        if (ok && v <= step) {  // not done by another process meanwhile
            for (std::size_t i = 0; ok && i < kSteps[v].count; ++i)
                ok = q.exec(QString::fromUtf8(kSteps[v].statements[i]));
            // user_version lives in the file header and is part of the transaction.
            if (ok) ok = q.exec(QStringLiteral("PRAGMA user_version = %1").arg(v + 1));
        }
        // COMMIT may be busy where the file is not in WAL mode yet (migrateSchema): SQLite keeps
        // the transaction open then, and it is tried again.
        if (!ok || !execRetryingBusy(q, QStringLiteral("COMMIT"), &why)) {
            *error = QStringLiteral("migration from schema v%1 to v%2 failed: %3")
                         .arg(step)
                         .arg(step + 1)
                         .arg(ok ? why : q.lastError().text());
            QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
            return false;
        }
    }
    return true;
}

namespace {

// Tables (with their columns) and indexes of a database; SQLite's own (sqlite_sequence, the
// autoindexes of UNIQUE and PRIMARY KEY) are left out: they come and go with the tables.
struct Shape {
    QMap<QString, QStringList> tables;
    QStringList indexes;
    QString error;  // the shape could not be read
};

Shape readShape(const QSqlDatabase& db, const QStringList& onlyTables = {}) {
    Shape shape;
    QSqlQuery q(db);
    if (!execRetryingBusy(q,
                          QStringLiteral("SELECT type, name FROM sqlite_master WHERE type IN "
                                         "('table', 'index') AND name NOT LIKE 'sqlite_%'"),
                          &shape.error))
        return shape;
    while (q.next()) {
        const QString name = q.value(1).toString();
        if (q.value(0).toString() == QLatin1String("index"))
            shape.indexes << name;
        else if (onlyTables.isEmpty() || onlyTables.contains(name))
            shape.tables.insert(name, {});
    }
    for (auto it = shape.tables.begin(); it != shape.tables.end(); ++it) {
        QSqlQuery columns(db);
        // The name comes from sqlite_master; quoted, as it could hold anything.
        QString name = it.key();
        name.replace(QLatin1Char('"'), QLatin1String("\"\""));
        if (!execRetryingBusy(columns, QStringLiteral("PRAGMA table_info(\"%1\")").arg(name),
                              &shape.error))
            return shape;
        while (columns.next()) it.value() << columns.value(1).toString();
    }
    return shape;
}

// The shape schema `version` has: its migration steps run on an empty in-memory database, once
// per version and process. The steps are the one description of the schema; a second one here
// would drift from them.
const Shape& expectedShape(int version) {
    static std::mutex mutex;
    static std::map<int, Shape> shapes;
    static QAtomicInteger<quint64> connections;
    std::lock_guard lock(mutex);
    const auto known = shapes.find(version);
    if (known != shapes.end()) return known->second;
    const QString name =
        QStringLiteral("pitlane-schema-shape-%1").arg(connections.fetchAndAddRelaxed(1));
    Shape shape;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(QStringLiteral(":memory:"));
        if (!db.open())
            shape.error = db.lastError().text();
        else if (migrateSteps(db, version, &shape.error))
            shape = readShape(db);
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return shapes.emplace(version, std::move(shape)).first->second;
}

}  // namespace

QStringList missingSchema(const QSqlDatabase& db, int version, bool indexes) {
    if (version < 1 || version > kStepCount) return {};
    const Shape& expected = expectedShape(version);
    if (!expected.error.isEmpty())
        return {QStringLiteral("cannot build schema v%1 to compare with: %2")
                    .arg(version)
                    .arg(expected.error)};
    const Shape actual = readShape(db, expected.tables.keys());
    if (!actual.error.isEmpty())
        return {QStringLiteral("cannot read the schema: %1").arg(actual.error)};
    QStringList missing;
    for (auto it = expected.tables.cbegin(); it != expected.tables.cend(); ++it) {
        const auto table = actual.tables.constFind(it.key());
        if (table == actual.tables.cend()) {
            missing << QStringLiteral("table %1 is missing").arg(it.key());
            continue;
        }
        for (const QString& column : it.value())
            if (!table->contains(column))
                missing << QStringLiteral("column %1.%2 is missing").arg(it.key(), column);
    }
    if (indexes)
        for (const QString& index : expected.indexes)
            if (!actual.indexes.contains(index))
                missing << QStringLiteral("index %1 is missing").arg(index);
    return missing;
}

}  // namespace pitlane::store::detail
