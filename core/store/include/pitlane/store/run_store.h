#pragma once
// The run history: one SQLite file (QtSql, QSQLITE, WAL) holding every experiment with its arms,
// samples, metric ticks and warnings/errors. Writes are small transactions made as events arrive
// (see RunRecorder), so a crash of the recording process loses nothing already committed.
// Everything a history panel needs is here: list, load back as a RunResult, delete, rename,
// mark a baseline, compare an arm of one run with an arm of another. QtCore + QtSql only.
#include "pitlane/results/run_result.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace pitlane::store {

// One row of the history list: cheap to read (no samples are touched).
struct RunInfo {
    qint64 id = 0;
    QString startedAt;   // ISO 8601 UTC
    QString finishedAt;  // empty: still running, or the recording process died mid-run
    double wallS = 0;
    QString name;     // the preset's name
    QString model;    // as written in the preset
    // The model files its arms measured (file names, first use order); more than one when arms
    // carried their own model (issue 26).
    QStringList armModels;
    QString label;    // the user's name for the run ("" until renamed)
    QString verdict;  // the comparisons' verdicts, "; "-joined
    QString source;   // "cli", "gui", "import"
    bool baseline = false;
    QStringList arms;         // arm names in order
    QStringList armStatuses;  // parallel to arms
    // The lesson judged on the run (results::toJson(LessonReport)); empty object when the run's
    // preset has no lesson checks, or the run is unfinished.
    nlohmann::json lesson = nlohmann::json::object();
    QString lessonStatus() const {
        return QString::fromStdString(lesson.value("status", std::string()));
    }
    bool complete() const { return !finishedAt.isEmpty(); }
};

// The ids of a run being recorded: the experiment row and one row per arm, by arm index.
struct RecordedRun {
    qint64 id = 0;
    std::vector<qint64> armIds;
};

// Arm X of one run against arm Y of another, as a two-arm RunResult (X is the baseline) so the
// table, the plots and the reports work on it unchanged; `comparison` is results::compareArms().
struct CrossRunComparison {
    results::RunResult run;
    stats::Comparison comparison;
    // Arms of different runs were not interleaved: machine drift between the runs is part of
    // the difference. Shown beside the verdict.
    std::string note;
};

// A piece of a serving level as it streamed in (one serve_batches event, or the arrivals a
// level's block_done adds without batches): the batches [first_batch, + batches.size()) and the
// arrivals [first_request, + arrival_ns.size()) of ArmResult::serving[level].
struct ServingChunk {
    std::size_t level = 0;
    std::size_t first_batch = 0, first_request = 0;
    std::vector<serving::BatchRecord> batches;
    std::vector<std::int64_t> arrival_ns;
};

// What SQLite's full integrity_check, and the schema and samples checks after it, found in a
// history file (RunStore::checkIntegrity).
struct IntegrityReport {
    bool readable = false;  // false: `error` says why the check could not run at all
    QString error;
    QStringList problems;  // empty: the file is sound
    int schemaVersion = -1;
    qint64 runs = 0, samples = 0;  // counted when the file is sound
    qint64 uncheckedChunks = 0;    // sample chunks stored before schema v12 (no checksum)
};

// What reading a run's samples found (RunStore::loadRun, compareRuns). Every sample chunk
// written since schema v12 carries a CRC-32 (sample_codec.h) verified on every read; a chunk that
// fails it, or whose BLOB does not hold the latencies it says, makes its arm damaged: the arm is
// loaded as failed with error code "damaged" and the reason, without its samples, so no figure
// of it (median, CI, verdict) is shown as if it were whole. Chunks written before v12 and the
// v1-v9 sample rows carry no checksum: read as before, counted here as unchecked.
struct SampleCheck {
    // "run 3 arm B: sample chunk 4 of 7 (block 3, iterations 1500-1999) fails its checksum
    // (stored CRC-32 0x..., computed 0x...)", one per damaged chunk.
    QStringList damaged;
    QStringList damagedArms;  // "run 3 arm B"
    qint64 checkedChunks = 0;
    qint64 uncheckedChunks = 0;  // sample chunks written before schema v12
    qint64 uncheckedRows = 0;    // v1-v9 sample rows
    bool isDamaged() const { return !damaged.isEmpty(); }
    bool unchecked() const { return uncheckedChunks > 0 || uncheckedRows > 0; }
    // "run 3's samples are unchecked: ..." (one line), "" when every sample was checked.
    QString uncheckedNote(qint64 runId) const;
    void merge(const SampleCheck& other);
};

