#pragma once
// A real sshd on localhost for the remote-arm tests (issue 15): Debian's /usr/sbin/sshd on a free
// port with its own host key, key-only login for the current user, and a client config with the
// Host aliases kHost and kNoHost (a port nobody listens on), given to pitlane as
// PITLANE_SSH_CONFIG; PITLANE_REMOTE_CACHE points the remote model cache into the temp folder.
// `skip` says why the tests cannot run (sshd missing or refusing the login).
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>
#include <fstream>
#include <thread>

namespace pitlane::testing {

inline const char* const kHost = "pitlane-test";      // the Host alias of the client config
inline const char* const kNoHost = "pitlane-nohost";  // the same, on a port nobody listens on

inline int freePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        close(fd);
        return 0;
    }
    const int port = ntohs(a.sin_port);
    close(fd);
    return port;
}

inline bool runQuietly(const QString& program, const QStringList& args, QString* err = nullptr) {
    QProcess p;
    p.start(program, args);
    const bool ok = p.waitForFinished(20000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    if (err) *err = QString::fromUtf8(p.readAllStandardError());
    return ok;
}

// One sshd for the whole suite.
struct Sshd {
    // Whether an ssh client that uses this fixture's config is still running.
    bool clientsLeft() const {
        if (config.isEmpty()) return false;
        for (const auto& e : QDir("/proc").entryList(QDir::Dirs)) {
            bool ok = false;
            e.toInt(&ok);
            if (!ok) continue;
            QFile f("/proc/" + e + "/cmdline");
            if (!f.open(QIODevice::ReadOnly)) continue;
            const QByteArray cmd = f.readAll();
            if (cmd.startsWith("/usr/bin/ssh") && cmd.contains(config.toLocal8Bit())) return true;
        }
        return false;
    }

    QTemporaryDir dir;
    QProcess sshd;
    QString skip;  // why the tests are skipped ("" when sshd is up)
    QString config;

    Sshd() {
        const QString exe = QStringLiteral("/usr/sbin/sshd");
        if (!QFileInfo(exe).isExecutable()) {
            skip = "no /usr/sbin/sshd (apt-get install openssh-server)";
            return;
        }
        const QString d = dir.path();
        QString err;
        if (!runQuietly("ssh-keygen", {"-q", "-t", "ed25519", "-N", "", "-f", d + "/host_key"}, &err) ||
            !runQuietly("ssh-keygen", {"-q", "-t", "ed25519", "-N", "", "-f", d + "/user_key"}, &err)) {
            skip = "ssh-keygen failed: " + err;
            return;
        }
        QFile::copy(d + "/user_key.pub", d + "/authorized_keys");
        QDir().mkpath("/run/sshd");  // sshd's privilege separation directory (root only)
        const int port = freePort();
        std::ofstream(QString(d + "/sshd_config").toStdString())
            << "ListenAddress 127.0.0.1\nHostKey " << d.toStdString() << "/host_key\n"
            << "AuthorizedKeysFile " << d.toStdString() << "/authorized_keys\n"
            << "PidFile " << d.toStdString() << "/sshd.pid\n"
            << "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            << "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nStrictModes no\n"
            << "UsePAM no\nLogLevel ERROR\n";
        config = d + "/ssh_config";
        std::ofstream(config.toStdString())
            << "Host " << kHost << "\n  HostName 127.0.0.1\n  Port " << port << "\n"
            << "  IdentityFile " << d.toStdString() << "/user_key\n  IdentitiesOnly yes\n"
            << "  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n"
            << "Host " << kNoHost << "\n  HostName 127.0.0.1\n  Port " << freePort() << "\n"
            << "  IdentityFile " << d.toStdString() << "/user_key\n  IdentitiesOnly yes\n"
            << "  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n";
        sshd.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        sshd.start(exe, {"-D", "-e", "-f", d + "/sshd_config", "-p", QString::number(port)});
        if (!sshd.waitForStarted(5000)) {
            skip = "sshd did not start: " + sshd.errorString();
            return;
        }
        qputenv("PITLANE_SSH_CONFIG", config.toLocal8Bit());
        qputenv("PITLANE_REMOTE_CACHE", QString(d + "/remote-cache").toLocal8Bit());
        for (int i = 0; i < 50; ++i) {
            if (sshd.state() != QProcess::Running) break;
            if (runQuietly("ssh", {"-F", config, "-o", "BatchMode=yes", kHost, "true"}, &err)) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        skip = "sshd on port " + QString::number(port) + " did not accept a login: " + err;
    }
    ~Sshd() {
        // The runner removes a run's remote scratch folder with a detached ssh: let those end
        // before the daemon and the key go.
        for (int i = 0; i < 60 && clientsLeft(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (sshd.state() != QProcess::NotRunning) {
            sshd.terminate();
            sshd.waitForFinished(3000);
        }
    }
};

inline Sshd& sshd() {
    static Sshd s;
    return s;
}

// The local ssh clients this process started.
inline std::vector<pid_t> sshChildren() {
    std::vector<pid_t> out;
    for (const auto& e : QDir("/proc").entryList(QDir::Dirs)) {
        bool ok = false;
        const int pid = e.toInt(&ok);
        if (!ok) continue;
        std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
        std::string stat((std::istreambuf_iterator<char>(f)), {});
        const auto close = stat.rfind(')');
        if (close == std::string::npos) continue;
        const std::string comm = stat.substr(stat.find('(') + 1, close - stat.find('(') - 1);
        int ppid = 0;
        char state = 0;
        std::sscanf(stat.c_str() + close + 2, "%c %d", &state, &ppid);
        if (comm == "ssh" && ppid == getpid()) out.push_back(pid);
    }
    return out;
}

}  // namespace pitlane::testing
