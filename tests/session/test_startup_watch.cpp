// The start-up deadline follows the machine (startup_watch.h, issue 42 item 4): the policy on
// injected load and /proc readings, the progress tracker on a sequence of readings, and the
// parsers on the kernel's text. No process is started here (tests/integration/test_startup.cpp
// runs real workers made slow or hung).
#include "pitlane/session/startup_watch.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace {

using namespace pitlane::session;

MachineLoad loadOf(double load1, int cores) {
    MachineLoad l;
    l.load1 = load1;
    l.cores = cores;
    return l;
}

StartupReading reading(double elapsedMs, double cpuMs, double sinceProgressMs) {
    StartupReading r;
    r.elapsedMs = elapsedMs;
    r.cpuMs = cpuMs;
    r.sinceProgressMs = sinceProgressMs;
    return r;
}

const StartupPolicy kPolicy{60000};

TEST(StartupWatch, LoadFactorIsRunnableTasksPerCoreAndNeverBelowOne) {
    EXPECT_DOUBLE_EQ(loadOf(23, 2).factor(), 11.5);
    EXPECT_DOUBLE_EQ(loadOf(0.4, 2).factor(), 1.0);
    EXPECT_DOUBLE_EQ(MachineLoad{}.factor(), 1.0);  // unknown: no scaling
    EXPECT_EQ(loadOf(23, 2).text(), "load 23.0 on 2 cores");
    EXPECT_EQ(MachineLoad{}.text(), "load unknown");
}

TEST(StartupWatch, AWorkerWithinItsAllowanceWaits) {
    const auto j = judgeStartup(kPolicy, reading(59000, 300, 58000), loadOf(0.5, 2));
    EXPECT_EQ(j.verdict, StartupVerdict::Wait);
    EXPECT_TRUE(j.message.empty());
}

// The case of the issue: 20 runs at once on 2 cores. The fixed deadline failed every worker at
// 60 s; a worker making progress is now waited for and said to be slow, with the load.
TEST(StartupWatch, ASlowWorkerMakingProgressOnALoadedMachineWaitsAndSaysWhy) {
    const auto j = judgeStartup(kPolicy, reading(75000, 400, 200), loadOf(23, 2));
    EXPECT_EQ(j.verdict, StartupVerdict::Slow);
    EXPECT_NE(j.message.find("the machine is overloaded: load 23.0 on 2 cores"), std::string::npos) << j.message;
    EXPECT_NE(j.message.find("the worker used 0.4 s of CPU in 75 s"), std::string::npos) << j.message;
    // Still waiting at nine minutes: 5 allowances x 11.5 per core (57.5 min) is the cap.
    EXPECT_EQ(judgeStartup(kPolicy, reading(540000, 2000, 100), loadOf(23, 2)).verdict, StartupVerdict::Slow);
}

TEST(StartupWatch, ASlowWorkerOnAnIdleMachineIsNotCalledOverloaded) {
    const auto j = judgeStartup(kPolicy, reading(70000, 900, 100), loadOf(0.3, 2));
    EXPECT_EQ(j.verdict, StartupVerdict::Slow);
    EXPECT_EQ(j.message.find("overloaded"), std::string::npos) << j.message;
    EXPECT_NE(j.message.find("load 0.3 on 2 cores"), std::string::npos) << j.message;
}

// Blocked (no CPU, not runnable, not in disk wait) for the whole allowance: hung, killed no later
// than the old fixed deadline, however loaded the machine.
TEST(StartupWatch, AWorkerWithoutProgressForTheAllowanceIsHungEvenUnderLoad) {
    for (const auto& load : {loadOf(0.2, 2), loadOf(83, 2)}) {
        const auto j = judgeStartup(kPolicy, reading(60000, 40, 60000), load);
        EXPECT_EQ(j.verdict, StartupVerdict::Hung) << load.text();
        EXPECT_NE(j.message.find("used no CPU for the last 60 s"), std::string::npos) << j.message;
        EXPECT_NE(j.message.find("declared hung and killed"), std::string::npos) << j.message;
    }
    // Without progress for half the allowance it is not said to be slow (it may be hung).
    EXPECT_EQ(judgeStartup(kPolicy, reading(60000, 40, 59999), loadOf(0.2, 2)).verdict, StartupVerdict::Wait);
    EXPECT_EQ(judgeStartup(kPolicy, reading(60000, 40, 29999), loadOf(0.2, 2)).verdict, StartupVerdict::Slow);
}