// One RunStore is one SQLite connection: use it from the thread that opened it.
class RunStore {
public:
    static constexpr int kSchemaVersion = 12;
    // SQLite's text for SQLITE_FULL ("database or disk is full"): a write the filesystem (or a
    // page cap) had no room for.
    static constexpr const char* kDiskFullText = "database or disk is full";
    // A test setting (docs/RELIABILITY.md): caps the history at this many pages
    // (PRAGMA max_page_count on every connection), so a write beyond it fails with SQLite's own
    // SQLITE_FULL, the error a full filesystem gives, without a small filesystem to fill.
    static constexpr const char* kMaxPagesEnv = "PITLANE_HISTORY_MAX_PAGES";
    // Bytes kept free beside the history while it records (the file PATH-reserve): when the disk
    // fills mid-run, they are given back so the run's end ("incomplete: the history ran out of
    // space after N of M samples") can still be written.
    static constexpr qint64 kReserveBytes = 1 << 20;
    // "none": store nothing (CONTRACT.md `--db none`).
    static constexpr const char* kNone = "none";

    RunStore();
    ~RunStore();
    RunStore(const RunStore&) = delete;
    RunStore& operator=(const RunStore&) = delete;

    // <GenericDataLocation>/pitlane/history.sqlite, the same file for the window and the CLI
    // whatever their application or organization names.
    static QString defaultPath();
    // The file to use: `cliValue` when given (--db), else $PITLANE_DB, else defaultPath().
    // Returns "" when the choice is "none".
    static QString resolvePath(const QString& cliValue);

    // Opens (creating the file and its folder when missing) and migrates to kSchemaVersion.
    // Refuses a file written by a newer schema or one that is not SQLite, leaving it untouched.
    bool open(const QString& path);
    // PRAGMA integrity_check on `path`, opened read-only (nothing is written, not even the
    // journal mode): every page, every index entry against its table, NOT NULL and CHECK
    // constraints. open() runs the faster quick_check, which skips the index cross-checks.
    // When the pages are sound, also what they can still lack: a table, column or index of the
    // file's schema version, and the samples of an ok arm of a finished run (each a problem).
    // open() refuses a file that lacks a table or column.
    static IntegrityReport checkIntegrity(const QString& path);
    void close();
    bool isOpen() const;
    QString path() const { return path_; }
    QString lastError() const { return error_; }
    int schemaVersion() const;  // PRAGMA user_version of the open file
    QString journalMode() const;

    // History panel.
    QList<RunInfo> listRuns() const;
    std::optional<RunInfo> runInfo(qint64 id) const;
    // The run as recorded. Arms still "pending" in a run whose recorder died are reported as
    // "cancelled" with error code "interrupted"; every sample and serving batch stored is kept
    // (a serving level whose block_done never came stays incomplete). An arm with samples
    // but no process rows (written before schema v3, or imported from a results JSON without
    // "processes") gets one process per worker (replicate 0, the worker's pid): one round of
    // workers is all such runs had.
    // Every sample chunk is verified (SampleCheck): a damaged arm is loaded as failed, error code
    // "damaged", without its samples, and the comparisons stored with the run are not restored;
    // `check` (when given) says what was damaged and what was unchecked.
    std::optional<results::RunResult> loadRun(qint64 id, SampleCheck* check = nullptr) const;
    // The preset the run measured, as it was stored (its results JSON's "preset"), without
    // reading its samples: the window's History ▸ Load setup.
    std::optional<nlohmann::json> runPreset(qint64 id) const;
    bool deleteRun(qint64 id);
    bool renameRun(qint64 id, const QString& label);
    // At most one baseline per model: marking a run clears the flag on the model's other runs.
    bool setBaseline(qint64 id, bool on);
    std::optional<qint64> baselineRun(const QString& model) const;
    std::optional<CrossRunComparison> compareRuns(qint64 runX, int armX, qint64 runY,
                                                  int armY, SampleCheck* check = nullptr) const;
    // Stores a finished RunResult (e.g. re-imported from a results JSON) in one transaction.
    std::optional<qint64> importRun(const results::RunResult& run, const QString& source);

