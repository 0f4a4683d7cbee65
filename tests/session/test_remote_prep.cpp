// Remote arms with no ssh and no process: which hosts a run prepares and what each arm makes of
// its host's preparation (remote_prep.h), and remote_launch.h's pure pieces — shell quoting, the
// remote worker's command, the preparation's answer, what an ssh-started worker's exit means.
#include "pitlane/session/remote_prep.h"

#include <gtest/gtest.h>

namespace {

namespace S = pitlane::session;
namespace spec = pitlane::spec;
using Outcome = S::RemoteArmOutcome;

spec::Preset presetOn(const std::vector<std::string>& hosts) {
    spec::Preset p;
    for (const auto& h : hosts) {
        spec::ArmSpec a;
        a.name = std::string(1, char('A' + p.arms.size()));
        a.host = h;
        p.arms.push_back(a);
    }
    return p;
}

S::RemotePrep ready(const char* host, const char* modelPath) {
    S::RemotePrep p;
    p.host = QString::fromUtf8(host);
    p.modelPath = QString::fromUtf8(modelPath);
    p.scratch = QStringLiteral("/tmp/pitlane-run-abc");
    return p;
}

S::RemotePrep failed(const char* host, const char* code, const char* error) {
    S::RemotePrep p;
    p.host = QString::fromUtf8(host);
    p.code = QString::fromUtf8(code);
    p.error = QString::fromUtf8(error);
    return p;
}

TEST(RemotePrep, HostsAreDistinctInArmOrderAndLocalArmsHaveNone) {
    EXPECT_EQ(S::remoteHosts(presetOn({"", "gpu-b", "alice@gpu-a", "gpu-b", "", "alice@gpu-a"})),
              (std::vector<std::string>{"gpu-b", "alice@gpu-a"}));
    EXPECT_TRUE(S::remoteHosts(presetOn({"", ""})).empty());
    EXPECT_TRUE(S::remoteHosts(presetOn({})).empty());
}

TEST(RemotePrep, LocalArmsAndUnpreparedHostsGetNothing) {
    const auto p = presetOn({"", "gpu-a", "gpu-b"});
    const auto outcomes = S::remoteArmOutcomes(p, {ready("gpu-a", "/c/m.pt")});
    ASSERT_EQ(outcomes.size(), 3u);
    EXPECT_EQ(outcomes[0].kind, Outcome::Nothing);
    EXPECT_EQ(outcomes[1].kind, Outcome::Ready);
    EXPECT_EQ(outcomes[2].kind, Outcome::Nothing) << "gpu-b was not prepared";
    for (const auto& o : S::remoteArmOutcomes(p, {})) EXPECT_EQ(o.kind, Outcome::Nothing);
}

TEST(RemotePrep, AFailedHostFailsExactlyItsArmsWithItsCodeAndMessage) {
    const auto p = presetOn({"gpu-a", "gpu-b", "", "gpu-b", "gpu-a"});
    const char* why = "the worker \"pitlane-worker\" was not found on host gpu-b; command: ssh gpu-b '...'";
    const auto outcomes =
        S::remoteArmOutcomes(p, {ready("gpu-a", "/c/m.pt"), failed("gpu-b", "remote_worker_missing", why)});
    ASSERT_EQ(outcomes.size(), 5u);
    for (std::size_t i : {1u, 3u}) {
        EXPECT_EQ(outcomes[i].kind, Outcome::Failed) << i;
        EXPECT_EQ(outcomes[i].code, QStringLiteral("remote_worker_missing")) << i;
        EXPECT_EQ(outcomes[i].text, QString::fromUtf8(why)) << i;
    }
    for (std::size_t i : {0u, 4u}) {
        EXPECT_EQ(outcomes[i].kind, Outcome::Ready) << i;
        EXPECT_TRUE(outcomes[i].code.isEmpty()) << i;
    }
    EXPECT_EQ(outcomes[2].kind, Outcome::Nothing);
}

TEST(RemotePrep, TheLogSaysUploadedOrCached) {
    const auto p = presetOn({"gpu-a", "gpu-b"});
    S::RemotePrep up = ready("gpu-a", "/home/u/.cache/pitlane/models/ab12.pt");
    up.uploaded = true;
    up.uploadedBytes = 46827520;
    up.ms = 1234.6;
    const auto outcomes = S::remoteArmOutcomes(p, {up, ready("gpu-b", "/c/ab12.pt")});
    EXPECT_EQ(outcomes[0].text.toStdString(),
              "host gpu-a: model uploaded to /home/u/.cache/pitlane/models/ab12.pt (46827520 bytes, sha256 "
              "checked) in 1235 ms");
    EXPECT_EQ(outcomes[1].text.toStdString(), "host gpu-b: model cached at /c/ab12.pt (sha256 checked)");
}

TEST(RemoteLaunch, ShellQuoteKeepsAwkwardStringsOneWord) {
    EXPECT_EQ(S::shellQuote(QString()), QStringLiteral("''"));
    EXPECT_EQ(S::shellQuote(QStringLiteral("plain")), QStringLiteral("'plain'"));
    EXPECT_EQ(S::shellQuote(QStringLiteral("two words")), QStringLiteral("'two words'"));
    EXPECT_EQ(S::shellQuote(QStringLiteral("it's")), QStringLiteral("'it'\\''s'"));
    EXPECT_EQ(S::shellQuote(QStringLiteral("''")), QStringLiteral("''\\'''\\'''"));
    // Inside '…' nothing expands: $, backquotes, ", \ and ; stay as written.
    EXPECT_EQ(S::shellQuote(QStringLiteral("$HOME/`id`;\"x\"\\n")), QStringLiteral("'$HOME/`id`;\"x\"\\n'"));
    EXPECT_EQ(S::shellQuote(QStringLiteral("a\nb")), QStringLiteral("'a\nb'"));
}

TEST(RemoteLaunch, TheWorkerCommandExecsEnvWithEveryWordQuoted) {
    const QString cmd = S::remoteWorkerCommand(
        QStringLiteral("/opt/my tools/pitlane-worker"), {QStringLiteral("--channel"), QStringLiteral("it's $x")},
        {QStringLiteral("LD_PRELOAD=/usr/lib/libjemalloc.so.2"), QStringLiteral("MALLOC_CONF=background_thread:true")});
    EXPECT_EQ(cmd.toStdString(),
              "exec env 'LD_PRELOAD=/usr/lib/libjemalloc.so.2' 'MALLOC_CONF=background_thread:true' "
              "'/opt/my tools/pitlane-worker' '--channel' 'it'\\''s $x'");
    EXPECT_EQ(S::remoteWorkerCommand(QStringLiteral("pitlane-worker"), {}, {}).toStdString(),
              "exec env 'pitlane-worker'");
}

TEST(RemoteLaunch, SshArgumentsEndTheOptionsBeforeTheHost) {
    const QStringList args = S::sshArguments(QStringLiteral("gpu-a"), QStringLiteral("exec env 'w'"));
    ASSERT_GE(args.size(), 3);
    EXPECT_EQ(args.mid(args.size() - 3),
              (QStringList{QStringLiteral("--"), QStringLiteral("gpu-a"), QStringLiteral("exec env 'w'")}));
    EXPECT_TRUE(args.contains(QStringLiteral("BatchMode=yes")));
}

TEST(RemoteLaunch, ThePreparationsAnswerIsParsedLineByLine) {
    auto a = S::parsePrepAnswer(QStringLiteral(
        "worker-ok\nmodel-cached /home/u/.cache/pitlane/models/ab 12.pt\nscratch /tmp/pitlane-run-Xy1\n"));
    EXPECT_TRUE(a.workerOk);
    EXPECT_TRUE(a.cached);
    EXPECT_EQ(a.modelPath, QStringLiteral("/home/u/.cache/pitlane/models/ab 12.pt"));
    EXPECT_EQ(a.scratch, QStringLiteral("/tmp/pitlane-run-Xy1"));
    // A login banner around the answer is ignored; a missing model still names its path.
    a = S::parsePrepAnswer(QStringLiteral("Welcome to gpu-a\n\nworker-missing\nmodel-missing /c/ab.pt\n"));
    EXPECT_FALSE(a.workerOk);
    EXPECT_FALSE(a.cached);
    EXPECT_EQ(a.modelPath, QStringLiteral("/c/ab.pt"));
    EXPECT_TRUE(a.scratch.isEmpty());
    // Nothing said (mktemp failed): no model path, no scratch — prepareRemote reports the answer.
    a = S::parsePrepAnswer(QStringLiteral("worker-ok\n"));
    EXPECT_TRUE(a.workerOk);
    EXPECT_TRUE(a.modelPath.isEmpty());
    EXPECT_TRUE(a.scratch.isEmpty());
}

TEST(RemoteLaunch, ExitCodesOfAnSshStartedWorker) {
    EXPECT_EQ(S::remoteExitCode(0, false), QString());
    EXPECT_EQ(S::remoteExitCode(1, false), QString()) << "an ordinary worker exit";
    EXPECT_EQ(S::remoteExitCode(3, false), QString());
    EXPECT_EQ(S::remoteExitCode(255, false), QStringLiteral("remote_connection_lost"));
    EXPECT_EQ(S::remoteExitCode(127, false), QStringLiteral("remote_worker_missing"));
    EXPECT_EQ(S::remoteExitCode(126, false), QStringLiteral("remote_worker_missing"));
    EXPECT_EQ(S::remoteExitCode(9, true), QStringLiteral("remote_connection_lost")) << "ssh itself killed";
    EXPECT_EQ(S::remoteExitCode(127, true), QStringLiteral("remote_connection_lost"));
}

TEST(RemoteLaunch, ExitMessagesNameTheHostAndTheCommand) {
    const QString h = QStringLiteral("gpu-a"), c = QStringLiteral("ssh -T -- gpu-a 'exec env w'");
    EXPECT_EQ(S::remoteExitMessage(h, c, 9, true).toStdString(),
              "the ssh connection to gpu-a was cut (ssh killed by signal 9) before the worker finished; "
              "command: ssh -T -- gpu-a 'exec env w'");
    EXPECT_EQ(S::remoteExitMessage(h, c, 255, false).toStdString(),
              "the ssh connection to gpu-a failed or was lost (ssh exited with 255; the remote worker may "
              "also have died by a signal); command: ssh -T -- gpu-a 'exec env w'");
    EXPECT_EQ(S::remoteExitMessage(h, c, 127, false).toStdString(),
              "the worker could not be started on gpu-a (exit 127 from the remote shell: not found or not "
              "executable); command: ssh -T -- gpu-a 'exec env w'");
    EXPECT_EQ(S::remoteExitMessage(h, c, 2, false).toStdString(),
              "the worker on gpu-a exited with code 2 before finishing; command: ssh -T -- gpu-a 'exec env w'");
}

}  // namespace
