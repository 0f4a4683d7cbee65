// CompileStep (compile_step.h): the project's Python runs tools/compile_exported.py, one job at a
// time, asynchronously. The cache: <dir>/<key>.pt2 (the package) and <dir>/<key>.json (what made
// it: the program's SHA-256, options, torch, target, the compile's seconds and the package's own
// SHA-256, checked on every hit so a damaged cached package is compiled again, never measured);
// Inductor's own cache and temporary files under <dir>/inductor and <dir>/tmp.
#include "pitlane/session/compile_step.h"

#include <QCryptographicHash>
#include <QFile>

#include "pitlane/spec/model_file.h"

#include <QDir>
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
    Options o{projectPython(env), compileScript(appDir), compileCacheDir(env), {}};
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
    askTorchVersion();
}

// The compiler runs in a process group of its own (Inductor starts compile workers and the C++
// compiler: cancel() kills them all) and dies with this process.
QProcess* CompileStep::newProcess() {
    process_ = std::make_unique<QProcess>();
    process_->setChildProcessModifier([] {
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    });
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("TORCHINDUCTOR_CACHE_DIR"), QDir(options_.cacheDir).filePath(QStringLiteral("inductor")));
    env.insert(QStringLiteral("TMPDIR"), QDir(options_.cacheDir).filePath(QStringLiteral("tmp")));
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
        const QString why = QStringLiteral("cannot start %1: %2").arg(options_.python, process_->errorString());
        process_.release()->deleteLater();
        failAll(why);
    });
    return process_.get();
}

void CompileStep::askTorchVersion() {
    QProcess* p = newProcess();
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
    p->start(options_.python, {options_.script, QStringLiteral("--torch-version")});
}

QString CompileStep::packagePath(int job) const {
    const CompileJob& j = jobs_[std::size_t(job)];
    const QString key = compileKey(j.programSha256, canonicalOptionsJson(j.options), torch_ + QStringLiteral(" script ") + scriptSha_,
                                   compileTarget(j.device, options_.cpuinfo));
    return QDir(options_.cacheDir).filePath(key + QStringLiteral(".pt2"));
}

void CompileStep::nextJob() {
    while (!cancelled_ && ++current_ < int(jobs_.size()))
        if (!takeFromCache(current_)) return runCompiler(current_);
    if (cancelled_) return;
    current_ = -1;
    emit finished();
}

// A package whose record says what made it and whose bytes are still those recorded.
bool CompileStep::takeFromCache(int job) {
    QElapsedTimer t;
    t.start();
    const QString package = packagePath(job);
    QFile recordFile(package.left(package.size() - 4) + QStringLiteral(".json"));
    if (!QFileInfo(package).isFile() || !recordFile.open(QIODevice::ReadOnly)) return false;
    const QByteArray bytes = recordFile.readAll();
    const json record = json::parse(bytes.constData(), bytes.constData() + bytes.size(), nullptr, false);
    if (!record.is_object() || !record.contains("package_sha256")) return false;
    const spec::ModelFileCheck check = spec::checkModelFile(package.toStdString());
    if (!check.ok || check.format != spec::kFormatAoti || record["package_sha256"] != check.sha256) return false;
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
    QProcess* p = newProcess();
    connect(p, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        compilerEnded(code, status != QProcess::NormalExit);
    });
    json metadata = json::object();
    for (const auto& [k, v] : j.metadata) metadata[k] = v;
    clock_.start();
    emit jobStarted(job);
    p->start(options_.python, {options_.script, QStringLiteral("--program"), j.program, QStringLiteral("--out"),
                               packagePath(job), QStringLiteral("--options"), canonicalOptionsJson(j.options),
                               QStringLiteral("--device"), QString::fromStdString(j.device),
                               QStringLiteral("--metadata"), QString::fromStdString(metadata.dump())});
}

void CompileStep::compilerEnded(int exitCode, bool crashed) {
    const int job = current_;
    const CompileAnswer a = parseCompileOutput(process_->readAllStandardOutput());
    process_.release()->deleteLater();
    const QString package = packagePath(job);
    const spec::ModelFileCheck check =
        a.done ? spec::checkModelFile(package.toStdString()) : spec::ModelFileCheck{};
    if (!a.done || exitCode != 0 || crashed || !check.ok) {
        const QString why = a.done && !check.ok ? QStringLiteral("the compiled package %1 is not sound: %2")
                                                      .arg(package, QString::fromStdString(check.message))
                                                : compileFailure(a, exitCode, crashed, stderrTail_, options_.python);
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
    if (current_ >= 0 && pid > 0)
        QFile::remove(packagePath(current_) + QStringLiteral(".%1.partial.pt2").arg(pid));
    process_.reset();
}

}  // namespace pitlane::session
