// Remote arms: ssh command lines, the per-host preparation (worker, model cache, scratch) and
// what an ssh-started worker's exit means (remote_launch.h).
#include "pitlane/session/remote_launch.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>

namespace pitlane::session {

QString shellQuote(const QString& s) {
    QString out = QStringLiteral("'");
    for (const QChar c : s) {
        if (c == QLatin1Char('\'')) out += QStringLiteral("'\\''");
        else out += c;
    }
    return out + QLatin1Char('\'');
}

QString sshProgram() {
    const QString p = qEnvironmentVariable("PITLANE_SSH", QStringLiteral("ssh"));
    if (p.contains(QLatin1Char('/'))) return QFileInfo(p).isExecutable() ? p : QString();
    return QStandardPaths::findExecutable(p);
}

QStringList sshOptions() {
    QStringList o;
    const QString config = qEnvironmentVariable("PITLANE_SSH_CONFIG");
    if (!config.isEmpty()) o << QStringLiteral("-F") << config;
    bool ok = false;
    int timeout = qEnvironmentVariableIntValue("PITLANE_SSH_TIMEOUT_S", &ok);
    if (!ok || timeout <= 0) timeout = 10;
    // BatchMode: never a password or host-key prompt (the window has no terminal); keep-alives:
    // a host that vanishes is noticed within ~15 s instead of at the next TCP timeout.
    o << QStringLiteral("-T") << QStringLiteral("-o") << QStringLiteral("BatchMode=yes")
      << QStringLiteral("-o") << QStringLiteral("ConnectTimeout=%1").arg(timeout)
      << QStringLiteral("-o") << QStringLiteral("ServerAliveInterval=5")
      << QStringLiteral("-o") << QStringLiteral("ServerAliveCountMax=3")
      << QStringLiteral("-o") << QStringLiteral("LogLevel=ERROR");
    return o;
}

QStringList sshArguments(const QString& host, const QString& remoteCommand) {
    return sshOptions() << QStringLiteral("--") << host << remoteCommand;
}

QString sshCommandLine(const QString& host, const QString& remoteCommand) {
    QStringList parts{sshProgram().isEmpty() ? QStringLiteral("ssh") : sshProgram()};
    for (const QString& a : sshArguments(host, remoteCommand))
        parts << (a == remoteCommand ? shellQuote(a) : a);
    return parts.join(QLatin1Char(' '));
}

QString remoteWorkerCommand(const QString& worker, const QStringList& workerArgs,
                            const QStringList& env) {
    // exec: the worker replaces the shell, so the sshd session is its parent (PDEATHSIG).
    QStringList parts{QStringLiteral("exec"), QStringLiteral("env")};
    for (const QString& e : env) parts << shellQuote(e);
    parts << shellQuote(worker);
    for (const QString& a : workerArgs) parts << shellQuote(a);
    return parts.join(QLatin1Char(' '));
}

namespace {

struct SshResult {
    int code = -1;
    bool crashed = false, timedOut = false, started = true;
    QString out, err;
};

SshResult runSsh(const QString& host, const QString& command, int timeoutMs,
                 const QString& stdinFile = {}) {
    SshResult r;
    QProcess p;
    if (!stdinFile.isEmpty()) p.setStandardInputFile(stdinFile);
    p.start(sshProgram(), sshArguments(host, command));
    if (!p.waitForStarted(10000)) {
        r.started = false;
        r.err = p.errorString();
        return r;
    }
    if (stdinFile.isEmpty()) p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        r.timedOut = true;
        p.kill();
        p.waitForFinished(2000);
    }
    r.code = p.exitCode();
    r.crashed = p.exitStatus() == QProcess::CrashExit;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError()).trimmed();
    return r;
}

QString cacheDirExpr() {
    const QString c = qEnvironmentVariable("PITLANE_REMOTE_CACHE");
    return c.isEmpty() ? QStringLiteral("\"$HOME/.cache/pitlane/models\"") : shellQuote(c);
}

QString failure(const QString& host, const QString& command, const SshResult& r, const QString& what) {
    QString why;
    if (!r.started) why = QStringLiteral("ssh could not be started (%1)").arg(r.err);
    else if (r.timedOut) why = QStringLiteral("ssh did not finish in time");
    else if (r.crashed) why = QStringLiteral("ssh was killed by signal %1").arg(r.code);
    else why = QStringLiteral("ssh exited with code %1").arg(r.code);
    QString msg = QStringLiteral("%1 on host %2: %3").arg(what, host, why);
    if (!r.err.isEmpty()) msg += QStringLiteral(" (%1)").arg(r.err.right(400));
    return msg + QStringLiteral("; command: ") + sshCommandLine(host, command);
}

}  // namespace

PrepAnswer parsePrepAnswer(const QString& out) {
    PrepAnswer a;
    for (const QString& line : out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        if (line == QLatin1String("worker-ok")) a.workerOk = true;
        else if (line.startsWith(QLatin1String("model-cached "))) {
            a.cached = true;
            a.modelPath = line.mid(13);
        } else if (line.startsWith(QLatin1String("model-missing "))) a.modelPath = line.mid(14);
        else if (line.startsWith(QLatin1String("scratch "))) a.scratch = line.mid(8);
    }
    return a;
}

