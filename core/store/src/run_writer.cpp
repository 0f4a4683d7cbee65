// Writing runs: the recorder's small per-event transactions and the one-shot import.
#include "pitlane/store/run_store.h"

#include "pitlane/results/lesson.h"

#include "record_sql.h"
#include "sample_codec.h"
#include "serving_rows.h"
#include "sql_util.h"

#include <QDateTime>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace pitlane::store {

using detail::jsonText;
using detail::Transaction;
using nlohmann::json;

namespace {

QSqlDatabase database(const QString& connection) {
    return QSqlDatabase::database(connection, /*open=*/false);
}

QString nowIso() {
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
}

// QSQLITE binds a null QString (what an empty std::string converts to) as NULL; text columns
// are NOT NULL.
QString text(const std::string& s) {
    return s.empty() ? QStringLiteral("") : QString::fromStdString(s);
}
QString text(const QString& s) {
    return s.isNull() ? QStringLiteral("") : s;
}

struct Inserter {
    QSqlDatabase db;
    QString error;

    bool exec(QSqlQuery& q) {
        if (q.exec()) return true;
        error = q.lastError().text();
        return false;
    }

    std::optional<qint64> experiment(const results::RunResult& run, const QString& source) {
        QSqlQuery q(db);
        q.prepare(QStringLiteral(
            "INSERT INTO experiments (started_at, name, model, preset, source, wall_s, "
            "model_sha256) VALUES (?, ?, ?, ?, ?, ?, ?)"));
        q.addBindValue(text(run.started_at.empty() ? results::isoNowUtc() : run.started_at));
        q.addBindValue(text(run.preset.name));
        q.addBindValue(text(run.preset.model));
        q.addBindValue(
            jsonText(run.preset_json.is_null() ? spec::presetToJson(run.preset) : run.preset_json));
        q.addBindValue(text(source));
        q.addBindValue(run.wall_s);
        q.addBindValue(text(run.model_sha256));
        if (!exec(q)) return std::nullopt;
        return q.lastInsertId().toLongLong();
    }

    std::optional<qint64> arm(qint64 experiment, int index, const results::ArmResult& a) {
        QSqlQuery q(db);
        q.prepare(QStringLiteral("INSERT INTO arms (experiment, idx, name) VALUES (?, ?, ?)"));
        q.addBindValue(experiment);
        q.addBindValue(index);
        q.addBindValue(text(a.name));
        if (!exec(q)) return std::nullopt;
        const qint64 id = q.lastInsertId().toLongLong();
        if (!updateArm(id, a)) return std::nullopt;
        return id;
    }

    bool updateArm(qint64 armId, const results::ArmResult& a) {
        QSqlQuery q(db);
        q.prepare(QStringLiteral(
            "UPDATE arms SET name = ?, knobs = ?, batch_size = ?, applied = ?, environment = ?, "
            "loaded = ?, status = ?, error_code = ?, error_message = ?, peak_rss_bytes = ?, "
            "pid = ?, batch_sizes = ?, workers = ?, worker_applied = ?, worker_pids = ?, "
            "sweep_failures = ?, model = ?, model_sha256 = ?, model_format = ?, compile = ? WHERE id = ?"));
        q.addBindValue(text(a.name));
        q.addBindValue(jsonText(results::knobsJson(a)));
        q.addBindValue(a.batch_size);
        q.addBindValue(jsonText(protocol::appliedFields(a.applied)));
        q.addBindValue(jsonText(a.environment));
        q.addBindValue(jsonText(a.loaded));
        q.addBindValue(text(a.status));
        q.addBindValue(a.error ? QVariant(text(a.error->code)) : QVariant());
        q.addBindValue(a.error ? QVariant(text(a.error->message)) : QVariant());
        q.addBindValue(qint64(a.peak_rss_bytes));
        q.addBindValue(qint64(a.pid));
        q.addBindValue(jsonText(json(a.batch_sizes)));
        q.addBindValue(a.workers);
        q.addBindValue(jsonText(json(a.worker_applied)));
        q.addBindValue(jsonText(json(a.worker_pids)));
        json failures = json::array();
        for (const auto& [bs, e] : a.sweep_failures)
            failures.push_back({{"batch_size", bs}, {"code", e.code}, {"message", e.message}});
        q.addBindValue(jsonText(failures));
        q.addBindValue(text(a.model));
        q.addBindValue(text(a.model_sha256));
        q.addBindValue(text(a.model_format));
        q.addBindValue(a.compile ? jsonText(results::compileJson(*a.compile)) : QStringLiteral(""));  // NOT NULL
        q.addBindValue(armId);
        return exec(q);
    }

