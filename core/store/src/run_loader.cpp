// Reading runs back as results::RunResult, and comparing arms of two runs.
#include "pitlane/store/run_store.h"

#include "record_sql.h"
#include "sample_codec.h"
#include "serving_rows.h"
#include "sql_util.h"

#include <QSqlError>
#include <QSqlRecord>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace pitlane::store {

using detail::parseJsonText;
using nlohmann::json;

namespace {

QSqlDatabase database(const QString& connection) {
    return QSqlDatabase::database(connection, /*open=*/false);
}

// The preset fields the table, the plots and the reports read. A stored preset is not
// re-validated: its model file may be gone, and the run stays readable anyway.
void fillPreset(results::RunResult& r) {
    const json& p = r.preset_json;
    if (!p.is_object()) return;
    r.preset.name = p.value("name", std::string());
    r.preset.description = p.value("description", std::string());
    r.preset.model = p.value("model", std::string());
    // A collected sweep (pitlane-cli collect): its slices ran apart, so its arms were never
    // interleaved and their blocks do not pair.
    if (p.contains("sweep_slices")) r.interleaved = false;
    try {
        if (p.contains("input")) r.preset.input = spec::parseInputs(p["input"], "history", "input");
        const json run = p.value("run", json::object());
        r.preset.run.warmup_iters = run.value("warmup_iters", r.preset.run.warmup_iters);
        r.preset.run.iters = run.value("iters", r.preset.run.iters);
        r.preset.run.block_iters = run.value("block_iters", r.preset.run.block_iters);
    } catch (const std::exception&) {
    }
    // The serving block decides how the arms' levels are summarized (the SLO, closed or open
    // loop): without it a serving run would read as a closed-loop run with no samples.
    if (p.contains("serving")) {
        std::vector<spec::SpecError> errors;  // the stored block was valid when it ran
        try {
            r.preset.serving = spec::parseServing(p["serving"], "history", errors);
        } catch (const std::exception&) {
        }
    }
}

// Columns 12-16 of the arms query (schema v2). Rows a v1 build wrote hold the defaults: one
// batch size, one worker.
void fillSweepAndWorkers(results::ArmResult& a, const QSqlQuery& q) {
    const json sizes = parseJsonText(q.value(12).toString(), json::array());
    a.batch_sizes.clear();
    for (const auto& v : sizes)
        if (v.is_number_integer()) a.batch_sizes.push_back(v.get<int>());
    if (a.batch_sizes.empty()) a.batch_sizes = {a.batch_size};
    a.workers = std::max(1, q.value(13).toInt());
    const json applied = parseJsonText(q.value(14).toString(), json::array());
    a.worker_applied.clear();
    if (applied.is_array())
        for (const auto& w : applied) a.worker_applied.push_back(protocol::appliedFromFields(w));
    if (a.worker_applied.empty()) a.worker_applied = {a.applied};
    const json pids = parseJsonText(q.value(15).toString(), json::array());
    a.worker_pids.clear();
    for (const auto& v : pids)
        if (v.is_number_integer()) a.worker_pids.push_back(v.get<long>());
    if (a.worker_pids.empty()) a.worker_pids = {a.pid};
    for (const auto& f : parseJsonText(q.value(16).toString(), json::array()))
        if (f.is_object())
            a.sweep_failures[f.value("batch_size", 0)] = protocol::Error{
                f.value("code", std::string()), f.value("message", std::string()), {}};
}

// An arm stored without process rows (schema v2, or imported from a results JSON that predates
// replicates): it ran one round, one process per worker; only worker 0 reported its cold costs.
void deriveProcesses(results::ArmResult& a) {
    for (int w = 0; w < a.workers; ++w) {
        results::ProcessInfo p;
        p.worker = w;
        p.pid = std::size_t(w) < a.worker_pids.size() ? a.worker_pids[std::size_t(w)] : 0;
        if (w == 0 && a.loaded.is_object()) {
            p.load_ms = a.loaded.value("load_ms", -1.0);
            p.first_forward_ms = a.loaded.value("first_forward_ms", -1.0);
        }
        a.processes.push_back(p);
    }
}

// Columns of the experiments query in loadRun.
results::RunResult runFromRow(const QSqlQuery& q) {
    results::RunResult r;
    r.started_at = q.value(0).toString().toStdString();
    r.wall_s = q.value(1).toDouble();
    r.preset_json = parseJsonText(q.value(2).toString());
    r.stopping = parseJsonText(q.value(4).toString());
    r.replication = parseJsonText(q.value(5).toString());
    r.model_sha256 = q.value(6).toString().toStdString();
    fillPreset(r);
    return r;
}

// A pending arm of a run that never finished: the recording process ended under it.
void markInterrupted(results::ArmResult& a) {
    a.status = results::kCancelled;
    if (!a.error)
        a.error = protocol::Error{"interrupted",
                                  "the recording process ended before this arm finished; "
                                  "every sample received until then is kept",
                                  {}};
}

// An arm some of whose stored samples fail their check (`damage`, sample_codec.h): failed, error
// code "damaged" naming the first damaged chunk and how many there are, and none of its samples
// (the sound chunks alone would be figures of a part presented as the whole).
void markDamaged(results::ArmResult& a, qint64 runId, const QStringList& damage, SampleCheck& check) {
    const QString arm = QStringLiteral("run %1 arm %2").arg(runId).arg(QString::fromStdString(a.name));
    check.damagedArms << arm;
    for (const QString& d : damage) check.damaged << arm + QStringLiteral(": ") + d;
    const std::size_t samples = a.samples.size();
    std::string message = "damaged in the history: " + damage.front().toStdString();
    if (damage.size() > 1) message += " (and " + std::to_string(damage.size() - 1) + " more chunks)";
    message += "; none of its samples are shown (" + std::to_string(samples) +
               " were read from its sound chunks), the arm was stored as " + a.status +
               "; pitlane-cli check-history lists every damaged chunk";
    a.status = results::kFailed;
    a.error = protocol::Error{"damaged", message, {}};
    a.samples = results::SampleSeries();
    a.warmup_ns.clear();
}

// Columns 1-16 of the arms query in loadRun (column 0 is the arm's id).
results::ArmResult armFromRow(const QSqlQuery& arms, bool runFinished) {
    results::ArmResult a;
    a.name = arms.value(1).toString().toStdString();
    a.batch_size = arms.value(3).toInt();
    a.applied = protocol::appliedFromFields(parseJsonText(arms.value(4).toString()));
    a.environment = parseJsonText(arms.value(5).toString());
    a.loaded = parseJsonText(arms.value(6).toString());
    a.status = arms.value(7).toString().toStdString();
    if (!arms.value(8).isNull())
        a.error = protocol::Error{
            arms.value(8).toString().toStdString(), arms.value(9).toString().toStdString(), {}};
    a.peak_rss_bytes = arms.value(10).toLongLong();
    a.pid = long(arms.value(11).toLongLong());
    a.model = arms.value(17).toString().toStdString();
    a.model_sha256 = arms.value(18).toString().toStdString();
    a.model_format = arms.value(19).toString().toStdString();
    if (const QString c = arms.value(20).toString(); !c.isEmpty())
        a.compile = results::compileFromJson(parseJsonText(c, nlohmann::json()));
    results::setKnobsFromJson(a, parseJsonText(arms.value(2).toString()));  // knobs, as stored
    fillSweepAndWorkers(a, arms);
    if (!runFinished && a.status == results::kPending) markInterrupted(a);
    return a;
}

// The rows that belong to an arm: its samples (warmup and measured), metrics, worker processes,
// warnings, operator profile and serving levels. Prepared once per run, executed once per arm.
class ArmRows {
public:
    explicit ArmRows(const QSqlDatabase& db)
        : samples_(db), chunks_(db), metrics_(db), events_(db), processes_(db), profile_(db),
          serving_(db) {
        // Forward only: QtSql would otherwise keep every row it read (10 M samples: gigabytes).
        samples_.setForwardOnly(true);
        chunks_.setForwardOnly(true);
        chunks_.prepare(QStringLiteral(
            "SELECT block, first_iter, n, batch_size, worker, process, latency_ns, %1 FROM "
            "sample_chunks WHERE arm = ? ORDER BY rowid")
                           .arg(db.record(QStringLiteral("sample_chunks")).contains(QStringLiteral("crc32"))
                                    ? QStringLiteral("crc32")
                                    : QStringLiteral("NULL")));
        samples_.prepare(
            QStringLiteral("SELECT block, iter, batch_size, worker, latency_ns, process FROM samples "
                           "WHERE arm = ? ORDER BY rowid"));
        // Every column: the records' tables (record_sql.h) read theirs by name.
        metrics_.prepare(QStringLiteral("SELECT * FROM metrics WHERE arm = ? ORDER BY rowid"));
        processes_.prepare(QStringLiteral("SELECT * FROM processes WHERE arm = ? ORDER BY idx"));
        events_.prepare(QStringLiteral(
            "SELECT message, code FROM events WHERE arm = ? AND type = 'warning' ORDER BY id"));
        profile_.prepare(QStringLiteral("SELECT profile FROM profiles WHERE arm = ?"));
    }

