#pragma once
// The compile step (issue 40): an arm whose model is an exported program (a torch.export.save
// archive) and whose knob `compile` is "aoti" measures an AOTInductor package Pitlane compiles
// first, with tools/compile_exported.py run by the project's Python (the compiler is Python's:
// Inductor). Compiled packages are cached by what makes them: the program file's SHA-256, the
// Inductor options, the torch version of that Python and the target (the CPU's ISA, or the CUDA
// device); a hit compiles nothing. QtCore only, never torch.
//
// The pure pieces (key, cache folder, what the script said) are unit-tested in tests/session;
// CompileStep runs the script, one QProcess at a time, never blocking the event loop.
//
// The compiler is confined like the worker (engine/sandbox.h): the Python runs under
// `pitlane-worker --sandbox-exec`, which writes only the compile's own folder
// (<cache>/work/<key>.<pid>: the package, Inductor's cache, $TMPDIR), reads only the program, the
// script, the Python's own folders and the system's libraries and toolchain, and opens no socket
// but AF_UNIX (no connect()). The session, not the compiler, copies the package into the cache
// and records its SHA-256 beside it; every use checks it (a mismatch or a missing record: the
// entry is removed and compiled again, and the arm's log says so).
#include "pitlane/results/compile_info.h"
#include "pitlane/spec/preset.h"

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pitlane::session {

// The stable error code of an arm whose program could not be compiled (CONTRACT.md).
inline constexpr const char* kCompileFailed = "compile_failed";

// {"dynamic_threads":true,"freezing":false,"max_autotune":false}: keys sorted, no spaces.
QString canonicalOptionsJson(const spec::InductorOptions& o);
// What a package is compiled for: "cuda:N" for a CUDA device; for the CPU "cpu " and the ISA
// extensions Inductor's CPU code generation picks from, as /proc/cpuinfo's flags name them
// ("cpu avx2 avx512f avx512_bf16 amx_tile", "cpu baseline" when none).
QString compileTarget(const std::string& device, const QByteArray& cpuinfo);
// The cache key: SHA-256 (hex) of the program file's SHA-256, the canonical options, the torch
// version and the target, one per line.
QString compileKey(const QString& programSha256, const QString& optionsJson, const QString& torchVersion,
                   const QString& target);
// $PITLANE_CACHE_DIR, else $XDG_CACHE_HOME/pitlane/aoti, else $HOME/.cache/pitlane/aoti ("" when
// none of them is set).
QString compileCacheDir(const QProcessEnvironment& env);
// The project's Python: $PITLANE_PYTHON, else the one CMake's PITLANE_PYTHON named at build time.
QString projectPython(const QProcessEnvironment& env);
// tools/compile_exported.py: next to the executables (`appDir`, the build copies it there), else
// in the source tree; "" when neither exists.
QString compileScript(const QString& appDir);

// What the script wrote on stdout (JSON lines): its last stage, and the done or error line.
struct CompileAnswer {
    QString stage;       // "loading", "compiling", "done" ("" before any)
    bool done = false;
    double seconds = 0;  // the compile's, as the script timed it
    QString package, torch;
    QString error;       // the script's {"error": ...}
    int malformed = 0;   // lines that were not a JSON object
    // The launcher's {"sandbox": report} (pitlane-worker --sandbox-exec): it ran confined, and
    // what could not be applied (its "errors").
    bool sandboxed = false;
    QStringList sandboxErrors;
};
CompileAnswer parseCompileOutput(const QByteArray& stdoutBytes);
// One or two lines (at most 400 characters) of `text`: its first non-empty lines.
QString shortReason(const QString& text);
// Why a compile failed, in one or two lines: the script's error, else the last
// "SomethingError: ..." line of its stderr, else how it ended ("exited with code 2", "died by
// signal 9"). `python` is named when the script could not say anything.
QString compileFailure(const CompileAnswer& a, int exitCode, bool crashed, const QStringList& stderrTail,
                       const QString& python);

// One program to compile with one set of options for one device; `arms` measure the result.
struct CompileJob {
    QString program;        // the exported archive (absolute path)
    QString programSha256;  // checked before (spec::checkModelFile)
    spec::InductorOptions options;
    std::string device = "cpu";
    std::map<std::string, std::string> metadata;  // the program's (batch, input) for the package
    std::vector<int> arms;
    bool sandbox = true;  // confined unless every arm it serves has the knob sandbox off
};

// What the confined compiler may read besides the system's libraries (engine/sandbox.h): the
// program, the script, the Python's environment (the folder above its bin/: a venv; and the same
// for the interpreter it links to, "/" never) and $PYTHONPATH's folders; those that exist.
QStringList compilerReadable(const QString& python, const QString& script, const QString& program,
                             const QProcessEnvironment& env);
// Arms that measure the same program with the same options on the same device share one job.
std::vector<CompileJob> compileJobs(const spec::Preset& preset, const std::vector<std::string>& sha256,
                                    const std::vector<bool>& pending);

// Runs the jobs one after another (asks the Python its torch version first). Every job ends in
// exactly one of jobDone / jobFailed, then finished(); nothing after cancel().
class CompileStep : public QObject {
    Q_OBJECT
public:
    struct Options {
        QString python, script, cacheDir;
        QByteArray cpuinfo;  // /proc/cpuinfo (compileTarget)
        QString launcher;    // pitlane-worker: the Python runs confined (--sandbox-exec); "": it cannot
    };
    // The options from the environment: projectPython, compileScript, compileCacheDir.
    static Options fromEnvironment(const QString& appDir);

    explicit CompileStep(Options options, QObject* parent = nullptr);
    ~CompileStep() override;
    void start(std::vector<CompileJob> jobs);
    // Kills the compiler (its process group) and removes its partial package.
    void cancel();
    const std::vector<CompileJob>& jobs() const { return jobs_; }
    int current() const { return current_; }  // the job being compiled (-1: none)
    double elapsedS() const { return clock_.isValid() ? clock_.elapsed() / 1000.0 : 0.0; }

signals:
    void jobStarted(int job);  // compiling (not emitted for a cache hit)
    // Something the arms' logs should say ("warning": a tampered cache entry compiled again, a
    // sandbox part that could not be applied).
    void jobNote(int job, const QString& level, const QString& text);
    void jobDone(int job, const pitlane::results::CompileInfo& info);
    void jobFailed(int job, const QString& reason);
    void finished();

private:
    void begin();
    void askTorchVersion();
    void nextJob();
    bool takeFromCache(int job);
    void runCompiler(int job);
    void compilerEnded(int exitCode, bool crashed);
    void failAll(const QString& reason);
    QProcess* newProcess(const QString& workDir);
    // Starts the Python with `args`, confined to write only `writable` when `sandbox`.
    void startPython(const QStringList& args, const QString& writable, const QStringList& readable, bool sandbox,
                     bool cpuMemoryLimit);
    QString packagePath(int job) const;
    QString workDir(int job) const;  // <cache>/work/<key>.<this process's pid>
    void removeStaleWork() const;
    void noteSandbox(int job, const CompileAnswer& a);

    Options options_;
    std::vector<CompileJob> jobs_;
    int current_ = -1;
    QString torch_;
    QString scriptSha_;  // SHA-256 of compile_exported.py: in the cache key
    std::unique_ptr<QProcess> process_;
    QStringList stderrTail_;
    QElapsedTimer clock_;
    bool cancelled_ = false;
    qint64 pid_ = 0;  // the compiler's (its process group)
};

}  // namespace pitlane::session
