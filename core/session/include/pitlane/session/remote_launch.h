#pragma once
// Remote arms (issue 15): pitlane-worker started on another host through the system's ssh. The
// protocol is stdio, so the events stream back through ssh exactly as from a local worker.
// ssh runs with BatchMode (never a password prompt) and a connection timeout; the remote shell
// `exec`s the worker, so its parent is the sshd session: when the connection ends, that process
// exits and the worker's PR_SET_PDEATHSIG kills it (no orphan on the remote host).
// Environment: PITLANE_SSH (the ssh program, default `ssh` on PATH), PITLANE_SSH_CONFIG (passed
// as `ssh -F`), PITLANE_REMOTE_CACHE (the remote model cache, default
// $HOME/.cache/pitlane/models), PITLANE_SSH_TIMEOUT_S (ConnectTimeout, default 10).
// QtCore only.
#include <QString>
#include <QStringList>

namespace pitlane::session {

// A string quoted for the POSIX shell ('…', with ' written as '\'').
QString shellQuote(const QString& s);

// The ssh program (absolute; "" when not found) and the options every call uses.
QString sshProgram();
QStringList sshOptions();
// The full ssh command line of `remoteCommand` on `host`, for messages ("ssh -o … host 'cmd'").
QString sshCommandLine(const QString& host, const QString& remoteCommand);

// What one host needs before its workers start: the worker binary found, the model in the cache
// (uploaded when missing or damaged, then checked with sha256sum), a scratch folder.
struct RemotePrep {
    QString host;
    QString modelPath;    // the model in the remote cache
    QString scratch;      // the run's scratch folder there (removed by cleanupRemote)
    QString error;        // "" when ready; else why, naming the host and the command
    QString code;         // the error's code: remote_unreachable, remote_worker_missing, remote_upload
    bool uploaded = false;
    qint64 uploadedBytes = 0;
    double ms = 0;
};
// What a host answered the preparation's round trip with, one line each: "worker-ok" (else the
// worker is missing), "model-cached PATH" or "model-missing PATH", "scratch DIR". A line not
// said leaves its field empty (false); a repeated one, the last counts.
struct PrepAnswer {
    bool workerOk = false, cached = false;
    QString modelPath, scratch;
};
PrepAnswer parsePrepAnswer(const QString& out);
// Blocks (ssh round trips, and the upload): run once per host before any of its workers.
RemotePrep prepareRemote(const QString& host, const QString& worker, const QString& localModel,
                         const QString& sha256, int timeoutMs = 120000);
// Removes the scratch folder (a detached ssh: never waits).
void cleanupRemote(const QString& host, const QString& scratch);

// The remote command that runs the worker: `exec env VAR=… WORKER ARGS…` (the allocator's
// LD_PRELOAD and MALLOC_CONF go on the command line: ssh does not carry the environment).
QString remoteWorkerCommand(const QString& worker, const QStringList& workerArgs,
                            const QStringList& env);
// ssh's arguments to run `remoteCommand` on `host` with stdin/stdout as the protocol.
QStringList sshArguments(const QString& host, const QString& remoteCommand);

// What an ssh-started worker's exit means: "" when it is an ordinary worker exit, else the
// error code (remote_connection_lost for ssh's 255 or a signal, remote_worker_missing for 127)
// and its message naming the host and the command.
QString remoteExitCode(int exitCode, bool crashed);
QString remoteExitMessage(const QString& host, const QString& command, int exitCode, bool crashed);

}  // namespace pitlane::session
