// CompileStep (compile_step.h): the project's Python runs tools/compile_exported.py, one job at a
// time, asynchronously, confined by pitlane-worker --sandbox-exec. The cache: <dir>/<key>.pt2
// (the package) and <dir>/<key>.json (what made it: the program's SHA-256, options, torch,
// target, the compile's seconds and the package's own SHA-256, checked on every use so a damaged
// or tampered package is compiled again, never measured). Both are written by this process,
// never by the compiler: it writes only <dir>/work/<key>.<pid> (the package it makes, Inductor's
// cache, its $TMPDIR), which is removed when it ends; <dir>/tmp is the torch-version query's.
#include "pitlane/session/compile_step.h"

#include "pitlane/session/sandbox_launch.h"
#include "pitlane/spec/model_file.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <nlohmann/json.hpp>

#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

namespace pitlane::session {

using json = nlohmann::json;

CompileStep::Options CompileStep::fromEnvironment(const QString& appDir) {
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    Options o{projectPython(env), compileScript(appDir), compileCacheDir(env), {}, {}};
    QFile cpu(QStringLiteral("/proc/cpuinfo"));
    if (cpu.open(QIODevice::ReadOnly)) o.cpuinfo = cpu.readAll();
    return o;
}

CompileStep::CompileStep(Options options, QObject* parent) : QObject(parent), options_(std::move(options)) {}

CompileStep::~CompileStep() { cancel(); }

// Never emits before it returns: the caller connects, then goes on setting up.
void CompileStep::start(std::vector<CompileJob> jobs) {
    jobs_ = std::move(jobs);
    current_ = -1;
    cancelled_ = false;
    QMetaObject::invokeMethod(this, [this] {
        if (!cancelled_) begin();
    }, Qt::QueuedConnection);
}

void CompileStep::begin() {
    if (options_.python.isEmpty())
        return failAll(QStringLiteral("no Python to compile with: set PITLANE_PYTHON to a Python with torch "
                                      "(the build named none)"));
    if (!QFileInfo(options_.python).isExecutable())
        return failAll(QStringLiteral("the Python to compile with, %1, %2: set PITLANE_PYTHON to a Python with torch")
                           .arg(options_.python, QFileInfo::exists(options_.python) ? QStringLiteral("is not executable")
                                                                                     : QStringLiteral("does not exist")));
    if (options_.script.isEmpty())
        return failAll(QStringLiteral("compile_exported.py is neither next to the executables nor in the source tree"));
    if (options_.cacheDir.isEmpty() || !QDir().mkpath(options_.cacheDir) ||
        !QDir().mkpath(QDir(options_.cacheDir).filePath(QStringLiteral("tmp"))))
        return failAll(QStringLiteral("cannot make the compile cache folder \"%1\" (PITLANE_CACHE_DIR, "
                                      "XDG_CACHE_HOME/pitlane/aoti or ~/.cache/pitlane/aoti)")
                           .arg(options_.cacheDir));
    removeStaleWork();
    askTorchVersion();
}

// The compiler runs in a process group of its own (Inductor starts compile workers and the C++
// compiler: cancel() kills them all) and dies with this process.
QProcess* CompileStep::newProcess(const QString& workDir) {
    process_ = std::make_unique<QProcess>();
    process_->setChildProcessModifier([] {
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    });
    // Every cache and temporary file the compiler makes, in the one folder it may write.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    const QDir work(workDir);
    env.insert(QStringLiteral("TORCHINDUCTOR_CACHE_DIR"), work.filePath(QStringLiteral("inductor")));
    env.insert(QStringLiteral("TMPDIR"), work.filePath(QStringLiteral("tmp")));
    env.insert(QStringLiteral("TRITON_CACHE_DIR"), work.filePath(QStringLiteral("triton")));
    env.insert(QStringLiteral("TRITON_HOME"), workDir);
    env.insert(QStringLiteral("CUDA_CACHE_PATH"), work.filePath(QStringLiteral("nv")));
    env.insert(QStringLiteral("PYTHONDONTWRITEBYTECODE"), QStringLiteral("1"));
    process_->setProcessEnvironment(env);
    stderrTail_.clear();
    connect(process_.get(), &QProcess::readyReadStandardError, this, [this] {
        for (const QByteArray& l : process_->readAllStandardError().split('\n'))
            if (!l.trimmed().isEmpty()) stderrTail_ << QString::fromUtf8(l.left(2000));
        while (stderrTail_.size() > 40) stderrTail_.removeFirst();
    });
    connect(process_.get(), &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart || cancelled_) return;
        const QString why = QStringLiteral("cannot start %1: %2").arg(process_->program(), process_->errorString());
        process_.release()->deleteLater();
        failAll(why);
    });
    return process_.get();
}