    // Fills `a` from the rows of arm `armId`; false (and the database's message in `error`)
    // when a query fails.
    // `check` gathers what the chunks' checksums found; `damage` the damaged chunks of this arm.
    bool read(qint64 armId, results::ArmResult& a, SampleCheck& check, QStringList& damage,
              QString* error) {
        // Runs written by v1-v9: a row per sample (no checksum: unchecked).
        if (!exec(samples_, armId, error)) return false;
        while (samples_.next()) {
            ++check.uncheckedRows;
            const int block = samples_.value(0).toInt();
            const qint64 ns = samples_.value(4).toLongLong();
            if (block < 0) {
                a.warmup_ns.push_back(ns);
                continue;
            }
            a.samples.push_back({block, samples_.value(1).toInt(), samples_.value(2).toInt(),
                                 samples_.value(3).toInt(), ns, samples_.value(5).toInt()});
        }
        if (!readChunks(armId, a, check, damage, error)) return false;
        if (!exec(metrics_, armId, error)) return false;
        const auto metricColumns = detail::recordIndexes<results::MetricTick>(metrics_.record());
        while (metrics_.next()) {
            auto t = detail::readRecord<results::MetricTick>(metrics_, metricColumns);
            a.peak_rss_bytes = std::max<std::int64_t>(a.peak_rss_bytes, t.peak_rss_bytes);
            a.metrics.push_back(std::move(t));
        }
        if (!exec(processes_, armId, error)) return false;
        const auto processColumns = detail::recordIndexes<results::ProcessInfo>(processes_.record());
        while (processes_.next())
            a.processes.push_back(detail::readRecord<results::ProcessInfo>(processes_, processColumns));
        if (a.processes.empty() && !a.samples.empty()) deriveProcesses(a);
        if (!exec(events_, armId, error)) return false;
        while (events_.next()) {
            a.warnings.push_back(events_.value(0).toString().toStdString());
            // A caveat: stored with the worker's code (results::isCaveatCode) or, said by the
            // session, with "caveat".
            const std::string code = events_.value(1).toString().toStdString();
            if ((code == "caveat" || results::isCaveatCode(code)) &&
                std::find(a.caveats.begin(), a.caveats.end(), a.warnings.back()) == a.caveats.end())
                a.caveats.push_back(a.warnings.back());
        }
        // Schema v8: the operator profile as the worker sent it (a damaged row reads as none).
        if (!exec(profile_, armId, error)) return false;
        if (profile_.next()) {
            json p = parseJsonText(profile_.value(0).toString(), json());
            if (p.is_object()) a.profile = std::move(p);
        }
        return serving_.read(armId, &a.serving, error);
    }

private:
    // Schema v10: a row per run of samples, its latencies one BLOB; v12: its CRC-32, verified
    // here. A chunk that fails it, or does not hold its n latencies, is named in `damage`
    // ("chunk 4 of 7 (block 3, ...) fails its checksum (...)"); the caller then drops the arm's
    // samples (loadRun).
    bool readChunks(qint64 armId, results::ArmResult& a, SampleCheck& check, QStringList& damage,
                    QString* error) {
        if (!exec(chunks_, armId, error)) return false;
        struct Bad {
            int ordinal, block;
            qint64 firstIter, n;
            QString why;
        };
        std::vector<Bad> bad;
        int ordinal = 0;
        std::vector<std::int64_t> ns;
        while (chunks_.next()) {
            detail::ChunkRow c;
            c.arm = armId;
            c.block = chunks_.value(0).toInt();
            c.firstIter = chunks_.value(1).toLongLong();
            c.n = chunks_.value(2).toLongLong();
            c.batchSize = chunks_.value(3).toInt();
            c.worker = chunks_.value(4).toInt();
            c.process = chunks_.value(5).toInt();
            c.blob = chunks_.value(6).toByteArray();
            c.crc = chunks_.value(7);
            ++ordinal;
            ns.clear();
            QString why;
            switch (detail::chunkState(c, ns, &why)) {
            case detail::ChunkState::Damaged:
                bad.push_back({ordinal, c.block, c.firstIter, c.n, why});
                continue;
            case detail::ChunkState::Unchecked: ++check.uncheckedChunks; break;
            case detail::ChunkState::Sound: ++check.checkedChunks; break;
            }
            if (c.block < 0) {
                a.warmup_ns.insert(a.warmup_ns.end(), ns.begin(), ns.end());
                continue;
            }
            a.samples.append(c.block, int(c.firstIter), c.batchSize, c.worker, c.process,
                             ns.data(), ns.size());
        }
        for (const auto& b : bad)
            damage << QStringLiteral("sample %1 %2")
                          .arg(detail::chunkName(b.ordinal, ordinal, b.block, b.firstIter, b.n), b.why);
        return true;
    }