TEST(StartupWatch, AWorkerSpinningPastAnyStartUpsCpuIsHung) {
    EXPECT_DOUBLE_EQ(StartupPolicy{1000}.cpuCapMs(), StartupPolicy::kCpuCapMinMs);
    EXPECT_DOUBLE_EQ(kPolicy.cpuCapMs(), 60000);
    const auto j = judgeStartup(kPolicy, reading(61000, 60000, 0), loadOf(1, 2));
    EXPECT_EQ(j.verdict, StartupVerdict::Hung);
    EXPECT_NE(j.message.find("after using 60 s of CPU in 61 s"), std::string::npos) << j.message;
    EXPECT_EQ(judgeStartup(kPolicy, reading(61000, 59999, 0), loadOf(1, 2)).verdict, StartupVerdict::Slow);
}

// Progress forever is still bounded: 5 allowances, scaled by the load per core.
TEST(StartupWatch, AWorkerStillStartingPastTheOverloadCapFailsAsOverloadedNotAsItsModel) {
    const MachineLoad load = loadOf(23, 2);
    EXPECT_DOUBLE_EQ(kPolicy.overloadCapMs(load), 5 * 60000 * 11.5);
    EXPECT_EQ(judgeStartup(kPolicy, reading(3449000, 5000, 100), load).verdict, StartupVerdict::Slow);
    const auto j = judgeStartup(kPolicy, reading(3450000, 5000, 100), load);
    EXPECT_EQ(j.verdict, StartupVerdict::Overloaded);
    EXPECT_NE(j.message.find("the machine is overloaded: load 23.0 on 2 cores; the worker used 5.0 s of CPU in 3450 s"),
              std::string::npos)
        << j.message;
    EXPECT_EQ(j.message.find("model"), std::string::npos) << j.message;
    // On an idle machine the same wait ends at 5 allowances (and a worker that slow is hung by
    // its CPU or its stalls long before).
    EXPECT_EQ(judgeStartup(kPolicy, reading(300000, 5000, 100), loadOf(0.5, 2)).verdict,
              StartupVerdict::Overloaded);
}

// Behind ssh the CPU is not known: a fixed deadline, the allowance times the load per core.
TEST(StartupWatch, AWorkerWhoseCpuIsUnknownGetsTheAllowanceScaledByTheLoad) {
    EXPECT_EQ(judgeStartup(kPolicy, reading(59999, -1, 59999), loadOf(0.5, 2)).verdict, StartupVerdict::Wait);
    const auto idle = judgeStartup(kPolicy, reading(60000, -1, 60000), loadOf(0.5, 2));
    EXPECT_EQ(idle.verdict, StartupVerdict::Hung);
    EXPECT_EQ(idle.message, "the worker did not start (no hello) within 60000 ms: it was declared hung and killed");
    EXPECT_EQ(judgeStartup(kPolicy, reading(200000, -1, 200000), loadOf(8, 2)).verdict, StartupVerdict::Wait);
    const auto loaded = judgeStartup(kPolicy, reading(240000, -1, 240000), loadOf(8, 2));
    EXPECT_EQ(loaded.verdict, StartupVerdict::Overloaded);
    EXPECT_NE(loaded.message.find("within 240000 ms: the machine is overloaded: load 8.0 on 2 cores"),
              std::string::npos)
        << loaded.message;
}

