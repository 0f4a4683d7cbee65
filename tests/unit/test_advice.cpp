// The advisor's arithmetic on hand-built runs (docs/ADVISOR.md): each share and ratio computed
// here independently of advice_rules.cpp, the thresholds' edges, the ranking, and the suggested
// arms. integration_advisor checks the rules on real workers.
#include "pitlane/results/advice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace pitlane;
using namespace pitlane::results;
using json = nlohmann::json;

namespace {

json op(const std::string& name, double selfUs) {
    return {{"name", name}, {"calls", 1}, {"self_us", selfUs}, {"total_us", selfUs}};
}

// An arm measured in one process: `n` samples of `ms`, read back as `applied`.
ArmResult adviceArm(const std::string& name, json knobs, json applied, double ms = 10.0, int n = 20) {
    ArmResult a;
    a.name = name;
    setKnobsFromJson(a, knobs);
    a.status = kOk;
    a.applied = protocol::appliedFromFields(applied);
    a.environment = {{"allowed_cores", {0, 1}}, {"cpu_flags", {"avx2", "avx512f"}}};
    for (int i = 0; i < n; ++i) a.samples.push_back({i / 10, i, 1, 0, std::int64_t(ms * 1e6) + i, 0});
    ProcessInfo p;
    p.fault_iters = n;
    a.processes.push_back(p);
    return a;
}

json inferenceApplied(json extra = json::object()) {
    json a = {{"workload", "inference"}, {"mode", "eval"},       {"grad", "inference_mode"},
              {"jit", "none"},           {"intra_op_threads", 1}, {"affinity", {1}},
              {"affinity_policy", "list"}, {"allocator", "jemalloc"}, {"blas", "openblas"},
              {"precision", "fp32"},     {"memory_format", "contiguous"}, {"input_variants", 1}};
    a.update(extra);
    return a;
}

RunResult runOf(std::vector<ArmResult> arms) {
    RunResult r;
    r.arms = std::move(arms);
    return r;
}

std::vector<std::string> rules(const std::vector<Advice>& v, std::size_t arm) {
    std::vector<std::string> out;
    for (const auto& a : v)
        if (a.arm == arm) out.push_back(a.rule);
    return out;
}

const Advice* find(const std::vector<Advice>& v, const std::string& rule) {
    for (const auto& a : v)
        if (a.rule == rule) return &a;
    return nullptr;
}

}  // namespace

TEST(Advice, ATunedArmGetsNothing) {
    const auto r = runOf({adviceArm("tuned", {{"grad", "inference_mode"}}, inferenceApplied())});
    EXPECT_TRUE(advise(r).empty());
}

TEST(Advice, FusionShareIsTheProfiledShareOfConvBatchNormAndActivations) {
    auto a = adviceArm("A", {{"mode", "train"}}, inferenceApplied({{"mode", "train"}}));
    // Two iterations: conv 30 ms + bn 6 ms + relu 2 ms of 50 ms per iteration = 76 %; dropout
    // 2 ms (train mode's other layer).
    a.profile = {{"iters", 2},
                 {"ops",
                  {op("aten::_slow_conv2d_forward", 60000), op("aten::native_batch_norm", 12000),
                   op("aten::relu_", 4000), op("aten::dropout", 4000), op("aten::addmm", 20000)}}};
    const auto v = advise(runOf({a}));
    const Advice* fuse = find(v, "fuse_for_inference");
    ASSERT_NE(fuse, nullptr);
    EXPECT_NEAR(fuse->share, 38.0 / 50.0, 1e-12);
    EXPECT_TRUE(fuse->measured);
    EXPECT_EQ(fuse->change, json({{"mode", "eval"}, {"jit", "freeze_optimize"}}));
    EXPECT_NE(fuse->evidence.find("aten::_slow_conv2d_forward"), std::string::npos);
    const Advice* train = find(v, "train_mode_layers");
    ASSERT_NE(train, nullptr);
    EXPECT_NEAR(train->share, 8.0 / 50.0, 1e-12);  // batch-norm 6 + dropout 2
    // Ranked: fusion (76 %) before train mode (16 %); both before anything else of the arm.
    EXPECT_EQ(rules(v, 0).at(0), "fuse_for_inference");
    EXPECT_EQ(rules(v, 0).at(1), "train_mode_layers");
    // Below the threshold: 24 % of the time in those operators is not advice.
    a.profile["ops"] = {op("aten::mkldnn_convolution", 24000), op("aten::addmm", 76000)};
    a.applied.mode = "eval";
    EXPECT_EQ(find(advise(runOf({a})), "fuse_for_inference"), nullptr);
    a.profile["ops"] = {op("aten::mkldnn_convolution", 25000), op("aten::addmm", 75000)};
    EXPECT_NE(find(advise(runOf({a})), "fuse_for_inference"), nullptr);
}