    // One sample_chunks row per run of the samples (a samples event), its latencies one BLOB.
    bool samples(qint64 armId, const results::SampleSeries& s, std::size_t first,
                 std::size_t count) {
        results::SampleSeries part;
        part.append(s, first, count);
        QSqlQuery q(db);
        if (!prepareChunk(q)) return false;
        bool ok = true;
        std::vector<std::int64_t> run;
        part.forEachSpan([&](const results::SampleSeries::Run& r, std::size_t offset,
                             const std::int64_t* ns, std::size_t n) {
            if (!ok) return;
            if (offset == 0) run.clear();
            run.insert(run.end(), ns, ns + n);
            if (offset + n < r.count) return;  // the run continues in the next chunk
            ok = chunk(q, armId, r.block, r.first_iter, r.batch_size, r.worker, r.process, run);
        });
        return ok;
    }

    bool prepareChunk(QSqlQuery& q) {
        if (q.prepare(QStringLiteral(
                "INSERT INTO sample_chunks (arm, block, first_iter, n, batch_size, worker, "
                "process, latency_ns, crc32) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")))
            return true;
        return exec(q);
    }

    bool chunk(QSqlQuery& q, qint64 armId, int block, int firstIter, int batchSize, int worker,
               int process, const std::vector<std::int64_t>& ns) {
        if (ns.empty()) return true;
        detail::ChunkRow c;
        c.arm = armId;
        c.block = block;
        c.firstIter = firstIter;
        c.n = qint64(ns.size());
        c.batchSize = batchSize;
        c.worker = worker;
        c.process = process;
        c.blob = detail::encodeLatencies(ns.data(), ns.size());
        q.bindValue(0, c.arm);
        q.bindValue(1, c.block);
        q.bindValue(2, c.firstIter);
        q.bindValue(3, c.n);
        q.bindValue(4, c.batchSize);
        q.bindValue(5, c.worker);
        q.bindValue(6, c.process);
        q.bindValue(7, c.blob);
        q.bindValue(8, qint64(detail::chunkChecksum(c)));  // schema v12, verified on every read
        return exec(q);
    }

    bool warmup(qint64 armId, const std::vector<std::int64_t>& ns, std::size_t first, int batch) {
        if (first >= ns.size()) return true;
        QSqlQuery q(db);
        return prepareChunk(q) &&
               chunk(q, armId, -1, int(first), batch, 0, 0,
                     std::vector<std::int64_t>(ns.begin() + std::ptrdiff_t(first), ns.end()));
    }

    bool metric(qint64 armId, const results::MetricTick& t) {
        QSqlQuery q(db);
        q.prepare(detail::insertSql<results::MetricTick>("INSERT", "metrics", {QStringLiteral("arm")}));
        q.addBindValue(armId);
        detail::bindRecord(q, t);
        return exec(q);
    }

    // Processes [first, end) of an arm, by index: a row is replaced as its process reports more.
    bool processes(qint64 armId, const std::vector<results::ProcessInfo>& p, std::size_t first) {
        QSqlQuery q(db);
        q.prepare(detail::insertSql<results::ProcessInfo>(
            "INSERT OR REPLACE", "processes", {QStringLiteral("arm"), QStringLiteral("idx")}));
        for (std::size_t i = first; i < p.size(); ++i) {
            q.addBindValue(armId);
            q.addBindValue(qint64(i));
            detail::bindRecord(q, p[i]);
            if (!exec(q)) return false;
        }
        return true;
    }

    // The arm's operator profile (schema v8): one row per arm, replaced if written again.
    bool profile(qint64 armId, const json& p) {
        QSqlQuery q(db);
        q.prepare(QStringLiteral("INSERT OR REPLACE INTO profiles (arm, profile) VALUES (?, ?)"));
        q.addBindValue(armId);
        q.addBindValue(jsonText(p));
        return exec(q);
    }

    bool event(qint64 runId, qint64 armId, double tMs, const json& ev) {
        QSqlQuery q(db);
        q.prepare(
            QStringLiteral("INSERT INTO events (experiment, arm, t_ms, type, code, message, "
                           "detail) VALUES (?, ?, ?, ?, ?, ?, ?)"));
        q.addBindValue(runId);
        q.addBindValue(armId > 0 ? QVariant(armId) : QVariant());
        q.addBindValue(tMs);
        q.addBindValue(text(ev.value("type", std::string("warning"))));
        q.addBindValue(text(ev.value("code", std::string())));
        q.addBindValue(text(ev.value("message", std::string())));
        q.addBindValue(jsonText(ev));
        return exec(q);
    }

