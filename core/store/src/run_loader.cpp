// Reading runs back as results::RunResult, and comparing arms of two runs.
#include "pitlane/store/run_store.h"

#include "sql_util.h"

#include <QSqlError>
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
    try {
        if (p.contains("input")) r.preset.input = spec::parseInputs(p["input"], "history", "input");
        const json run = p.value("run", json::object());
        r.preset.run.warmup_iters = run.value("warmup_iters", r.preset.run.warmup_iters);
        r.preset.run.iters = run.value("iters", r.preset.run.iters);
        r.preset.run.block_iters = run.value("block_iters", r.preset.run.block_iters);
    } catch (const std::exception&) {
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
    a.worker_applied = applied.is_array() ? applied.get<std::vector<json>>() : std::vector<json>{};
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

}  // namespace

std::optional<results::RunResult> RunStore::loadRun(qint64 id) const {
    QSqlDatabase db = database(connection_);
    const QString what = QStringLiteral("load run %1").arg(id);
    QSqlQuery q(db);
    q.prepare(QStringLiteral(
        "SELECT started_at, wall_s, preset, finished_at, stopping, replication FROM experiments "
        "WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) return fail(what, q.lastError().text()), std::nullopt;
    if (!q.next()) return fail(what, QStringLiteral("no such run")), std::nullopt;
    results::RunResult r;
    r.started_at = q.value(0).toString().toStdString();
    r.wall_s = q.value(1).toDouble();
    r.preset_json = parseJsonText(q.value(2).toString());
    const bool finished = !q.value(3).isNull();
    r.stopping = parseJsonText(q.value(4).toString());
    r.replication = parseJsonText(q.value(5).toString());
    fillPreset(r);

    QSqlQuery arms(db);
    arms.prepare(QStringLiteral(
        "SELECT id, name, knobs, batch_size, applied, environment, loaded, status, error_code, "
        "error_message, peak_rss_bytes, pid, batch_sizes, workers, worker_applied, worker_pids, "
        "sweep_failures FROM arms WHERE experiment = ? ORDER BY idx"));
    arms.addBindValue(id);
    if (!arms.exec()) return fail(what, arms.lastError().text()), std::nullopt;
    QSqlQuery samples(db), metrics(db), events(db), processes(db);
    samples.prepare(
        QStringLiteral("SELECT block, iter, batch_size, worker, latency_ns, process FROM samples "
                       "WHERE arm = ? ORDER BY rowid"));
    metrics.prepare(
        QStringLiteral("SELECT t_ms, rss, peak_rss, tensor_bytes, tensor_peak_bytes, "
                       "cpu_s, core_util, worker, raw, process FROM metrics WHERE arm = ? "
                       "ORDER BY rowid"));
    processes.prepare(QStringLiteral(
        "SELECT replicate, worker, pid, load_ms, first_forward_ms, minor_faults, major_faults, "
        "fault_iters FROM processes WHERE arm = ? ORDER BY idx"));
    events.prepare(QStringLiteral(
        "SELECT message FROM events WHERE arm = ? AND type = 'warning' ORDER BY id"));
    while (arms.next()) {
        const qint64 armId = arms.value(0).toLongLong();
        results::ArmResult a;
        a.name = arms.value(1).toString().toStdString();
        a.knobs = parseJsonText(arms.value(2).toString());
        a.batch_size = arms.value(3).toInt();
        a.applied = parseJsonText(arms.value(4).toString());
        a.environment = parseJsonText(arms.value(5).toString());
        a.loaded = parseJsonText(arms.value(6).toString());
        a.status = arms.value(7).toString().toStdString();
        if (!arms.value(8).isNull())
            a.error = protocol::Error{
                arms.value(8).toString().toStdString(), arms.value(9).toString().toStdString(), {}};
        a.peak_rss_bytes = arms.value(10).toLongLong();
        a.pid = long(arms.value(11).toLongLong());
        fillSweepAndWorkers(a, arms);
        if (!finished && a.status == results::kPending) {
            a.status = results::kCancelled;
            if (!a.error)
                a.error = protocol::Error{"interrupted",
                                          "the recording process ended before this arm finished; "
                                          "every sample received until then is kept",
                                          {}};
        }

        samples.bindValue(0, armId);
        if (!samples.exec()) return fail(what, samples.lastError().text()), std::nullopt;
        while (samples.next()) {
            const int block = samples.value(0).toInt();
            const qint64 ns = samples.value(4).toLongLong();
            if (block < 0) {
                a.warmup_ns.push_back(ns);
                continue;
            }
            a.samples.push_back({block, samples.value(1).toInt(), samples.value(2).toInt(),
                                 samples.value(3).toInt(), ns, samples.value(5).toInt()});
        }
        metrics.bindValue(0, armId);
        if (!metrics.exec()) return fail(what, metrics.lastError().text()), std::nullopt;
        while (metrics.next()) {
            results::MetricTick t;
            t.t_ms = metrics.value(0).toDouble();
            t.rss_bytes = metrics.value(1).toLongLong();
            t.peak_rss_bytes = metrics.value(2).toLongLong();
            t.tensor_bytes = metrics.value(3).toLongLong();
            t.tensor_peak_bytes = metrics.value(4).toLongLong();
            t.cpu_s = metrics.value(5).toDouble();
            const json util = parseJsonText(metrics.value(6).toString(), json::array());
            if (util.is_array())
                for (const auto& v : util)
                    if (v.is_number()) t.core_util_pct.push_back(v.get<double>());
            t.worker = metrics.value(7).toInt();
            t.raw = parseJsonText(metrics.value(8).toString());
            t.process = metrics.value(9).toInt();
            a.peak_rss_bytes = std::max<std::int64_t>(a.peak_rss_bytes, t.peak_rss_bytes);
            a.metrics.push_back(std::move(t));
        }
        processes.bindValue(0, armId);
        if (!processes.exec()) return fail(what, processes.lastError().text()), std::nullopt;
        while (processes.next()) {
            results::ProcessInfo p;
            p.replicate = processes.value(0).toInt();
            p.worker = processes.value(1).toInt();
            p.pid = long(processes.value(2).toLongLong());
            p.load_ms = processes.value(3).toDouble();
            p.first_forward_ms = processes.value(4).toDouble();
            p.minor_faults = processes.value(5).toLongLong();
            p.major_faults = processes.value(6).toLongLong();
            p.fault_iters = processes.value(7).toLongLong();
            a.processes.push_back(p);
        }
        if (a.processes.empty() && !a.samples.empty()) deriveProcesses(a);
        events.bindValue(0, armId);
        if (!events.exec()) return fail(what, events.lastError().text()), std::nullopt;
        while (events.next()) a.warnings.push_back(events.value(0).toString().toStdString());
        r.arms.push_back(std::move(a));
    }
    return r;
}

std::optional<CrossRunComparison> RunStore::compareRuns(qint64 runX, int armX, qint64 runY,
                                                        int armY) const {
    const auto x = loadRun(runX);
    if (!x) return std::nullopt;
    const auto y = loadRun(runY);
    if (!y) return std::nullopt;
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
    r.preset_json = {{"name", r.preset.name},
                     {"model", model},
                     {"compared_runs", {runX, runY}},
                     {"presets", {x->preset_json, y->preset_json}}};
    r.started_at = y->started_at;
    r.wall_s = x->wall_s + y->wall_s;
    r.arms = {std::move(a), std::move(b)};
    r.interleaved = false;  // block k of one run has nothing to do with block k of the other
    const auto comps = results::compareArms(r);
    if (!comps.empty()) c.comparison = comps.front();
    c.note = "the arms come from different runs (" + x->started_at + " and " + y->started_at +
             "), not interleaved: anything that changed on the machine between them is part of "
             "the difference";
    return c;
}

}  // namespace pitlane::store
