// Every knob of one worker, applied by the real pitlane-worker and checked in what its `applied`
// event reads back from torch and the OS (or in the error / warning it must give instead).
// One pool of workers, each configured with a different set of knobs, started together: every
// test below reads the worker(s) it needs from the pool. A knob is proven when its non-default
// value reads back and the baseline worker (defaults) reads back something else.
#include "knob_harness.h"

#include "pitlane/protocol/protocol.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <tuple>

namespace {

using namespace pitlane::knobtest;
using pitlane::itest::allowedCores;
using pitlane::itest::spinUntil;

// The core the one-core affinity list pins to: 1 when allowed, else the last allowed core.
int listCore() {
    const auto cores = allowedCores();
    if (std::find(cores.begin(), cores.end(), 1) != cores.end()) return 1;
    return cores.empty() ? 0 : cores.back();
}

int sysInt(const std::string& path, int def) {
    std::ifstream f(path);
    int v = def;
    return (f >> v) ? v : def;
}

// DESIGN.md's policies, computed here from sysfs independently of the engine: "compact" takes
// cores in (package, core, cpu) order, "spread" takes the first SMT thread of every core first.
std::vector<int> policyCores(const std::string& policy, int count) {
    struct C {
        int cpu, pkg, core, smt;
    };
    std::vector<C> cs;
    std::map<std::pair<int, int>, int> seen;
    for (int cpu : allowedCores()) {
        const auto base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        C c{cpu, sysInt(base + "physical_package_id", 0), sysInt(base + "core_id", cpu), 0};
        c.smt = seen[{c.pkg, c.core}]++;
        cs.push_back(c);
    }
    if (policy == "compact")
        std::sort(cs.begin(), cs.end(), [](const C& a, const C& b) {
            return std::tie(a.pkg, a.core, a.cpu) < std::tie(b.pkg, b.core, b.cpu);
        });
    else
        std::sort(cs.begin(), cs.end(), [](const C& a, const C& b) {
            return std::tie(a.smt, a.core, a.pkg, a.cpu) < std::tie(b.smt, b.core, b.pkg, b.cpu);
        });
    std::vector<int> out;
    for (int i = 0; i < count && i < int(cs.size()); ++i) out.push_back(cs[i].cpu);
    std::sort(out.begin(), out.end());
    return out;
}

// The op a TorchScript error points at: the call on the last "<--- HERE" line of the serialized
// traceback (e.g. "linear" in "return torch.linear(input, weight, bias)").
std::string tracebackOp(const std::string& torchText) {
    const auto original = torchText.find("Traceback of TorchScript, original code");
    const auto serialized = torchText.substr(0, original);
    const auto here = serialized.rfind("<--- HERE");
    if (here == std::string::npos) return "";
    const auto markerLineStart = serialized.rfind('\n', here);
    if (markerLineStart == std::string::npos || markerLineStart == 0) return "";
    const auto callLineStart = serialized.rfind('\n', markerLineStart - 1);
    const auto callLine = serialized.substr(callLineStart + 1, markerLineStart - callLineStart - 1);
    std::smatch m;
    static const std::regex call(R"((?:torch|ops\.\w+)\.(\w+)\s*\()");
    return std::regex_search(callLine, m, call) ? m[1].str() : "";
}

// Does an error event name the op that failed, as DESIGN.md asks ("an error event naming the
// op")? Either the op of the TorchScript traceback or the kernel torch quotes.
bool namesTheOp(const json& error, std::string* op) {
    const auto message = error.value("message", std::string());
    const auto torchText =
        error.contains("detail") ? error["detail"].value("torch", message) : message;
    *op = tracebackOp(torchText);
    if (!op->empty() && message.find(*op) != std::string::npos) return true;
    std::smatch m;
    static const std::regex kernel(R"rx("(\w+)" not implemented for)rx");
    if (std::regex_search(message, m, kernel)) {
        *op = m[1].str();
        return true;
    }
    return false;
}

class KnobReadback : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        const int core = listCore();
        requests_ = new std::vector<WorkerRequest>({
            {"baseline", "mlp", {{"intra_op_threads", 1}}},
            {"cuda", "mlp", {{"device", "cuda:0"}}},
            {"train",
             "mlp",
             {{"mode", "train"},
              {"grad", "enabled"},
              {"intra_op_threads", 1},
              {"batch_size", 4},
              {"profiling_executor", true},
              {"fuser", true},
              {"affinity", "compact"}}},
            {"no_grad",
             "mlp",
             {{"mode", "eval"},
              {"grad", "no_grad"},
              {"intra_op_threads", 3},
              {"inter_op_threads", 2},
              {"host_sync_each_iter", true},
              {"input_on_host", true}}},
            {"inference",
             "mlp",
             {{"grad", "inference_mode"},
              {"jit", "freeze"},
              {"intra_op_threads", 1},
              {"affinity", {core}}}},
            {"mobilenet_optimized",
             "mobilenet_v3_small",
             {{"jit", "freeze_optimize"}, {"grad", "no_grad"}, {"intra_op_threads", 1}}},
            {"mobilenet_channels_last",
             "mobilenet_v3_small",
             {{"memory_format", "channels_last"}, {"grad", "no_grad"}, {"intra_op_threads", 1}}},
            {"bf16_mlp",
             "mlp",
             {{"precision", "autocast_bf16"}, {"intra_op_threads", 1}, {"affinity", "spread"}}},
            {"bf16_transformer",
             "transformer",
             {{"precision", "autocast_bf16"},
              {"mode", "eval"},
              {"grad", "inference_mode"},
              {"intra_op_threads", 1}}},
            {"half_mlp", "mlp", {{"precision", "half"}, {"intra_op_threads", 1}}},
            {"cudnn",
             "mlp",
             {{"cudnn_enabled", false},
              {"cudnn_benchmark", true},
              {"cudnn_deterministic", true},
              {"allow_tf32", false}}},
            {"tf32_on", "mlp", {{"allow_tf32", true}}},
            {"executor_off",
             "mlp",
             {{"profiling_executor", false}, {"fuser", false}, {"intra_op_threads", 1}}},
            {"channels_last_2d",
             "mlp",
             {{"memory_format", "channels_last"}, {"intra_op_threads", 1}}},
            {"flush_denormal", "mlp", {{"flush_denormal", true}, {"intra_op_threads", 2}}},
            {"train_step", "mlp", {{"workload", "train_step"}, {"intra_op_threads", 1}}},
            {"train_step_no_params", "tiny_probe", {{"workload", "train_step"}}},
            {"train_step_inference_mode",
             "mlp",
             {{"workload", "train_step"}, {"grad", "inference_mode"}}},
        });
        pool_ = new std::map<std::string, ConfiguredWorker>(configureAll(*requests_));
    }
    static void TearDownTestSuite() {
        for (auto& [label, w] : *pool_)
            if (!w.driver->exited())
                w.driver->process().send(pitlane::protocol::makeCommand("quit"));
        spinUntil(
            [] {
                return std::all_of(pool_->begin(), pool_->end(),
                                   [](const auto& kv) { return kv.second.driver->exited(); });
            },
            10000);
        delete pool_;
        pool_ = nullptr;
        delete requests_;
        requests_ = nullptr;
    }

    // The applied event of a pool worker; fails the test when it was an error.
    static json applied(const std::string& label) {
        const auto& w = pool_->at(label);
        EXPECT_TRUE(w.ok()) << label << ": " << w.reply.dump();
        return w.ok() ? w.reply : json::object();
    }
    static const ConfiguredWorker& worker(const std::string& label) { return pool_->at(label); }

    static std::map<std::string, ConfiguredWorker>* pool_;
    static std::vector<WorkerRequest>* requests_;
};