TEST(Advice, TrainModeWithoutBatchNormOrDropoutChangesNothing) {
    auto a = adviceArm("A", {{"mode", "train"}}, inferenceApplied({{"mode", "train"}}));
    a.profile = {{"iters", 1}, {"ops", {op("aten::addmm", 1000)}}};
    EXPECT_EQ(find(advise(runOf({a})), "train_mode_layers"), nullptr);
    a.profile = nullptr;  // no profile: said, with a prior
    const auto kept1 = advise(runOf({a}));
    const Advice* t = find(kept1, "train_mode_layers");
    ASSERT_NE(t, nullptr);
    EXPECT_FALSE(t->measured);
    // A training workload is meant to be in train mode.
    a.applied.workload = "train_step";
    EXPECT_EQ(find(advise(runOf({a})), "train_mode_layers"), nullptr);
}

TEST(Advice, AutogradOnlyWhereTheOutputRequiresGrad) {
    auto a = adviceArm("A", {{"grad", "enabled"}},
                 inferenceApplied({{"grad", "enabled"}, {"grad_state", {{"output_requires_grad", true}}}}));
    const auto kept2 = advise(runOf({a}));
    const Advice* g = find(kept2, "autograd_in_inference");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->arm_knobs, json({{"grad", "inference_mode"}}));
    // A frozen module's output does not require grad: autograd records nothing.
    if (!a.applied.grad_state) a.applied.grad_state.emplace();
    a.applied.grad_state->output_requires_grad = false;
    EXPECT_EQ(find(advise(runOf({a})), "autograd_in_inference"), nullptr);
}

TEST(Advice, OversubscriptionCountsEveryWorkersThreads) {
    auto a = adviceArm("A", {{"workers", 2}, {"intra_op_threads", 3}},
                 inferenceApplied({{"intra_op_threads", 3}, {"affinity", {0, 1}}, {"affinity_policy", "none"}}));
    a.workers = 2;
    a.worker_applied = {a.applied, a.applied};
    const auto kept3 = advise(runOf({a}));
    const Advice* o = find(kept3, "threads_oversubscribed");
    ASSERT_NE(o, nullptr);
    EXPECT_DOUBLE_EQ(o->value, 3.0);             // 6 threads / 2 cores
    EXPECT_NEAR(o->share, 1.0 - 2.0 / 6.0, 1e-12);
    EXPECT_EQ(o->change, json({{"affinity", "compact"}, {"intra_op_threads", 1}}));
    EXPECT_EQ(o->arm_knobs, json({{"affinity", "compact"}, {"intra_op_threads", 1}, {"workers", 2}}));
    // One worker of two threads on two cores is not oversubscribed.
    auto b = adviceArm("B", {{"intra_op_threads", 2}}, inferenceApplied({{"intra_op_threads", 2}, {"affinity", {0, 1}}}));
    EXPECT_EQ(find(advise(runOf({b})), "threads_oversubscribed"), nullptr);
}

