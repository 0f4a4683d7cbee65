#include "pitlane/session/worker_process.h"

#include <QFileInfo>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace pitlane::session {

namespace {

// In the child between fork and exec (async-signal-safe): every descriptor from `first` on is
// closed at exec. Qt leaves inherited descriptors open, and whatever this process inherited
// (ctest's, a terminal's, a parent's pipes) would otherwise be the worker's and its model's.
void closeOnExecFrom(unsigned first) {
#ifdef SYS_close_range
    if (::syscall(SYS_close_range, first, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) == 0) return;
#endif
    for (int fd = int(first); fd < 4096; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

}  // namespace

WorkerProcess::WorkerProcess(QString program, QStringList arguments, QObject* parent, Channel channel)
    : QObject(parent), channel_(channel), program_(std::move(program)), arguments_(std::move(arguments)) {
    process_.setProcessChannelMode(QProcess::SeparateChannels);
    connect(&process_, &QProcess::readyReadStandardOutput, this, &WorkerProcess::readStdout);
    connect(&process_, &QProcess::readyReadStandardError, this, &WorkerProcess::readStderr);
    connect(&process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        // Whatever was written before it died is still in the pipe or the socket: the worker was
        // the only other holder of the socket, so reading to its end reads everything.
        readStdout();
        readChannel();
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
    closeChannel();
}

void WorkerProcess::closeChannel() {
    delete readNotifier_;
    delete writeNotifier_;
    readNotifier_ = writeNotifier_ = nullptr;
    if (channelFd_ >= 0) ::close(channelFd_);
    channelFd_ = -1;
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
    if (channel_ == Channel::Stdio) {
        // Nothing but stdin, stdout and stderr crosses exec (see below).
        process_.setChildProcessModifier([] { closeOnExecFrom(3); });
        // Asynchronous: never block the caller (the window's UI thread) on the fork.
        process_.start(program_, arguments_);
        return;
    }
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        exitedReported_ = true;
        emit startFailed(QStringLiteral("cannot make the worker's channel (socketpair): %1")
                             .arg(QString::fromLocal8Bit(std::strerror(errno))));
        return;
    }
    channelFd_ = pair[0];
    const int child = pair[1];
    ::fcntl(channelFd_, F_SETFL, ::fcntl(channelFd_, F_GETFL) | O_NONBLOCK);
    // In the child, between fork and exec: its end becomes fd 3, inherited by the worker (dup2
    // clears close-on-exec; every other descriptor of ours is close-on-exec).
    process_.setChildProcessModifier([child] {
        if (child == 3) ::fcntl(3, F_SETFD, 0);
        else ::dup2(child, 3);
        closeOnExecFrom(4);
    });
    process_.setStandardInputFile(QProcess::nullDevice());
    QStringList args = arguments_;
    args << QStringLiteral("--channel-fd") << QStringLiteral("3");
    readNotifier_ = new QSocketNotifier(channelFd_, QSocketNotifier::Read, this);
    connect(readNotifier_, &QSocketNotifier::activated, this, &WorkerProcess::readChannel);
    writeNotifier_ = new QSocketNotifier(channelFd_, QSocketNotifier::Write, this);
    writeNotifier_->setEnabled(false);
    connect(writeNotifier_, &QSocketNotifier::activated, this, &WorkerProcess::flushWrites);
    process_.start(program_, args);  // forks now (the Unix QProcess): the child has its copy
    ::close(child);
}

bool WorkerProcess::send(const nlohmann::json& command) {
    if (process_.state() != QProcess::Running) return false;
    const std::string line = protocol::encode(command) + "\n";
    if (channel_ == Channel::Stdio)
        return process_.write(line.data(), qint64(line.size())) == qint64(line.size());
    if (channelFd_ < 0) return false;
    writeQueue_ += line;
    flushWrites();
    return true;
}

void WorkerProcess::flushWrites() {
    while (!writeQueue_.empty() && channelFd_ >= 0) {
        const ssize_t n = ::send(channelFd_, writeQueue_.data(), writeQueue_.size(), MSG_NOSIGNAL);
        if (n > 0) {
            writeQueue_.erase(0, std::size_t(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        writeQueue_.clear();  // the worker is gone: its exit says the rest
    }
    if (writeNotifier_) writeNotifier_->setEnabled(!writeQueue_.empty());
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

void WorkerProcess::readChannel() {
    if (channelFd_ < 0) return;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::recv(channelFd_, buf, sizeof buf, 0);
        if (n > 0) {
            feedEvents(buf, std::size_t(n));
            if (channelFd_ < 0) return;  // a slot closed it
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        // End of stream (or an error): the worker closed its end; nothing more will come.
        if (readNotifier_) readNotifier_->setEnabled(false);
        if (writeNotifier_) writeNotifier_->setEnabled(false);
        return;
    }
}

void WorkerProcess::readStdout() {
    const QByteArray data = process_.readAllStandardOutput();
    if (data.isEmpty()) return;
    if (channel_ == Channel::Stdio) {
        feedEvents(data.constData(), std::size_t(data.size()));
        return;
    }
    // The worker points its fd 1 at stderr; anything here was printed around it: a log line.
    logLines(stdoutLines_, data);
}

void WorkerProcess::logLines(protocol::LineBuffer& buffer, const QByteArray& data) {
    for (const auto& line : buffer.feed(data.constData(), std::size_t(data.size()))) {
        const auto text = QString::fromStdString(protocol::printable(line));
        stderrTail_.append(text);
        while (stderrTail_.size() > 50) stderrTail_.removeFirst();
        emit stderrLine(text);
    }
}

void WorkerProcess::feedEvents(const char* data, std::size_t n) {
    for (auto& line : eventLines_.feedLines(data, n)) {
        if (line.cut) {
            ++malformed_;
            emit malformedLine(QString::fromStdString(protocol::printable(line.text.substr(0, 200))),
                               QStringLiteral("a line longer than %1 MiB").arg(kMaxEventLine >> 20));
            continue;
        }
        std::string why;
        auto ev = protocol::decode(line.text, protocol::Kind::Event, &why);
        if (!ev) {
            ++malformed_;
            emit malformedLine(QString::fromStdString(protocol::printable(line.text.substr(0, 200))),
                               QString::fromStdString(why));
            continue;
        }
        emit eventReceived(*ev);
    }
}

void WorkerProcess::readStderr() {
    const QByteArray data = process_.readAllStandardError();
    if (!data.isEmpty()) logLines(stderrLines_, data);
}

}  // namespace pitlane::session
