// Energy (issue 46) without any process: the powercap reader's parsing, wrap and messages, and
// the per-arm arithmetic of results::armEnergy on processes whose counters are given.
#include "pitlane/engine/energy.h"
#include "pitlane/results/energy.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace pitlane;

namespace {

fs::path tempDir() {
    char tmpl[] = "/tmp/pitlane_energy_XXXXXX";
    const char* d = mkdtemp(tmpl);
    EXPECT_NE(d, nullptr);
    return d ? fs::path(d) : fs::path();
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

}  // namespace

TEST(EnergyUnit, PowercapNumbersParseOrSayNot) {
    EXPECT_EQ(engine::parsePowercapNumber("123456\n"), 123456u);
    EXPECT_EQ(engine::parsePowercapNumber("00000000000000000042\n"), 42u);
    EXPECT_FALSE(engine::parsePowercapNumber(""));
    EXPECT_FALSE(engine::parsePowercapNumber("12a\n"));
    EXPECT_FALSE(engine::parsePowercapNumber("-5\n"));
    EXPECT_FALSE(engine::parsePowercapNumber("99999999999999999999999\n"));
}

TEST(EnergyUnit, RaplWrapsAtItsMaxRange) {
    EXPECT_EQ(engine::raplDelta(100, 350, 999), 250u);
    // 900 -> 999 is 99 uJ, 999 -> 0 one more, then 100: 200 uJ.
    EXPECT_EQ(engine::raplDelta(900, 100, 999), 200u);
    EXPECT_EQ(engine::raplDelta(0, 0, 999), 0u);
}

TEST(EnergyUnit, UnreadablePowercapSaysWhy) {
    const std::string m = engine::powercapUnreadable("/sys/class/powercap/intel-rapl:0/energy_uj", EACCES);
    EXPECT_NE(m.find("energy_uj readable by root only"), std::string::npos) << m;
    EXPECT_NE(m.find("intel-rapl:0/energy_uj"), std::string::npos) << m;
    std::vector<engine::EnergyMeter::Zone> pkg, dram;
    std::string why;
    engine::openPowercap("/nonexistent/powercap", pkg, dram, why);
    EXPECT_TRUE(pkg.empty());
    EXPECT_NE(why.find("no powercap on this machine"), std::string::npos) << why;
}

TEST(EnergyUnit, FakePowercapTreeOpensPackagesAndDramAndNamesABadFile) {
    const fs::path dir = tempDir();
    write(dir / "intel-rapl:0/name", "package-0\n");
    write(dir / "intel-rapl:0/max_energy_range_uj", "262143328850\n");
    write(dir / "intel-rapl:0/energy_uj", "1000\n");
    write(dir / "intel-rapl:0:0/name", "core\n");  // inside the package: left out
    write(dir / "intel-rapl:0:0/max_energy_range_uj", "262143328850\n");
    write(dir / "intel-rapl:0:0/energy_uj", "10\n");
    write(dir / "intel-rapl:0:1/name", "dram\n");
    write(dir / "intel-rapl:0:1/max_energy_range_uj", "65712999613\n");
    write(dir / "intel-rapl:0:1/energy_uj", "20\n");
    std::vector<engine::EnergyMeter::Zone> pkg, dram;
    std::string why;
    engine::openPowercap(dir.string(), pkg, dram, why);
    ASSERT_EQ(pkg.size(), 1u) << why;
    EXPECT_EQ(pkg[0].name, "package-0");
    EXPECT_EQ(pkg[0].max_range_uj, 262143328850u);
    ASSERT_EQ(dram.size(), 1u);
    EXPECT_EQ(dram[0].name, "dram");
    for (auto& z : pkg) ::close(z.fd);
    for (auto& z : dram) ::close(z.fd);

    write(dir / "intel-rapl:0/energy_uj", "not a number\n");
    pkg.clear();
    dram.clear();
    why.clear();
    engine::openPowercap(dir.string(), pkg, dram, why);
    EXPECT_TRUE(pkg.empty());
    EXPECT_NE(why.find((dir / "intel-rapl:0/energy_uj").string()), std::string::npos) << why;
    EXPECT_NE(why.find("not a number"), std::string::npos) << why;
    fs::remove_all(dir);
}

namespace {

// A run of one arm whose processes measured (window ms, mJ, inferences, blocks); the idle draw
// of `idleW` measured by the arm's first process.
results::RunResult runWith(const std::vector<std::tuple<double, double, std::int64_t, std::int64_t>>& procs,
                           double idleW, double resolutionMs = 100) {
    results::RunResult run;
    results::ArmResult a;
    a.name = "A";
    nlohmann::json energy = {{"gpu", {{"source", "nvml"}, {"device", "gpu 0 (fake)"}, {"resolution_ms", resolutionMs}}},
                             {"cpu", {{"unavailable", "no powercap on this machine (/x absent)"}}}};
    if (idleW >= 0) energy["idle"] = {{"cooldown_ms", 100}, {"window_ms", 1000}, {"gpu_w", idleW}};
    a.applied.extra["energy"] = energy;
    int r = 0;
    for (const auto& [ms, mj, inf, blocks] : procs) {
        results::ProcessInfo p;
        p.replicate = r++;
        p.pid = 1000 + r;
        p.energy_blocks = blocks;
        p.energy_window_ms = ms;
        p.gpu_energy_mj = mj;
        p.energy_inferences = inf;
        a.processes.push_back(p);
    }
    run.arms.push_back(a);
    return run;
}

}  // namespace

TEST(EnergyUnit, ArmFiguresAreTheMedianAcrossProcessesWithANetOfIdle) {
    // 2 s at 100 W, 1000 inferences: 0.2 J each; idle 40 W: net (200 - 80) J / 1000 = 0.12 J.
    const auto run = runWith({{2000, 200000, 1000, 4}, {2000, 210000, 1000, 4}, {2000, 190000, 1000, 4}}, 40);
    const auto e = results::armEnergy(run, 0);
    ASSERT_TRUE(e.measured) << e.reason;
    const auto* s = e.primary();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->device, "gpu 0 (fake)");
    EXPECT_EQ(s->used, 3u);
    EXPECT_NEAR(s->j_per_inference, 0.2, 1e-12);
    EXPECT_NEAR(s->net_j_per_inference, 0.12, 1e-12);
    EXPECT_LE(s->ci_low, 0.2);
    EXPECT_GE(s->ci_high, 0.2);
    EXPECT_NEAR(s->inferences_per_j, 5.0, 1e-9);
    EXPECT_NEAR(s->average_w, 600000.0 / 6000.0, 1e-9);
    const auto j = results::energyJson(e);
    EXPECT_EQ(j["source"], "nvml");
    EXPECT_NEAR(j["joules_per_inference"].get<double>(), 0.2, 1e-12);
    EXPECT_NEAR(j["idle_power_w"].get<double>(), 40, 1e-12);
    // RAPL's reason is said, once, in the arm's unavailable list.
    ASSERT_EQ(j["unavailable"].size(), 1u);
    EXPECT_NE(j["unavailable"][0].get<std::string>().find("no powercap on this machine"), std::string::npos);
}

