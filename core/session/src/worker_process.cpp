#include "pitlane/session/worker_process.h"

#include <QFileInfo>

#include <csignal>

namespace pitlane::session {

WorkerProcess::WorkerProcess(QString program, QStringList arguments, QObject* parent)
    : QObject(parent), program_(std::move(program)), arguments_(std::move(arguments)) {
    process_.setProcessChannelMode(QProcess::SeparateChannels);
    connect(&process_, &QProcess::readyReadStandardOutput, this, &WorkerProcess::readStdout);
    connect(&process_, &QProcess::readyReadStandardError, this, &WorkerProcess::readStderr);
    connect(&process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        readStdout();  // whatever was written before it died is still in the pipe
        readStderr();
        if (exitedReported_) return;
        exitedReported_ = true;
        emit exited(code, status == QProcess::CrashExit);
    });
    connect(&process_, &QProcess::started, this, [this] { pid_ = process_.processId(); });
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError err) {
        if (err == QProcess::FailedToStart) {
            exitedReported_ = true;
            emit startFailed(QStringLiteral("cannot start %1: %2").arg(program_, process_.errorString()));
        }
    });
}

WorkerProcess::~WorkerProcess() {
    if (process_.state() != QProcess::NotRunning) {
        process_.blockSignals(true);
        process_.kill();
        process_.waitForFinished(2000);
    }
}

void WorkerProcess::setEnvironment(const QProcessEnvironment& env) {
    process_.setProcessEnvironment(env);
}

void WorkerProcess::start() {
    if (!QFileInfo(program_).isExecutable()) {
        exitedReported_ = true;
        emit startFailed(QStringLiteral("worker executable not found: %1").arg(program_));
        return;
    }
    // Asynchronous: never block the caller (the window's UI thread) on the fork.
    process_.start(program_, arguments_);
}

bool WorkerProcess::send(const nlohmann::json& command) {
    if (process_.state() != QProcess::Running) return false;
    const std::string line = protocol::encode(command) + "\n";
    return process_.write(line.data(), qint64(line.size())) == qint64(line.size());
}

void WorkerProcess::requestStop() {
    if (process_.state() != QProcess::Running) return;
    if (stopByClosingInput_) process_.closeWriteChannel();
    else process_.terminate();
}

void WorkerProcess::kill() {
    if (process_.state() != QProcess::NotRunning) process_.kill();
}

bool WorkerProcess::isRunning() const { return process_.state() != QProcess::NotRunning; }

void WorkerProcess::readStdout() {
    const QByteArray data = process_.readAllStandardOutput();
    if (data.isEmpty()) return;
    for (const auto& line : stdoutLines_.feed(data.constData(), std::size_t(data.size()))) {
        std::string why;
        auto ev = protocol::decode(line, protocol::Kind::Event, &why);
        if (!ev) {
            ++malformed_;
            emit malformedLine(QString::fromStdString(line.substr(0, 200)), QString::fromStdString(why));
            continue;
        }
        emit eventReceived(*ev);
    }
}

void WorkerProcess::readStderr() {
    const QByteArray data = process_.readAllStandardError();
    if (data.isEmpty()) return;
    for (const auto& line : stderrLines_.feed(data.constData(), std::size_t(data.size()))) {
        const auto text = QString::fromStdString(line);
        stderrTail_.append(text);
        while (stderrTail_.size() > 50) stderrTail_.removeFirst();
        emit stderrLine(text);
    }
}

}  // namespace pitlane::session