std::map<std::string, ConfiguredWorker>* KnobReadback::pool_ = nullptr;
std::vector<WorkerRequest>* KnobReadback::requests_ = nullptr;

TEST_F(KnobReadback, DeviceCudaOnThisCpuBuildIsDeviceUnavailable) {
    const auto& w = worker("cuda");
    if (w.hello["environment"].value("cuda_available", false))
        GTEST_SKIP() << "this libtorch has CUDA: cuda:0 is a real device here";
    EXPECT_EQ(w.reply.value("type", ""), "error");
    EXPECT_EQ(w.reply.value("code", ""), "device_unavailable");
    EXPECT_NE(w.reply.value("message", "").find("cuda:0"), std::string::npos) << w.reply.dump();
    EXPECT_EQ(w.reply["detail"].value("knob", ""), "device");
    EXPECT_EQ(applied("baseline")["device"], "cpu");
}

TEST_F(KnobReadback, CudaGraphIsRejectedOnCpuByValidationAndByTheWorker) {
    // The preset parser rejects it, naming the field ...
    try {
        pitlane::spec::parseKnobs({{"cuda_graph", true}}, "<test>", "arms[0].knobs");
        ADD_FAILURE() << "cuda_graph on cpu was accepted";
    } catch (const pitlane::spec::SpecError& e) {
        EXPECT_EQ(e.field(), "arms[0].knobs.cuda_graph");
        EXPECT_NE(e.reason().find("CUDA"), std::string::npos) << e.reason();
    }
    // ... and so does the worker if a configure command carries it anyway (the worker whose
    // configure failed on the device stays alive and can be configured again).
    auto& w = *worker("cuda").driver;
    auto cmd = pitlane::protocol::makeCommand("configure");
    cmd["arm"] = {{"name", "cuda_graph"},
                  {"model_path", modelPath("mlp")},
                  {"input", modelInput("mlp")},
                  {"knobs", {{"cuda_graph", true}}}};
    const json ev = sendAndWait(w, cmd, {"applied", "error"});
    EXPECT_EQ(ev.value("type", ""), "error") << ev.dump();
    EXPECT_EQ(ev.value("code", ""), "bad_knob") << ev.dump();
    EXPECT_EQ(ev["detail"].value("field", ""), "knobs.cuda_graph") << ev.dump();
}