RemotePrep prepareRemote(const QString& host, const QString& worker, const QString& localModel,
                         const QString& sha256, int timeoutMs) {
    RemotePrep prep;
    prep.host = host;
    QElapsedTimer clock;
    clock.start();
    if (sshProgram().isEmpty()) {
        prep.code = QStringLiteral("remote_unreachable");
        prep.error = QStringLiteral("host %1: no ssh client found (install openssh-client or set PITLANE_SSH)").arg(host);
        return prep;
    }
    // One round trip: is the worker there, is the model cached (and intact), a scratch folder.
    const QString w = shellQuote(worker);
    const QString check =
        QStringLiteral(
            "w=%1; c=%2; sha=%3; "
            "case \"$w\" in */*) [ -x \"$w\" ] && echo worker-ok || echo worker-missing;; "
            "*) command -v \"$w\" >/dev/null 2>&1 && echo worker-ok || echo worker-missing;; esac; "
            "f=\"$c/$sha.pt\"; "
            "if [ -f \"$f\" ] && [ \"$(sha256sum < \"$f\" | cut -c1-64)\" = \"$sha\" ]; "
            "then echo \"model-cached $f\"; else echo \"model-missing $f\"; fi; "
            "d=$(mktemp -d \"${TMPDIR:-/tmp}/pitlane-run-XXXXXX\") && echo \"scratch $d\"")
            .arg(w, cacheDirExpr(), sha256);
    const SshResult r = runSsh(host, check, timeoutMs);
    if (r.code != 0 || r.crashed || r.timedOut || !r.started) {
        prep.code = QStringLiteral("remote_unreachable");
        prep.error = failure(host, check, r, QStringLiteral("cannot prepare the remote worker"));
        return prep;
    }
    const PrepAnswer answer = parsePrepAnswer(r.out);
    prep.modelPath = answer.modelPath;
    prep.scratch = answer.scratch;
    if (!answer.workerOk) {
        prep.code = QStringLiteral("remote_worker_missing");
        prep.error = QStringLiteral("the worker \"%1\" was not found on host %2 (not on its PATH, or not "
                                    "executable): install pitlane-worker there or set remote_worker to "
                                    "its absolute path; command: %3")
                         .arg(worker, host, sshCommandLine(host, check));
        return prep;
    }
    if (prep.modelPath.isEmpty() || prep.scratch.isEmpty()) {
        prep.code = QStringLiteral("remote_unreachable");
        prep.error = QStringLiteral("host %1 answered the preparation with %2 (expected a model path and "
                                    "a scratch folder); command: %3")
                         .arg(host, r.out.trimmed().left(300), sshCommandLine(host, check));
        return prep;
    }
    if (!answer.cached) {
        // Into a temporary file beside the cache entry, checked, then renamed: a cut upload or
        // two runs uploading at once never leave a damaged model under its checksum's name.
        const QString upload =
            QStringLiteral(
                "set -e; c=%1; sha=%2; mkdir -p \"$c\"; t=$(mktemp \"$c/.upload-XXXXXX\"); "
                "cat > \"$t\"; s=$(sha256sum < \"$t\" | cut -c1-64); "
                "if [ \"$s\" != \"$sha\" ]; then rm -f \"$t\"; "
                "echo \"checksum mismatch after upload: $s\" >&2; exit 3; fi; "
                "chmod 0644 \"$t\"; mv -f \"$t\" \"$c/$sha.pt\"; echo \"stored $c/$sha.pt\"")
                .arg(cacheDirExpr(), sha256);
        const SshResult u = runSsh(host, upload, timeoutMs, localModel);
        if (u.code != 0 || u.crashed || u.timedOut || !u.started) {
            prep.code = QStringLiteral("remote_upload");
            prep.error = failure(host, upload, u, QStringLiteral("cannot copy the model %1").arg(localModel));
            cleanupRemote(host, prep.scratch);
            return prep;
        }
        prep.uploaded = true;
        prep.uploadedBytes = QFileInfo(localModel).size();
    }
    prep.ms = double(clock.elapsed());
    return prep;
}

void cleanupRemote(const QString& host, const QString& scratch) {
    if (scratch.isEmpty() || sshProgram().isEmpty()) return;
    QProcess::startDetached(sshProgram(),
                            sshArguments(host, QStringLiteral("rm -rf -- ") + shellQuote(scratch)));
}

QString remoteExitCode(int exitCode, bool crashed) {
    if (crashed || exitCode == 255) return QStringLiteral("remote_connection_lost");
    if (exitCode == 127 || exitCode == 126) return QStringLiteral("remote_worker_missing");
    return {};
}

QString remoteExitMessage(const QString& host, const QString& command, int exitCode, bool crashed) {
    QString why;
    if (crashed)
        why = QStringLiteral("the ssh connection to %1 was cut (ssh killed by signal %2) before the "
                             "worker finished")
                  .arg(host)
                  .arg(exitCode);
    else if (exitCode == 255)
        why = QStringLiteral("the ssh connection to %1 failed or was lost (ssh exited with 255; the "
                             "remote worker may also have died by a signal)")
                  .arg(host);
    else if (exitCode == 127 || exitCode == 126)
        why = QStringLiteral("the worker could not be started on %1 (exit %2 from the remote shell: "
                             "not found or not executable)")
                  .arg(host)
                  .arg(exitCode);
    else
        why = QStringLiteral("the worker on %1 exited with code %2 before finishing").arg(host).arg(exitCode);
    return why + QStringLiteral("; command: ") + command;
}

}  // namespace pitlane::session