TEST(Advice, PageFaultShareFromProcessesThatFaultAgainstThoseThatDoNot) {
    auto a = adviceArm("glibc", {{"allocator", "system"}}, inferenceApplied({{"allocator", "system"}}), 10.0, 0);
    a.processes.clear();
    // Process 0 faults (600/iter) at 15 ms; process 1 does not, at 10 ms.
    for (int p = 0; p < 2; ++p) {
        ProcessInfo info;
        info.replicate = p;
        info.fault_iters = 10;
        info.minor_faults = p == 0 ? 6000 : 0;
        a.processes.push_back(info);
        for (int i = 0; i < 10; ++i) a.samples.push_back({p, 10 * p + i, 1, 0, p == 0 ? 15'000'000 : 10'000'000, p});
    }
    const auto kept4 = advise(runOf({a}));
    const Advice* f = find(kept4, "page_faults");
    ASSERT_NE(f, nullptr);
    EXPECT_DOUBLE_EQ(f->value, 300.0);  // 6000 faults over 20 iterations of the arm
    EXPECT_TRUE(f->measured);
    EXPECT_NEAR(f->share, 1.0 - 10.0 / 15.0, 1e-12);
    // jemalloc is not told to use jemalloc.
    a.applied.allocator = "jemalloc";
    EXPECT_EQ(find(advise(runOf({a})), "page_faults"), nullptr);
}

TEST(Advice, Bf16SlowerThanItsSiblingIsTheMeasuredRatio) {
    auto fp32 = adviceArm("fp32", {{"grad", "inference_mode"}}, inferenceApplied(), 10.0);
    auto bf16 = adviceArm("bf16", {{"grad", "inference_mode"}, {"precision", "autocast_bf16"}},
                    inferenceApplied({{"precision", "autocast_bf16"}}), 12.0);
    const auto v = advise(runOf({fp32, bf16}));
    const Advice* s = find(v, "slower_than_fp32");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->arm, 1u);
    EXPECT_NEAR(s->value, (12.0e6 + 9.5) / (10.0e6 + 9.5), 1e-9);  // medians of i = 0..19 added
    EXPECT_NEAR(s->share, 1.0 - 1.0 / s->value, 1e-12);
    // 1.05x slower is under the 1.10 threshold; a sibling that differs in another knob is none.
    bf16 = adviceArm("bf16", {{"grad", "inference_mode"}, {"precision", "autocast_bf16"}},
               inferenceApplied({{"precision", "autocast_bf16"}}), 10.5);
    EXPECT_EQ(find(advise(runOf({fp32, bf16})), "slower_than_fp32"), nullptr);
    auto other = adviceArm("other", {{"grad", "no_grad"}}, inferenceApplied(), 10.0);
    bf16 = adviceArm("bf16", {{"grad", "inference_mode"}, {"precision", "autocast_bf16"}},
               inferenceApplied({{"precision", "autocast_bf16"}}), 20.0);
    // No sibling, a CPU without native bf16 (the environment's flags): a prior.
    const auto kept5 = advise(runOf({other, bf16}));
    const Advice* p = find(kept5, "slower_than_fp32");
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(p->measured);
    // ... and none on a CPU with avx512_bf16.
    bf16.environment["cpu_flags"] = {"avx512f", "avx512_bf16"};
    EXPECT_EQ(find(advise(runOf({other, bf16})), "slower_than_fp32"), nullptr);
}

TEST(Advice, VariableShapesComparesEachShapesFirstCallWithItsSteadyMedian) {
    // Three shapes cycling from 0 in every block; steady medians 2, 4, 8 ms; the warmup's first
    // calls of shapes 1 and 2 (warmup[1], warmup[2]) took 20 and 16 ms: 5x and 2x.
    auto a = adviceArm("shapes", {}, inferenceApplied({{"input_variants", 3}, {"jit_state", {{"profiling_executor", true}}}}),
                 1.0, 0);
    const double steady[] = {2e6, 4e6, 8e6};
    for (int b = 0; b < 2; ++b)
        for (int i = 0; i < 9; ++i) a.samples.push_back({b, 9 * b + i, 1, 0, std::int64_t(steady[i % 3]), 0});
    a.warmup_ns = {3'000'000, 20'000'000, 16'000'000, 2'000'000};
    const auto kept6 = advise(runOf({a}));
    const Advice* v = find(kept6, "variable_shapes");
    ASSERT_NE(v, nullptr);
    EXPECT_DOUBLE_EQ(v->value, 5.0);
    EXPECT_NEAR(v->share, ((20 - 4) + (16 - 8)) / 36.0, 1e-12);
    EXPECT_EQ(v->change, json({{"profiling_executor", false}}));
    EXPECT_EQ(v->tier, AdviceTier::Startup);
    // 2.9x is below the threshold.
    a.warmup_ns[1] = 11'600'000;
    EXPECT_EQ(find(advise(runOf({a})), "variable_shapes"), nullptr);
}

