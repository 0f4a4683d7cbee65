// Opening the history file and the history panel's operations (list, rename, baseline, delete).
#include "pitlane/store/run_store.h"

#include "sample_codec.h"
#include "schema.h"
#include "sql_util.h"
#include "pitlane/protocol/json_limits.h"

#include <QAtomicInteger>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QStringList>
#include <QVariant>

#include <mutex>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace pitlane::store {

using detail::Transaction;

namespace {
QAtomicInteger<quint64> g_connections;

// The history files this process holds open through SQLite, by path, with how many
// connections. SQLite locks with POSIX advisory locks, which belong to the process and the file:
// closing *any* descriptor of the file drops every lock the process holds on it. The header
// check below reads the file through a QFile of its own; done while another connection of this
// process (the window has three: its list, its reader thread, its recorder thread) has the file
// open, its close dropped that connection's lock, another process closing the file then took
// itself for the last one and removed the WAL under it, and the next writes of this process
// damaged the file ("Page 6 is never used"; seen when `sqlite3 h.db 'DROP TABLE samples'` ran
// during a window's run). The header is read only when no connection of this process holds the
// file: one that does has checked it already.
std::mutex g_heldMutex;
QHash<QString, int> g_held;

QString heldKey(const QString& path) {
    const QFileInfo info(path);
    const QString canonical = info.canonicalFilePath();
    return canonical.isEmpty() ? QDir::cleanPath(info.absoluteFilePath()) : canonical;
}

void release(QString& key) {
    if (key.isEmpty()) return;
    std::lock_guard lock(g_heldMutex);
    if (--g_held[key] <= 0) g_held.remove(key);
    key.clear();
}

QSqlDatabase database(const QString& connection) {
    return QSqlDatabase::database(connection, /*open=*/false);
}
}  // namespace

RunStore::RunStore()
    : connection_(QStringLiteral("pitlane-store-%1").arg(g_connections.fetchAndAddRelaxed(1))) {}

RunStore::~RunStore() {
    close();
}

QString RunStore::defaultPath() {
    const QString base = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    return QDir(base).filePath(QStringLiteral("pitlane/history.sqlite"));
}

QString RunStore::resolvePath(const QString& cliValue) {
    QString choice = cliValue;
    if (choice.isEmpty()) choice = qEnvironmentVariable("PITLANE_DB");
    if (choice.isEmpty()) choice = defaultPath();
    return choice == QLatin1String(kNone) ? QString() : choice;
}

bool RunStore::fail(const QString& what, const QString& why) const {
    // SQLITE_FULL, whichever write hit it: said as "disk full", with the file and the free space,
    // every time (a bare "database or disk is full" left the user to guess which disk).
    // A reason that says it already (a run's end naming its arms) is kept as it is.
    if (why.contains(QLatin1String("disk full: "))) {
        diskFull_ = true;
        error_ = what + QStringLiteral(": ") + why;
    } else if (why.contains(QLatin1String(kDiskFullText))) {
        diskFull_ = true;
        error_ = what + QStringLiteral(": ") + diskFullText(QLatin1String(kDiskFullText));
    } else {
        error_ = what + QStringLiteral(": ") + why;
    }
    return false;
}

namespace {
QString bytesText(double bytes) {
    if (bytes < 1024) return QStringLiteral("%1 bytes").arg(qint64(bytes));
    if (bytes < 1024.0 * 1024) return QStringLiteral("%1 KiB").arg(bytes / 1024, 0, 'f', 0);
    if (bytes < 1024.0 * 1024 * 1024) return QStringLiteral("%1 MiB").arg(bytes / (1024.0 * 1024), 0, 'f', 1);
    return QStringLiteral("%1 GiB").arg(bytes / (1024.0 * 1024 * 1024), 0, 'f', 1);
}

QString reservePath(const QString& path) {
    return path + QStringLiteral("-reserve");
}

qint64 pageCapFromEnv() {
    bool ok = false;
    const qint64 pages = qEnvironmentVariable(RunStore::kMaxPagesEnv).toLongLong(&ok);
    return ok && pages > 0 ? pages : 0;
}
}  // namespace

