// compile_step.h's pure pieces: the cache key and folder, where the Python and the script are,
// what the script said, and which arms share a compile.
#include "pitlane/session/compile_step.h"

#include "pitlane/spec/model_file.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <nlohmann/json.hpp>

#include <set>

#ifndef PITLANE_PYTHON_PATH
#define PITLANE_PYTHON_PATH ""
#endif
#ifndef PITLANE_TOOLS_DIR
#define PITLANE_TOOLS_DIR ""
#endif

namespace pitlane::session {

using json = nlohmann::json;

QString canonicalOptionsJson(const spec::InductorOptions& o) {
    return QString::fromStdString(json(o).dump());  // nlohmann's object keeps its keys sorted
}

QString compileTarget(const std::string& device, const QByteArray& cpuinfo) {
    if (device.rfind("cuda", 0) == 0) return QString::fromStdString(device);
    std::set<QByteArray> flags;
    for (const QByteArray& line : cpuinfo.split('\n')) {
        if (!line.startsWith("flags")) continue;
        const int colon = line.indexOf(':');
        if (colon < 0) continue;
        for (const QByteArray& f : line.mid(colon + 1).simplified().split(' ')) flags.insert(f);
        break;  // every core has the same flags
    }
    // What torch._inductor.cpu_vec_isa tells apart, in its order.
    QString target = QStringLiteral("cpu");
    for (const char* isa : {"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",
                            "amx_fp16", "asimd", "sve"})
        if (flags.count(isa)) target += QLatin1Char(' ') + QLatin1String(isa);
    return target == QLatin1String("cpu") ? QStringLiteral("cpu baseline") : target;
}

QString compileKey(const QString& programSha256, const QString& optionsJson, const QString& torchVersion,
                   const QString& target) {
    const QString text = programSha256 + QLatin1Char('\n') + optionsJson + QLatin1Char('\n') + torchVersion +
                         QLatin1Char('\n') + target + QLatin1Char('\n');
    return QString::fromLatin1(QCryptographicHash::hash(text.toUtf8(), QCryptographicHash::Sha256).toHex());
}

QString compileCacheDir(const QProcessEnvironment& env) {
    if (const QString dir = env.value(QStringLiteral("PITLANE_CACHE_DIR")); !dir.isEmpty()) return dir;
    if (const QString xdg = env.value(QStringLiteral("XDG_CACHE_HOME")); !xdg.isEmpty())
        return QDir(xdg).filePath(QStringLiteral("pitlane/aoti"));
    if (const QString home = env.value(QStringLiteral("HOME")); !home.isEmpty())
        return QDir(home).filePath(QStringLiteral(".cache/pitlane/aoti"));
    return {};
}

QString projectPython(const QProcessEnvironment& env) {
    const QString python = env.value(QStringLiteral("PITLANE_PYTHON"));
    return python.isEmpty() ? QStringLiteral(PITLANE_PYTHON_PATH) : python;
}

QString compileScript(const QString& appDir) {
    const QString name = QStringLiteral("compile_exported.py");
    for (const QString& dir : {appDir, QStringLiteral(PITLANE_TOOLS_DIR)})
        if (!dir.isEmpty() && QFileInfo(QDir(dir).filePath(name)).isFile()) return QDir(dir).filePath(name);
    return {};
}

CompileAnswer parseCompileOutput(const QByteArray& stdoutBytes) {
    CompileAnswer a;
    for (const QByteArray& raw : stdoutBytes.split('\n')) {
        const QByteArray line = raw.trimmed();
        if (line.isEmpty()) continue;
        const json j = json::parse(line.constData(), line.constData() + line.size(), nullptr, false);
        if (!j.is_object()) {
            ++a.malformed;
            continue;
        }
        const auto text = [&](const char* key) {
            return j.contains(key) && j[key].is_string() ? QString::fromStdString(j[key].get<std::string>()) : QString();
        };
        if (j.contains("error")) a.error = j["error"].is_string() ? text("error") : QString::fromStdString(j["error"].dump());
        if (j.contains("torch")) a.torch = text("torch");
        if (j.contains("sandbox") && j["sandbox"].is_object()) {
            a.sandboxed = true;
            const json& errors = j["sandbox"].value("errors", json::array());
            for (const auto& e : errors)
                a.sandboxErrors << (e.is_string() ? QString::fromStdString(e.get<std::string>()) : QString::fromStdString(e.dump()));
            continue;
        }
        if (!j.contains("stage")) continue;
        a.stage = text("stage");
        if (a.stage == QLatin1String("done")) {
            a.done = true;
            a.seconds = j.contains("seconds") && j["seconds"].is_number() ? j["seconds"].get<double>() : 0.0;
            a.package = text("package");
        }
    }
    return a;
}

QString shortReason(const QString& text) {
    QStringList lines;
    for (const QString& l : text.split(QLatin1Char('\n'))) {
        const QString t = l.trimmed();
        if (t.isEmpty()) continue;
        lines << t;
        if (lines.size() == 2) break;
    }
    QString out = lines.join(QStringLiteral(" / "));
    if (out.size() > 400) out = out.left(399) + QChar(0x2026);
    return out;
}

QString compileFailure(const CompileAnswer& a, int exitCode, bool crashed, const QStringList& stderrTail,
                       const QString& python) {
    if (!a.error.isEmpty()) return shortReason(a.error);
    // A Python error the script could not catch (a syntax error, an import before its handler).
    static const QRegularExpression pyError(QStringLiteral("^[A-Za-z_.]*(Error|Exception|Interrupt): .+"));
    for (auto it = stderrTail.crbegin(); it != stderrTail.crend(); ++it)
        if (pyError.match(it->trimmed()).hasMatch()) return shortReason(it->trimmed());
    const QString how = crashed ? QStringLiteral("died by signal %1").arg(exitCode)
                                : QStringLiteral("exited with code %1").arg(exitCode);
    const QString last = stderrTail.isEmpty() ? QString() : QStringLiteral("; last stderr: ") + stderrTail.last().trimmed();
    return shortReason(QStringLiteral("the compiler (%1 compile_exported.py) %2 without saying why%3")
                           .arg(python, how, last));
}

QStringList compilerReadable(const QString& python, const QString& script, const QString& program,
                             const QProcessEnvironment& env) {
    QStringList paths{program, script};
    // bin/python's folder above: a venv (pyvenv.cfg, site-packages); then the interpreter it is
    // a link to (/usr/bin/python3.11: /usr; a uv or conda Python: its own folder).
    for (const QString& exe : {QFileInfo(python).absoluteFilePath(), QFileInfo(python).canonicalFilePath()}) {
        if (exe.isEmpty()) continue;
        const QString prefix = QFileInfo(QFileInfo(exe).absolutePath()).absolutePath();
        if (prefix != QLatin1String("/")) paths << prefix;
    }
    for (const QString& p : env.value(QStringLiteral("PYTHONPATH")).split(QLatin1Char(':'), Qt::SkipEmptyParts))
        if (QFileInfo(p).absoluteFilePath() != QLatin1String("/")) paths << QFileInfo(p).absoluteFilePath();
    QStringList out;
    for (const QString& p : paths)
        if (!p.isEmpty() && QFileInfo::exists(p) && !out.contains(p)) out << p;
    return out;
}

std::vector<CompileJob> compileJobs(const spec::Preset& preset, const std::vector<std::string>& sha256,
                                    const std::vector<bool>& pending) {
    std::vector<CompileJob> jobs;
    for (std::size_t i = 0; i < preset.arms.size(); ++i) {
        const auto& arm = preset.arms[i];
        if (i >= pending.size() || !pending[i] || i >= sha256.size()) continue;
        if (arm.knobs.compile != spec::Compile::Aoti) continue;
        const std::string path = arm.model_path.empty() ? preset.model_path : arm.model_path;
        const QString program = QFileInfo(QString::fromStdString(path)).absoluteFilePath();
        const QString sha = QString::fromStdString(sha256[i]);
        auto same = [&](const CompileJob& j) {
            return j.programSha256 == sha && j.program == program && j.options == arm.knobs.inductor &&
                   j.device == arm.knobs.device;
        };
        auto it = std::find_if(jobs.begin(), jobs.end(), same);
        if (it == jobs.end()) {
            CompileJob job{program, sha, arm.knobs.inductor, arm.knobs.device, {}, {}, false};
            const spec::ModelFormat f = spec::readModelFormat(path);
            for (const char* key : {"batch", "input"})
                if (f.metadata.count(key)) job.metadata[key] = f.metadata.at(key);
            jobs.push_back(std::move(job));
            it = jobs.end() - 1;
        }
        it->arms.push_back(int(i));
        it->sandbox = it->sandbox || arm.knobs.sandbox == spec::Sandbox::On;
    }
    return jobs;
}

}  // namespace pitlane::session