    bool finish(qint64 runId, const results::RunResult& run) {
        QSqlQuery q(db);
        q.prepare(QStringLiteral(
            "UPDATE experiments SET finished_at = ?, wall_s = ?, verdict = ?, stopping = ?, "
            "replication = ?, lesson = ?, comparisons = ? WHERE id = ?"));
        q.addBindValue(nowIso());
        q.addBindValue(run.wall_s);
        q.addBindValue(text(verdictSummary(run)));
        q.addBindValue(jsonText(run.stopping.is_object() ? run.stopping : json::object()));
        q.addBindValue(jsonText(run.replication.is_object() ? run.replication : json::object()));
        const auto lesson = results::checkLesson(run);
        q.addBindValue(jsonText(lesson.empty() ? json::object() : results::toJson(lesson)));
        q.addBindValue(jsonText(results::comparisonsToJson(run)));  // compareArms' memo
        q.addBindValue(runId);
        return exec(q);
    }
};

// One write in a transaction of its own: nullopt when it and its COMMIT succeeded, else why not.
template <class Write>
std::optional<QString> writeAlone(const QSqlDatabase& db, Write&& write) {
    Inserter ins{db, {}};
    Transaction tx(ins.db);
    if (!tx.began()) return tx.error();
    if (write(ins) && tx.commit()) return std::nullopt;
    return ins.error.isEmpty() ? tx.error() : ins.error;
}

}  // namespace

std::optional<RecordedRun> RunStore::beginRun(const results::RunResult& run,
                                              const QString& source) {
    // The reserve the run's end needs if the disk fills mid-run: without room for it, the run is
    // not recorded at all (said as disk full) rather than stored in part with no end.
    if (!makeReserve() && !reserveProblem_.isEmpty())
        return fail(QStringLiteral("record run"), reserveProblem_), std::nullopt;
    Inserter ins{database(connection_), {}};
    Transaction tx(ins.db);
    if (!tx.began()) return fail(QStringLiteral("record run"), tx.error()), std::nullopt;
    RecordedRun rec;
    const auto id = ins.experiment(run, source);
    if (!id) return fail(QStringLiteral("record run"), ins.error), std::nullopt;
    rec.id = *id;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto armId = ins.arm(rec.id, int(i), run.arms[i]);
        if (!armId) return fail(QStringLiteral("record run"), ins.error), std::nullopt;
        rec.armIds.push_back(*armId);
    }
    // The COMMIT's error is the transaction's (its own query's), not the connection's: that one
    // is empty ("run history: record run: " with no reason, on a full disk).
    if (!tx.commit()) return fail(QStringLiteral("record run"), tx.error()), std::nullopt;
    return rec;
}

bool RunStore::updateArm(qint64 armId, const results::ArmResult& arm) {
    const auto why = writeAlone(database(connection_), [&](Inserter& ins) {
        return ins.updateArm(armId, arm);
    });
    return !why || fail(QStringLiteral("record arm"), *why);
}

bool RunStore::appendSamples(qint64 armId, const results::SampleSeries& samples,
                             std::size_t first, std::size_t count) {
    Inserter ins{database(connection_), {}};
    Transaction tx(ins.db);
    if (!tx.began()) return fail(QStringLiteral("record samples"), tx.error());
    if (!ins.samples(armId, samples, first, count) || !tx.commit())
        return fail(QStringLiteral("record samples"), ins.error.isEmpty() ? tx.error() : ins.error);
    return true;
}

bool RunStore::appendWarmup(qint64 armId, const std::vector<std::int64_t>& warmupNs,
                            std::size_t first, int batchSize) {
    Inserter ins{database(connection_), {}};
    Transaction tx(ins.db);
    if (!tx.began()) return fail(QStringLiteral("record warmup"), tx.error());
    if (!ins.warmup(armId, warmupNs, first, batchSize) || !tx.commit())
        return fail(QStringLiteral("record warmup"), ins.error.isEmpty() ? tx.error() : ins.error);
    return true;
}

bool RunStore::appendMetric(qint64 armId, const results::MetricTick& tick) {
    const auto why = writeAlone(database(connection_), [&](Inserter& ins) {
        return ins.metric(armId, tick);
    });
    return !why || fail(QStringLiteral("record metrics"), *why);
}

bool RunStore::updateProcesses(qint64 armId, const std::vector<results::ProcessInfo>& processes,
                               std::size_t first) {
    const auto why = writeAlone(database(connection_), [&](Inserter& ins) {
        return ins.processes(armId, processes, first);
    });
    return !why || fail(QStringLiteral("record processes"), *why);
}