QString RunStore::diskFullText(const QString& why) const {
    const QString dir = QFileInfo(path_).absolutePath();
    QString free;
    struct statvfs fs {};
    if (::statvfs(QFile::encodeName(dir).constData(), &fs) == 0)
        free = QStringLiteral("%1 free on %2").arg(bytesText(double(fs.f_bavail) * double(fs.f_frsize)), dir);
    else
        free = QStringLiteral("the free space on %1 cannot be read: %2").arg(dir, QString::fromLocal8Bit(std::strerror(errno)));
    if (const qint64 cap = pageCapFromEnv())
        free += QStringLiteral("; the history is capped at %1 pages by $%2, a test setting")
                    .arg(cap)
                    .arg(QLatin1String(kMaxPagesEnv));
    return QStringLiteral("disk full: %1: %2 (%3)").arg(QFileInfo(path_).absoluteFilePath(), why, free);
}

bool RunStore::makeReserve() {
    if (reserveHeld_) return true;
    reserveProblem_.clear();
    const QString file = reservePath(path_);
    const QByteArray name = QFile::encodeName(file);
    struct stat st {};
    if (::stat(name.constData(), &st) == 0 && st.st_size >= kReserveBytes) return reserveHeld_ = true;
    const int fd = ::open(name.constData(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return reserveHeld_ = false;  // an unwritable folder: the history's own writes say so
    const int err = ::posix_fallocate(fd, 0, kReserveBytes);
    ::close(fd);
    if (err == 0) return reserveHeld_ = true;
    ::unlink(name.constData());
    if (err == ENOSPC || err == EDQUOT)
        reserveProblem_ = diskFullText(QStringLiteral("no room for the %1 reserve the history keeps "
                                                      "to record a run's end")
                                           .arg(bytesText(double(kReserveBytes))));
    return reserveHeld_ = false;
}

void RunStore::releaseReserve() {
    ::unlink(QFile::encodeName(reservePath(path_)).constData());
    if (reserveHeld_) applyPageCap(kReserveBytes / 4096);  // the cap stands for the disk (tests)
    reserveHeld_ = false;
}

void RunStore::applyPageCap(qint64 extraPages) {
    const qint64 cap = pageCapFromEnv();
    if (!cap || !isOpen()) return;
    QSqlQuery q(database(connection_));
    qint64 pages = cap + extraPages;
    if (extraPages > 0 && q.exec(QStringLiteral("PRAGMA page_count")) && q.next())
        pages = std::max(pages, q.value(0).toLongLong() + extraPages);
    q.exec(QStringLiteral("PRAGMA max_page_count = %1").arg(pages));
}

bool RunStore::initialize(QString* why) {
    QSqlDatabase db = database(connection_);
    // Every step retried while the file is busy: `journal_mode=WAL` needs the file to itself and
    // is refused at once, without the busy handler, while another process creates it ("database
    // is locked" lost 5 of 30 pairs of runs started together on a new file).
    auto pragma = [&](const QString& sql, QString* result = nullptr) {
        QSqlQuery q(db);
        QString error;
        if (!detail::execRetryingBusy(q, sql, &error)) {
            *why = QStringLiteral("%1: %2").arg(sql, error);
            return false;
        }
        if (result && q.next()) *result = q.value(0).toString();
        return true;
    };
    // A newer file is refused before anything (even the journal mode) changes it.
    if (detail::userVersion(db) > kSchemaVersion) return detail::migrate(db, kSchemaVersion, why);
    // WAL: readers (the window) never block the recorder; synchronous=NORMAL: a commit is in the
    // OS before the call returns, so killing the process loses nothing committed (only a power
    // cut can lose the last commits). foreign_keys: deleting a run cascades to its rows.
    QString mode;
    if (!pragma(QStringLiteral("PRAGMA journal_mode=WAL"), &mode) ||
        !pragma(QStringLiteral("PRAGMA synchronous=NORMAL")) ||
        !pragma(QStringLiteral("PRAGMA foreign_keys=ON")))
        return false;
    if (mode.compare(QLatin1String("wal"), Qt::CaseInsensitive) != 0) {
        *why = QStringLiteral("cannot switch to WAL mode (got \"%1\")").arg(mode);
        return false;
    }
    if (!detail::migrate(db, kSchemaVersion, why)) return false;
    // A file at the current version that lacks a table or a column (dropped by hand, half
    // recovered) passes quick_check, and every write to what it lacks would fail: a run would
    // be measured, stored without its samples and still called finished. Refused like a
    // damaged file. A missing index only slows reads: check-history reports it.
    const QStringList missing = detail::missingSchema(db, kSchemaVersion, /*indexes=*/false);
    if (missing.isEmpty()) return true;
    *why = QStringLiteral("damaged: %1 (schema v%2 has %3); it is not written to: move it aside "
                          "and start a new history, or recover what it holds with sqlite3's "
                          ".recover")
               .arg(missing.join(QStringLiteral(", ")))
               .arg(kSchemaVersion)
               .arg(missing.size() == 1 ? QStringLiteral("it") : QStringLiteral("them"));
    return false;
}

namespace {

// False with `why` set when the file fails PRAGMA quick_check (or cannot be read at all).
bool quickCheck(const QSqlDatabase& db, QString* why) {
    QSqlQuery q(db);
    QString error;
    if (!detail::execRetryingBusy(q, QStringLiteral("PRAGMA quick_check"), &error)) {
        *why = QStringLiteral("cannot be read as an SQLite database (%1); refusing to touch it")
                   .arg(error);
        return false;
    }
    QStringList problems;
    while (q.next()) problems << q.value(0).toString();
    if (problems == QStringList{QStringLiteral("ok")}) return true;
    *why = QStringLiteral("fails SQLite's quick_check (%1%2); it is not written to: move it aside "
                          "and start a new history, or recover what it holds with sqlite3's .recover")
               .arg(problems.value(0), problems.size() > 1
                                           ? QStringLiteral(" and %1 more").arg(problems.size() - 1)
                                           : QString());
    return false;
}

// Arms of finished runs that are "ok" but hold no measured sample: a run that measured samples
// and could not store them (its samples table gone, say) was once stored finished and ok. An ok
// arm of a finished run always measured some (the preset asks for at least one iteration);
// serving arms keep serving levels instead. Their processes' measured iterations (block_done's,
// schema v3) say how many, when known.
QStringList missingSamples(const QSqlDatabase& db) {
    const int version = detail::userVersion(db);
    const QString measured = version >= 3 ? QStringLiteral(
                                                "(SELECT coalesce(sum(p.fault_iters), 0) FROM "
                                                "processes p WHERE p.arm = a.id)")
                                          : QStringLiteral("0");
    const QString notServing =
        version >= 7
            ? QStringLiteral(" AND NOT EXISTS (SELECT 1 FROM serving_levels l WHERE l.arm = a.id)")
            : QString();
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral(
                    "SELECT e.id, a.name, %1 FROM arms a JOIN experiments e ON a.experiment = e.id "
                    "WHERE e.finished_at IS NOT NULL AND a.status = 'ok' AND NOT EXISTS (SELECT 1 "
                    "FROM samples s WHERE s.arm = a.id AND s.block >= 0)%2%3 ORDER BY e.id, a.idx")
                    .arg(measured, notServing,
                         version >= 10 ? QStringLiteral(" AND NOT EXISTS (SELECT 1 FROM "
                                                        "sample_chunks c WHERE c.arm = a.id AND "
                                                        "c.block >= 0)")
                                       : QString())))
        return {QStringLiteral("cannot look for runs missing their samples: %1")
                    .arg(q.lastError().text())};
    QStringList problems;
    while (q.next()) {
        const qint64 iters = q.value(2).toLongLong();
        problems << QStringLiteral("run %1 arm %2 is stored as finished and ok but holds none of "
                                   "its samples%3")
                        .arg(q.value(0).toLongLong())
                        .arg(q.value(1).toString())
                        .arg(iters > 0 ? QStringLiteral(" (its processes measured %1 iterations)")
                                             .arg(iters)
                                       : QString());
    }
    return problems;
}

// Arms the history could not hold whole (finishRun stored them as failed, code not_stored: the
// disk filled, a table went missing, a write failed): each a problem, as a run stored in part is
// not the run that was measured.
QStringList incompleteRuns(const QSqlDatabase& db) {
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT e.id, a.name, a.error_message FROM arms a JOIN experiments e "
                               "ON a.experiment = e.id WHERE a.error_code = 'not_stored' ORDER BY "
                               "e.id, a.idx")))
        return {QStringLiteral("cannot look for incomplete runs: %1").arg(q.lastError().text())};
    QStringList problems;
    while (q.next()) {
        QString message = q.value(2).toString();
        if (message.startsWith(QLatin1String("not stored: "))) message = message.mid(12);
        if (!message.startsWith(QLatin1String("incomplete")))
            message = QStringLiteral("incomplete: ") + message;
        problems << QStringLiteral("run %1 arm %2 is %3")
                        .arg(q.value(0).toLongLong())
                        .arg(q.value(1).toString(), message);
    }
    return problems;
}

}  // namespace

