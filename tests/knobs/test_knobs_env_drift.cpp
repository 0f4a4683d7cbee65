// results::runWarnings tells when arms ran in different environments (a manifest field other
// than the per-process ones differs): two arms are only comparable on the same machine state.
#include "pitlane/results/environment.h"
#include "pitlane/results/run_result.h"

#include <gtest/gtest.h>

namespace {

namespace R = pitlane::results;
using json = nlohmann::json;

json manifest() {
    return {{"libtorch", "1.13.1"},
            {"cpu", "Test CPU @ 2.0GHz"},
            {"cores", 2},
            {"allowed_cores", {0, 1}},
            {"governor", "performance"},
            {"kernel", "Linux 6.1.0 x86_64"},
            {"memory_bytes", 1 << 30},
            {"build_config", "PyTorch built with: ..."},
            {"gpu", {{"status", "no NVML"}}},
            {"pid", 100},
            {"hostname", "a"},
            {"load_average", {0.2, 0.3, 0.4}}};
}

R::RunResult twoArms(const json& a, const json& b) {
    R::RunResult run;
    for (const auto& [name, env] : {std::pair{"A", a}, std::pair{"B", b}}) {
        R::ArmResult arm;
        arm.name = name;
        arm.status = R::kOk;
        arm.environment = env;
        run.arms.push_back(arm);
    }
    return run;
}

std::vector<std::string> driftWarnings(const R::RunResult& run) {
    std::vector<std::string> out;
    for (const auto& w : R::runWarnings(run))
        if (w.find("environment differs") != std::string::npos) out.push_back(w);
    return out;
}

TEST(EnvironmentDrift, IdenticalManifestsGiveNoWarning) {
    EXPECT_TRUE(driftWarnings(twoArms(manifest(), manifest())).empty());
}

TEST(EnvironmentDrift, PerProcessFieldsAreNotDrift) {
    json b = manifest();
    b["pid"] = 200;
    b["hostname"] = "b";
    EXPECT_TRUE(driftWarnings(twoArms(manifest(), b)).empty());
}

// An arm that loads an AOTInductor package (or runs on CUDA) loads the worker's CUDA module; one
// that runs TorchScript on the CPU does not. That follows from the arms' setups, which the run
// shows: comparing NativeRT with compile aoti warned "environment differs ... cuda_module_loaded".
TEST(EnvironmentDrift, TheCudaModuleFollowsFromTheArmNotTheMachine) {
    json a = manifest(), b = manifest();
    a["cuda_module_loaded"] = false;
    b["cuda_module_loaded"] = true;
    EXPECT_TRUE(driftWarnings(twoArms(a, b)).empty());
    b.erase("cuda_module_loaded");
    EXPECT_TRUE(driftWarnings(twoArms(a, b)).empty());
}

TEST(EnvironmentDrift, TheLoadAverageIsNotDriftWithinARun) {
    json b = manifest();
    b["load_average"] = {3.5, 2.0, 1.0};
    EXPECT_TRUE(driftWarnings(twoArms(manifest(), b)).empty());
    EXPECT_TRUE(R::environmentDifferences(twoArms(manifest(), b).arms[0], twoArms(manifest(), b).arms[1]).empty());
}

// pitlane-cli compare's view across runs: the 1-minute load average differs at 0.5 or more.
TEST(EnvironmentDrift, CompareLoadAverageUsesTheOneMinuteFigure) {
    const auto with = [](json load) {
        R::ArmResult a;
        a.environment = manifest();
        if (load.is_null())
            a.environment.erase("load_average");
        else
            a.environment["load_average"] = load;
        return a;
    };
    auto c = R::compareLoadAverage(with({0.2, 0.3, 0.4}), with({0.69, 5.0, 5.0}));
    EXPECT_TRUE(c.compared);
    EXPECT_FALSE(c.differs);  // 0.49 apart; the 5- and 15-minute figures are not compared
    c = R::compareLoadAverage(with({0.2, 0.3, 0.4}), with({0.7, 0.3, 0.4}));
    EXPECT_TRUE(c.compared);
    EXPECT_TRUE(c.differs);
    EXPECT_EQ(c.first, "[0.2,0.3,0.4]");
    EXPECT_EQ(c.other, "[0.7,0.3,0.4]");
    // A run stored before the load average was recorded: not compared, and said so.
    c = R::compareLoadAverage(with(json()), with({0.7, 0.3, 0.4}));
    EXPECT_FALSE(c.compared);
    EXPECT_EQ(c.first, "absent");
    c = R::compareLoadAverage(with(json()), with(json()));
    EXPECT_FALSE(c.compared);
    EXPECT_FALSE(c.differs);
    EXPECT_TRUE(R::momentField("load_average"));
    EXPECT_TRUE(R::momentField("pid"));
    EXPECT_FALSE(R::momentField("kernel"));
}

TEST(EnvironmentDrift, ADifferentGovernorAndLibtorchAreReportedByName) {
    json b = manifest();
    b["governor"] = "powersave";
    b["libtorch"] = "2.1.0";
    const auto w = driftWarnings(twoArms(manifest(), b));
    ASSERT_EQ(w.size(), 2u);
    const std::string all = w[0] + "\n" + w[1];
    for (const char* s : {"\"governor\"", "performance", "powersave", "\"libtorch\"", "A", "B"})
        EXPECT_NE(all.find(s), std::string::npos) << s << " in: " << all;
}

TEST(EnvironmentDrift, AFieldOnlyOneArmHasIsDriftEitherWay) {
    json without = manifest();
    without.erase("gpu");
    EXPECT_EQ(driftWarnings(twoArms(manifest(), without)).size(), 1u)
        << "the second arm lacks \"gpu\"";
    EXPECT_EQ(driftWarnings(twoArms(without, manifest())).size(), 1u)
        << "the first arm lacks \"gpu\"";
}

TEST(EnvironmentDrift, AThirdArmIsComparedToo) {
    auto run = twoArms(manifest(), manifest());
    R::ArmResult c;
    c.name = "C";
    c.status = R::kOk;
    c.environment = manifest();
    c.environment["allowed_cores"] = {0};
    run.arms.push_back(c);
    const auto w = driftWarnings(run);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("allowed_cores"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("C"), std::string::npos) << w[0];
}

}  // namespace

// Remote arms on different hosts (run.compare_hosts): the drift is the hosts', so each side is
// named with its host, and the hostname counts.
TEST(EnvironmentDrift, ArmsOnDifferentHostsNameTheHosts) {
    json b = manifest();
    b["hostname"] = "gpu-box";
    b["cpu"] = "Other CPU";
    auto run = twoArms(manifest(), b);
    run.arms[1].host = "me@gpu-box";
    const auto w = driftWarnings(run);
    ASSERT_EQ(w.size(), 2u);
    const std::string all = w[0] + "\n" + w[1];
    for (const char* s : {"A (this machine)", "B (host me@gpu-box)", "\"hostname\"", "\"cpu\""})
        EXPECT_NE(all.find(s), std::string::npos) << s << " in: " << all;
    // On one host, the hostname stays a per-process field.
    run.arms[0].host = "me@gpu-box";
    run.arms[1].environment["hostname"] = "a";
    const auto same = driftWarnings(run);
    ASSERT_EQ(same.size(), 1u);
    EXPECT_EQ(same[0].find("(host"), std::string::npos) << same[0];
}
