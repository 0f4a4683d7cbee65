// Energy per inference end to end without a GPU (issue 46, docs/ENERGY.md "Testing without a
// GPU"): real pitlane-cli runs of the bundled mlp, whose workers read Pitlane's fake NVML
// (PITLANE_NVML_LIBRARY, its counters scripted by PITLANE_FAKE_NVML_SCRIPT) or a fake powercap
// tree (PITLANE_POWERCAP_DIR) that a writer thread of this test advances. Each figure is checked
// against what the script makes the counter count, computed here from the worker's own window
// and CPU time, never from the energy path's output.
#include "../integration/cli.h"
#include "../integration/harness.h"

#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace pitlane;
using namespace pitlane::itest;

namespace {

// One environment variable set for a test's scope.
struct ScopedEnv {
    std::string name;
    ScopedEnv(const std::string& n, const std::string& v) : name(n) { ::setenv(n.c_str(), v.c_str(), 1); }
    ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

// ms per iteration of the mlp at batch 64 with one thread, measured by a real worker, so the
// runs below size their blocks to this machine rather than to a constant: the fastest of five
// blocks, so that a block is at least as long as asked. (One block of 100 timed beside a compile
// under ctest -j2 was 5x the quiet figure: the runs' blocks then came out a fifth of what was
// asked, too short for the counter's resolution, and the arms' energy "not measured".)
double msPerIteration() {
    static double ms = 0;
    if (ms > 0) return ms;
    WorkerDriver w;
    if (w.start().is_null()) return 0;
    const json applied = w.configure({{"intra_op_threads", 1}, {"batch_size", 64}});
    if (applied.value("type", "") != "applied") {
        ADD_FAILURE() << "calibration: " << applied.dump();
        return 0;
    }
    w.run(-1, 20, "warmup");
    double fastest = 0;
    for (int block = 0; block < 5; ++block) {
        const json done = w.run(block, 20);
        if (done.value("type", "") != "block_done") {
            ADD_FAILURE() << "calibration: " << done.dump();
            return 0;
        }
        const double per = done.value("wall_ms", 0.0) / 20.0;
        if (per > 0 && (fastest == 0 || per < fastest)) fastest = per;
    }
    ms = fastest;
    return ms;
}

// A preset of two arms of the mlp (batch 64 and 32, one thread), blocks of about blockMs.
json preset(int processes, int blocksPerProcess, double blockMs, int idleMs = 300) {
    const double per = std::max(1e-3, msPerIteration());
    const int blockIters = std::max(10, int(blockMs / per));
    return {{"name", "energy"},
            {"model", "mlp"},
            {"run",
             {{"warmup_iters", 5}, {"iters", blockIters * blocksPerProcess * processes},
              {"block_iters", blockIters}, {"processes", processes},
              {"energy_idle_ms", idleMs}, {"energy_cooldown_ms", 100}}},
            {"arms",
             {{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}, {"batch_size", 64}}}},
              {{"name", "B"}, {"knobs", {{"intra_op_threads", 1}, {"batch_size", 32}}}}}}};
}

struct CliRun {
    CliResult cli;
    json results;
};

CliRun runCliPreset(const QTemporaryDir& dir, const json& p, int timeoutMs = 180000) {
    const QString presetPath = writeJson(dir.filePath("preset.json"), p);
    const QString out = dir.filePath("results.json");
    CliRun r;
    r.cli = runCli({"run", presetPath, "--json", out, "--db", "none"}, timeoutMs);
    r.results = readJson(out);
    return r;
}

std::string writeScript(const QTemporaryDir& dir, const std::string& text) {
    const std::string path = dir.filePath("nvml.script").toStdString();
    std::ofstream(path) << text;
    return path;
}

const json* processOf(const json& arm, long pid) {
    for (const auto& p : arm["processes"])
        if (p.value("pid", 0L) == pid) return &p;
    return nullptr;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto i = text.find(what); i != std::string::npos; i = text.find(what, i + 1)) ++n;
    return n;
}

}  // namespace