bool RunStore::open(const QString& path) {
    close();
    path_ = path;
    if (path.isEmpty()) return fail(QStringLiteral("run history"), QStringLiteral("no file given"));
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath()))
        return fail(path, QStringLiteral("cannot create the folder %1").arg(info.absolutePath()));
    // QSQLITE opens anything and fails only at the first query; check the header first so a
    // wrong file gets a clear message and is never written to (not while this process holds the
    // file open: see g_held).
    {
        std::lock_guard lock(g_heldMutex);
        const QString key = heldKey(path);
        if (!g_held.contains(key) && info.exists() && info.size() > 0) {
            QFile f(path);
            if (!f.open(QIODevice::ReadOnly)) return fail(path, f.errorString());
            if (f.read(16) != QByteArray("SQLite format 3\0", 16))
                return fail(path, QStringLiteral("not an SQLite database; refusing to touch it"));
        }
        ++g_held[key];  // before SQLite opens it: no header check may run from now on
        heldKey_ = key;
    }
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection_);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(detail::kBusyTimeoutMs));
        if (!db.open()) {
            const QString why = db.lastError().text();
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase(connection_);
            release(heldKey_);
            return fail(path, why);
        }
    }
    QString why;
    // An existing file is checked before anything is written to it (SQLite's quick_check: every
    // page and index entry, without the slower cross-checks of integrity_check).
    if (info.exists() && info.size() > 0 && !quickCheck(database(connection_), &why)) {
        close();
        return fail(path, why);
    }
    if (!initialize(&why)) {  // every handle on the connection is gone before it is closed
        close();
        return fail(path, why);
    }
    applyPageCap();
    error_.clear();
    diskFull_ = false;
    return true;
}

