#pragma once
// One pitlane-worker child process: starts it, writes commands, parses its JSON-lines events as
// they arrive and reports how it ended. QtCore only, never torch.
#include "pitlane/protocol/protocol.h"

#include <QObject>
#include <QProcess>
#include <QSocketNotifier>
#include <QStringList>

namespace pitlane::session {

class WorkerProcess : public QObject {
    Q_OBJECT
public:
    // Where the protocol travels. Socket (a local pitlane-worker): a socket pair, the worker's
    // end as its fd 3 with `--channel-fd 3` added to its arguments, stdin /dev/null; the model's
    // forward cannot reopen a socket through /proc/self/fd, so it cannot write events (it could
    // the pipes of stdin and stdout). Stdio (ssh to a remote worker): stdin and stdout.
    enum class Channel { Socket, Stdio };
    // The longest event line accepted (a block's samples: ~20 bytes each) and the longest
    // stderr line kept (the rest is cut, with a note).
    static constexpr std::size_t kMaxEventLine = std::size_t(256) << 20;
    static constexpr std::size_t kMaxStderrLine = 4096;

    explicit WorkerProcess(QString program, QStringList arguments = {}, QObject* parent = nullptr,
                           Channel channel = Channel::Socket);
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
    Channel channel() const { return channel_; }
    QStringList stderrTail() const { return stderrTail_; }

signals:
    void eventReceived(const nlohmann::json& event);
    // A line on the protocol channel that is not an event (or longer than kMaxEventLine): the
    // runner fails the arm with protocol_violation. On the socket only the worker itself writes.
    void malformedLine(const QString& line, const QString& reason);
    void stderrLine(const QString& line);
    // crashed: died by a signal (then exitCode is the signal number).
    void exited(int exitCode, bool crashed);
    void startFailed(const QString& reason);

private:
    void readStdout();
    void readStderr();
    void readChannel();
    void flushWrites();
    void feedEvents(const char* data, std::size_t n);
    void closeChannel();
    void logLines(protocol::LineBuffer& buffer, const QByteArray& data);

    QProcess process_;
    Channel channel_;
    int channelFd_ = -1;  // this side of the socket pair
    QSocketNotifier* readNotifier_ = nullptr;
    QSocketNotifier* writeNotifier_ = nullptr;
    std::string writeQueue_;
    QString program_;
    QStringList arguments_;
    protocol::LineBuffer eventLines_{kMaxEventLine}, stdoutLines_{kMaxStderrLine}, stderrLines_{kMaxStderrLine};
    QStringList stderrTail_;
    int malformed_ = 0;
    qint64 pid_ = 0;
    bool exitedReported_ = false;
    bool stopByClosingInput_ = false;
};

}  // namespace pitlane::session
