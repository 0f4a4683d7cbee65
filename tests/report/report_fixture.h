#pragma once
// One real run of the bundled mlp model through pitlane-cli, shared by the report tests: every
// export written into the artifacts folder, and the run stored in a history file there.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QString>

#include <gtest/gtest.h>

namespace report_test {

inline QString artifacts() {
    return QStringLiteral(PITLANE_REPORT_ARTIFACTS);
}
inline QString artifact(const QString& name) {
    return QDir(artifacts()).filePath(name);
}
inline QString cli() {
    return QDir(qEnvironmentVariable("PITLANE_BIN_DIR")).filePath(QStringLiteral("pitlane-cli"));
}

struct CliResult {
    int exitCode = -1;
    QString out, err;
};

inline CliResult runCli(const QStringList& args, int timeoutMs = 60000) {
    QProcess p;
    auto env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));  // pitlane-cli must manage without it
    env.remove(QStringLiteral("DISPLAY"));
    p.setProcessEnvironment(env);
    p.start(cli(), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

struct Exported {
    bool ok = false;
    QString why;
    qint64 runId = 0;
    QString db;
};

// Runs once per process: `pitlane-cli run PRESET --db H --report r.html --pdf r.pdf ...`.
inline const Exported& exported() {
    static const Exported e = [] {
        Exported x;
        QDir(artifacts()).removeRecursively();
        QDir().mkpath(artifacts());
        const QString preset = artifact(QStringLiteral("preset.json"));
        QFile f(preset);
        f.open(QIODevice::WriteOnly);
        f.write(R"({"name": "mlp: autograd vs no_grad vs inference_mode", "model": "mlp",
  "description": "The same MLP three ways: autograd on, torch.no_grad and torch.inference_mode.",
  "run": {"warmup_iters": 10, "iters": 600, "block_iters": 150, "processes": 3},
  "arms": [{"name": "A", "knobs": {"grad": "enabled", "intra_op_threads": 1}},
           {"name": "B", "knobs": {"grad": "no_grad", "intra_op_threads": 1}},
           {"name": "C", "knobs": {"grad": "inference_mode", "intra_op_threads": 1}}]})");
        f.close();
        x.db = artifact(QStringLiteral("history.sqlite"));
        const auto r = runCli({QStringLiteral("run"), preset, QStringLiteral("--db"), x.db,
                               QStringLiteral("--report"), artifact(QStringLiteral("run.html")),
                               QStringLiteral("--pdf"), artifact(QStringLiteral("run.pdf")),
                               QStringLiteral("--md"), artifact(QStringLiteral("run.md")),
                               QStringLiteral("--csv"), artifact(QStringLiteral("run.csv")),
                               QStringLiteral("--json"), artifact(QStringLiteral("run.json")),
                               QStringLiteral("--quiet")});
        const auto m = QRegularExpression(QStringLiteral("run id: (\\d+)")).match(r.out);
        if (r.exitCode != 0 || !m.hasMatch()) {
            x.why = QStringLiteral("pitlane-cli run exited %1\n%2\n%3")
                        .arg(r.exitCode)
                        .arg(r.out, r.err);
            return x;
        }
        x.runId = m.captured(1).toLongLong();
        x.ok = true;
        return x;
    }();
    return e;
}

#define REQUIRE_EXPORTED()                    \
    const auto& ex = report_test::exported(); \
    ASSERT_TRUE(ex.ok) << ex.why.toStdString()

inline QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Runs PROGRAM ARGS (a renderer: Chromium, pdftoppm) with stdout and stderr merged into OUTPUT
// ("timed out" after 90 s); its exit code, -1 when it crashed or timed out.
inline int runTool(const QString& program, const QStringList& args, QString* output) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(90000)) {
        p.kill();
        p.waitForFinished();
        *output = QStringLiteral("timed out");
        return -1;
    }
    *output = QString::fromUtf8(p.readAll());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

}  // namespace report_test