TEST_F(KnobReadback, AutocastFp16IsRejectedOnCpuByValidation) {
    try {
        pitlane::spec::parseKnobs({{"precision", "autocast_fp16"}}, "<test>", "knobs");
        ADD_FAILURE() << "autocast_fp16 on cpu was accepted";
    } catch (const pitlane::spec::SpecError& e) {
        EXPECT_EQ(e.field(), "knobs.precision");
        EXPECT_NE(e.reason().find("autocast_bf16"), std::string::npos) << e.reason();
    }
}

TEST_F(KnobReadback, ModeTrainAndEval) {
    EXPECT_EQ(applied("train")["mode"], "train");
    EXPECT_EQ(applied("no_grad")["mode"], "eval");
    EXPECT_EQ(applied("baseline")["mode"], "eval");  // the default
}

TEST_F(KnobReadback, GradThreeWays) {
    const json enabled = applied("train"), noGrad = applied("no_grad"), inf = applied("inference");
    EXPECT_EQ(enabled["grad"], "enabled");
    EXPECT_EQ(enabled["grad_state"]["output_requires_grad"], true);
    EXPECT_EQ(enabled["grad_state"]["output_is_inference"], false);
    EXPECT_EQ(noGrad["grad"], "no_grad");
    EXPECT_EQ(noGrad["grad_state"]["grad_mode_enabled"], false);
    EXPECT_EQ(noGrad["grad_state"]["output_requires_grad"], false);
    EXPECT_EQ(noGrad["grad_state"]["output_is_inference"], false);
    EXPECT_EQ(inf["grad"], "inference_mode");
    EXPECT_EQ(inf["grad_state"]["inference_mode_enabled"], true);
    EXPECT_EQ(inf["grad_state"]["output_requires_grad"], false);
    EXPECT_EQ(inf["grad_state"]["output_is_inference"], true);
}

TEST_F(KnobReadback, JitNoneAndFreezeOnMlp) {
    const json none = applied("baseline"), frozen = applied("inference");
    EXPECT_EQ(none["jit"], "none");
    EXPECT_EQ(none["jit_state"]["frozen"], false);
    EXPECT_GT(none["jit_state"]["getattr_nodes"].get<int>(), 0)
        << "as loaded, forward reads its submodules through GetAttr";
    EXPECT_EQ(frozen["jit"], "freeze");
    EXPECT_EQ(frozen["jit_state"]["frozen"], true);
    EXPECT_EQ(frozen["jit_state"]["getattr_nodes"], 0);
    EXPECT_EQ(frozen["jit_state"]["mkldnn_nodes"], 0) << "freeze alone does not convert to MKLDNN";
    // Frozen means the weights became graph constants: none is left on the module.
    EXPECT_EQ(frozen["jit_state"].value("remaining_parameters", -1), 0);
    EXPECT_EQ(none["jit_state"].value("remaining_parameters", -1), 399370);
    const json loaded = worker("inference").loaded();
    EXPECT_TRUE(loaded.contains("freeze_ms"));
    EXPECT_FALSE(loaded.contains("optimize_ms"));
}

