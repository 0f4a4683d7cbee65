// Failure is not a crash: a worker killed mid-run or one that stops answering costs its own arm
// only. The CLI reports it with the CONTRACT.md status, keeps every sample received before, lets
// the other arm finish, and exits 1.
#include "cli.h"
#include "harness.h"

#include <QRegularExpression>
#include <QTemporaryDir>

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

namespace {

using namespace pitlane::itest;

json twoArmPreset(const json& run) {
    return {{"name", "failure"},
            {"model", "mlp"},
            {"run", run},
            {"arms", json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                                  {{"name", "B"}, {"knobs", {{"intra_op_threads", 1}}}}})}};
}

// "running" unless the process is gone or a zombie (its parent, the CLI, has exited).
bool processAlive(long pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pidField, comm, state;
    if (!(stat >> pidField >> comm >> state)) return false;
    return state != "Z" && state != "X";
}

// Follows the CLI's progress lines for one arm: "[B] loading (worker pid N)", "[B] block K done".
struct ArmProgress {
    explicit ArmProgress(const char* arm)
        : ready(QStringLiteral("^\\[%1\\] loading \\(worker pids? (\\d+)").arg(arm)),
          blockDone(QStringLiteral("^\\[%1\\] block (\\d+) done").arg(arm)) {}
    void feed(const std::string& line) {
        const QString l = QString::fromStdString(line);
        if (auto m = ready.match(l); m.hasMatch()) pid = m.captured(1).toLong();
        if (blockDone.match(l).hasMatch()) ++blocks;
    }
    QRegularExpression ready, blockDone;
    long pid = 0;
    int blocks = 0;
};

// Whatever happens, no worker we signalled outlives the test.
struct ReapOnExit {
    long pid = 0;
    ~ReapOnExit() {
        if (pid > 0 && processAlive(pid)) ::kill(pid_t(pid), SIGKILL);
    }
};

TEST(Failures, WorkerKilledMidRunKeepsItsSamplesAndTheOtherArmFinishes) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const int iters = 4000, blockIters = 200;
    const auto preset = writeJson(
        dir.filePath("kill.json"),
        twoArmPreset({{"warmup_iters", 5}, {"iters", iters}, {"block_iters", blockIters}}));
    const auto out = dir.filePath("kill-out.json");

    ArmProgress b("B");
    ReapOnExit guard;
    bool killed = false;
    int blocksAtKill = 0;
    const auto r =
        runCli({"run", preset, "--json", out}, 60000, [&](const std::string& line, QProcess&) {
            b.feed(line);
            if (!killed && b.pid > 0 && b.blocks >= 1) {
                guard.pid = b.pid;
                blocksAtKill = b.blocks;
                killed = ::kill(pid_t(b.pid), SIGKILL) == 0;
            }
        });
    ASSERT_TRUE(killed) << "never saw B ready and one measured block of B done; stderr:\n" << r.err;
    ASSERT_TRUE(r.finished) << r.err;
    EXPECT_EQ(r.exitCode, 1) << r.err;
    ASSERT_LT(blocksAtKill, iters / blockIters)
        << "B finished before it was killed: make the run longer";

    json j = readJson(out);
    ASSERT_TRUE(j.is_object()) << "the results JSON must be written even when an arm failed";
    ASSERT_EQ(j["arms"].size(), 2u);
    auto& a = j["arms"][0];
    auto& killedArm = j["arms"][1];
    EXPECT_EQ(a["status"], "ok");
    EXPECT_EQ(a["latency_ns"].size(), std::size_t(iters));
    EXPECT_EQ(killedArm["status"], "killed");
    EXPECT_FALSE(killedArm["latency_ns"].empty()) << "samples measured before the kill are kept";
    EXPECT_GE(killedArm["latency_ns"].size(), std::size_t(blockIters) * blocksAtKill);
    EXPECT_LT(killedArm["latency_ns"].size(), std::size_t(iters));
    ASSERT_TRUE(killedArm.contains("error"));
    EXPECT_FALSE(killedArm["error"].value("code", "").empty());
    EXPECT_NE(killedArm["error"].value("message", "").find("signal 9"), std::string::npos)
        << killedArm["error"].dump();
    EXPECT_EQ(killedArm["summary"]["n"], killedArm["latency_ns"].size());
    // A killed arm gets no speed verdict on what it left; the results say why.
    EXPECT_TRUE(j["comparisons"].empty()) << j["comparisons"].dump();
    ASSERT_EQ(j["not_compared"].size(), 1u);
    EXPECT_EQ(j["not_compared"][0]["arm"], "B");
    EXPECT_EQ(j["not_compared"][0]["reason"],
              "B was killed after " + std::to_string(killedArm["latency_ns"].size()) +
                  " samples: B vs A not compared");
}

TEST(Failures, SilentWorkerTimesOutAndIsKilled) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const auto preset =
        writeJson(dir.filePath("hang.json"), twoArmPreset({{"warmup_iters", 2},
                                                           {"iters", 200},
                                                           {"block_iters", 100},
                                                           {"event_timeout_ms", 1500}}));
    const auto out = dir.filePath("hang-out.json");

    ArmProgress b("B");
    ReapOnExit guard;
    bool stopped = false;
    const auto r =
        runCli({"run", preset, "--json", out}, 60000, [&](const std::string& line, QProcess&) {
            b.feed(line);
            if (!stopped && b.pid > 0) {
                guard.pid = b.pid;
                stopped = ::kill(pid_t(b.pid), SIGSTOP) == 0;
            }
        });
    ASSERT_TRUE(stopped) << "never saw B's worker ready; stderr:\n" << r.err;
    ASSERT_TRUE(r.finished) << r.err;
    EXPECT_EQ(r.exitCode, 1) << r.err;

    json j = readJson(out);
    ASSERT_TRUE(j.is_object());
    ASSERT_EQ(j["arms"].size(), 2u);
    EXPECT_EQ(j["arms"][0]["status"], "ok");
    EXPECT_EQ(j["arms"][0]["latency_ns"].size(), 200u);
    auto& hung = j["arms"][1];
    EXPECT_EQ(hung["status"], "timeout");
    ASSERT_TRUE(hung.contains("error"));
    EXPECT_NE(hung["error"].value("message", "").find("1500 ms"), std::string::npos)
        << hung["error"].dump();
    // The runner killed the stopped worker instead of leaving it behind.
    EXPECT_TRUE(spinUntil([&] { return !processAlive(b.pid); }, 3000))
        << "worker " << b.pid << " is still there after the CLI exited";
}

}  // namespace
