// The compile step's pure pieces (issue 40, session/compile_step.h): the cache key and folder,
// the compile target from /proc/cpuinfo, what the compiler script said and the reason a compile
// failed, and which arms share one compile. No process is started.
#include "pitlane/results/compile_info.h"
#include "pitlane/session/compile_step.h"

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

namespace {

using namespace pitlane::session;
using pitlane::spec::InductorOptions;

const QByteArray kXeon = "processor\t: 0\nflags\t\t: fpu vme sse sse2 avx avx2 fma avx512f avx512bw\n\n"
                         "processor\t: 1\nflags\t\t: fpu vme sse sse2 avx avx2 fma avx512f avx512bw\n";
const QByteArray kEpyc = "flags\t\t: fpu avx avx2 avx512f avx512_vnni avx512_bf16\n";

TEST(CompileStep, OptionsJsonIsCanonical) {
    EXPECT_EQ(canonicalOptionsJson(InductorOptions{}),
              QStringLiteral(R"({"dynamic_threads":true,"freezing":false,"max_autotune":false})"));
    InductorOptions o;
    o.freezing = true;
    EXPECT_EQ(canonicalOptionsJson(o), QStringLiteral(R"({"dynamic_threads":true,"freezing":true,"max_autotune":false})"));
}

TEST(CompileStep, TargetIsTheIsaOrTheCudaDevice) {
    EXPECT_EQ(compileTarget("cpu", kXeon), QStringLiteral("cpu avx2 avx512f"));
    EXPECT_EQ(compileTarget("cpu", kEpyc), QStringLiteral("cpu avx2 avx512f avx512_vnni avx512_bf16"));
    EXPECT_EQ(compileTarget("cpu", "flags\t: fpu sse2\n"), QStringLiteral("cpu baseline"));
    EXPECT_EQ(compileTarget("cpu", ""), QStringLiteral("cpu baseline"));
    EXPECT_EQ(compileTarget("cuda:1", kXeon), QStringLiteral("cuda:1"));
    // The flags of the first "flags" line only (every core has the same).
    EXPECT_FALSE(compileTarget("cpu", "flags: avx2\nflags: avx512f\n").contains(QStringLiteral("avx512f")));
}

TEST(CompileStep, KeyChangesWithEachOfItsParts) {
    const QString sha(64, QLatin1Char('a'));
    const QString opts = canonicalOptionsJson({});
    const QString key = compileKey(sha, opts, QStringLiteral("2.11.0+cu130"), QStringLiteral("cpu avx2"));
    EXPECT_EQ(key.size(), 64);
    EXPECT_EQ(key, compileKey(sha, opts, QStringLiteral("2.11.0+cu130"), QStringLiteral("cpu avx2")));
    InductorOptions frozen;
    frozen.freezing = true;
    for (const QString& other :
         {compileKey(QString(64, QLatin1Char('b')), opts, QStringLiteral("2.11.0+cu130"), QStringLiteral("cpu avx2")),
          compileKey(sha, canonicalOptionsJson(frozen), QStringLiteral("2.11.0+cu130"), QStringLiteral("cpu avx2")),
          compileKey(sha, opts, QStringLiteral("2.12.0"), QStringLiteral("cpu avx2")),
          compileKey(sha, opts, QStringLiteral("2.11.0+cu130"), QStringLiteral("cpu avx2 avx512f"))})
        EXPECT_NE(other, key);
}

TEST(CompileStep, CacheDirFollowsTheEnvironment) {
    QProcessEnvironment env;
    EXPECT_EQ(compileCacheDir(env), QString());
    env.insert(QStringLiteral("HOME"), QStringLiteral("/home/u"));
    EXPECT_EQ(compileCacheDir(env), QStringLiteral("/home/u/.cache/pitlane/aoti"));
    env.insert(QStringLiteral("XDG_CACHE_HOME"), QStringLiteral("/x/cache"));
    EXPECT_EQ(compileCacheDir(env), QStringLiteral("/x/cache/pitlane/aoti"));
    env.insert(QStringLiteral("PITLANE_CACHE_DIR"), QStringLiteral("/tmp/c"));
    EXPECT_EQ(compileCacheDir(env), QStringLiteral("/tmp/c"));
}

TEST(CompileStep, PythonFromTheEnvironmentFirst) {
    QProcessEnvironment env;
    env.insert(QStringLiteral("PITLANE_PYTHON"), QStringLiteral("/opt/py/bin/python"));
    EXPECT_EQ(projectPython(env), QStringLiteral("/opt/py/bin/python"));
    EXPECT_FALSE(projectPython(QProcessEnvironment()).isEmpty());  // the build's (CMake PITLANE_PYTHON)
}

TEST(CompileStep, ScriptNextToTheExecutablesFirst) {
    QTemporaryDir dir;
    QFile f(QDir(dir.path()).filePath(QStringLiteral("compile_exported.py")));
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.close();
    EXPECT_EQ(compileScript(dir.path()), f.fileName());
    // Else the source tree's (this build has one).
    const QString fallback = compileScript(QStringLiteral("/nonexistent"));
    EXPECT_TRUE(fallback.endsWith(QStringLiteral("tools/compile_exported.py"))) << fallback.toStdString();
}

TEST(CompileStep, ParsesTheScriptsLines) {
    const CompileAnswer a = parseCompileOutput(
        "{\"stage\": \"loading\"}\n{\"stage\": \"compiling\"}\nnot json\n"
        "{\"stage\": \"done\", \"seconds\": 34.2, \"package\": \"/c/k.pt2\", \"torch\": \"2.11.0+cu130\"}\n");
    EXPECT_TRUE(a.done);
    EXPECT_DOUBLE_EQ(a.seconds, 34.2);
    EXPECT_EQ(a.package, QStringLiteral("/c/k.pt2"));
    EXPECT_EQ(a.torch, QStringLiteral("2.11.0+cu130"));
    EXPECT_EQ(a.malformed, 1);
    const CompileAnswer e = parseCompileOutput("{\"stage\": \"compiling\"}\n{\"error\": \"InductorError: boom\"}\n");
    EXPECT_FALSE(e.done);
    EXPECT_EQ(e.stage, QStringLiteral("compiling"));
    EXPECT_EQ(e.error, QStringLiteral("InductorError: boom"));
    EXPECT_EQ(parseCompileOutput("{\"torch\": \"2.11.0\"}\n").torch, QStringLiteral("2.11.0"));
}

TEST(CompileStep, FailureIsOneOrTwoLines) {
    CompileAnswer a;
    a.error = QStringLiteral("CppCompileError: C++ compile error\n\nCommand:\ng++ /tmp/x.cpp -o x.so\n"
                             "line 4\nline 5\nline 6");
    const QString why = compileFailure(a, 1, false, {}, QStringLiteral("python"));
    EXPECT_EQ(why, QStringLiteral("CppCompileError: C++ compile error / Command:"));
    EXPECT_EQ(shortReason(QString(1000, QLatin1Char('x'))).size(), 400);
    // The script said nothing: the last Python error on its stderr.
    const QStringList tail = {QStringLiteral("Traceback (most recent call last):"),
                              QStringLiteral("  File \"x.py\", line 3"),
                              QStringLiteral("SyntaxError: invalid syntax"), QStringLiteral("")};
    EXPECT_EQ(compileFailure({}, 1, false, tail, QStringLiteral("python")), QStringLiteral("SyntaxError: invalid syntax"));
    // Nothing at all: how it ended, naming the Python.
    const QString died = compileFailure({}, 9, true, {}, QStringLiteral("/usr/bin/python3"));
    EXPECT_TRUE(died.contains(QStringLiteral("/usr/bin/python3"))) << died.toStdString();
    EXPECT_TRUE(died.contains(QStringLiteral("died by signal 9"))) << died.toStdString();
    EXPECT_FALSE(died.contains(QLatin1Char('\n')));
}

// Arms with the same program, options and device share one compile; compile "none", arms not
// pending and other options get theirs.
TEST(CompileStep, ArmsShareACompile) {
    pitlane::spec::Preset p;
    p.model_path = "/m/tiny.exported.pt2";
    for (const char* name : {"none", "aoti", "aoti2", "frozen", "failed"}) {
        pitlane::spec::ArmSpec a;
        a.name = name;
        a.knobs.compile = std::string(name) == "none" ? pitlane::spec::Compile::None : pitlane::spec::Compile::Aoti;
        a.knobs.inductor.freezing = std::string(name) == "frozen";
        p.arms.push_back(a);
    }
    const std::vector<std::string> sha(5, std::string(64, 'c'));
    const auto jobs = compileJobs(p, sha, {true, true, true, true, false});
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0].arms, (std::vector<int>{1, 2}));
    EXPECT_EQ(jobs[0].program, QStringLiteral("/m/tiny.exported.pt2"));
    EXPECT_FALSE(jobs[0].options.freezing);
    EXPECT_EQ(jobs[1].arms, (std::vector<int>{3}));
    EXPECT_TRUE(jobs[1].options.freezing);
}