bool RunStore::updateServingLevel(qint64 armId, std::size_t index,
                                  const results::ServingLevel& level) {
    const auto why = writeAlone(database(connection_), [&](Inserter& ins) {
        return detail::writeServingLevel(ins.db, armId, index, level, &ins.error);
    });
    return !why || fail(QStringLiteral("record serving level"), *why);
}

bool RunStore::appendServingChunk(qint64 armId, const ServingChunk& chunk) {
    const auto why = writeAlone(database(connection_), [&](Inserter& ins) {
        return detail::writeServingChunk(ins.db, armId, chunk, &ins.error);
    });
    return !why || fail(QStringLiteral("record serving batches"), *why);
}

bool RunStore::updateProfile(qint64 armId, const json& profile) {
    const auto why = writeAlone(database(connection_), [&](Inserter& ins) {
        return ins.profile(armId, profile);
    });
    return !why || fail(QStringLiteral("record profile"), *why);
}

bool RunStore::appendEvent(qint64 runId, qint64 armId, double tMs, const json& event) {
    const auto why = writeAlone(database(connection_), [&](Inserter& ins) {
        return ins.event(runId, armId, tMs, event);
    });
    return !why || fail(QStringLiteral("record event"), *why);
}

namespace {

// Why the file does not hold the arm's `measured` samples ("" when it does), after `lostWrite`
// (the first write of the run that failed, "" when none did): what the file holds is counted,
// not assumed, so a write whose commit failed after it ran is found too.
QString unstoredSamples(const QSqlDatabase& db, qint64 armId, std::size_t measured,
                        const QString& lostWrite, bool diskFull) {
    QSqlQuery q(db);
    const QString cause = lostWrite.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(lostWrite);
    // Prepared apart: when the table is gone, prepare() has the reason, exec() only a
    // "Parameter count mismatch".
    if (!q.prepare(QStringLiteral(
            "SELECT (SELECT count(*) FROM samples WHERE arm = ? AND block >= 0) + "
            "(SELECT coalesce(sum(n), 0) FROM sample_chunks WHERE arm = ? AND block >= 0)")))
        return QStringLiteral("the history cannot hold its samples: %1%2")
            .arg(q.lastError().text(), cause);
    q.addBindValue(armId);
    q.addBindValue(armId);
    if (!q.exec() || !q.next())
        return QStringLiteral("the history cannot hold its samples: %1%2")
            .arg(q.lastError().text(), cause);
    const qint64 held = q.value(0).toLongLong();
    // The disk (or the page cap) filled: the run is incomplete, not cancelled, and says where.
    if (diskFull && held < qint64(measured))
        return QStringLiteral("incomplete: the history ran out of space after %1 of %2 samples%3")
            .arg(held)
            .arg(measured)
            .arg(cause);
    if (diskFull && !lostWrite.isEmpty())
        return QStringLiteral("incomplete: the history ran out of space after storing its %1 "
                              "samples; later rows (metrics, events, processes) may be missing%2")
            .arg(held)
            .arg(cause);
    if (held < qint64(measured))
        return QStringLiteral("the history holds %1 of the %2 samples measured%3")
            .arg(held)
            .arg(measured)
            .arg(cause);
    if (!lostWrite.isEmpty())
        return QStringLiteral("a write of the run to the history failed (%1)").arg(lostWrite);
    return {};
}

}  // namespace

namespace {
// The caveats the session said of an arm (a memory limit it lowered, ...): the worker's are
// stored as they arrive, with their code; these are stored at the run's end, code "caveat",
// unless the same message is stored already.
bool storeSessionCaveats(Inserter& ins, qint64 runId, qint64 armId, const results::ArmResult& arm) {
    for (const auto& c : arm.caveats) {
        QSqlQuery q(ins.db);
        q.prepare(QStringLiteral("SELECT 1 FROM events WHERE arm = ? AND type = 'warning' AND message = ?"));
        q.addBindValue(armId);
        q.addBindValue(QString::fromStdString(c));
        if (!ins.exec(q)) return false;
        if (q.next()) continue;
        if (!ins.event(runId, armId, 0, {{"type", "warning"}, {"code", "caveat"}, {"message", c}})) return false;
    }
    return true;
}
}  // namespace