// The tracker: CPU that grows, or a runnable / disk-wait state, is progress; sleeping with the
// same CPU time is not.
TEST(StartupWatch, ProgressIsCpuTimeThatGrowsOrARunnableOrDiskWaitState) {
    StartupProgress p;
    p.start(1000);
    auto st = [](char state, double cpu) {
        ProcStat s;
        s.ok = true;
        s.state = state;
        s.cpuMs = cpu;
        return s;
    };
    auto r = p.observe(1500, st('S', 10));  // the first reading is progress (it ran to get there)
    EXPECT_DOUBLE_EQ(r.elapsedMs, 500);
    EXPECT_DOUBLE_EQ(r.sinceProgressMs, 0);
    r = p.observe(3000, st('S', 10));  // asleep, same CPU
    EXPECT_DOUBLE_EQ(r.sinceProgressMs, 1500);
    r = p.observe(4000, st('R', 10));  // waiting for a CPU: load, not a hang
    EXPECT_DOUBLE_EQ(r.sinceProgressMs, 0);
    r = p.observe(5000, st('S', 10));
    EXPECT_DOUBLE_EQ(r.sinceProgressMs, 1000);
    r = p.observe(6000, st('D', 10));  // waiting for the disk
    EXPECT_DOUBLE_EQ(r.sinceProgressMs, 0);
    r = p.observe(7000, st('S', 20));  // it ran between the looks
    EXPECT_DOUBLE_EQ(r.sinceProgressMs, 0);
    EXPECT_DOUBLE_EQ(r.cpuMs, 20);
    r = p.observe(9000, st('T', 20));  // stopped
    EXPECT_DOUBLE_EQ(r.sinceProgressMs, 2000);
    EXPECT_DOUBLE_EQ(r.elapsedMs, 8000);
    r = p.observe(9500, ProcStat{});  // unreadable: CPU unknown
    EXPECT_LT(r.cpuMs, 0);
    EXPECT_DOUBLE_EQ(r.sinceProgressMs, 2500);
}

TEST(StartupWatch, ParsesProcStatWithAnAwkwardCommAndRefusesWhatIsNotIt) {
    // A comm with spaces and a ')' of its own; utime 150 and stime 50 ticks at 100 Hz.
    const std::string text =
        "4242 (we ird) (name) R 1 4242 4242 0 -1 4194560 2000 0 0 0 150 50 0 0 20 0 3 0 100 1000000 200 "
        "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    ProcStat st;
    ASSERT_TRUE(parseProcStat(text, 100, &st));
    EXPECT_TRUE(st.ok);
    EXPECT_EQ(st.state, 'R');
    EXPECT_DOUBLE_EQ(st.cpuMs, 2000);
    ProcStat bad;
    EXPECT_FALSE(parseProcStat("", 100, &bad));
    EXPECT_FALSE(parseProcStat("4242 (x) R 1 2 3", 100, &bad));
    EXPECT_FALSE(parseProcStat("4242 (x) R 1 4242 4242 0 -1 4194560 2000 0 0 0 abc 50 0", 100, &bad));
    EXPECT_FALSE(bad.ok);
    double load = -1;
    ASSERT_TRUE(parseLoadavg("23.41 10.02 4.11 122/260 27185\n", &load));
    EXPECT_DOUBLE_EQ(load, 23.41);
    EXPECT_FALSE(parseLoadavg("", &load));
    EXPECT_FALSE(parseLoadavg("-1 0 0", &load));
}

// The readers on this machine: this process is running, its CPU time is counted; the load is
// read over the online CPUs.
TEST(StartupWatch, ReadsThisProcessAndTheMachine) {
    volatile double x = 0;
    for (int i = 0; i < 20000000; ++i) x = x + i;  // some CPU time to read back
    const ProcStat self = readProcStat(long(::getpid()));
    ASSERT_TRUE(self.ok);
    EXPECT_EQ(self.state, 'R');
    EXPECT_GT(self.cpuMs, 0);
    EXPECT_FALSE(readProcStat(0).ok);
    const MachineLoad load = readMachineLoad();
    ASSERT_TRUE(load.known());
    EXPECT_EQ(load.cores, int(::sysconf(_SC_NPROCESSORS_ONLN)));
    EXPECT_GE(load.factor(), 1.0);
}

}  // namespace
