#pragma once
// Running the real pitlane-cli from $PITLANE_BIN_DIR, and writing preset files for it.
#include <nlohmann/json.hpp>

#include <QProcess>
#include <QString>
#include <QStringList>

#include <functional>
#include <string>

namespace pitlane::itest {

struct CliResult {
    int exitCode = -1;
    bool finished = false;  // false: it hung and was killed
    std::string out, err;
};

QString cliPath();
// Writes `j` to `path` (pretty-printed) and returns the path.
QString writeJson(const QString& path, const nlohmann::json& j);
nlohmann::json readJson(const QString& path);

// Runs pitlane-cli with `args` to completion. `onStderrLine` sees each stderr line as it arrives
// (with the running process), so a test can act on progress.
CliResult runCli(const QStringList& args, int timeoutMs = 60000,
                 const std::function<void(const std::string&, QProcess&)>& onStderrLine = {});

}  // namespace pitlane::itest
