// Remote arms (issue 15) against a real sshd on localhost: Debian's openssh-server started by
// the test on a free port with its own host key, key-only login for the current user, and a
// client config passed to pitlane through PITLANE_SSH_CONFIG. Skipped when sshd cannot start.
#include "cli.h"
#include "harness.h"
#include "../common/sshd_fixture.h"

#include "pitlane/session/experiment_runner.h"

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <fstream>
#include <thread>

using namespace pitlane;
using json = nlohmann::json;

namespace {

using pitlane::testing::kHost;
using pitlane::testing::kNoHost;

using pitlane::testing::sshd;

#define REQUIRE_SSHD()                                                   \
    do {                                                                 \
        if (!sshd().skip.isEmpty()) GTEST_SKIP() << sshd().skip.toStdString(); \
    } while (0)

// A preset over the bundled mlp: arm A local, arm B on `host` (compare_hosts: true).
json remotePreset(const std::string& host, const std::string& worker, int iters) {
    return {{"name", "remote"},
            {"model", "mlp"},
            {"remote_worker", worker},
            {"run", {{"iters", iters}, {"block_iters", 10}, {"warmup_iters", 2}, {"processes", 1},
                     {"compare_hosts", true}}},
            {"arms", json::array({{{"name", "local"}, {"knobs", {{"intra_op_threads", 1}}}},
                                  {{"name", "remote"}, {"host", host},
                                   {"knobs", {{"intra_op_threads", 1}}}}})}};
}

bool alive(long pid) { return pid > 0 && kill(pid_t(pid), 0) == 0; }

using pitlane::testing::sshChildren;

// The command name of `pid`'s parent ("" when gone).
std::string parentName(long pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(f)), {});
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return {};
    int ppid = 0;
    char state = 0;
    std::sscanf(stat.c_str() + close + 2, "%c %d", &state, &ppid);
    std::ifstream c("/proc/" + std::to_string(ppid) + "/comm");
    std::string comm;
    std::getline(c, comm);
    return comm;
}

// The worker started through ssh as the runner starts it (sandbox off); its pid from hello, or 0.
long startSshWorker(QProcess& p, QByteArray& out) {
    p.start(session::sshProgram(),
            session::sshArguments(kHost, session::remoteWorkerCommand(QString::fromStdString(itest::workerPath()),
                                                                      {"--sandbox", "off"}, {})));
    if (!p.waitForStarted(5000)) return 0;
    if (!itest::spinUntil([&] {
            p.waitForReadyRead(50);
            out += p.readAllStandardOutput();
            return out.contains("\"hello\"");
        }, 20000))
        return 0;
    return json::parse(out.left(out.indexOf('\n')).toStdString()).value("pid", 0L);
}

// A long run (4000 iterations per arm in blocks of 50) with the remote arm's worker pids, and
// their parents' names, taken once it has measured 100 samples, when `act` is called once.
struct LongRemoteRun {
    session::ExperimentRunner runner{[] {
        session::RunnerOptions o;
        o.workerPath = QString::fromStdString(itest::workerPath());
        return o;
    }()};
    bool finished = false, acted = false;
    std::vector<long> remotePids;
    std::vector<std::string> parents;

    void run(const std::function<void()>& act) {
        auto preset = spec::parsePreset(remotePreset(kHost, itest::workerPath(), 4000), "", itest::modelDir());
        preset.run.block_iters = 50;
        QObject::connect(&runner, &session::ExperimentRunner::finished, [this] { finished = true; });
        QObject::connect(&runner, &session::ExperimentRunner::samplesAppended, [this, act](int arm, int, int) {
            if (arm != 1 || acted || runner.result().arms[1].samples.size() < 100) return;
            for (const auto& p : runner.result().arms[1].processes) {
                remotePids.push_back(p.pid);
                parents.push_back(parentName(p.pid));
            }
            acted = true;
            act();
        });
        runner.start(preset);
        itest::spinUntil([this] { return finished; }, 60000);
    }
    bool workersGone() const {
        return itest::spinUntil([this] {
            for (long pid : remotePids)
                if (alive(pid)) return false;
            return true;
        }, 5000);
    }
};

}  // namespace

