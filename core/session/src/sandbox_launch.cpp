#include "pitlane/session/sandbox_launch.h"

#include "pitlane/spec/model_file.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>

namespace pitlane::session {

namespace {

// MemTotal of /proc/meminfo in MiB (0 when unknown).
std::int64_t physicalMiB() {
    QFile f(QStringLiteral("/proc/meminfo"));
    if (!f.open(QIODevice::ReadOnly)) return 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("MemTotal:")) return line.mid(9).trimmed().split(' ').value(0).toLongLong() / 1024;
    return 0;
}

// This process's memory cgroup: its folder and whether it is cgroup v2 ("" when none). Its
// workers start in it too.
struct MemoryCgroup {
    QString dir;
    bool v2 = false;
};
MemoryCgroup memoryCgroup() {
    QFile f(QStringLiteral("/proc/self/cgroup"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    MemoryCgroup v1, v2;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QList<QByteArray> parts = line.split(':');
        if (parts.size() < 3) continue;
        const QString path = QString::fromUtf8(line.mid(parts[0].size() + parts[1].size() + 2)).trimmed();
        if (parts[0] == "0" && parts[1].isEmpty()) v2 = {QStringLiteral("/sys/fs/cgroup") + path, true};
        if (parts[1].split(',').contains("memory")) v1 = {QStringLiteral("/sys/fs/cgroup/memory") + path, false};
    }
    if (!v2.dir.isEmpty() && QFileInfo::exists(v2.dir + QStringLiteral("/memory.events"))) return v2;
    if (!v1.dir.isEmpty() && QFileInfo::exists(v1.dir + QStringLiteral("/memory.oom_control"))) return v1;
    return {};
}

// The tightest memory limit from this cgroup up to the root, in MiB (0: none).
std::int64_t cgroupLimitMiB() {
    const MemoryCgroup cg = memoryCgroup();
    const QString root = cg.v2 ? QStringLiteral("/sys/fs/cgroup") : QStringLiteral("/sys/fs/cgroup/memory");
    std::int64_t limit = 0;
    for (QString dir = cg.dir; dir.startsWith(root); dir = QFileInfo(dir).path()) {
        QFile f(dir + (cg.v2 ? QStringLiteral("/memory.max") : QStringLiteral("/memory.limit_in_bytes")));
        if (f.open(QIODevice::ReadOnly)) {
            bool ok = false;
            const std::int64_t bytes = f.readAll().trimmed().toLongLong(&ok);  // "max": not a number
            const std::int64_t mib = bytes / (1 << 20);
            // cgroup v1 says "no limit" with a huge number (PAGE_COUNTER_MAX pages).
            if (ok && bytes > 0 && mib < (std::int64_t(1) << 30) && (limit == 0 || mib < limit)) limit = mib;
        }
        if (dir == root) break;
    }
    return limit;
}

}  // namespace

std::int64_t oomKillCount() {
    const MemoryCgroup cg = memoryCgroup();
    if (cg.dir.isEmpty()) return -1;
    QFile f(cg.dir + (cg.v2 ? QStringLiteral("/memory.events") : QStringLiteral("/memory.oom_control")));
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("oom_kill ")) return line.mid(9).trimmed().toLongLong();
    return -1;
}

MemoryBudget memoryBudget(int workersAtOnce) {
    MemoryBudget b;
    b.physicalMiB = physicalMiB();
    if (const std::int64_t cg = cgroupLimitMiB(); cg > 0 && (b.physicalMiB <= 0 || cg < b.physicalMiB)) {
        b.physicalMiB = cg;
        b.cgroup = true;
    }
    if (b.physicalMiB <= 0) return b;
    // The margin: what the system, the window or CLI and the workers' own libraries (libtorch's
    // pages, outside the limit) need
    // (a small cgroup keeps at least three quarters).
    const std::int64_t margin = std::min(std::max<std::int64_t>(2048, b.physicalMiB / 10), b.physicalMiB / 4);
    b.totalMiB = std::max<std::int64_t>(0, b.physicalMiB - margin);
    b.workers = std::max(1, workersAtOnce);
    b.perWorkerMiB = std::min(b.physicalMiB * 3 / 4, b.totalMiB / b.workers);
    return b;
}

QStringList sandboxArguments(const spec::Knobs& knobs, const QString& scratch, const QStringList& readable,
                             const MemoryBudget& budget) {
    const bool on = knobs.sandbox == spec::Sandbox::On;
    QStringList args{QStringLiteral("--sandbox"), on ? QStringLiteral("on") : QStringLiteral("off")};
    // The scratch folder with the sandbox off too: the worker's $TMPDIR, where an AOTInductor
    // package is extracted, removed with the run (a worker killed mid-load leaves nothing).
    if (!scratch.isEmpty()) args << QStringLiteral("--scratch") << scratch;
    if (on)
        for (const QString& path : readable)
            if (!path.isEmpty()) args << QStringLiteral("--read") << QFileInfo(path).absoluteFilePath();
    args << QStringLiteral("--memory-limit-mb");
    if (knobs.memory_limit_mb)
        args << QString::number(budget.perWorkerMiB > 0 ? std::min<std::int64_t>(*knobs.memory_limit_mb, budget.perWorkerMiB)
                                                        : std::int64_t(*knobs.memory_limit_mb));
    else if (on && knobs.device == "cpu")
        args << (budget.perWorkerMiB > 0 ? QString::number(budget.perWorkerMiB) : QStringLiteral("auto"));
    else
        args << QStringLiteral("none");
    return args;
}

bool preloadsTorchModule(const spec::ArmSpec& arm) {
    return arm.knobs.device != "cpu" || arm.model_format == spec::kFormatAoti || arm.knobs.compile == spec::Compile::Aoti;
}

}  // namespace pitlane::session