TEST(Advice, RankingTiersThenShareAndSuggestedArmsAreValidAndUnique) {
    auto a = adviceArm("A", {{"mode", "train"}, {"grad", "enabled"}},
                 inferenceApplied({{"mode", "train"}, {"grad", "enabled"}, {"affinity", {0, 1}},
                                   {"intra_op_threads", 2},
                                   {"jit_state", {{"profiling_executor", true}}}}));
    a.loaded = {{"first_forward_ms", 500.0}};  // 50x the 10 ms median: start-up advice
    a.processes[0].cpu_ms = 100;
    a.processes[0].cpu_wall_ms = 200;  // half a core of two: 25 % use, throughput advice
    a.profile = {{"iters", 1}, {"ops", {op("aten::mkldnn_convolution", 8000), op("aten::native_batch_norm", 1000)}}};
    RunResult r = runOf({a});
    r.preset_json = {{"name", "p"}, {"model", "resnet18"}, {"arms", {{{"name", "A"}, {"knobs", knobsJson(a)}}}}};
    const auto v = advise(r);
    std::vector<AdviceTier> tiers;
    for (const auto& x : v) tiers.push_back(x.tier);
    EXPECT_TRUE(std::is_sorted(tiers.begin(), tiers.end()));
    const Advice* use = find(v, "batch_one_idle_cores");
    ASSERT_NE(use, nullptr);
    EXPECT_DOUBLE_EQ(use->value, 0.25);
    EXPECT_EQ(v.back().rule, "cold_start_profiling_executor");
    for (std::size_t i = 1; i < v.size(); ++i)
        if (v[i].tier == v[i - 1].tier) {
            EXPECT_GE(v[i - 1].share, v[i].share) << v[i].rule;
        }
    // The preset with suggested arms: the first advice per arm, named after the change.
    const json p = presetWithSuggestedArms(r, v);
    ASSERT_EQ(p["arms"].size(), 2u);
    EXPECT_EQ(p["arms"][1]["name"], "A + jit=freeze_optimize, mode=eval");
    EXPECT_EQ(p["arms"][1]["knobs"]["jit"], "freeze_optimize");
    const json j = adviceToJson(r, v);
    ASSERT_EQ(j.size(), v.size());
    EXPECT_EQ(j[0]["rank"], 1);
    EXPECT_EQ(j[0]["arm"], "A");
    EXPECT_EQ(j.back()["tier"], "start-up");
    EXPECT_NE(adviceText(r, v).find("A 1. Freeze and optimize"), std::string::npos) << adviceText(r, v);
    EXPECT_EQ(changeText({{"grad", "inference_mode"}, {"intra_op_threads", 1}}), "grad=inference_mode, intra_op_threads=1");
}