// One local and one localhost-over-ssh arm through pitlane-cli; the second run finds the model
// in the remote cache instead of uploading it again.
TEST(Remote, LocalAndSshArmsRunInTheCliAndTheModelIsCached) {
    REQUIRE_SSHD();
    QTemporaryDir tmp;
    const QString preset = itest::writeJson(tmp.filePath("remote.json"), remotePreset(kHost, itest::workerPath(), 20));
    const QString db = tmp.filePath("history.db");
    auto r = itest::runCli({"run", preset, "--json", tmp.filePath("out.json"), "--db", db}, 60000);
    ASSERT_TRUE(r.finished);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("model uploaded to"), std::string::npos) << r.err;
    const json out = itest::readJson(tmp.filePath("out.json"));
    ASSERT_EQ(out["arms"].size(), 2u);
    EXPECT_EQ(out["arms"][0]["status"], "ok");
    EXPECT_EQ(out["arms"][1]["status"], "ok") << out["arms"][1].dump().substr(0, 600);
    EXPECT_FALSE(out["arms"][0].contains("host"));
    EXPECT_EQ(out["arms"][1]["host"], kHost);
    EXPECT_EQ(out["arms"][1]["latency_ns"].size(), 20u);
    EXPECT_TRUE(out["arms"][1]["environment"].is_object() && !out["arms"][1]["environment"].empty());
    const QString sha = QString::fromStdString(out.value("model_sha256", std::string()));
    ASSERT_EQ(sha.size(), 64);
    const QString cached = QString::fromLocal8Bit(qgetenv("PITLANE_REMOTE_CACHE")) + "/" + sha + ".pt";
    ASSERT_TRUE(QFileInfo::exists(cached));
    const auto mtime = QFileInfo(cached).lastModified();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    r = itest::runCli({"run", preset, "--json", tmp.filePath("out2.json"), "--db", db}, 60000);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err.find("model uploaded to"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("model cached at"), std::string::npos) << r.err;
    EXPECT_EQ(QFileInfo(cached).lastModified(), mtime);
    // The history keeps each arm's host: the report of the stored run carries it.
    r = itest::runCli({"report", "1", "--db", db, "--json", tmp.filePath("stored.json"), "--md",
                       tmp.filePath("stored.md")},
                      30000);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json stored = itest::readJson(tmp.filePath("stored.json"));
    ASSERT_EQ(stored["arms"].size(), 2u);
    EXPECT_FALSE(stored["arms"][0].contains("host"));
    EXPECT_EQ(stored["arms"][1].value("host", std::string()), kHost);
    // ... and the report says where each arm ran.
    QFile md(tmp.filePath("stored.md"));
    ASSERT_TRUE(md.open(QIODevice::ReadOnly));
    const std::string mdText = md.readAll().toStdString();
    EXPECT_NE(mdText.find("**Where the arms ran:** " + stored["arms"][0]["name"].get<std::string>() +
                          " on this machine; " + stored["arms"][1]["name"].get<std::string>() + " on " +
                          kHost + " (over ssh)"),
              std::string::npos)
        << mdText.substr(0, 3000);
}