// The Python with `args`: under pitlane-worker --sandbox-exec (writes only `writable`, reads only
// `readable` and the system's) when `sandbox` and a launcher exists; a CPU compile gets the
// memory budget of one process (sandbox_launch.h) as its RLIMIT_DATA, each process it starts too.
void CompileStep::startPython(const QStringList& args, const QString& writable, const QStringList& readable,
                              bool sandbox, bool cpuMemoryLimit) {
    if (!sandbox || options_.launcher.isEmpty()) {
        process_->start(options_.python, args);
    } else {
        QStringList launch{QStringLiteral("--sandbox-exec"), QStringLiteral("--write"), writable};
        for (const QString& r : readable) launch << QStringLiteral("--read") << r;
        const MemoryBudget budget = memoryBudget(1);
        launch << QStringLiteral("--memory-limit-mb")
               << (cpuMemoryLimit && budget.perWorkerMiB > 0 ? QString::number(budget.perWorkerMiB) : QStringLiteral("none"));
        launch << QStringLiteral("--") << QFileInfo(options_.python).absoluteFilePath() << args;
        process_->start(options_.launcher, launch);
    }
    pid_ = process_ ? process_->processId() : 0;  // null: it failed to start (errorOccurred)
}

void CompileStep::noteSandbox(int job, const CompileAnswer& a) {
    if (job < 0) return;
    const CompileJob& j = jobs_[std::size_t(job)];
    if (j.sandbox && options_.launcher.isEmpty())
        emit jobNote(job, QStringLiteral("warning"), QStringLiteral("the compiler ran unconfined: no pitlane-worker to confine it"));
    for (const QString& e : a.sandboxErrors)
        emit jobNote(job, QStringLiteral("warning"), QStringLiteral("the compiler's sandbox: ") + e);
    if (a.sandboxed && a.sandboxErrors.isEmpty())
        emit jobNote(job, QStringLiteral("info"),
                     QStringLiteral("the compiler ran confined: it could write only %1, read only the program, "
                                    "the script, its Python and the system's libraries, and open no network socket")
                         .arg(workDir(job)));
}

void CompileStep::askTorchVersion() {
    const QString tmp = QDir(options_.cacheDir).filePath(QStringLiteral("tmp"));
    QProcess* p = newProcess(tmp);
    connect(p, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        const CompileAnswer a = parseCompileOutput(process_->readAllStandardOutput());
        const bool ok = status == QProcess::NormalExit && code == 0 && !a.torch.isEmpty();
        const QString why = ok ? QString()
                               : compileFailure(a, code, status != QProcess::NormalExit, stderrTail_, options_.python);
        process_.release()->deleteLater();
        if (!ok) return failAll(why);
        torch_ = a.torch;
        // The script is part of what made a package: a changed compile_exported.py (an option
        // applied differently) must not reuse packages the old one made.
        QFile script(options_.script);
        QCryptographicHash sha(QCryptographicHash::Sha256);
        if (script.open(QIODevice::ReadOnly) && sha.addData(&script)) scriptSha_ = QString::fromLatin1(sha.result().toHex());
        nextJob();
    });
    bool sandbox = false;
    for (const CompileJob& j : jobs_) sandbox = sandbox || j.sandbox;
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    startPython({options_.script, QStringLiteral("--torch-version")}, tmp,
                compilerReadable(options_.python, options_.script, options_.script, env), sandbox, false);
}

QString CompileStep::packagePath(int job) const {
    const CompileJob& j = jobs_[std::size_t(job)];
    const QString key = compileKey(j.programSha256, canonicalOptionsJson(j.options), torch_ + QStringLiteral(" script ") + scriptSha_,
                                   compileTarget(j.device, options_.cpuinfo));
    return QDir(options_.cacheDir).filePath(key + QStringLiteral(".pt2"));
}

QString CompileStep::workDir(int job) const {
    const QString key = QFileInfo(packagePath(job)).completeBaseName();
    return QDir(options_.cacheDir).filePath(QStringLiteral("work/%1.%2").arg(key).arg(QCoreApplication::applicationPid()));
}