// The reference BLAS rule on hand-built arms (a real worker on the PyTorch wheel always reads
// back MKL: integration_advisor): the share is the profiled time of the operators that call
// BLAS, from 5 % on; without a profile a prior of 50 %, marked estimated; any other BLAS is
// silent.
TEST(Advice, ReferenceBlasShareIsTheProfiledTimeOfBlasOperators) {
    auto a = adviceArm("A", {{"grad", "inference_mode"}},
                 inferenceApplied({{"blas", "reference"}, {"blas_path", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"}}));
    a.profile = {{"iters", 2}, {"ops", {op("aten::addmm", 60000), op("aten::mm", 20000), op("aten::relu", 20000)}}};
    const auto advice = advise(runOf({a}));
    const Advice* b = find(advice, "reference_blas");
    ASSERT_NE(b, nullptr);
    EXPECT_NEAR(b->share, 80.0 / 100.0, 1e-12);
    EXPECT_TRUE(b->measured);
    EXPECT_TRUE(b->arm_knobs.is_null()) << "not a knob";
    EXPECT_NE(b->action.find("libopenblas0-openmp"), std::string::npos);
    EXPECT_NE(b->evidence.find("libblas.so.3"), std::string::npos);
    // Under 5 % of the profiled time: silent; at 5 %: advice.
    a.profile["ops"] = {op("aten::addmm", 4900), op("aten::relu", 95100)};
    EXPECT_EQ(find(advise(runOf({a})), "reference_blas"), nullptr);
    a.profile["ops"] = {op("aten::addmm", 5000), op("aten::relu", 95000)};
    EXPECT_NE(find(advise(runOf({a})), "reference_blas"), nullptr);
    // No profile: the prior, not measured.
    a.profile = json();
    const auto v = advise(runOf({a}));
    const Advice* prior = find(v, "reference_blas");
    ASSERT_NE(prior, nullptr);
    EXPECT_DOUBLE_EQ(prior->share, 0.5);
    EXPECT_FALSE(prior->measured);
    // MKL (the wheel's, static in libtorch_cpu) or OpenBLAS: nothing to say.
    for (const char* blas : {"mkl", "openblas"}) {
        a.applied.blas = blas;
        EXPECT_EQ(find(advise(runOf({a})), "reference_blas"), nullptr) << blas;
    }
}

// Issue 27: batch 1 on one intra-op thread of two cores leaves a core idle whatever the batch:
// the batching rule no longer blames the batch ("a batch gives every core work").
TEST(Advice, BatchOneOnFewerThreadsThanCoresIsNotTheBatchsFault) {
    auto a = adviceArm("one", {{"grad", "inference_mode"}}, inferenceApplied({{"affinity", {0, 1}}, {"affinity_policy", "none"}}));
    a.processes[0].cpu_ms = 100;
    a.processes[0].cpu_wall_ms = 200;  // one core of two busy: 50 % use
    EXPECT_EQ(find(advise(runOf({a})), "batch_one_idle_cores"), nullptr);
    a.applied.intra_op_threads = 2;
    const Advice* b = find(advise(runOf({a})), "batch_one_idle_cores");
    ASSERT_NE(b, nullptr);
    EXPECT_DOUBLE_EQ(b->value, 0.25);
}

// Issue 27: an arm on several threads whose processes are far apart is told intra_op_threads=1
// first, with the measured spread; one thread already, or processes that agree: nothing.
TEST(Advice, ProcessesFarApartOnSeveralThreadsRankOneThreadFirst) {
    auto a = adviceArm("default threads", {{"grad", "enabled"}, {"mode", "train"}},
                 inferenceApplied({{"grad", "enabled"}, {"mode", "train"}, {"intra_op_threads", 2},
                                   {"affinity", {0, 1}}}));
    a.samples.clear();
    a.processes.clear();
    const double medians[] = {1.0, 1.1, 100.0};  // ms: 100x apart
    int iter = 0;
    for (int p = 0; p < 3; ++p) {
        ProcessInfo info;
        info.replicate = p;
        info.fault_iters = 10;
        a.processes.push_back(info);
        for (int i = 0; i < 10; ++i)
            a.samples.push_back({p, iter++, 1, 0, std::int64_t(medians[p] * 1e6) + i, p});
    }
    const auto v = advise(runOf({a}));
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v.front().rule, "processes_disagree_threads");
    const Advice& t = v.front();
    EXPECT_EQ(t.change, json({{"intra_op_threads", 1}}));
    EXPECT_NEAR(t.value, 100.0, 1e-3);  // slowest / fastest process median
    EXPECT_NEAR(t.share, 1 - 1 / t.value, 1e-12);
    EXPECT_TRUE(t.measured);
    EXPECT_NE(t.evidence.find("3 worker processes"), std::string::npos) << t.evidence;
    EXPECT_NE(t.evidence.find("apart) while each ran 2 intra-op threads on 2 allowed cores"), std::string::npos) << t.evidence;
    a.applied.intra_op_threads = 1;
    EXPECT_EQ(find(advise(runOf({a})), "processes_disagree_threads"), nullptr);
    a.applied.intra_op_threads = 2;
    for (std::size_t i = 0; i < a.samples.size(); ++i)  // they agree
        a.samples.setLatency(i, std::int64_t(1e6) + a.samples[i].iter % 10);
    EXPECT_EQ(find(advise(runOf({a})), "processes_disagree_threads"), nullptr);
}

namespace {
// An arm measured in 6 processes of 2 blocks of 10 samples: `ms` with a spread of +-2 %.
ArmResult spreadArm(const std::string& name, json knobs, json applied, double ms) {
    auto a = adviceArm(name, knobs, applied, ms, 0);
    a.processes.clear();
    for (int p = 0; p < 6; ++p) {
        ProcessInfo info;
        info.replicate = p;
        info.fault_iters = 20;
        a.processes.push_back(info);
        for (int i = 0; i < 20; ++i) {
            const double jitter = 1.0 + 0.02 * (((i * 7 + p * 3) % 11) - 5) / 5.0;
            a.samples.push_back({2 * p + i / 10, 20 * p + i, 1, 0, std::int64_t(ms * 1e6 * jitter), p});
        }
    }
    return a;
}

ArmResult gradArm(const std::string& name, const std::string& grad, double ms) {
    json applied = inferenceApplied({{"grad", grad}});
    if (grad == "enabled") applied["grad_state"] = {{"output_requires_grad", true}};
    return spreadArm(name, {{"grad", grad}}, applied, ms);
}
}  // namespace

// Issue 44: the resnet50 run measured inference_mode 1.12x faster than grad enabled, and the
// advice for the grad-enabled arm still said "grad=inference_mode, 5 % estimated". An arm that is
// the advised arm with the change applied measured it: the advice cites that comparison (the
// verdict's own figures), its share is 1 - 1/ratio, and it suggests no arm to add.
TEST(Advice, AChangeAnotherArmOfTheRunMeasuredIsCitedNotEstimated) {
    RunResult r = runOf({gradArm("grad enabled", "enabled", 11.2), gradArm("inference", "inference_mode", 10.0)});
    r.interleaved = true;
    const auto v = advise(r);
    const Advice* g = find(v, "autograd_in_inference");
    ASSERT_NE(g, nullptr);
    ASSERT_TRUE(g->measured_in_run.has_value());
    const auto verdict = compareArms(r);
    ASSERT_EQ(verdict.size(), 1u);
    ASSERT_TRUE(verdict[0].significant);
    EXPECT_EQ(g->measured_in_run->arm, "inference");
    EXPECT_DOUBLE_EQ(g->measured_in_run->ratio, verdict[0].ratio);  // > 1: inference is faster
    EXPECT_DOUBLE_EQ(g->measured_in_run->ci_low, verdict[0].ci_low);
    EXPECT_DOUBLE_EQ(g->measured_in_run->ci_high, verdict[0].ci_high);
    EXPECT_NEAR(g->measured_in_run->ratio, 1.12, 0.01);
    EXPECT_TRUE(g->measured);
    EXPECT_NEAR(g->share, 1.0 - 1.0 / verdict[0].ratio, 1e-12);
    EXPECT_EQ(g->evidence.rfind("measured in this run: grad=inference_mode 1.12x faster (arm inference", 0), 0u)
        << g->evidence;
    char ci[64];
    std::snprintf(ci, sizeof ci, "95 %% CI %.2f-%.2fx", verdict[0].ci_low, verdict[0].ci_high);
    EXPECT_NE(g->evidence.find(ci), std::string::npos) << g->evidence;
    EXPECT_TRUE(suggestedArm(r, *g).is_null());  // the arm is in the run already
    const std::string text = adviceText(r, v);
    EXPECT_EQ(text.find("estimated"), std::string::npos) << text;
    EXPECT_NE(text.find("measured in this run"), std::string::npos) << text;
    EXPECT_EQ(adviceToJson(r, v)[0]["measured_in_run"]["arm"], "inference");

    // The baseline is the faster arm: the same comparison read the other way round.
    RunResult flipped = runOf({r.arms[1], r.arms[0]});
    flipped.interleaved = true;
    const auto fv = advise(flipped);
    const Advice* f = find(fv, "autograd_in_inference");
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(f->measured_in_run.has_value());
    const auto fc = compareArms(flipped);
    EXPECT_DOUBLE_EQ(f->measured_in_run->ratio, 1 / fc[0].ratio);
    EXPECT_DOUBLE_EQ(f->measured_in_run->ci_low, 1 / fc[0].ci_high);

    // Neither is the baseline: the same bootstrap on the pair.
    RunResult three = runOf({gradArm("other", "no_grad", 10.0), r.arms[0], r.arms[1]});
    three.interleaved = true;
    const auto tv = advise(three);
    const Advice* t = find(tv, "autograd_in_inference");
    ASSERT_NE(t, nullptr);
    ASSERT_TRUE(t->measured_in_run.has_value());
    const auto pair = stats::compare("grad enabled", three.arms[1].blocked(), "inference", three.arms[2].blocked());
    EXPECT_DOUBLE_EQ(t->measured_in_run->ratio, pair.ratio);
    EXPECT_DOUBLE_EQ(t->measured_in_run->p_value, pair.p_value);
}

TEST(Advice, AChangeTheRunMeasuredNoFasterIsNoAdviceAndOtherArmsAreNoMeasurement) {
    // inference_mode measured as fast as grad enabled: the advice the prior would give is dropped.
    RunResult same = runOf({gradArm("grad enabled", "enabled", 10.0), gradArm("inference", "inference_mode", 10.0)});
    same.interleaved = true;
    ASSERT_FALSE(compareArms(same)[0].significant);
    EXPECT_EQ(find(advise(same), "autograd_in_inference"), nullptr);
    // ... and measured slower.
    RunResult slower = runOf({gradArm("grad enabled", "enabled", 10.0), gradArm("inference", "inference_mode", 11.0)});
    slower.interleaved = true;
    EXPECT_EQ(find(advise(slower), "autograd_in_inference"), nullptr);
    // An arm that differs in another knob too did not measure the change alone: the estimate.
    auto eval = spreadArm("jemalloc + inference", {{"grad", "inference_mode"}, {"allocator", "jemalloc"}},
                          inferenceApplied(), 8.0);
    auto enabled = gradArm("grad enabled", "enabled", 11.2);
    RunResult other = runOf({enabled, eval});
    other.interleaved = true;
    const auto ov = advise(other);
    const Advice* g = find(ov, "autograd_in_inference");
    ASSERT_NE(g, nullptr);
    EXPECT_FALSE(g->measured_in_run.has_value());
    EXPECT_FALSE(g->measured);
    EXPECT_DOUBLE_EQ(g->share, 0.05);
    EXPECT_FALSE(suggestedArm(other, *g).is_null());
    // The same knobs on another model file measured another model, not the change.
    auto onOther = gradArm("inference", "inference_mode", 10.0);
    onOther.model = "/models/resnet50.pt";
    enabled.model = "/models/resnet18.pt";
    RunResult models = runOf({enabled, onOther});
    models.interleaved = true;
    const auto mv = advise(models);
    g = find(mv, "autograd_in_inference");
    ASSERT_NE(g, nullptr);
    EXPECT_FALSE(g->measured_in_run.has_value());
}
