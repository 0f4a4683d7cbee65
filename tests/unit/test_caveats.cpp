// Caveats at the verdict (issue 41): what ran differs from what was asked, attached to each
// comparison it touches, in the results JSON (and read back from it), the table, the warnings
// and the advice. Hand-built runs; integration_caveats checks a real fixed-threads package.
#include "pitlane/results/advice.h"
#include "pitlane/results/run_result.h"

#include <gtest/gtest.h>

using namespace pitlane;
using namespace pitlane::results;
using json = nlohmann::json;

namespace {

json applied(json extra = json::object()) {
    json a = {{"workload", "inference"}, {"mode", "eval"},          {"grad", "enabled"},
              {"jit", "none"},           {"intra_op_threads", 1},   {"inter_op_threads", 1},
              {"affinity_policy", "none"}, {"allocator", "system"}, {"precision", "fp32"},
              {"memory_format", "contiguous"}, {"device", "cpu"},   {"batch_size", 1}};
    a.update(extra);
    return a;
}

ArmResult caveatArm(const std::string& name, json knobs, json read, double ms) {
    ArmResult a;
    a.name = name;
    setKnobsFromJson(a, knobs);
    a.status = kOk;
    a.applied = protocol::appliedFromFields(read);
    for (int i = 0; i < 40; ++i) a.samples.push_back({i / 10, i, 1, 0, std::int64_t(ms * 1e6) + 1000 * (i % 7), 0});
    return a;
}

RunResult caveatRun(std::vector<ArmResult> arms) {
    RunResult r;
    r.preset.name = "caveats";
    r.arms = std::move(arms);
    return r;
}

// The mobilenet case of the issue: a package with 2 OpenMP threads compiled in, asked for 1
// (a package's grad is inference_mode unless asked otherwise).
ArmResult fixedPackage(const std::string& name = "aoti", double ms = 5.0) {
    ArmResult a;
    a.model_format = "aoti";
    a = caveatArm(name, {{"intra_op_threads", 1}, {"grad", "inference_mode"}},
            applied({{"package", {{"kernel_threads", 2}, {"constants", 3}}}, {"model_format", "aoti"},
                     {"grad", "inference_mode"}}),
            ms);
    a.model_format = "aoti";
    a.caveats = {"intra_op_threads 1 does not reach this package's own kernels: it was compiled with 2 "
                 "OpenMP threads written into them (compile it with "
                 "torch._inductor.config.cpp.dynamic_threads=True to follow the knob)"};
    a.warnings = a.caveats;
    return a;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(Caveats, AnArmThatRanAsAskedHasNone) {
    const auto r = caveatRun({caveatArm("A", {{"intra_op_threads", 1}}, applied(), 10),
                          caveatArm("B", {{"intra_op_threads", 1}, {"grad", "inference_mode"}},
                              applied({{"grad", "inference_mode"}}), 8)});
    EXPECT_TRUE(armCaveats(r.arms[0]).empty());
    EXPECT_TRUE(armCaveats(r.arms[1]).empty());
    ASSERT_EQ(compareArms(r).size(), 1u);
    EXPECT_TRUE(comparisonCaveats(r, compareArms(r)[0]).empty());
    EXPECT_TRUE(toResultsJson(r)["comparisons"][0]["caveats"].empty());
    EXPECT_FALSE(contains(comparisonTable(r), "caveat: ")) << comparisonTable(r);
    // A dynamic package, or one with no parallel region, follows the knob: nothing to say.
    auto dyn = caveatArm("B", {{"intra_op_threads", 1}}, applied({{"package", {{"kernel_threads", "dynamic"}}}}), 8);
    EXPECT_TRUE(armCaveats(dyn).empty());
    auto same = caveatArm("B", {{"intra_op_threads", 2}}, applied({{"intra_op_threads", 2}, {"package", {{"kernel_threads", 2}}}}), 8);
    EXPECT_TRUE(armCaveats(same).empty());
}

TEST(Caveats, AFixedThreadPackageSaysWhatRanOnceWithTheIssuesWording) {
    const auto r = caveatRun({caveatArm("torchscript", {{"intra_op_threads", 1}}, applied(), 10), fixedPackage()});
    const auto c = armCaveats(r.arms[1]);
    // The worker's own line is said once, in the read-back's words (not twice).
    ASSERT_EQ(c.size(), 1u) << c.front();
    EXPECT_EQ(c[0].rfind("aoti ran 2 OpenMP threads in its package's own kernels where 1 was asked", 0), 0u) << c[0];
    const auto comps = compareArms(r);
    ASSERT_EQ(comps.size(), 1u);
    const auto cc = comparisonCaveats(r, comps[0]);
    ASSERT_EQ(cc.size(), 1u);
    EXPECT_EQ(cc[0], kCaveatPrefix + c[0]);
    EXPECT_EQ(cc[0].rfind("the comparison is of what ran: aoti ran 2 OpenMP threads", 0), 0u);
    // Results JSON: comparisons[].caveats, and the arm's own caveats kept for a re-read.
    const json j = toResultsJson(r);
    EXPECT_EQ(j["comparisons"][0]["caveats"], json(cc));
    EXPECT_EQ(j["arms"][1]["caveats"], json(r.arms[1].caveats));
    const RunResult back = fromResultsJson(j);
    ASSERT_EQ(back.arms[1].caveats, r.arms[1].caveats);
    EXPECT_EQ(comparisonCaveats(back, compareArms(back)[0]), cc);
    // The table: under the verdict it touches, and first among the warnings.
    const std::string t = comparisonTable(r);
    const auto verdictAt = t.find(comps[0].verdict), caveatAt = t.find("  caveat: " + cc[0]);
    ASSERT_NE(verdictAt, std::string::npos) << t;
    ASSERT_NE(caveatAt, std::string::npos) << t;
    EXPECT_LT(verdictAt, caveatAt);
    const auto w = runWarnings(r);
    ASSERT_FALSE(w.empty());
    EXPECT_EQ(w.front(), c[0]);
}

TEST(Caveats, ACaveatOfTheBaselineTouchesEveryComparison) {
    const auto r = caveatRun({fixedPackage("base", 10), caveatArm("B", {{"intra_op_threads", 1}}, applied(), 8),
                          caveatArm("C", {{"intra_op_threads", 1}}, applied(), 6)});
    const auto comps = compareArms(r);
    ASSERT_EQ(comps.size(), 2u);
    for (const auto& c : comps) {
        const auto cc = comparisonCaveats(r, c);
        ASSERT_EQ(cc.size(), 1u) << c.arm;
        EXPECT_TRUE(contains(cc[0], "base ran 2 OpenMP threads")) << cc[0];
    }
    EXPECT_EQ(runCaveats(r).size(), 1u);  // once, though two comparisons carry it
}

TEST(Caveats, ReadBackDifferencesAreNamedKnobByKnob) {
    // Each knob asked against what the worker read back.
    const auto a = caveatArm("A",
                       {{"intra_op_threads", 1}, {"inter_op_threads", 2}, {"grad", "inference_mode"},
                        {"jit", "freeze"}, {"precision", "autocast_bf16"}, {"batch_size", 4}},
                       applied({{"intra_op_threads", 2}, {"inter_op_threads", 1}, {"grad", "no_grad"},
                                {"jit", "none"}, {"precision", "fp32"}, {"batch_size", 1}}),
                       10);
    const auto c = armCaveats(a);
    const std::vector<std::string> expected = {
        "A ran 2 intra-op threads where 1 was asked",
        "A ran 1 inter-op thread where 2 was asked",
        "A ran grad no_grad where inference_mode was asked",
        "A ran jit none where freeze was asked",
        "A ran precision fp32 where autocast_bf16 was asked",
        "A ran batch size 1 where 4 was asked",
    };
    EXPECT_EQ(c, expected);
    // A knob the worker already explained (a caveat starting with its name) is not said twice.
    auto b = caveatArm("B", {{"memory_format", "channels_last"}}, applied(), 10);
    b.caveats = {"memory_format channels_last applies to 4-D (NCHW) inputs only; this model's input is not 4-D, so it stays contiguous"};
    const auto cb = armCaveats(b);
    ASSERT_EQ(cb.size(), 1u);
    EXPECT_EQ(cb[0], "B: " + b.caveats[0]);
    // Nothing read back (a worker that never configured): nothing compared.
    ArmResult none;
    none.name = "N";
    setKnobsFromJson(none, {{"intra_op_threads", 1}});
    EXPECT_TRUE(armCaveats(none).empty());
}

TEST(Caveats, CaveatCodesAreThoseThatSayWhatDidNotRunAsAsked) {
    for (const char* code : {"knob_not_applicable", "cuda_only_knob", "workload_not_applied", "flush_denormal_partial",
                             "flush_denormal_unsupported", "sandbox_incomplete"})
        EXPECT_TRUE(isCaveatCode(code)) << code;
    for (const char* code : {"oversubscribed", "reference_blas", "package_torch_version", ""})
        EXPECT_FALSE(isCaveatCode(code)) << code;
}

TEST(Caveats, TheAdviceForAFixedThreadPackageIsToCompileWithDynamicThreadsNotToPin) {
    // Migrations that would otherwise call for pinning, and processes far apart at 2 threads.
    auto a = fixedPackage();
    a.metrics.push_back({});
    const auto v = advise(caveatRun({caveatArm("ts", {{"intra_op_threads", 1}}, applied(), 10), a}));
    std::vector<std::string> rules;
    for (const auto& x : v)
        if (x.arm == 1) rules.push_back(x.rule);
    ASSERT_FALSE(rules.empty());
    EXPECT_EQ(rules.front(), "package_fixed_threads");
    EXPECT_EQ(std::count(rules.begin(), rules.end(), "unpinned_migrations"), 0);
    for (const auto& x : v)
        if (x.rule == "package_fixed_threads") {
            EXPECT_TRUE(contains(x.evidence, "2 OpenMP threads")) << x.evidence;
            // A package the user gave: the action says how to compile it again.
            EXPECT_TRUE(contains(x.action, "dynamic_threads")) << x.action;
        }
    // A package Pitlane compiled (knob compile aoti): the change is the knob.
    auto compiled = fixedPackage();
    setKnobsFromJson(compiled, {{"intra_op_threads", 1}, {"compile", "aoti"}, {"inductor", {{"dynamic_threads", false}}}});
    compiled.model_format = "exported";
    const auto w = advise(caveatRun({caveatArm("ts", {{"intra_op_threads", 1}}, applied(), 10), compiled}));
    bool found = false;
    for (const auto& x : w)
        if (x.rule == "package_fixed_threads") {
            found = true;
            EXPECT_EQ(x.change["inductor"]["dynamic_threads"], true) << x.change.dump();
        }
    EXPECT_TRUE(found);
}