TEST(CompileInfo, JsonRoundTripAndLine) {
    pitlane::results::CompileInfo c;
    c.seconds = 41.23;
    c.options.freezing = true;
    c.torch = "2.11.0+cu130";
    c.package = "/c/k.pt2";
    c.target = "cpu avx2";
    EXPECT_EQ(pitlane::results::compileFromJson(pitlane::results::compileJson(c)), c);
    EXPECT_EQ(pitlane::results::compileLine(c), "compiled in 41.2 s (AOTInductor, freezing, dynamic threads; torch 2.11.0+cu130)");
    c.cache_hit = true;
    c.compiled_seconds = 41.23;
    c.seconds = 0.01;
    EXPECT_EQ(pitlane::results::compileFromJson(pitlane::results::compileJson(c)), c);
    EXPECT_EQ(pitlane::results::compileLine(c),
              "AOTInductor package from the cache (compiled in 41.2 s; freezing, dynamic threads; torch 2.11.0+cu130)");
    EXPECT_FALSE(pitlane::results::compileFromJson(nullptr));
    EXPECT_FALSE(pitlane::results::compileFromJson("x"));
}

// The launcher's {"sandbox": ...} line (pitlane-worker --sandbox-exec): confined, and what could
// not be applied.
TEST(CompileStep, ReadsTheLaunchersSandboxLine) {
    const CompileAnswer a = parseCompileOutput(
        "{\"sandbox\": {\"enabled\": true, \"errors\": [\"filesystem: Landlock is not available\"]}}\n"
        "{\"stage\": \"loading\"}\n");
    EXPECT_TRUE(a.sandboxed);
    EXPECT_EQ(a.sandboxErrors, QStringList{QStringLiteral("filesystem: Landlock is not available")});
    EXPECT_EQ(a.stage, QStringLiteral("loading"));
    EXPECT_EQ(a.malformed, 0);
    EXPECT_FALSE(parseCompileOutput("{\"stage\": \"loading\"}\n").sandboxed);
}

