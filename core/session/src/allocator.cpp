#include "pitlane/session/allocator.h"

#include <QFileInfo>

namespace pitlane::session {

namespace {

// Debian's multiarch tuple of this build (dpkg-architecture -qDEB_HOST_MULTIARCH).
const char* multiarch() {
#if defined(__x86_64__) && defined(__ILP32__)
    return "x86_64-linux-gnux32";
#elif defined(__x86_64__)
    return "x86_64-linux-gnu";
#elif defined(__aarch64__)
    return "aarch64-linux-gnu";
#elif defined(__i386__)
    return "i386-linux-gnu";
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
    return "arm-linux-gnueabihf";
#elif defined(__arm__)
    return "arm-linux-gnueabi";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    return "powerpc64le-linux-gnu";
#elif defined(__s390x__)
    return "s390x-linux-gnu";
#elif defined(__riscv) && __riscv_xlen == 64
    return "riscv64-linux-gnu";
#else
    return "";
#endif
}

QStringList searchDirs() {
    const QString tuple = QString::fromLatin1(multiarch());
    QStringList dirs;
    if (!tuple.isEmpty())
        dirs << QStringLiteral("/usr/lib/") + tuple << QStringLiteral("/lib/") + tuple;
    dirs << QStringLiteral("/usr/lib");
    if (!tuple.isEmpty()) dirs << QStringLiteral("/usr/local/lib/") + tuple;
    dirs << QStringLiteral("/usr/local/lib");
    return dirs;
}

struct Library {
    const char* knob;
    const char* file;     // the soname Debian ships
    const char* package;  // the Debian package that ships it
    const char* envVar;   // path override
};

const Library kJemalloc{"jemalloc", "libjemalloc.so.2", "libjemalloc2", "PITLANE_JEMALLOC"};
const Library kTcmalloc{"tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4",
                        "PITLANE_TCMALLOC"};

bool usable(const QString& path) {
    const QFileInfo fi(path);
    return fi.exists() && fi.isFile() && fi.isReadable();
}

QString notFound(const Library& lib, const QString& where) {
    return QStringLiteral(
               "allocator \"%1\" needs %2 (Debian package %3), not found %4: install it "
               "(apt install %3) or set %5 to the library's path")
        .arg(QLatin1String(lib.knob), QLatin1String(lib.file), QLatin1String(lib.package), where,
             QLatin1String(lib.envVar));
}

// Resolves `lib`: the override when set (it must exist), else the first hit of the search.
AllocatorLaunch locate(const Library& lib) {
    AllocatorLaunch launch;
    const QString override = qEnvironmentVariable(lib.envVar);
    if (!override.isEmpty()) {
        if (usable(override))
            launch.preload = QFileInfo(override).absoluteFilePath();
        else
            launch.error =
                notFound(lib, QStringLiteral("at %1=%2").arg(QLatin1String(lib.envVar), override));
        return launch;
    }
    const QStringList dirs = searchDirs();
    for (const QString& dir : dirs) {
        const QString path = dir + QLatin1Char('/') + QLatin1String(lib.file);
        if (usable(path)) {
            launch.preload = path;
            return launch;
        }
    }
    launch.error = notFound(lib, QStringLiteral("in ") + dirs.join(QStringLiteral(", ")));
    return launch;
}

}  // namespace

AllocatorLaunch allocatorLaunch(spec::Allocator allocator) {
    if (allocator == spec::Allocator::System) return {};
    if (allocator == spec::Allocator::Jemalloc) {
        AllocatorLaunch launch = locate(kJemalloc);
        // PyTorch's CPU launcher, torch/backends/xeon/run_cpu.py (set_memory_allocator, for
        // --enable-jemalloc; the same in Debian's 1.13 and in pytorch/pytorch main), sets
        //   MALLOC_CONF="oversize_threshold:1,background_thread:true,metadata_thp:auto"
        // Intel's PyTorch CPU benchmark scripts add "dirty_decay_ms:-1,muzzy_decay_ms:-1"
        // (freed pages are never given back to the OS); so does DESIGN.md's measurement.
        // We add them too: without them jemalloc purges freed pages and every forward faults
        // them in again. Measured here (resnet18, [3,224,224], 1 thread, after warmup): the
        // launcher's string alone 6943 minor faults per iteration and about 2.7x slower; with
        // the decay settings 0 per iteration. A MALLOC_CONF the user set wins (withAllocator).
        if (launch.error.isEmpty())
            launch.env << QStringLiteral(
                "MALLOC_CONF=oversize_threshold:1,background_thread:true,metadata_thp:auto,"
                "dirty_decay_ms:-1,muzzy_decay_ms:-1");
        return launch;
    }
    return locate(kTcmalloc);
}

AllocatorLaunch allocatorLaunch(const std::string& allocator) {
    if (const auto known = spec::choiceFromName<spec::Allocator>(allocator)) return allocatorLaunch(*known);
    AllocatorLaunch bad;
    bad.error =
        QStringLiteral("unknown allocator \"%1\" (expected one of system, jemalloc, tcmalloc)")
            .arg(QString::fromStdString(allocator));
    return bad;
}

QProcessEnvironment withAllocator(QProcessEnvironment env, const AllocatorLaunch& launch) {
    if (!launch.error.isEmpty() || launch.preload.isEmpty()) return env;
    // ld.so splits LD_PRELOAD at spaces and colons; the first library that defines malloc wins.
    const QString existing = env.value(QStringLiteral("LD_PRELOAD")).trimmed();
    env.insert(QStringLiteral("LD_PRELOAD"),
               existing.isEmpty() ? launch.preload : launch.preload + QLatin1Char(':') + existing);
    for (const QString& entry : launch.env) {
        const int eq = entry.indexOf(QLatin1Char('='));
        if (eq <= 0) continue;
        const QString name = entry.left(eq);
        if (!env.contains(name)) env.insert(name, entry.mid(eq + 1));
    }
    return env;
}

}  // namespace pitlane::session