// The work folders of compiles whose session is gone (killed): <key>.<pid> with no such process.
void CompileStep::removeStaleWork() const {
    for (QDirIterator it(QDir(options_.cacheDir).filePath(QStringLiteral("work")), QDir::Dirs | QDir::NoDotAndDotDot);
         it.hasNext();) {
        const QString dir = it.next();
        const QString pid = QFileInfo(dir).suffix();
        bool ok = false;
        pid.toLongLong(&ok);
        if (ok && !QFileInfo::exists(QStringLiteral("/proc/") + pid)) QDir(dir).removeRecursively();
    }
}

void CompileStep::nextJob() {
    while (!cancelled_ && ++current_ < int(jobs_.size()))
        if (!takeFromCache(current_)) return runCompiler(current_);
    if (cancelled_) return;
    current_ = -1;
    emit finished();
}

// A package whose record says what made it and whose bytes are still those recorded. An entry
// that is not (its record missing or unreadable, its bytes changed, a link in its place) is
// removed, said in the arms' logs, and compiled again: never measured.
bool CompileStep::takeFromCache(int job) {
    QElapsedTimer t;
    t.start();
    const QString package = packagePath(job);
    const QString recordPath = package.left(package.size() - 4) + QStringLiteral(".json");
    const QFileInfo packageInfo(package);
    if (!packageInfo.exists() && !packageInfo.isSymLink()) return false;
    QString tampered;
    QFile recordFile(recordPath);
    json record;
    if (packageInfo.isSymLink() || !packageInfo.isFile()) {
        tampered = QStringLiteral("%1 is not a regular file").arg(package);
    } else if (!recordFile.open(QIODevice::ReadOnly)) {
        tampered = QStringLiteral("no record of its SHA-256 (%1: %2)").arg(recordPath, recordFile.errorString());
    } else {
        const QByteArray bytes = recordFile.readAll();
        record = json::parse(bytes.constData(), bytes.constData() + bytes.size(), nullptr, false);
        if (!record.is_object() || !record.contains("package_sha256") || !record["package_sha256"].is_string())
            tampered = QStringLiteral("its record %1 names no package_sha256").arg(recordPath);
    }
    spec::ModelFileCheck check;
    if (tampered.isEmpty()) {
        check = spec::checkModelFile(package.toStdString());
        if (!check.ok)
            tampered = QString::fromStdString(check.message);
        else if (check.format != spec::kFormatAoti)
            tampered = QStringLiteral("it is not an AOTInductor package (%1)").arg(QString::fromStdString(check.format));
        else if (record["package_sha256"] != check.sha256)
            tampered = QStringLiteral("SHA-256 %1, recorded %2")
                           .arg(QString::fromStdString(check.sha256),
                                QString::fromStdString(record["package_sha256"].get<std::string>()));
    }
    if (!tampered.isEmpty()) {
        QFile::remove(package);
        QFile::remove(recordPath);
        emit jobNote(job, QStringLiteral("warning"),
                     QStringLiteral("cache entry tampered: recompiled (%1: %2)").arg(QFileInfo(package).fileName(), tampered));
        return false;
    }
    const CompileJob& j = jobs_[std::size_t(job)];
    results::CompileInfo info;
    info.cache_hit = true;
    info.options = j.options;
    info.torch = torch_.toStdString();
    info.package = package.toStdString();
    info.target = compileTarget(j.device, options_.cpuinfo).toStdString();
    info.compiled_seconds = record.value("seconds", 0.0);
    info.seconds = t.elapsed() / 1000.0;
    emit jobDone(job, info);
    return true;
}

void CompileStep::runCompiler(int job) {
    const CompileJob& j = jobs_[std::size_t(job)];
    const QString work = workDir(job);
    QDir(work).removeRecursively();
    if (!QDir().mkpath(QDir(work).filePath(QStringLiteral("tmp")))) {
        emit jobFailed(job, QStringLiteral("cannot make the compile's folder %1").arg(work));
        return nextJob();
    }
    QProcess* p = newProcess(work);
    connect(p, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        compilerEnded(code, status != QProcess::NormalExit);
    });
    json metadata = json::object();
    for (const auto& [k, v] : j.metadata) metadata[k] = v;
    clock_.start();
    emit jobStarted(job);
    startPython({options_.script, QStringLiteral("--program"), j.program, QStringLiteral("--out"),
                 QDir(work).filePath(QStringLiteral("package.pt2")), QStringLiteral("--options"),
                 canonicalOptionsJson(j.options), QStringLiteral("--device"), QString::fromStdString(j.device),
                 QStringLiteral("--metadata"), QString::fromStdString(metadata.dump())},
                work, compilerReadable(options_.python, options_.script, j.program, QProcessEnvironment::systemEnvironment()),
                j.sandbox, j.device == "cpu");
}

