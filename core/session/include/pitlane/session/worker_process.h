#pragma once
// One pitlane-worker child process: starts it, writes commands, parses its JSON-lines events as
// they arrive and reports how it ended. QtCore only, never torch.
#include "pitlane/protocol/protocol.h"

#include <QObject>
#include <QProcess>
#include <QStringList>

namespace pitlane::session {

class WorkerProcess : public QObject {
    Q_OBJECT
public:
    explicit WorkerProcess(QString program, QStringList arguments = {}, QObject* parent = nullptr);
    ~WorkerProcess() override;

    // The environment the worker is started with (default: this process's). Takes effect at
    // the next start(); see allocator.h for the allocator knob's LD_PRELOAD.
    void setEnvironment(const QProcessEnvironment& env);
    void start();
    bool send(const nlohmann::json& command);
    void requestStop();  // SIGTERM: the worker flushes what it measured and says bye
    // A worker behind ssh cannot be sent a signal: requestStop closes its stdin instead (it
    // finishes its block, flushes, says bye and exits at end of input; the runner's kill after
    // the grace period ends ssh, and the sshd session's end kills a worker still busy).
    void setStopByClosingInput(bool on) { stopByClosingInput_ = on; }
    void kill();         // SIGKILL
    bool isRunning() const;
    qint64 pid() const { return pid_; }
    int malformedLines() const { return malformed_; }
    QStringList stderrTail() const { return stderrTail_; }

signals:
    void eventReceived(const nlohmann::json& event);
    void malformedLine(const QString& line, const QString& reason);
    void stderrLine(const QString& line);
    // crashed: died by a signal (then exitCode is the signal number).
    void exited(int exitCode, bool crashed);
    void startFailed(const QString& reason);

private:
    void readStdout();
    void readStderr();

    QProcess process_;
    QString program_;
    QStringList arguments_;
    protocol::LineBuffer stdoutLines_, stderrLines_;
    QStringList stderrTail_;
    int malformed_ = 0;
    qint64 pid_ = 0;
    bool exitedReported_ = false;
    bool stopByClosingInput_ = false;
};

}  // namespace pitlane::session