TEST_F(KnobReadback, JitFreezeOptimizeOnMobilenet) {
    const json opt = applied("mobilenet_optimized"), none = applied("mobilenet_channels_last");
    EXPECT_EQ(opt["jit"], "freeze_optimize");
    EXPECT_EQ(opt["jit_state"]["frozen"], true);
    EXPECT_EQ(opt["jit_state"]["getattr_nodes"], 0);
    EXPECT_EQ(opt["jit_state"].value("remaining_parameters", -1), 0);
    // As loaded, mobilenet's forward is one call: no GetAttr, yet nothing is frozen.
    EXPECT_EQ(none["jit_state"]["frozen"], false);
    EXPECT_GT(none["jit_state"].value("remaining_parameters", -1), 0);
    // Freezing inlines every submodule call into forward's graph.
    EXPECT_GT(opt["jit_state"]["graph_nodes"].get<int>(),
              10 * none["jit_state"]["graph_nodes"].get<int>());
    // optimize_for_inference converts convolutions to MKLDNN when this libtorch has it.
    if (worker("mobilenet_optimized").hello["environment"].value("mkldnn", false))
        EXPECT_GT(opt["jit_state"]["mkldnn_nodes"].get<int>(), 0);
    else
        EXPECT_EQ(opt["jit_state"]["mkldnn_nodes"], 0);
    EXPECT_EQ(none["jit"], "none");
    EXPECT_EQ(none["jit_state"]["mkldnn_nodes"], 0);
    const json loaded = worker("mobilenet_optimized").loaded();
    EXPECT_TRUE(loaded.contains("freeze_ms"));
    EXPECT_TRUE(loaded.contains("optimize_ms"));
}

TEST_F(KnobReadback, PrecisionFp32IsTheDefault) {
    const json a = applied("baseline");
    EXPECT_EQ(a["precision"], "fp32");
    EXPECT_EQ(a["precision_state"]["output_dtype"], "float32");
    EXPECT_EQ(a["precision_state"]["autocast"]["cpu_enabled"], false);
}

TEST_F(KnobReadback, PrecisionAutocastBf16OnMlpGivesBfloat16Output) {
    const json a = applied("bf16_mlp");
    EXPECT_EQ(a["precision"], "autocast_bf16");
    EXPECT_EQ(a["precision_state"]["output_dtype"], "bfloat16");
    EXPECT_EQ(a["precision_state"]["autocast"]["cpu_enabled"], true);
    EXPECT_EQ(a["precision_state"]["autocast"]["cpu_dtype"], "bfloat16");
    EXPECT_EQ(a["precision_state"]["autocast"]["cuda_enabled"], false);  // cpu device: CPU autocast
    EXPECT_EQ(worker("bf16_mlp").loaded()["output"]["dtype"], "bfloat16");
    // Autocast stays on for the measured iterations.
    EXPECT_EQ(worker("bf16_mlp").driver->run(0, 3).value("type", ""), "block_done");
}

// Either bf16 really runs or the arm ends with an error that names the op without a bf16 kernel
// (libtorch 1.13: the fused encoder fast path in eval + inference_mode). On 2.x it runs: the
// matrix products in bfloat16, the final LayerNorm in float32 (autocast's fp32 list), so the
// output is float32 and the evidence is the operators' outputs, counted in the read-back.
TEST_F(KnobReadback, PrecisionAutocastBf16OnTransformerIsReportedHonestly) {
    const auto& w = worker("bf16_transformer");
    if (w.ok()) {
        EXPECT_EQ(w.reply["precision"], "autocast_bf16");
        const json& st = w.reply["precision_state"];
        EXPECT_EQ(st["autocast"]["cpu_enabled"], true);
        ASSERT_TRUE(st["op_output_dtypes"].is_object()) << st.dump();
        EXPECT_GT(st["op_output_dtypes"].value("bfloat16", 0), 0) << st.dump();
        EXPECT_TRUE(st["output_dtype"] == "bfloat16" || st["output_dtype"] == "float32") << st.dump();
        return;
    }
    EXPECT_EQ(w.reply.value("code", ""), "unsupported_dtype") << w.reply.dump();
    std::string op;
    EXPECT_TRUE(namesTheOp(w.reply, &op))
        << "the error message does not name the op that has no bf16 kernel (the traceback "
           "points at \""
        << op << "\"): " << w.reply.value("message", "");
}