namespace {

// The compiler's package, copied into the cache by this process: a new file the compiler never
// had open. False with `why`; the copy is never left half-written (QSaveFile).
bool copyPackage(const QString& from, const QString& to, QString& why) {
    const QFileInfo info(from);
    if (info.isSymLink() || !info.isFile()) {
        why = QStringLiteral("the compiler's package %1 is not a regular file").arg(from);
        return false;
    }
    QFile in(from);
    QSaveFile out(to);
    if (!in.open(QIODevice::ReadOnly) || !out.open(QIODevice::WriteOnly)) {
        why = QStringLiteral("cannot copy the package into the cache (%1)")
                  .arg(in.isOpen() ? out.errorString() + QStringLiteral(": ") + to : in.errorString() + QStringLiteral(": ") + from);
        return false;
    }
    QByteArray chunk;
    while (!(chunk = in.read(1 << 20)).isEmpty())
        if (out.write(chunk) != chunk.size()) break;
    if (in.error() != QFileDevice::NoError || !out.commit()) {
        why = QStringLiteral("cannot copy the package into the cache: %1: %2").arg(to, out.errorString());
        return false;
    }
    return true;
}

}  // namespace

void CompileStep::compilerEnded(int exitCode, bool crashed) {
    const int job = current_;
    const CompileAnswer a = parseCompileOutput(process_->readAllStandardOutput());
    process_.release()->deleteLater();
    if (pid_ > 0) ::kill(-pid_t(pid_), SIGKILL);  // anything it started and left running
    noteSandbox(job, a);
    const QString work = workDir(job);
    const QString package = packagePath(job);
    QString why;
    spec::ModelFileCheck check;
    if (!a.done || exitCode != 0 || crashed) {
        why = compileFailure(a, exitCode, crashed, stderrTail_, options_.python);
    } else if (copyPackage(QDir(work).filePath(QStringLiteral("package.pt2")), package, why)) {
        check = spec::checkModelFile(package.toStdString());
        if (!check.ok || check.format != spec::kFormatAoti) {
            why = QStringLiteral("the compiled package %1 is not sound: %2")
                      .arg(package, check.ok ? QStringLiteral("not an AOTInductor package") : QString::fromStdString(check.message));
            QFile::remove(package);
        }
    }
    QDir(work).removeRecursively();
    if (!why.isEmpty()) {
        emit jobFailed(job, why);
        return nextJob();
    }
    const CompileJob& j = jobs_[std::size_t(job)];
    results::CompileInfo info;
    info.seconds = clock_.elapsed() / 1000.0;
    info.options = j.options;
    info.torch = (a.torch.isEmpty() ? torch_ : a.torch).toStdString();
    info.package = package.toStdString();
    info.target = compileTarget(j.device, options_.cpuinfo).toStdString();
    json record = {{"program", j.program.toStdString()}, {"program_sha256", j.programSha256.toStdString()},
                   {"options", j.options}, {"torch", torch_.toStdString()}, {"target", info.target},
                   {"seconds", info.seconds}, {"package_sha256", check.sha256}};
    QSaveFile f(package.left(package.size() - 4) + QStringLiteral(".json"));
    if (f.open(QIODevice::WriteOnly)) {
        f.write(QByteArray::fromStdString(record.dump(2) + "\n"));
        f.commit();  // without it the next run compiles again: nothing is lost
    }
    clock_.invalidate();
    emit jobDone(job, info);
    nextJob();
}

void CompileStep::failAll(const QString& reason) {
    for (int j = std::max(0, current_); j < int(jobs_.size()); ++j) emit jobFailed(j, reason);
    current_ = -1;
    emit finished();
}

void CompileStep::cancel() {
    if (cancelled_) return;
    cancelled_ = true;
    if (!process_) return;
    process_->disconnect(this);
    const qint64 pid = process_->processId();
    if (pid > 0) ::kill(-pid_t(pid), SIGKILL);  // the compiler, its workers and the C++ compiler
    process_->kill();
    process_->waitForFinished(2000);
    if (current_ >= 0) QDir(workDir(current_)).removeRecursively();
    process_.reset();
}

}  // namespace pitlane::session