// Killing the ssh client mid-run: that arm failed, its samples kept, the remote worker gone.
TEST(Remote, KillingSshMidRunFailsTheArmAndLeavesNoWorker) {
    REQUIRE_SSHD();
    LongRemoteRun r;
    r.run([] {
        for (pid_t pid : sshChildren()) kill(pid, SIGKILL);
    });
    ASSERT_TRUE(r.finished);
    ASSERT_TRUE(r.acted);
    auto& runner = r.runner;
    const auto& a = runner.result().arms[1];
    EXPECT_EQ(a.status, results::kFailed);
    ASSERT_TRUE(a.error);
    EXPECT_EQ(a.error->code, "remote_connection_lost") << a.error->message;
    EXPECT_NE(a.error->message.find(kHost), std::string::npos) << a.error->message;
    EXPECT_GE(a.samples.size(), 100u);
    EXPECT_EQ(runner.result().arms[0].status, results::kOk);
    ASSERT_FALSE(r.remotePids.empty());
    // The worker really ran on the "remote" side: under the sshd session, not under this test.
    for (const auto& parent : r.parents) EXPECT_EQ(parent, "sshd");
    // The run's scratch folder on the remote side (named in the command) is removed after it.
    const QRegularExpression scratch(QStringLiteral("/tmp/pitlane-run-[A-Za-z0-9]{6}"));
    const QString dir = scratch.match(QString::fromStdString(a.error->message)).captured(0);
    ASSERT_FALSE(dir.isEmpty()) << a.error->message;
    EXPECT_TRUE(itest::spinUntil([&] { return !QFileInfo::exists(dir); }, 5000)) << dir.toStdString();
    // The worker's parent was the sshd session, which ended with the connection: PDEATHSIG.
    EXPECT_TRUE(r.workersGone()) << "a pitlane-worker is still running on the remote side";
}

// Stop (the user's cancel) while the remote arm measures: cancelled, samples kept, no worker.
TEST(Remote, StopCancelsTheRemoteArmAndLeavesNoWorker) {
    REQUIRE_SSHD();
    LongRemoteRun r;
    bool bye = false;
    std::size_t atStop = 0;
    QObject::connect(&r.runner, &session::ExperimentRunner::armEvent, [&](int arm, const protocol::Event& ev) {
        if (arm == 1 && std::holds_alternative<protocol::Bye>(ev)) bye = true;
    });
    r.run([&r, &atStop] {
        atStop = r.runner.result().arms[1].samples.size();
        r.runner.stop();
    });
    ASSERT_TRUE(r.finished);
    ASSERT_TRUE(r.runner.wasStopped());
    const auto& a = r.runner.result().arms[1];
    EXPECT_EQ(a.status, results::kCancelled);
    EXPECT_GE(a.samples.size(), 100u);
    // Stopped by closing its input, the remote worker finished its block (50 iterations of the
    // mlp: well within the 1 s grace), flushed it and said bye, as a local worker does on SIGTERM.
    EXPECT_TRUE(bye) << "no bye from the remote worker";
    EXPECT_EQ(a.samples.size() % 50, 0u) << a.samples.size() << " samples, " << atStop << " at the stop";
    ASSERT_FALSE(r.remotePids.empty());
    EXPECT_TRUE(r.workersGone()) << "a pitlane-worker is still running on the remote side";
}