TEST_F(KnobReadback, PrecisionHalfIsReportedHonestly) {
    const auto& w = worker("half_mlp");
    if (w.ok()) {
        EXPECT_EQ(w.reply["precision"], "half");
        EXPECT_EQ(w.reply["precision_state"]["output_dtype"], "float16");
        return;
    }
    EXPECT_EQ(w.reply.value("code", ""), "unsupported_dtype") << w.reply.dump();
    std::string op;
    EXPECT_TRUE(namesTheOp(w.reply, &op)) << w.reply.value("message", "");
    EXPECT_NE(w.reply.value("message", "").find("half"), std::string::npos)
        << "the message names the knob value";
}

TEST_F(KnobReadback, MemoryFormatChannelsLastOnMobilenet) {
    EXPECT_EQ(applied("mobilenet_channels_last")["memory_format"], "channels_last");
    EXPECT_EQ(applied("mobilenet_optimized")["memory_format"], "contiguous");  // the default
}

// A 2-D input has no channels_last layout: the knob cannot be honoured, so a warning must say so
// (DESIGN.md: nothing is silently ignored).
TEST_F(KnobReadback, MemoryFormatChannelsLastOnA2dInputWarns) {
    EXPECT_EQ(applied("channels_last_2d")["memory_format"], "contiguous");
    bool warned = false;
    for (const auto& w : worker("channels_last_2d").events("warning"))
        warned |= w.value("message", "").find("memory_format") != std::string::npos ||
                  w.value("message", "").find("channels_last") != std::string::npos;
    EXPECT_TRUE(warned) << "channels_last on the mlp's [1, 256] input was silently not applied";
}

// Wherever a worker reads back another value than the one asked for, an event names the knob.
TEST_F(KnobReadback, NoKnobReadsBackDifferentlyWithoutAWarning) {
    for (const auto& r : *requests_) {
        const auto& w = worker(r.label);
        if (!w.ok()) continue;  // an error names its cause (tested above)
        for (const auto& [knob, asked] : r.knobs.items()) {
            if (!w.reply.contains(knob) || knob == "affinity" || knob == "batch_size") continue;
            const json got = w.reply[knob];
            if (got == asked) continue;
            bool named = false;
            for (const auto& ev : w.events("warning"))
                named |=
                    ev.value("message", "").find(knob) != std::string::npos ||
                    (asked.is_string() &&
                     ev.value("message", "").find(asked.get<std::string>()) != std::string::npos);
            EXPECT_TRUE(named) << r.label << ": " << knob << " asked " << asked.dump()
                               << ", read back " << got.dump() << ", and no warning names it";
        }
    }
}

TEST_F(KnobReadback, CudnnAndTf32FlagsReadBackWithACudaOnlyWarning) {
    const json a = applied("cudnn"), base = applied("baseline");
    // Every flag set to the opposite of torch's default.
    // (cuBLAS's TF32 flag defaults to off, cuDNN's to on; the allow_tf32 knob sets both.)
    EXPECT_EQ(base["cudnn"], json({{"enabled", true},
                                   {"benchmark", false},
                                   {"deterministic", false},
                                   {"allow_tf32", true},
                                   {"allow_tf32_cublas", false}}));
    EXPECT_EQ(a["cudnn"], json({{"enabled", false},
                                {"benchmark", true},
                                {"deterministic", true},
                                {"allow_tf32", false},
                                {"allow_tf32_cublas", false}}));
    EXPECT_EQ(applied("tf32_on")["cudnn"]["allow_tf32_cublas"], true);
    const auto warned = worker("cudnn").warnings("cuda_only_knob");
    ASSERT_EQ(warned.size(), 1u);
    EXPECT_NE(warned[0].value("message", "").find("cuDNN"), std::string::npos);
    EXPECT_TRUE(worker("baseline").warnings("cuda_only_knob").empty());
}