// What the confined compiler reads: the program, the script, the venv above bin/python and the
// interpreter's own prefix ("/" never), $PYTHONPATH's folders; only those that exist.
TEST(CompileStep, TheCompilerReadsItsProgramScriptAndPython) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QDir d(dir.path());
    ASSERT_TRUE(d.mkpath(QStringLiteral("venv/bin")) && d.mkpath(QStringLiteral("pylib")) && d.mkpath(QStringLiteral("prefix/bin")));
    QFile interpreter(d.filePath(QStringLiteral("prefix/bin/python3.11")));
    ASSERT_TRUE(interpreter.open(QIODevice::WriteOnly));
    interpreter.close();
    ASSERT_TRUE(QFile::link(d.filePath(QStringLiteral("prefix/bin/python3.11")), d.filePath(QStringLiteral("venv/bin/python"))));
    for (const char* f : {"program.pt2", "compile_exported.py"}) {
        QFile file(d.filePath(QString::fromLatin1(f)));
        ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    }
    QProcessEnvironment env;
    env.insert(QStringLiteral("PYTHONPATH"), d.filePath(QStringLiteral("pylib")) + QStringLiteral(":/nonexistent:/"));
    const QStringList r = compilerReadable(d.filePath(QStringLiteral("venv/bin/python")), d.filePath(QStringLiteral("compile_exported.py")),
                                           d.filePath(QStringLiteral("program.pt2")), env);
    const QString canonical = QFileInfo(dir.path()).canonicalFilePath();
    EXPECT_EQ(r, (QStringList{d.filePath(QStringLiteral("program.pt2")), d.filePath(QStringLiteral("compile_exported.py")),
                              d.filePath(QStringLiteral("venv")), QDir(canonical).filePath(QStringLiteral("prefix")),
                              d.filePath(QStringLiteral("pylib"))}))
        << r.join(QLatin1Char(' ')).toStdString();
    // A Python at the root's bin/ reads no "/".
    EXPECT_FALSE(compilerReadable(QStringLiteral("/bin/sh"), {}, {}, {}).contains(QStringLiteral("/")));
}

// A compile job is confined unless every arm it serves has the knob sandbox off.
TEST(CompileStep, AJobIsConfinedUnlessEveryArmHasTheSandboxOff) {
    pitlane::spec::Preset p;
    p.model_path = "/m/tiny.exported.pt2";
    for (int i = 0; i < 4; ++i) {
        pitlane::spec::ArmSpec a;
        a.name = "arm" + std::to_string(i);
        a.knobs.compile = pitlane::spec::Compile::Aoti;
        a.knobs.inductor.freezing = i >= 2;
        a.knobs.sandbox = i == 3 ? pitlane::spec::Sandbox::On : pitlane::spec::Sandbox::Off;
        p.arms.push_back(a);
    }
    const auto jobs = compileJobs(p, std::vector<std::string>(4, std::string(64, 'c')), {true, true, true, true});
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_FALSE(jobs[0].sandbox);  // arms 0 and 1: both off
    EXPECT_TRUE(jobs[1].sandbox);   // arms 2 (off) and 3 (on)
}

}  // namespace
