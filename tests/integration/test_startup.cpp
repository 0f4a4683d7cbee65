// Start-up under load (issue 42 item 4; startup_watch.h): the hello deadline follows what the
// worker does, not a fixed time. Real workers through the real ExperimentRunner, started through
// a wrapper script that execs the real pitlane-worker in the same process:
//   - slow: the wrapper busy-loops for 2-3 s of wall time first (the CPU progress an overloaded
//     machine's start-up shows, in the worker's own pid), with a start-up allowance of 1.5 s:
//     the old fixed deadline failed such a worker; now it is waited for, said slow, and measured;
//   - hung: the wrapper execs `sleep` (no CPU, not runnable): killed within a bounded time,
//     said hung (no CPU progress), never said to be slow.
// Neither depends on the machine's speed or load: the wrapper's loop ends by the wall clock, a
// loaded machine's runnable state counts as progress, and the bounds asserted are the policy's.
#include "harness.h"

#include "pitlane/session/experiment_runner.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QTemporaryDir>

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace pitlane::itest;
namespace R = pitlane::results;
namespace S = pitlane::session;

constexpr int kAllowanceMs = 1500;

QString writeWrapper(const QTemporaryDir& dir, const QString& name, const std::string& body) {
    const QString path = dir.filePath(name);
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly)) << path.toStdString();
    f.write(body.data(), qint64(body.size()));
    f.close();
    f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return path;
}

json twoArms() {
    return json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                        {{"name", "B"}, {"knobs", {{"intra_op_threads", 1}, {"grad", "inference_mode"}}}}});
}

struct StartupRun {
    R::RunResult result;
    std::vector<std::string> logs;  // "level: text"
    double wallMs = 0;
    bool finished = false;
};

StartupRun runWith(const QString& worker, int timeoutMs) {
    const auto preset = mlpPreset(twoArms(), {{"warmup_iters", 1}, {"iters", 20}, {"block_iters", 10}, {"processes", 1}});
    S::RunnerOptions opts;
    opts.workerPath = worker;
    opts.startupAllowanceMs = kAllowanceMs;
    S::ExperimentRunner runner(opts);
    StartupRun run;
    QObject::connect(&runner, &S::ExperimentRunner::logMessage, [&](int, const QString& level, const QString& text) {
        run.logs.push_back(level.toStdString() + ": " + text.toStdString());
    });
    QObject::connect(&runner, &S::ExperimentRunner::finished, [&] { run.finished = true; });
    QElapsedTimer clock;
    clock.start();
    runner.start(preset);
    if (!spinUntil([&] { return run.finished; }, timeoutMs)) {
        ADD_FAILURE() << "the runner did not finish within " << timeoutMs << " ms";
        runner.stop();
        spinUntil([&] { return run.finished; }, 5000);
    }
    run.wallMs = double(clock.elapsed());
    run.result = runner.result();
    return run;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

bool processAlive(long pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pidField, comm, state;
    if (!(stat >> pidField >> comm >> state)) return false;
    return state != "Z" && state != "X";
}

TEST(Startup, AWorkerSlowToStartButMakingProgressIsWaitedForAndSaidSlow) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    // bash's SECONDS counts whole seconds since the shell started: the loop spins 2-3 s of wall
    // time in this pid, then the same pid becomes the real worker.
    const QString wrapper = writeWrapper(
        dir, QStringLiteral("slow-worker"),
        "#!/bin/bash\nwhile (( SECONDS < 3 )); do :; done\nexec '" + workerPath() + "' \"$@\"\n");
    const StartupRun run = runWith(wrapper, 90000);
    ASSERT_TRUE(run.finished);
    ASSERT_EQ(run.result.arms.size(), 2u);
    for (const auto& a : run.result.arms) {
        EXPECT_EQ(a.status, R::kOk) << a.name << ": " << (a.error ? a.error->message : std::string()) << "\n"
                                    << joined(run.logs);
        EXPECT_EQ(a.latencies(a.batch_size).size(), 20u) << a.name;
        // Its start-up passed the allowance (the old deadline) and is said, with the load.
        std::string slow;
        for (const auto& w : a.warnings)
            if (w.rfind("slow start: a worker took ", 0) == 0) slow = w;
        EXPECT_FALSE(slow.empty()) << a.name << " has no slow-start warning; logs:\n" << joined(run.logs);
        EXPECT_NE(slow.find("(start-up allowance 1.5 s; "), std::string::npos) << slow;
        EXPECT_NE(slow.find(" on "), std::string::npos) << slow;  // "load X on N cores"
        EXPECT_NE(slow.find(" of CPU"), std::string::npos) << slow;
        EXPECT_NE(slow.find("it was waited for, not failed"), std::string::npos) << slow;
    }
    // While it started, the watchdog said it was slow and waited (once per worker).
    int waiting = 0;
    for (const auto& l : run.logs)
        if (l.find("slow to start, waiting while it makes progress") != std::string::npos) {
            ++waiting;
            EXPECT_NE(l.find("the worker used "), std::string::npos) << l;
            EXPECT_EQ(l.rfind("warning: ", 0), 0u) << l;
        }
    EXPECT_EQ(waiting, 2) << joined(run.logs);
}

TEST(Startup, AWorkerThatMakesNoProgressIsKilledInBoundedTime) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString wrapper = writeWrapper(dir, QStringLiteral("hung-worker"), "#!/bin/sh\nexec sleep 600\n");
    const StartupRun run = runWith(wrapper, 60000);
    ASSERT_TRUE(run.finished);
    ASSERT_EQ(run.result.arms.size(), 2u);
    for (const auto& a : run.result.arms) {
        EXPECT_EQ(a.status, R::kTimeout) << a.name;
        ASSERT_TRUE(a.error) << a.name;
        EXPECT_EQ(a.error->code, "timeout");
        EXPECT_NE(a.error->message.find("the worker did not start (no hello) within "), std::string::npos)
            << a.error->message;
        EXPECT_NE(a.error->message.find("and used no CPU for the last "), std::string::npos) << a.error->message;
        EXPECT_NE(a.error->message.find("declared hung and killed"), std::string::npos) << a.error->message;
        EXPECT_EQ(a.error->message.find("overloaded"), std::string::npos) << a.error->message;
        // Judged after the allowance of no progress, well before the policy's other bounds.
        const auto& d = a.error->detail;
        ASSERT_TRUE(d.is_object()) << a.name;
        EXPECT_GE(d.value("no_progress_ms", 0L), long(kAllowanceMs));
        EXPECT_LT(d.value("elapsed_ms", 0L), long(S::StartupPolicy::kOverloadFactor * kAllowanceMs));
        EXPECT_EQ(d.value("startup_allowance_ms", 0L), long(kAllowanceMs));
        // The sleeping process was killed, not left behind.
        const long pid = d.value("pid", 0L);
        ASSERT_GT(pid, 0);
        EXPECT_TRUE(spinUntil([&] { return !processAlive(pid); }, 5000)) << "pid " << pid << " is still there";
        if (processAlive(pid)) ::kill(pid_t(pid), SIGKILL);
        for (const auto& l : run.logs) EXPECT_EQ(l.find("slow to start"), std::string::npos) << l;
    }
}

}  // namespace