// flush_denormal is set on the timing thread and on every intra-op thread, read back from each
// thread's MXCSR, and its effect measured: a denormal times one is zero only when flushed.
TEST_F(KnobReadback, FlushDenormalReadsBackFromEveryThreadAndFlushes) {
    const json on = applied("flush_denormal"), base = applied("baseline");
    EXPECT_EQ(base["flush_denormal"], false);
    EXPECT_GT(base["flush_denormal_state"]["denormal_times_one"].get<double>(), 0.0)
        << "torch's default keeps denormals";
    EXPECT_EQ(on["flush_denormal"], true) << on["flush_denormal_state"].dump();
    EXPECT_EQ(on["flush_denormal_state"]["denormal_times_one"].get<double>(), 0.0);
    if (on["flush_denormal_state"].contains("threads_checked")) {  // x86: MXCSR of each thread
        EXPECT_EQ(on["flush_denormal_state"]["threads_checked"], 3);  // main + 2 intra-op
        EXPECT_EQ(on["flush_denormal_state"]["threads_flushing"], 3);
        EXPECT_EQ(base["flush_denormal_state"]["threads_flushing"], 0);
    }
    EXPECT_TRUE(worker("flush_denormal").warnings("flush_denormal_partial").empty());
}

// workload train_step: the first iteration at configure is a whole training step, read back
// from what it did (grads existed, the SGD step changed every parameter, grads set to None);
// the default inference forward updates nothing.
TEST_F(KnobReadback, WorkloadTrainStepUpdatesTheParametersAndInferenceDoesNot) {
    const json train = applied("train_step"), inf = applied("baseline");
    EXPECT_EQ(train["workload"], "train_step") << train["workload_state"].dump();
    const json& ts = train["workload_state"];
    EXPECT_EQ(ts["parameters"], 6) << "3 linear layers: weight + bias each";
    EXPECT_EQ(ts["parameters_with_grad"], 6);
    EXPECT_EQ(ts["parameters_updated"], 6);
    EXPECT_EQ(ts["grads_cleared"], true);
    EXPECT_EQ(ts["lr"], 1e-3);
    ASSERT_TRUE(ts["loss_first"].is_number()) << ts.dump();
    EXPECT_TRUE(std::isfinite(ts["loss_first"].get<double>()));
    EXPECT_EQ(train["grad"], "enabled");
    EXPECT_EQ(train["mode"], "eval") << "train_step leaves the mode to the mode knob";

    EXPECT_EQ(inf["workload"], "inference");
    const json& is = inf["workload_state"];
    EXPECT_EQ(is["parameters"], 6);
    EXPECT_EQ(is["parameters_with_grad"], 0);
    EXPECT_EQ(is["parameters_updated"], 0);
    EXPECT_TRUE(is["loss_first"].is_null());
    // The gradients of all 399370 parameters (float32) were alive at once in the train step.
    const auto peakTrain = ts["tensor_peak_bytes"].get<std::int64_t>(),
               peakInference = is["tensor_peak_bytes"].get<std::int64_t>();
    EXPECT_GE(peakTrain - peakInference, std::int64_t(399370) * 4 * 9 / 10)
        << "train " << ts.dump() << " inference " << is.dump();
    EXPECT_TRUE(worker("train_step").warnings("workload_not_applied").empty());
    // Measured iterations are train steps too.
    EXPECT_EQ(worker("train_step").driver->run(0, 3).value("type", ""), "block_done");
}

// A model without parameters has nothing to train: configure fails naming the knob.
TEST_F(KnobReadback, WorkloadTrainStepOnAModelWithoutParametersIsABadKnob) {
    const auto& w = worker("train_step_no_params");
    EXPECT_EQ(w.reply.value("type", ""), "error") << w.reply.dump();
    EXPECT_EQ(w.reply.value("code", ""), "bad_knob") << w.reply.dump();
    EXPECT_EQ(w.reply["detail"].value("knob", ""), "workload") << w.reply.dump();
    EXPECT_NE(w.reply.value("message", "").find("train_step"), std::string::npos);
}