// The fake does what its script says: the wrap lands where a test puts it (checked here so the
// end-to-end check below is known to cross one).
TEST(Energy, TheFakeNvmlWrapsWhereItsScriptSays) {
    QTemporaryDir dir;
    ScopedEnv script("PITLANE_FAKE_NVML_SCRIPT",
                     writeScript(dir, "device Fake\nidle_w 40\ngranularity_ms 0\nwrap_at_read 2\n"));
    void* lib = dlopen(PITLANE_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto handle = reinterpret_cast<int (*)(unsigned, void**)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    auto energy = reinterpret_cast<int (*)(void*, unsigned long long*)>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    ASSERT_TRUE(init && handle && energy);
    ASSERT_EQ(init(), 0);
    void* dev = nullptr;
    ASSERT_EQ(handle(0, &dev), 0);
    unsigned long long a = 0, b = 0, c = 0;
    ASSERT_EQ(energy(dev, &a), 0);
    ASSERT_EQ(energy(dev, &b), 0);
    EXPECT_EQ(b, ~0ull);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(energy(dev, &c), 0);
    EXPECT_LT(c, 10000u);               // wrapped past 0
    EXPECT_NEAR(double(c - b), 40 * 20, 40 * 15);  // ~20 ms at 40 W, modulo 2^64
    dlclose(lib);
}

// Two arms, three processes each, every process two blocks merged into its window; the counter
// wraps inside a window of every process. Every process's energy must be what the script draws
// over that process's window: idle_w * window + busy_w * CPU time.
TEST(Energy, FakeNvmlTwoArmsReportTheScriptedJoules) {
    ASSERT_GT(msPerIteration(), 0) << "calibration run failed";
    QTemporaryDir dir;
    const double idleW = 40, busyW = 150;
    // Reads: 1 is the worker's probe at configure; the idle process reads 2-3 over the idle
    // draw, the others 2-3 around block 1; read 4 starts a window in every process.
    ScopedEnv script("PITLANE_FAKE_NVML_SCRIPT",
                     writeScript(dir, "# two arms, exact counter\ndevice Pitlane Fake GPU\nidle_w 40\nbusy_w 150\n"
                                      "granularity_ms 0\nstart_mj 5000\nwrap_at_read 4\n"));
    ScopedEnv lib("PITLANE_NVML_LIBRARY", PITLANE_FAKE_NVML);
    const CliRun r = runCliPreset(dir, preset(3, 2, 1500));
    ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
    ASSERT_TRUE(r.results.is_object());
    EXPECT_NE(r.cli.out.find("Energy per inference"), std::string::npos) << r.cli.out;
    EXPECT_NE(r.cli.out.find("gpu 0 (fake) (nvml)"), std::string::npos) << r.cli.out;
    for (const auto& arm : r.results["arms"]) {
        SCOPED_TRACE(arm["name"].get<std::string>());
        const json& e = arm["energy"];
        ASSERT_TRUE(e.value("measured", false)) << e.dump(2);
        EXPECT_EQ(e["source"], "nvml");
        EXPECT_EQ(e["device"], "gpu 0 (fake)");
        EXPECT_EQ(e["name"], "Pitlane Fake GPU");
        // The idle draw: a sleeping worker, so idle_w plus busy_w times the share of a core its
        // sampler keeps busy: about 0.1 % (0.2 W) on a quiet machine, 0.8 % (1.24 W) beside
        // other tests (ctest -j2), where each wake-up costs more. A busy worker would be ~190 W.
        EXPECT_GE(e["idle_power_w"].get<double>(), 0.99 * idleW);
        EXPECT_LE(e["idle_power_w"].get<double>(), idleW + 0.03 * busyW);
        const int batch = arm["knobs"]["batch_size"].get<int>();
        std::vector<double> gross, net;
        const json& src = e["sources"][0];
        ASSERT_EQ(src["processes"].size(), 3u);
        for (const auto& p : src["processes"]) {
            const json* info = processOf(arm, p["pid"].get<long>());
            ASSERT_NE(info, nullptr);
            // Merged: both blocks of the process, every iteration of them.
            EXPECT_EQ(p["blocks"].get<int>(), 2);
            EXPECT_EQ(p["inferences"].get<long>(), (*info)["fault_iters"].get<long>() * batch);
            const double windowMs = p["window_ms"].get<double>();
            const double cpuMs = (*info)["cpu_ms"].get<double>();
            const double expectedMj = idleW * windowMs + busyW * cpuMs;
            EXPECT_NEAR(p["energy_mj"].get<double>(), expectedMj, 0.01 * expectedMj + 5) << p.dump();
            const double inferences = p["inferences"].get<double>();
            const double grossJ = expectedMj / 1e3 / inferences;
            // The arm's figures are over the processes whose window is long enough for the
            // counter's resolution (blocks sized from a calibration run: the load may differ).
            if (p["used"].get<bool>()) {
                gross.push_back(grossJ);
                net.push_back((expectedMj - e["idle_power_w"].get<double>() * windowMs) / 1e3 / inferences);
            } else {
                EXPECT_NE(p.value("why_not", "").find("too short"), std::string::npos) << p.dump();
            }
            EXPECT_NEAR(p["joules_per_inference"].get<double>(), grossJ, 0.01 * grossJ);
            // Net of idle: what the CPU work drew.
            EXPECT_NEAR(p["net_joules_per_inference"].get<double>(), busyW * cpuMs / 1e3 / inferences,
                        0.03 * busyW * cpuMs / 1e3 / inferences + 0.002 * gross.back());
        }
        ASSERT_FALSE(gross.empty());
        EXPECT_EQ(e["processes_used"].get<std::size_t>(), gross.size());
        const double g = median(gross), n = median(net);
        EXPECT_NEAR(e["joules_per_inference"].get<double>(), g, 0.01 * g);
        EXPECT_NEAR(e["net_joules_per_inference"].get<double>(), n, 0.02 * std::fabs(n) + 1e-9);
        EXPECT_LE(e["joules_per_inference_ci95"][0].get<double>(), e["joules_per_inference"].get<double>());
        EXPECT_GE(e["joules_per_inference_ci95"][1].get<double>(), e["joules_per_inference"].get<double>());
        EXPECT_NEAR(e["inferences_per_joule"].get<double>(), 1 / e["joules_per_inference"].get<double>(), 1e-9);
        EXPECT_GT(e["average_power_w"].get<double>(), idleW);
        // No RAPL here (or a fake one): its reason is in the arm's list.
        ASSERT_TRUE(e.contains("unavailable")) << e.dump(2);
    }
}

// A device without the counter, and a script that does not parse: said, once, with the reason.
TEST(Energy, ADeviceWithoutTheCounterSaysSoOnce) {
    QTemporaryDir dir;
    ScopedEnv script("PITLANE_FAKE_NVML_SCRIPT", writeScript(dir, "device Old Fake GPU\nenergy none\nidle_w 30\n"));
    ScopedEnv lib("PITLANE_NVML_LIBRARY", PITLANE_FAKE_NVML);
    json p = preset(2, 1, 20, 0);
    const CliRun r = runCliPreset(dir, p);
    ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
    for (const auto& arm : r.results["arms"]) {
        const json& e = arm["energy"];
        EXPECT_FALSE(e.value("measured", true));
        const std::string reason = e.value("reason", "");
        EXPECT_NE(reason.find("gpu 0 (Old Fake GPU) has no energy counter"), std::string::npos) << reason;
        EXPECT_NE(reason.find("Not Supported"), std::string::npos) << reason;
    }
    EXPECT_EQ(count(r.cli.out, "has no energy counter"), 1u) << r.cli.out;
    EXPECT_NE(r.cli.out.find("Energy per inference: not measured"), std::string::npos) << r.cli.out;
}

TEST(Energy, AMalformedScriptNamesTheFileAndTheLine) {
    QTemporaryDir dir;
    const std::string path = writeScript(dir, "device Fake\nidle_w forty\n");
    ScopedEnv script("PITLANE_FAKE_NVML_SCRIPT", path);
    ScopedEnv lib("PITLANE_NVML_LIBRARY", PITLANE_FAKE_NVML);
    const CliRun r = runCliPreset(dir, preset(2, 1, 20, 0));
    ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
    const std::string reason = r.results["arms"][0]["energy"].value("reason", "");
    EXPECT_NE(reason.find("script " + path + ": line 2: idle_w needs a number"), std::string::npos) << reason;
}

// A counter that updates every 100 ms read around blocks of a few ms: each process's blocks are
// merged, and the run says it is too short instead of giving a figure.
TEST(Energy, ShortBlocksAreMergedAndATooShortRunSaysSo) {
    ASSERT_GT(msPerIteration(), 0);
    QTemporaryDir dir;
    ScopedEnv script("PITLANE_FAKE_NVML_SCRIPT",
                     writeScript(dir, "device Fake\nidle_w 40\nbusy_w 150\ngranularity_ms 100\n"));
    ScopedEnv lib("PITLANE_NVML_LIBRARY", PITLANE_FAKE_NVML);
    const CliRun r = runCliPreset(dir, preset(2, 3, 5, 0));
    ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
    for (const auto& arm : r.results["arms"]) {
        const json& e = arm["energy"];
        EXPECT_FALSE(e.value("measured", true)) << e.dump(2);
        EXPECT_NE(e.value("reason", "").find("too short to measure energy"), std::string::npos) << e.dump(2);
        for (const auto& p : e["sources"][0]["processes"]) {
            EXPECT_EQ(p["blocks"].get<int>(), 3) << p.dump();
            EXPECT_FALSE(p["used"].get<bool>());
            EXPECT_NE(p.value("why_not", "").find("too short"), std::string::npos) << p.dump();
        }
    }
    EXPECT_NE(r.cli.out.find("too short to measure energy"), std::string::npos) << r.cli.out;
}

// A counter that stops counting after the worker's first reading: every process reads 0 J over
// windows of many updates, is said stalled and left out; the idle draw too.
TEST(Energy, AStalledCounterIsSaidAndLeftOut) {
    ASSERT_GT(msPerIteration(), 0);
    QTemporaryDir dir;
    ScopedEnv script("PITLANE_FAKE_NVML_SCRIPT",
                     writeScript(dir, "device Fake\nidle_w 40\ngranularity_ms 0\nstall_after_reads 1\n"));
    ScopedEnv lib("PITLANE_NVML_LIBRARY", PITLANE_FAKE_NVML);
    const CliRun r = runCliPreset(dir, preset(2, 1, 1200, 600));
    ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
    for (const auto& arm : r.results["arms"]) {
        const json& e = arm["energy"];
        EXPECT_FALSE(e.value("measured", true)) << e.dump(2);
        EXPECT_NE(e.value("reason", "").find("stalled"), std::string::npos) << e.dump(2);
    }
    EXPECT_NE(r.cli.out.find("stalled"), std::string::npos) << r.cli.out;
}

// A fake powercap tree: package-0 at 25 W and its dram at 5 W, energy_uj rewritten in place
// every 2 ms by a writer thread (the worker keeps the files open, as it does /sys's), the
// package's counter wrapping at 40 J (every 1.6 s, the first 20 ms in: a run crosses wraps inside
// some of its 150 ms windows; a window, even 4x longer on a loaded machine, and the idle window,
// 300 ms, stay shorter than a wrap, as a reader of a real counter needs). No NVML here.
TEST(Energy, FakePowercapTreeReportsTheWrittenJoules) {
    ASSERT_GT(msPerIteration(), 0);
    QTemporaryDir dir;
    namespace fs = std::filesystem;
    const fs::path root = dir.filePath("powercap").toStdString();
    const double pkgW = 25, dramW = 5;
    const std::uint64_t pkgMax = 40000000, dramMax = 262143328850ull;
    struct Zone {
        fs::path dir;
        const char* name;
        double w;
        std::uint64_t max, start;
        int fd = -1;
    };
    std::vector<Zone> zones = {{root / "intel-rapl:0", "package-0", pkgW, pkgMax, 39500000},
                               {root / "intel-rapl:0:0", "dram", dramW, dramMax, 123}};
    for (auto& z : zones) {
        fs::create_directories(z.dir);
        std::ofstream(z.dir / "name") << z.name << "\n";
        std::ofstream(z.dir / "max_energy_range_uj") << z.max << "\n";
        z.fd = ::open((z.dir / "energy_uj").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ASSERT_GE(z.fd, 0);
    }
    std::atomic<bool> stop{false};
    const auto t0 = std::chrono::steady_clock::now();
    auto writeAll = [&] {
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        for (auto& z : zones) {
            // W = J/s = uJ/us; fixed width, so an in-place rewrite never leaves a shorter tail.
            const std::uint64_t v = (z.start + std::uint64_t(z.w * us)) % (z.max + 1);
            char buf[32];
            const int n = std::snprintf(buf, sizeof buf, "%020llu\n", (unsigned long long)v);
            if (::pwrite(z.fd, buf, std::size_t(n), 0) != n) ADD_FAILURE() << "pwrite";
        }
    };
    writeAll();
    std::thread writer([&] {
        while (!stop) {
            writeAll();
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    });
    ScopedEnv env("PITLANE_POWERCAP_DIR", root.string());
    const CliRun r = runCliPreset(dir, preset(3, 2, 150, 300));
    stop = true;
    writer.join();
    for (auto& z : zones) ::close(z.fd);
    ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
    EXPECT_NE(r.cli.out.find("package-0 (rapl)"), std::string::npos) << r.cli.out;
    for (const auto& arm : r.results["arms"]) {
        SCOPED_TRACE(arm["name"].get<std::string>());
        const json& e = arm["energy"];
        ASSERT_TRUE(e.value("measured", false)) << e.dump(2);
        EXPECT_EQ(e["source"], "rapl");
        EXPECT_EQ(e["device"], "package-0");
        EXPECT_NEAR(e["idle_power_w"].get<double>(), pkgW, 0.08 * pkgW);
        ASSERT_GE(e["sources"].size(), 2u);
        for (const auto& s : e["sources"]) {
            if (!s.value("measured", false)) continue;
            const double w = s["device"] == "dram" ? dramW : pkgW;
            for (const auto& p : s["processes"]) {
                // Each reading lags the writer by at most its period plus a scheduling delay:
                // 4 readings a process, 15 ms each at most.
                const double windowMs = p["window_ms"].get<double>();
                EXPECT_NEAR(p["energy_mj"].get<double>(), w * windowMs, 4 * 15 * w) << p.dump();
                EXPECT_NEAR(p["average_power_w"].get<double>(), w, 0.1 * w);
            }
            // Constant power: net of idle is about nothing.
            EXPECT_LT(std::fabs(s["net_joules_per_inference"].get<double>()),
                      0.1 * s["joules_per_inference"].get<double>()) << s.dump(2);
        }
    }
}

// The history keeps what the figures are made of (the processes' counters and applied.energy):
// a stored run reports the same energy as the run did; and the gate --max-energy-increase fails
// an arm whose J/inference rose (the script's busy power tripled), latency aside.
TEST(Energy, TheHistoryKeepsItAndTheGateCatchesMoreEnergy) {
    ASSERT_GT(msPerIteration(), 0);
    QTemporaryDir dir;
    const QString db = dir.filePath("history.sqlite");
    const std::string scriptPath = dir.filePath("nvml.script").toStdString();
    auto script = [&](int busyW) {
        std::ofstream(scriptPath) << "device Fake\nidle_w 40\nbusy_w " << busyW << "\ngranularity_ms 0\n";
    };
    script(150);
    ScopedEnv env("PITLANE_FAKE_NVML_SCRIPT", scriptPath);
    ScopedEnv lib("PITLANE_NVML_LIBRARY", PITLANE_FAKE_NVML);
    const QString presetPath = writeJson(dir.filePath("preset.json"), preset(3, 1, 1500));
    const QString first = dir.filePath("first.json");
    auto r = runCli({"run", presetPath, "--db", db, "--json", first}, 180000);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json run1 = readJson(first);

    // The stored run, reported from the history.
    r = runCli({"history", "list", "--json", "--db", db});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json list = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(list.is_array() && !list.empty()) << r.out;
    long id = 0;
    for (const auto& e : list) id = std::max(id, e.value("id", 0L));
    const QString stored = dir.filePath("stored.json"), md = dir.filePath("stored.md");
    r = runCli({"report", QString::number(id), "--db", db, "--json", stored, "--md", md});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const json again = readJson(stored);
    for (std::size_t i = 0; i < run1["arms"].size(); ++i) {
        const json& a = run1["arms"][i]["energy"];
        const json& b = again["arms"][i]["energy"];
        ASSERT_TRUE(a.value("measured", false)) << a.dump(2);
        ASSERT_TRUE(b.value("measured", false)) << b.dump(2);
        EXPECT_DOUBLE_EQ(a["joules_per_inference"].get<double>(), b["joules_per_inference"].get<double>());
        EXPECT_DOUBLE_EQ(a["net_joules_per_inference"].get<double>(), b["net_joules_per_inference"].get<double>());
        EXPECT_DOUBLE_EQ(a["idle_power_w"].get<double>(), b["idle_power_w"].get<double>());
    }
    std::ifstream mdIn(md.toStdString());
    const std::string mdText((std::istreambuf_iterator<char>(mdIn)), std::istreambuf_iterator<char>());
    EXPECT_NE(mdText.find("## Energy per inference"), std::string::npos) << mdText;
    EXPECT_NE(mdText.find("gpu 0 (fake) (nvml)"), std::string::npos) << mdText;

    // Ten times the busy power: J/inference rises well beyond 5 %, the whole CI with it. (At
    // three times, 3 processes per arm beside other tests at load 5.8 gave a CI of -30..+351 %:
    // the idle draw counts wall time, which the load stretches unevenly; the tool said
    // "inconclusive", rightly, and the test failed. The increase is now far beyond that noise.)
    script(1500);
    const QString second = dir.filePath("second.json");
    r = runCli({"run", presetPath, "--db", db, "--json", second, "--baseline", "latest", "--max-slowdown", "1000",
                "--max-energy-increase", "5"},
               180000);
    EXPECT_EQ(r.exitCode, 4) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL: more energy beyond 5 % with the whole CI"), std::string::npos) << r.out;
    const json gate = readJson(second).value("gate", json());
    ASSERT_TRUE(gate.is_object());
    EXPECT_EQ(gate["failed"], true);
    for (const auto& a : gate["arms"]) {
        ASSERT_TRUE(a.contains("energy")) << a.dump(2);
        EXPECT_EQ(a["energy"]["decision"], "fail") << a.dump(2);
        EXPECT_GT(a["energy"]["increase_ci95_pct"][0].get<double>(), 5.0) << a.dump(2);
        const double before = a["energy"]["baseline_joules_per_inference"].get<double>();
        const double after = a["energy"]["joules_per_inference"].get<double>();
        EXPECT_NEAR(a["energy"]["increase_pct"].get<double>(), (after / before - 1) * 100,
                    // the gate's ratio is of medians across processes, as the figures are
                    1e-6 * (after / before) * 100)
            << a.dump(2);
    }
    // An unknown value is refused before anything runs.
    r = runCli({"run", presetPath, "--db", db, "--baseline", "latest", "--max-energy-increase", "zero"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--max-energy-increase needs a percentage"), std::string::npos) << r.err;
}