IntegrityReport RunStore::checkIntegrity(const QString& path) {
    IntegrityReport report;
    const QFileInfo info(path);
    if (!info.exists()) return report.error = QStringLiteral("no such file"), report;
    if (!info.isFile()) return report.error = QStringLiteral("not a regular file"), report;
    QString held;  // counted among the files this process holds while it is checked (g_held)
    {
        std::lock_guard lock(g_heldMutex);
        const QString key = heldKey(path);
        if (!g_held.contains(key)) {
            QFile f(path);
            if (!f.open(QIODevice::ReadOnly)) return report.error = f.errorString(), report;
            if (f.read(16) != QByteArray("SQLite format 3\0", 16))
                return report.error = QStringLiteral("not an SQLite database"), report;
        }
        ++g_held[key];
        held = key;
    }
    const QString connection =
        QStringLiteral("pitlane-check-%1").arg(g_connections.fetchAndAddRelaxed(1));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=%1")
                                 .arg(detail::kBusyTimeoutMs));
        if (!db.open()) {
            report.error = db.lastError().text();
        } else {
            QSqlQuery q(db);
            if (!q.exec(QStringLiteral("PRAGMA integrity_check"))) {
                report.error = QStringLiteral("cannot be read as an SQLite database (%1)")
                                   .arg(q.lastError().text());
            } else {
                report.readable = true;
                while (q.next()) report.problems << q.value(0).toString();
                if (report.problems == QStringList{QStringLiteral("ok")}) report.problems.clear();
                report.schemaVersion = detail::userVersion(db);
                if (report.problems.isEmpty() && report.schemaVersion >= 1) {
                    // Sound pages can still hold less than the schema and the runs say.
                    report.problems << detail::missingSchema(db, report.schemaVersion, true);
                    const bool schemaWhole = report.problems.isEmpty();
                    if (schemaWhole) report.problems << missingSamples(db);
                    if (q.exec(QStringLiteral("SELECT count(*) FROM experiments")) && q.next())
                        report.runs = q.value(0).toLongLong();
                    if (q.exec(QStringLiteral("SELECT count(*) FROM samples WHERE block >= 0")) &&
                        q.next())
                        report.samples = q.value(0).toLongLong();
                    if (report.schemaVersion >= 10)
                        report.problems << detail::damagedChunks(db, &report.samples,
                                                                 &report.uncheckedChunks);
                    if (schemaWhole) report.problems << incompleteRuns(db);
                }
            }
            db.close();
        }
    }
    QSqlDatabase::removeDatabase(connection);
    release(held);
    return report;
}