bool RunStore::finishRun(qint64 runId, results::RunResult& run, const QString& lostWrite) {
    // A write of the run hit a full disk: the reserve is given back so that this, the run's end,
    // has room ("incomplete: the history ran out of space ...", never an unfinished run).
    const bool full = diskFull_ || lostWrite.contains(QLatin1String("disk full"));
    if (full) releaseReserve();
    Inserter ins{database(connection_), {}};
    Transaction tx(ins.db);
    if (!tx.began()) return fail(QStringLiteral("finish run"), tx.error());
    QSqlQuery q(ins.db);
    q.prepare(QStringLiteral("SELECT id FROM arms WHERE experiment = ? ORDER BY idx"));
    q.addBindValue(runId);
    if (!ins.exec(q)) return fail(QStringLiteral("finish run"), ins.error);
    std::vector<qint64> armIds;
    while (q.next()) armIds.push_back(q.value(0).toLongLong());
    // An arm the file does not hold whole is never stored as ok: it is "failed" with code
    // not_stored and the reason (an arm that failed on its own keeps its own error), and an
    // error event says it in the arm's log. The run still gets its end, so the history lists it
    // as over, with "A failed" in its verdict.
    QStringList notStored;
    for (std::size_t i = 0; i < armIds.size() && i < run.arms.size(); ++i) {
        auto& arm = run.arms[i];
        const QString why = unstoredSamples(ins.db, armIds[i], arm.samples.size(), lostWrite, full);
        if (why.isEmpty()) continue;
        notStored << QStringLiteral("arm %1: %2").arg(QString::fromStdString(arm.name), why);
        ins.event(runId, armIds[i], run.wall_s * 1000,  // the event's own failure changes nothing
                  {{"type", "error"},
                   {"code", "not_stored"},
                   {"message", why.toStdString()},
                   {"source", "history"}});
        if (arm.status == results::kOk) {
            arm.status = results::kFailed;
            arm.error = protocol::Error{
                "not_stored", (full ? std::string() : std::string("not stored: ")) + why.toStdString(), {}};
        }
    }
    for (std::size_t i = 0; i < armIds.size() && i < run.arms.size(); ++i)
        if (!ins.updateArm(armIds[i], run.arms[i]) ||
            !ins.processes(armIds[i], run.arms[i].processes, 0) ||
            !storeSessionCaveats(ins, runId, armIds[i], run.arms[i]))
            return fail(QStringLiteral("finish run"), ins.error);
    if (!ins.finish(runId, run) || !tx.commit())
        return fail(QStringLiteral("finish run"), ins.error.isEmpty() ? tx.error() : ins.error);
    if (!notStored.isEmpty())
        return fail(QStringLiteral("run %1 is stored as not complete").arg(runId),
                    notStored.join(QStringLiteral("; ")));
    return true;
}

bool RunStore::inOneTransaction(const std::function<void()>& writes) {
    QSqlDatabase db = database(connection_);
    Transaction tx(db);
    if (!tx.began()) return fail(QStringLiteral("commit"), tx.error());
    writes();
    if (tx.commit()) return true;
    return fail(QStringLiteral("commit"), tx.error());
}

std::optional<qint64> RunStore::importRun(const results::RunResult& run, const QString& source) {
    Inserter ins{database(connection_), {}};
    Transaction tx(ins.db);
    if (!tx.began()) return fail(QStringLiteral("import run"), tx.error()), std::nullopt;
    auto failed = [&] { return fail(QStringLiteral("import run"), ins.error), std::nullopt; };
    const auto id = ins.experiment(run, source);
    if (!id) return failed();
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        const auto armId = ins.arm(*id, int(i), a);
        if (!armId || !ins.samples(*armId, a.samples, 0, a.samples.size()) ||
            !ins.warmup(*armId, a.warmup_ns, 0, a.batch_size) ||
            !ins.processes(*armId, a.processes, 0) ||
            (a.profile.is_object() && !ins.profile(*armId, a.profile)))
            return failed();
        for (std::size_t l = 0; l < a.serving.size(); ++l)
            if (!detail::writeServingLevelWithRecord(ins.db, *armId, l, a.serving[l], &ins.error))
                return failed();
        for (const auto& m : a.metrics)
            if (!ins.metric(*armId, m)) return failed();
        for (const auto& w : a.warnings)
        {
            // A caveat (what did not run as asked) keeps its code: it is read back as one.
            const bool caveat = std::find(a.caveats.begin(), a.caveats.end(), w) != a.caveats.end();
            json ev = {{"type", "warning"}, {"message", w}};
            if (caveat) ev["code"] = "caveat";
            if (!ins.event(*id, *armId, 0, ev)) return failed();
        }
    }
    if (!ins.finish(*id, run) || !tx.commit()) return failed();
    return *id;
}

}  // namespace pitlane::store