// Arms of two runs compared (store's compareRuns): each arm's net figure is net of its own run's
// idle draw or not given, never of the other run's. Here run X's arm carries a 40 W idle draw,
// run Y's arm none (its run's idle was measured by an arm not compared).
TEST(EnergyUnit, ArmsOfTwoRunsAreNotNetOfTheOtherRunsIdle) {
    auto x = runWith({{2000, 200000, 1000, 4}, {2000, 200000, 1000, 4}, {2000, 200000, 1000, 4}}, 40);
    auto y = runWith({{2000, 200000, 1000, 4}, {2000, 200000, 1000, 4}, {2000, 200000, 1000, 4}}, -1);
    results::RunResult both;
    both.arms = {x.arms[0], y.arms[0]};
    both.preset_json = {{"compared_runs", {12, 15}}};
    const auto ex = results::armEnergy(both, 0), ey = results::armEnergy(both, 1);
    const auto* bx = ex.primary();
    const auto* by = ey.primary();
    ASSERT_TRUE(bx && by);
    EXPECT_NEAR(bx->net_j_per_inference, 0.12, 1e-12);
    EXPECT_LT(by->idle_w, 0) << "run 15's arm took run 12's idle draw";
    EXPECT_EQ(by->net_j_per_inference, 0);
    // Two arms of one run share the run's idle draw, whichever arm measured it.
    both.preset_json = {{"compared_runs", {12, 12}}};
    const auto same = results::armEnergy(both, 1);
    EXPECT_NEAR(same.primary()->net_j_per_inference, 0.12, 1e-12);
    both.preset_json = nullptr;
    const auto one = results::armEnergy(both, 1);
    EXPECT_NEAR(one.primary()->net_j_per_inference, 0.12, 1e-12);
}

TEST(EnergyUnit, ShortWindowsAreTooShortAndSaySo) {
    // 0.2 s in 10 blocks at 100 ms resolution: +/-65 %: too short.
    const auto run = runWith({{200, 20000, 100, 10}, {200, 20000, 100, 10}}, 40);
    const auto e = results::armEnergy(run, 0);
    EXPECT_FALSE(e.measured);
    EXPECT_NE(e.reason.find("too short to measure energy"), std::string::npos) << e.reason;
    // One long process among short ones: it alone counts, and the others are said left out.
    const auto run2 = runWith({{200, 20000, 100, 10}, {4000, 400000, 2000, 10}}, -1);
    const auto e2 = results::armEnergy(run2, 0);
    ASSERT_TRUE(e2.measured);
    EXPECT_EQ(e2.primary()->used, 1u);
    EXPECT_NEAR(e2.primary()->j_per_inference, 0.2, 1e-12);
    EXPECT_FALSE(e2.primary()->notes.empty());
    EXPECT_TRUE(results::energyJson(e2)["net_joules_per_inference"].is_null());
}

TEST(EnergyUnit, ACounterThatReadsNothingOverLongWindowsIsStalled) {
    const auto run = runWith({{3000, 0, 1000, 4}, {3000, 0, 1000, 4}}, 40);
    const auto e = results::armEnergy(run, 0);
    EXPECT_FALSE(e.measured);
    EXPECT_NE(e.reason.find("stalled"), std::string::npos) << e.reason;
}