void RunStore::close() {
    reserveHeld_ = false;  // the file stays: another process recording into the history shares it
    if (QSqlDatabase::contains(connection_)) {
        {
            QSqlDatabase db = database(connection_);
            db.close();
        }
        QSqlDatabase::removeDatabase(connection_);
    }
    release(heldKey_);
}

bool RunStore::isOpen() const {
    return QSqlDatabase::contains(connection_) && database(connection_).isOpen();
}

int RunStore::schemaVersion() const {
    return isOpen() ? detail::userVersion(database(connection_)) : -1;
}

QString RunStore::journalMode() const {
    QSqlQuery q(database(connection_));
    if (!q.exec(QStringLiteral("PRAGMA journal_mode")) || !q.next()) return {};
    return q.value(0).toString();
}

namespace {
const char* kInfoColumns =
    "SELECT id, started_at, finished_at, wall_s, name, model, label, verdict, source, baseline, "
    "lesson, (SELECT group_concat(model, char(10)) FROM (SELECT model FROM arms WHERE arms.experiment = "
    "experiments.id AND model != '' GROUP BY model ORDER BY min(idx))) FROM experiments";

RunInfo infoFromRow(const QSqlQuery& q) {
    RunInfo r;
    r.id = q.value(0).toLongLong();
    r.startedAt = q.value(1).toString();
    r.finishedAt = q.value(2).toString();
    r.wallS = q.value(3).toDouble();
    r.name = q.value(4).toString();
    r.model = q.value(5).toString();
    r.label = q.value(6).toString();
    r.verdict = q.value(7).toString();
    r.source = q.value(8).toString();
    r.baseline = q.value(9).toInt() != 0;
    r.lesson = protocol::parseJsonBounded(q.value(10).toString().toStdString());
    if (!r.lesson.is_object()) r.lesson = nlohmann::json::object();
    for (const QString& path : q.value(11).toString().split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        r.armModels << QFileInfo(path).fileName();
    return r;
}
}  // namespace

QList<RunInfo> RunStore::listRuns() const {
    QList<RunInfo> out;
    QSqlDatabase db = database(connection_);
    QSqlQuery q(db);
    if (!q.exec(QString::fromLatin1(kInfoColumns) + QStringLiteral(" ORDER BY id DESC"))) {
        fail(QStringLiteral("list runs"), q.lastError().text());
        return out;
    }
    QHash<qint64, int> row;
    while (q.next()) {
        row.insert(q.value(0).toLongLong(), out.size());
        out.append(infoFromRow(q));
    }
    QSqlQuery arms(db);
    if (arms.exec(
            QStringLiteral("SELECT experiment, name, status FROM arms ORDER BY experiment, idx")))
        while (arms.next()) {
            const auto it = row.constFind(arms.value(0).toLongLong());
            if (it == row.constEnd()) continue;
            out[*it].arms.append(arms.value(1).toString());
            out[*it].armStatuses.append(arms.value(2).toString());
        }
    return out;
}

std::optional<RunInfo> RunStore::runInfo(qint64 id) const {
    QSqlDatabase db = database(connection_);
    QSqlQuery q(db);
    q.prepare(QString::fromLatin1(kInfoColumns) + QStringLiteral(" WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) {
        fail(QStringLiteral("run %1").arg(id), QStringLiteral("no such run"));
        return std::nullopt;
    }
    RunInfo r = infoFromRow(q);
    QSqlQuery arms(db);
    arms.prepare(QStringLiteral("SELECT name, status FROM arms WHERE experiment = ? ORDER BY idx"));
    arms.addBindValue(id);
    if (arms.exec())
        while (arms.next()) {
            r.arms.append(arms.value(0).toString());
            r.armStatuses.append(arms.value(1).toString());
        }
    return r;
}

bool RunStore::deleteRun(qint64 id) {
    QSqlQuery q(database(connection_));
    q.prepare(QStringLiteral("DELETE FROM experiments WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) return fail(QStringLiteral("delete run %1").arg(id), q.lastError().text());
    if (q.numRowsAffected() != 1)
        return fail(QStringLiteral("delete run %1").arg(id), QStringLiteral("no such run"));
    return true;
}

bool RunStore::renameRun(qint64 id, const QString& label) {
    QSqlQuery q(database(connection_));
    q.prepare(QStringLiteral("UPDATE experiments SET label = ? WHERE id = ?"));
    q.addBindValue(label.isNull() ? QStringLiteral("") : label);
    q.addBindValue(id);
    if (!q.exec()) return fail(QStringLiteral("rename run %1").arg(id), q.lastError().text());
    if (q.numRowsAffected() != 1)
        return fail(QStringLiteral("rename run %1").arg(id), QStringLiteral("no such run"));
    return true;
}

bool RunStore::setBaseline(qint64 id, bool on) {
    const auto info = runInfo(id);
    if (!info) return false;
    QSqlDatabase db = database(connection_);
    Transaction tx(db);
    if (!tx.began()) return fail(QStringLiteral("baseline"), tx.error());
    QSqlQuery q(db);
    if (on) {
        q.prepare(
            QStringLiteral("UPDATE experiments SET baseline = 0 WHERE model = ? AND id != ?"));
        q.addBindValue(info->model.isNull() ? QStringLiteral("") : info->model);
        q.addBindValue(id);
        if (!q.exec()) return fail(QStringLiteral("baseline"), q.lastError().text());
    }
    q.prepare(QStringLiteral("UPDATE experiments SET baseline = ? WHERE id = ?"));
    q.addBindValue(on ? 1 : 0);
    q.addBindValue(id);
    if (!q.exec() || !tx.commit()) return fail(QStringLiteral("baseline"), q.lastError().text());
    return true;
}

std::optional<qint64> RunStore::baselineRun(const QString& model) const {
    QSqlQuery q(database(connection_));
    q.prepare(
        QStringLiteral("SELECT id FROM experiments WHERE baseline != 0 AND model = ? "
                       "ORDER BY id DESC LIMIT 1"));
    q.addBindValue(model.isNull() ? QStringLiteral("") : model);
    if (!q.exec() || !q.next()) return std::nullopt;
    return q.value(0).toLongLong();
}

qint64 RunStore::sampleCount(qint64 runId) const {
    QSqlQuery q(database(connection_));
    q.prepare(
        QStringLiteral("SELECT (SELECT count(*) FROM samples s JOIN arms a ON s.arm = a.id "
                       "WHERE a.experiment = ? AND s.block >= 0) + (SELECT coalesce(sum(c.n), 0) "
                       "FROM sample_chunks c JOIN arms a ON c.arm = a.id WHERE a.experiment = ? "
                       "AND c.block >= 0)"));
    q.addBindValue(runId);
    q.addBindValue(runId);
    if (!q.exec() || !q.next()) return -1;
    return q.value(0).toLongLong();
}

bool migrateSchema(const QString& path, int version, QString* error) {
    const QString name =
        QStringLiteral("pitlane-migrate-%1").arg(g_connections.fetchAndAddRelaxed(1));
    bool ok = false;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        if (!db.open())
            *error = db.lastError().text();
        else if (version > RunStore::kSchemaVersion)
            *error = QStringLiteral("no schema version %1").arg(version);
        else
            ok = detail::migrate(db, version, error);
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return ok;
}

QString verdictSummary(const results::RunResult& run) {
    QStringList parts;
    for (const auto& c : results::compareArms(run)) parts << QString::fromStdString(c.verdict);
    // A serving run has no samples to compare: its verdict is the capacity within the SLO and
    // the p99 comparisons per level.
    for (const auto& line : results::servingVerdict(run)) parts << QString::fromStdString(line);
    for (const auto& a : run.arms)
        if (a.status != results::kOk && a.status != results::kPending)
            parts << QString::fromStdString(a.name + " " + a.status);
    return parts.join(QStringLiteral("; "));
}

}  // namespace pitlane::store