    static bool exec(QSqlQuery& q, qint64 armId, QString* error) {
        q.bindValue(0, armId);
        if (q.exec()) return true;
        *error = q.lastError().text();
        return false;
    }

    QSqlQuery samples_, chunks_, metrics_, events_, processes_, profile_;
    detail::ServingRows serving_;
};

}  // namespace

std::optional<nlohmann::json> RunStore::runPreset(qint64 id) const {
    const QString what = QStringLiteral("read the preset of run %1").arg(id);
    QSqlQuery q(database(connection_));
    q.prepare(QStringLiteral("SELECT preset FROM experiments WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) return fail(what, q.lastError().text()), std::nullopt;
    if (!q.next()) return fail(what, QStringLiteral("no such run")), std::nullopt;
    const json preset = parseJsonText(q.value(0).toString());
    if (!preset.is_object()) return fail(what, QStringLiteral("the stored preset is not a JSON object")), std::nullopt;
    return preset;
}

QString SampleCheck::uncheckedNote(qint64 runId) const {
    if (!unchecked()) return {};
    return QStringLiteral("run %1's samples are unchecked: stored before Pitlane kept a checksum "
                          "per sample chunk (schema v12), they are read as stored (%2)")
        .arg(runId)
        .arg(uncheckedChunks > 0 ? QStringLiteral("%1 chunks").arg(uncheckedChunks)
                                 : QStringLiteral("%1 sample rows").arg(uncheckedRows));
}

void SampleCheck::merge(const SampleCheck& other) {
    for (const auto& d : other.damaged)
        if (!damaged.contains(d)) damaged << d;
    for (const auto& d : other.damagedArms)
        if (!damagedArms.contains(d)) damagedArms << d;
    checkedChunks += other.checkedChunks;
    uncheckedChunks += other.uncheckedChunks;
    uncheckedRows += other.uncheckedRows;
}

std::optional<results::RunResult> RunStore::loadRun(qint64 id, SampleCheck* check) const {
    QSqlDatabase db = database(connection_);
    const QString what = QStringLiteral("load run %1").arg(id);
    QSqlQuery q(db);
    q.prepare(QStringLiteral(
        "SELECT started_at, wall_s, preset, finished_at, stopping, replication, model_sha256 "
        "FROM experiments WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) return fail(what, q.lastError().text()), std::nullopt;
    if (!q.next()) return fail(what, QStringLiteral("no such run")), std::nullopt;
    results::RunResult r = runFromRow(q);
    const bool finished = !q.value(3).isNull();

    QSqlQuery arms(db);
    arms.prepare(QStringLiteral(
        "SELECT id, name, knobs, batch_size, applied, environment, loaded, status, error_code, "
        "error_message, peak_rss_bytes, pid, batch_sizes, workers, worker_applied, worker_pids, "
        "sweep_failures, model, model_sha256, model_format, compile FROM arms WHERE experiment = ? ORDER BY idx"));
    arms.addBindValue(id);
    if (!arms.exec()) return fail(what, arms.lastError().text()), std::nullopt;
    ArmRows rows(db);
    SampleCheck found;
    while (arms.next()) {
        results::ArmResult a = armFromRow(arms, finished);
        QString error;
        QStringList damage;
        if (!rows.read(arms.value(0).toLongLong(), a, found, damage, &error))
            return fail(what, error), std::nullopt;
        if (!damage.isEmpty()) markDamaged(a, id, damage, found);
        r.arms.push_back(std::move(a));
    }
    // Schema v10: the comparisons computed when the run finished, on these samples (the key
    // says which): compareArms gives them back instead of redoing the bootstraps. Not for a
    // damaged run: its damaged arms have no samples to be compared on.
    QSqlQuery stored(db);
    stored.prepare(QStringLiteral("SELECT comparisons FROM experiments WHERE id = ?"));
    stored.addBindValue(id);
    if (!found.isDamaged() && stored.exec() && stored.next())
        results::restoreComparisons(r, parseJsonText(stored.value(0).toString(), json()));
    if (check) *check = found;
    // Arms stored before schema v9 measured the run's model, TorchScript.
    for (auto& a : r.arms) {
        if (a.model.empty()) a.model = r.preset.model;
        if (a.model_sha256.empty()) a.model_sha256 = r.model_sha256;
        if (a.model_format.empty()) a.model_format = spec::kFormatTorchScript;
    }
    // Remote arms (issue 15): each arm's host is the stored preset's (the arm's own, else the
    // preset's default), so no column is needed.
    const json& pj = r.preset_json;
    if (pj.is_object()) {
        const std::string dflt = pj.value("host", std::string());
        const json parr = pj.value("arms", json::array());
        for (std::size_t i = 0; i < r.arms.size(); ++i) {
            const json arm = i < parr.size() && parr[i].is_object() ? parr[i] : json::object();
            const json h = arm.value("host", json(dflt));
            if (h.is_string()) r.arms[i].host = h.get<std::string>();
        }
    }
    return r;
}

std::optional<CrossRunComparison> RunStore::compareRuns(qint64 runX, int armX, qint64 runY,
                                                        int armY, SampleCheck* found) const {
    SampleCheck checkX, checkY;
    const auto x = loadRun(runX, &checkX);
    if (!x) return std::nullopt;
    const bool sameRun = runX == runY;
    const auto y = sameRun ? x : loadRun(runY, &checkY);
    if (!y) return std::nullopt;
    if (found) {
        *found = checkX;
        found->merge(checkY);
    }
    auto check = [&](const results::RunResult& r, qint64 id, int arm) {
        if (arm >= 0 && std::size_t(arm) < r.arms.size()) return true;
        return fail(
            QStringLiteral("compare runs"),
            QStringLiteral("run %1 has no arm %2 (it has %3)").arg(id).arg(arm).arg(r.arms.size()));
    };
    if (!check(*x, runX, armX) || !check(*y, runY, armY)) return std::nullopt;

    CrossRunComparison c;
    auto& r = c.run;
    results::ArmResult a = x->arms[std::size_t(armX)];
    results::ArmResult b = y->arms[std::size_t(armY)];
    // Arm names must differ for the table and the verdict ("#12 A" vs "#15 A").
    a.name = "#" + std::to_string(runX) + " " + a.name;
    b.name = "#" + std::to_string(runY) + " " + b.name;
    const std::string model = x->preset.model == y->preset.model
                                  ? x->preset.model
                                  : x->preset.model + " / " + y->preset.model;
    r.preset.name = "run " + std::to_string(runX) + " arm " + x->arms[std::size_t(armX)].name +
                    " vs run " + std::to_string(runY) + " arm " + y->arms[std::size_t(armY)].name;
    r.preset.model = model;
    r.model_sha256 = x->model_sha256 == y->model_sha256
                         ? x->model_sha256
                         : x->model_sha256 + " / " + y->model_sha256;
    r.preset_json = {{"name", r.preset.name},
                     {"model", model},
                     {"compared_runs", {runX, runY}},
                     {"presets", {x->preset_json, y->preset_json}}};
    r.started_at = y->started_at;
    r.wall_s = x->wall_s + y->wall_s;
    r.arms = {std::move(a), std::move(b)};
    // Arms of one run were interleaved block by block, and their blocks pair as in the run;
    // block k of one run has nothing to do with block k of another.
    r.interleaved = sameRun;
    // Serving arms are summarized under the serving block (its SLO): the first run's.
    if (x->preset.serving.enabled)
        r.preset.serving = x->preset.serving;
    else if (y->preset.serving.enabled)
        r.preset.serving = y->preset.serving;
    if (sameRun) {
        r.stopping = x->stopping;
        r.replication = x->replication;
    }
    const auto comps = results::compareArms(r);
    if (!comps.empty()) c.comparison = comps.front();
    c.note = sameRun ? "two arms of the same run, interleaved block by block as measured"
                     : "the arms come from different runs (" + x->started_at + " and " +
                           y->started_at +
                           "), not interleaved: anything that changed on the machine between "
                           "them is part of the difference";
    return c;
}

}  // namespace pitlane::store
