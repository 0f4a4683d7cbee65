// Remote arms' preset fields (issue 15, spec/remote_hosts.h): host (the preset's default, an
// arm's own), remote_worker, run.compare_hosts; arms on different hosts are refused unless the
// preset asks for a host comparison.
#include "pitlane/spec/remote_hosts.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

namespace {

using pitlane::spec::json;
using pitlane::test::TempDir;
using pitlane::test::writeFile;
namespace spec = pitlane::spec;

class RemoteHosts : public ::testing::Test {
protected:
    void SetUp() override {
        modelDir = pitlane::test::writeStandInModels(tmp);
    }
    // Arm A on this machine, B on gpu-box.
    static json mixed() {
        return {{"model", "mlp"},
                {"arms", json::array({{{"name", "A"}},
                                      {{"name", "B"}, {"host", "me@gpu-box"}}})}};
    }
    std::vector<spec::SpecError> errors(const json& j) const { return spec::validatePreset(j, "", modelDir); }

    TempDir tmp;
    std::string modelDir;
};

TEST_F(RemoteHosts, ArmsOnDifferentHostsAreRefusedWithTheReason) {
    const auto e = errors(mixed());
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].field(), "arms[1].host");
    for (const char* s : {"this machine: A", "me@gpu-box: B", "not an A/B of knobs", "run.compare_hosts"})
        EXPECT_NE(e[0].reason().find(s), std::string::npos) << s << " in: " << e[0].reason();
}

TEST_F(RemoteHosts, CompareHostsAllowsThemAndSurvivesTheRoundTrip) {
    json j = mixed();
    j["run"] = {{"compare_hosts", true}};
    ASSERT_TRUE(errors(j).empty());
    const auto p = spec::parsePreset(j, "", modelDir);
    EXPECT_EQ(p.arms[0].host, "");
    EXPECT_EQ(p.arms[1].host, "me@gpu-box");
    const json back = spec::presetToJson(p);
    EXPECT_EQ(back["run"]["compare_hosts"], true);
    EXPECT_FALSE(back["arms"][0].contains("host"));
    EXPECT_EQ(back["arms"][1]["host"], "me@gpu-box");
    EXPECT_EQ(spec::parsePreset(back, "", modelDir).arms[1].host, "me@gpu-box");
}

TEST_F(RemoteHosts, ThePresetsHostIsEveryArmsUnlessAnArmNamesItsOwn) {
    json j = mixed();
    j["host"] = "me@gpu-box";
    j["remote_worker"] = "/opt/pitlane/bin/pitlane-worker";
    j["arms"][1].erase("host");
    ASSERT_TRUE(errors(j).empty());
    auto p = spec::parsePreset(j, "", modelDir);
    EXPECT_EQ(p.arms[0].host, "me@gpu-box");
    EXPECT_EQ(p.arms[1].host, "me@gpu-box");
    EXPECT_EQ(p.remote_worker, "/opt/pitlane/bin/pitlane-worker");
    const json back = spec::presetToJson(p);
    EXPECT_EQ(back["host"], "me@gpu-box");
    EXPECT_EQ(back["remote_worker"], "/opt/pitlane/bin/pitlane-worker");
    EXPECT_FALSE(back["arms"][0].contains("host"));
    // An arm back on this machine ("" is not a destination) is an error, not a silent local arm.
    j["arms"][0]["host"] = "";
    EXPECT_EQ(errors(j).at(0).field(), "arms[0].host");
}

TEST_F(RemoteHosts, BadDestinationsAndWorkersAreRefused) {
    for (const char* host : {"-oProxyCommand=touch /tmp/x", "a b", "host;rm", "$(id)", "h'q"}) {
        json j = mixed();
        j["run"] = {{"compare_hosts", true}};
        j["arms"][1]["host"] = host;
        const auto e = errors(j);
        ASSERT_EQ(e.size(), 1u) << host;
        EXPECT_EQ(e[0].field(), "arms[1].host") << host;
    }
    EXPECT_NE(spec::hostProblem("-x").find("option"), std::string::npos);
    for (const char* ok : {"gpu-box", "me@gpu-box.example.org", "me@[::1]", "node_7"})
        EXPECT_EQ(spec::hostProblem(ok), "") << ok;
    for (const char* worker : {"bin/pitlane-worker", "pitlane worker", "$HOME/w", ""}) {
        json j = mixed();
        j["run"] = {{"compare_hosts", true}};
        j["remote_worker"] = worker;
        const auto e = errors(j);
        ASSERT_EQ(e.size(), 1u) << worker;
        EXPECT_EQ(e[0].field(), "remote_worker") << worker;
    }
    json j = mixed();
    j["run"] = {{"compare_hosts", "yes"}};
    EXPECT_EQ(errors(j).at(0).field(), "run.compare_hosts");
}

}  // namespace