// The hosts are prepared off the caller's thread (the window's UI thread): start() returns at
// once, and a Stop before any worker started ends the run with every arm cancelled.
TEST(Remote, StopWhileTheHostIsPreparedEndsTheRun) {
    REQUIRE_SSHD();
    const auto preset = spec::parsePreset(remotePreset(kHost, itest::workerPath(), 20), "", itest::modelDir());
    session::RunnerOptions opts;
    opts.workerPath = QString::fromStdString(itest::workerPath());
    session::ExperimentRunner runner(opts);
    bool finished = false;
    QObject::connect(&runner, &session::ExperimentRunner::finished, [&] { finished = true; });
    QElapsedTimer clock;
    clock.start();
    runner.start(preset);
    const qint64 startMs = clock.elapsed();
    runner.stop();
    ASSERT_TRUE(itest::spinUntil([&] { return finished; }, 10000));
    EXPECT_LT(startMs, 100) << "start() waited for ssh";
    for (const auto& a : runner.result().arms) {
        EXPECT_EQ(a.status, results::kCancelled);
        EXPECT_TRUE(a.processes.empty());
    }
    // The preparation goes on after the stop, then removes its scratch folder itself (a
    // detached ssh): let those ssh clients end before the next test.
    for (int k = 0; k < 2; ++k) {
        itest::spinUntil([] { return !sshd().clientsLeft(); }, 5000);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
}

TEST(Remote, UnreachableHostNamesTheHostAndTheCommand) {
    REQUIRE_SSHD();
    const auto preset = spec::parsePreset(remotePreset(kNoHost, "pitlane-worker", 10), "", itest::modelDir());
    const auto r = itest::runPreset(preset, 30000);
    EXPECT_EQ(r.arms[0].status, results::kOk);
    const auto& a = r.arms[1];
    EXPECT_EQ(a.status, results::kFailed);
    ASSERT_TRUE(a.error);
    EXPECT_EQ(a.error->code, "remote_unreachable");
    EXPECT_NE(a.error->message.find(std::string("host ") + kNoHost), std::string::npos) << a.error->message;
    EXPECT_NE(a.error->message.find("exited with code 255"), std::string::npos) << a.error->message;
    EXPECT_NE(a.error->message.find("command: "), std::string::npos) << a.error->message;
    EXPECT_NE(a.error->message.find("BatchMode=yes"), std::string::npos) << a.error->message;
}

TEST(Remote, MissingRemoteWorkerIsAClearError) {
    REQUIRE_SSHD();
    const auto preset = spec::parsePreset(remotePreset(kHost, "/nonexistent/pitlane-worker", 10), "", itest::modelDir());
    const auto r = itest::runPreset(preset, 30000);
    const auto& a = r.arms[1];
    EXPECT_EQ(a.status, results::kFailed);
    ASSERT_TRUE(a.error);
    EXPECT_EQ(a.error->code, "remote_worker_missing");
    EXPECT_NE(a.error->message.find("/nonexistent/pitlane-worker"), std::string::npos) << a.error->message;
    EXPECT_NE(a.error->message.find(kHost), std::string::npos) << a.error->message;
}

// The worker ends when its stdin closes: started as the runner starts it, through ssh.
TEST(Remote, RemoteWorkerExitsWhenItsStdinCloses) {
    REQUIRE_SSHD();
    QProcess p;
    QByteArray out;
    const long pid = startSshWorker(p, out);
    ASSERT_GT(pid, 0) << out.toStdString();
    EXPECT_TRUE(alive(pid));
    p.closeWriteChannel();
    ASSERT_TRUE(p.waitForFinished(10000));
    EXPECT_EQ(p.exitCode(), 0);
    out += p.readAllStandardOutput();
    EXPECT_TRUE(out.contains("\"bye\"")) << out.toStdString();
    EXPECT_TRUE(itest::spinUntil([&] { return !alive(pid); }, 3000));
}

// A worker that cannot notice the lost connection itself (stopped here; in real life inside a
// forward that takes minutes) still dies with it: the remote shell exec's it, so its parent is
// the sshd session, which exits when the connection ends, and PR_SET_PDEATHSIG kills the worker.
TEST(Remote, CutConnectionKillsAWorkerBusyElsewhere) {
    REQUIRE_SSHD();
    QProcess p;
    QByteArray out;
    const long pid = startSshWorker(p, out);
    ASSERT_GT(pid, 0) << out.toStdString();
    ASSERT_TRUE(alive(pid));
    EXPECT_EQ(parentName(pid), "sshd");
    kill(pid_t(pid), SIGSTOP);  // reads no EOF, writes nothing: only a signal can end it
    p.kill();
    p.waitForFinished(3000);
    const bool gone = itest::spinUntil([&] { return !alive(pid); }, 5000);
    if (!gone) kill(pid_t(pid), SIGKILL);
    EXPECT_TRUE(gone) << "the stopped remote worker outlived its ssh connection";
}
