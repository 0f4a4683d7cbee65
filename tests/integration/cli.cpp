#include "cli.h"

#include "harness.h"

#include "pitlane/protocol/protocol.h"

#include <QFile>

#include <gtest/gtest.h>

#include <fstream>

namespace pitlane::itest {

QString cliPath() {
    return QString::fromStdString(binDir()) + QStringLiteral("/pitlane-cli");
}

QString writeJson(const QString& path, const nlohmann::json& j) {
    std::ofstream f(path.toStdString());
    f << j.dump(2) << "\n";
    return path;
}

nlohmann::json readJson(const QString& path) {
    std::ifstream f(path.toStdString());
    if (!f) {
        ADD_FAILURE() << "no file " << path.toStdString();
        return nlohmann::json();
    }
    return nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
}

CliResult runCli(const QStringList& args, int timeoutMs,
                 const std::function<void(const std::string&, QProcess&)>& onStderrLine) {
    CliResult r;
    if (binDir().empty()) {
        ADD_FAILURE() << "PITLANE_BIN_DIR is not set (run through ctest)";
        return r;
    }
    QProcess p;
    p.setProcessChannelMode(QProcess::SeparateChannels);
    protocol::LineBuffer lines;
    bool done = false;
    QObject::connect(&p, &QProcess::readyReadStandardError, [&] {
        const QByteArray chunk = p.readAllStandardError();
        r.err += chunk.toStdString();
        for (const auto& line : lines.feed(chunk.constData(), std::size_t(chunk.size())))
            if (onStderrLine) onStderrLine(line, p);
    });
    QObject::connect(&p, &QProcess::readyReadStandardOutput,
                     [&] { r.out += p.readAllStandardOutput().toStdString(); });
    QObject::connect(&p, &QProcess::finished, [&] { done = true; });
    QObject::connect(&p, &QProcess::errorOccurred, [&](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) done = true;
    });
    p.start(cliPath(), args);
    if (!spinUntil([&] { return done; }, timeoutMs)) {
        ADD_FAILURE() << "pitlane-cli " << args.join(' ').toStdString() << " did not finish in "
                      << timeoutMs << " ms; stderr so far:\n"
                      << r.err;
        p.kill();
        p.waitForFinished(5000);
        return r;
    }
    r.out += p.readAllStandardOutput().toStdString();
    r.err += p.readAllStandardError().toStdString();
    r.finished = p.exitStatus() == QProcess::NormalExit && p.error() != QProcess::FailedToStart;
    r.exitCode = r.finished ? p.exitCode() : -1;
    return r;
}

}  // namespace pitlane::itest
