#pragma once
// Running this build's pitlane-cli ($PITLANE_BIN_DIR) from the store tests, to completion.
#include <QDir>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <gtest/gtest.h>

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

}  // namespace pitlane::testing