// The worker re-validates: train_step under inference_mode is rejected naming the field.
TEST_F(KnobReadback, WorkloadTrainStepUnderInferenceModeIsRejectedByTheWorker) {
    const auto& w = worker("train_step_inference_mode");
    EXPECT_EQ(w.reply.value("type", ""), "error") << w.reply.dump();
    EXPECT_EQ(w.reply.value("code", ""), "bad_knob") << w.reply.dump();
    EXPECT_EQ(w.reply["detail"].value("field", ""), "knobs.workload") << w.reply.dump();
    EXPECT_NE(w.reply.value("message", "").find("grad"), std::string::npos) << w.reply.dump();
}

TEST_F(KnobReadback, ProfilingExecutorAndFuserOnAndOff) {
    const json off = applied("executor_off"), on = applied("train");
    EXPECT_EQ(off["jit_state"]["profiling_executor"], false);
    EXPECT_EQ(off["jit_state"]["fuser_nnc"], false);
    EXPECT_EQ(on["jit_state"]["profiling_executor"], true);
    EXPECT_EQ(on["jit_state"]["fuser_nnc"], true);
    // The simple executor still runs the model.
    EXPECT_EQ(worker("executor_off").driver->run(0, 3).value("type", ""), "block_done");
}

TEST_F(KnobReadback, SingleBatchSizeIsPrependedToTheInput) {
    const json a = applied("train");
    EXPECT_EQ(a["batch_size"], 4);
    EXPECT_EQ(a["input_shapes"], json::array({{4, 256}}));
    EXPECT_EQ(worker("train").loaded()["output"]["shape"], json::array({4, 10}));
    EXPECT_EQ(applied("baseline")["batch_size"], 1);
}

TEST_F(KnobReadback, IntraAndInterOpThreadsAreNotSwapped) {
    const json a = applied("no_grad");
    EXPECT_EQ(a["intra_op_threads"], 3);
    EXPECT_EQ(a["inter_op_threads"], 2);
    const json base = applied("baseline");
    EXPECT_EQ(base["intra_op_threads"], 1);
    EXPECT_EQ(base["inter_op_threads"], 1);
    // Unset intra_op_threads means one per allowed core.
    EXPECT_EQ(applied("cudnn")["intra_op_threads"].get<std::size_t>(), allowedCores().size());
    if (allowedCores().size() < 3) {
        EXPECT_FALSE(worker("no_grad").warnings("oversubscribed").empty());
    }
}

TEST_F(KnobReadback, AffinityNoneCompactSpreadAndList) {
    const json none = applied("baseline");
    EXPECT_EQ(none["affinity_policy"], "none");
    EXPECT_EQ(none["affinity"].get<std::vector<int>>(), allowedCores());
    // One intra-op thread: compact and spread pin to one core each, chosen by the policy.
    const json compact = applied("train"), spread = applied("bf16_mlp"),
               list = applied("inference");
    EXPECT_EQ(compact["affinity_policy"], "compact");
    EXPECT_EQ(compact["affinity"].get<std::vector<int>>(), policyCores("compact", 1));
    EXPECT_EQ(spread["affinity_policy"], "spread");
    EXPECT_EQ(spread["affinity"].get<std::vector<int>>(), policyCores("spread", 1));
    EXPECT_EQ(list["affinity_policy"], "list");
    EXPECT_EQ(list["affinity"], json::array({listCore()}));
    for (const json* a : {&compact, &spread, &list}) EXPECT_EQ((*a)["affinity_uniform"], true);
}

TEST_F(KnobReadback, HostSyncEachIterReadsBack) {
    EXPECT_EQ(applied("no_grad")["host_sync_each_iter"], true);
    EXPECT_EQ(applied("baseline")["host_sync_each_iter"], false);
    EXPECT_EQ(worker("no_grad").driver->run(0, 3).value("type", ""), "block_done");
}

TEST_F(KnobReadback, InputOnHostIsACudaOnlyKnobOnCpu) {
    // On the CPU the input already lives on the host: nothing is copied, the read-back says so
    // and a warning names the knob.
    EXPECT_EQ(applied("no_grad")["input_on_host"], false);
    EXPECT_EQ(applied("no_grad")["input_device"], "cpu");
    EXPECT_EQ(applied("no_grad")["input_pinned"], false);  // pinned only for a CUDA device
    const auto warned = worker("no_grad").warnings("cuda_only_knob");
    ASSERT_EQ(warned.size(), 1u);
    EXPECT_NE(warned[0].value("message", "").find("input_on_host"), std::string::npos);
}

}  // namespace