    // Incremental writes (RunRecorder). Each is one transaction, committed before returning.
    std::optional<RecordedRun> beginRun(const results::RunResult& run, const QString& source);
    bool updateArm(qint64 armId, const results::ArmResult& arm);
    // Samples [first, first + count) as sample_chunks rows (schema v10), one per run of them.
    bool appendSamples(qint64 armId, const results::SampleSeries& samples, std::size_t first,
                       std::size_t count);
    // Warmup iterations are stored as samples of block -1.
    bool appendWarmup(qint64 armId, const std::vector<std::int64_t>& warmupNs, std::size_t first,
                      int batchSize);
    bool appendMetric(qint64 armId, const results::MetricTick& tick);
    // Writes (inserts or replaces) the arm's processes [first, end) by their index: a process's
    // pid, cold costs and page faults arrive over its life, and only the current round changes.
    bool updateProcesses(qint64 armId, const std::vector<results::ProcessInfo>& processes,
                         std::size_t first = 0);
    // A serving level's row (schema v7), inserted or replaced by its index in ArmResult::serving:
    // what it was asked and what its block_done reported. Its record's arrays are not written
    // here: they come in chunks (appendServingChunk), as the worker streams them.
    bool updateServingLevel(qint64 armId, std::size_t index, const results::ServingLevel& level);
    bool appendServingChunk(qint64 armId, const ServingChunk& chunk);
    // The arm's operator profile (schema v8; ArmResult::profile, the worker's profile event),
    // inserted or replaced; loadRun gives it back as written.
    bool updateProfile(qint64 armId, const nlohmann::json& profile);
    // A worker's warning/error event or an orchestrator failure; armId 0 = the whole run.
    bool appendEvent(qint64 runId, qint64 armId, double tMs, const nlohmann::json& event);
    // The run's end: its arms, verdict and lesson. `run` holds every sample the recorder wrote;
    // an arm the file holds fewer of (a write failed, a table went missing) or any arm after
    // `lostWrite` (the first write of the run that failed, "" when none did) is stored as failed
    // (error code not_stored, the reason), never as ok. False, committed, when so: lastError()
    // names the run and each such arm.
    bool finishRun(qint64 runId, results::RunResult& run, const QString& lostWrite = {});
    // Runs `writes` (calls of the methods above) in one transaction; each of them is a nested
    // one that rolls back alone when it fails. False when the outer commit failed.
    bool inOneTransaction(const std::function<void()>& writes);

    qint64 sampleCount(qint64 runId) const;  // measured samples of all arms (tests, the list)

    // A write of this connection failed because the disk (or the page cap, kMaxPagesEnv) was
    // full; lastError() then says "disk full", the file and the free space.
    bool diskFull() const { return diskFull_; }
    // "disk full: /x/history.sqlite: database or disk is full (12 KiB free on /x)".
    QString diskFullText(const QString& why) const;

private:
    bool fail(const QString& what, const QString& why) const;
    bool initialize(QString* why);  // pragmas and migration of a freshly opened connection
    bool insertArmRows(qint64 armId, const results::ArmResult& arm);

    // The reserve (kReserveBytes, the file PATH-reserve): made when the file opens; false when
    // the disk had no room for it (beginRun then refuses to record: disk full).
    bool makeReserve();
    void releaseReserve();
    void applyPageCap(qint64 extraPages = 0);

    QString path_;
    QString connection_;
    bool reserveHeld_ = false;
    QString reserveProblem_;
    mutable bool diskFull_ = false;
    QString heldKey_;  // the file as counted among those this process holds open ("" when not)
    mutable QString error_;
};

// Brings a history file to `version` (at most RunStore::kSchemaVersion) without opening it as a
// store: for tools, and for tests of the migration path. Creates the file when missing.
bool migrateSchema(const QString& path, int version, QString* error);

// The comparisons' verdicts of a run, "; "-joined (the experiments.verdict column); for a serving
// run, results::servingVerdict's lines.
QString verdictSummary(const results::RunResult& run);

}  // namespace pitlane::store
