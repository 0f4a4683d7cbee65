#pragma once
// Running this build's pitlane-cli ($PITLANE_BIN_DIR) from the store tests, to completion.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace pitlane::testing {

inline QString cliPath() {
    return QDir(qEnvironmentVariable("PITLANE_BIN_DIR")).filePath(QStringLiteral("pitlane-cli"));
}

struct CliRun {
    int exitCode = -1;
    QString out, err;
};

inline CliRun runCli(const QStringList& args,
                     const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                     int timeoutMs = 120000) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(cliPath(), args);
    EXPECT_TRUE(p.waitForFinished(timeoutMs)) << "pitlane-cli did not finish";
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// runCli with its defaults spelled for the tests that call it often.
inline CliRun cli(const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    return runCli(args, env, 120000);
}

// A JSON file pitlane-cli wrote; a discarded value when it is missing or not JSON.
inline nlohmann::json readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return nlohmann::json();
    return nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
}

}  // namespace pitlane::testing
