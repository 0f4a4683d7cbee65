#pragma once
// A synthetic run of known truth for the report tests that need no worker (fast): three arms
// with long names, a long input shape, a batch-size sweep with a failed size, page faults per
// process, context-switch counters in the metric ticks, applied settings and an environment.
#include "pitlane/results/run_result.h"

#include <QString>

namespace report_test {

// The <figure id="ID"> element of a report's HTML, up to its </figure>; empty when there is none.
inline QString figure(const QString& html, const QString& id) {
    const int at = html.indexOf(QStringLiteral("<figure id=\"%1\">").arg(id));
    if (at < 0) return {};
    return html.mid(at, html.indexOf(QStringLiteral("</figure>"), at) - at);
}

inline pitlane::results::ArmResult sampleArm(const std::string& name, int index,
                                             std::vector<int> batchSizes) {
    using namespace pitlane;
    results::ArmResult a;
    a.name = name;
    a.status = results::kOk;
    a.batch_sizes = batchSizes;
    a.batch_size = batchSizes.front();
    nlohmann::json knobs = {{"grad", index ? "inference_mode" : "enabled"}, {"intra_op_threads", 1}};
    if (batchSizes.size() > 1) knobs["batch_size"] = batchSizes;
    results::setKnobsFromJson(a, knobs);
    a.applied = protocol::appliedFromFields(nlohmann::json::object({{"grad", index ? "inference_mode" : "enabled"},
                 {"intra_op_threads", 1},
                 {"allocator", "system"},
                 {"blas", "openblas"},
                 {"parallel_info", "ATen/Parallel:\n\tat::get_num_threads() : 1\n\tOpenMP 201511"},
                 {"cudnn", {{"enabled", true}, {"benchmark", false}}},
                 {"flush_denormal_state", {{"denormal_times_one", 1.0000002153053333e-39}}},
                 {"allocator_path", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"}}));
    a.environment = {{"cpu", "AMD EPYC 7B13"}, {"cores", 2},         {"libtorch", "1.13.1"},
                     {"kernel", "Linux 6.1"},   {"pid", 100 + index}};
    a.loaded = {{"parameters", 11689512},
                {"file_size_bytes", 46800000},
                {"load_ms", 210.5},
                {"first_forward_ms", 62.9},
                {"input",
                 {{{"dtype", "float32"}, {"shape", {batchSizes.front(), 3, 224, 224}}},
                  {{"dtype", "int64"}, {"shape", {batchSizes.front(), 77, 1024, 4096}}}}}};
    int iter = 0;
    for (int p = 0; p < 2; ++p) {
        results::ProcessInfo info;
        info.replicate = p;
        info.pid = 4000 + 10 * index + p;
        info.load_ms = 200 + p;
        info.minor_faults = 30 * (index + 1);  // per process, over 60 iterations
        info.major_faults = p;
        info.fault_iters = 60;
        a.processes.push_back(info);
        for (int bs : batchSizes)
            for (int b = 0; b < 2; ++b)
                for (int k = 0; k < 15; ++k, ++iter)
                    a.samples.push_back({2 * p + b, iter, bs, 0,
                                         std::int64_t((1 + index) * 1e6 * (1 + 0.5 * bs)) +
                                             1000 * ((k * 7) % 13),
                                         p});
        // Two metric ticks per process: 90 voluntary and 30 involuntary switches in between.
        for (int t = 0; t < 2; ++t) {
            results::MetricTick m;
            m.t_ms = 100.0 * (2 * p + t);
            m.process = p;
            m.rss_bytes = 100 << 20;
            m.raw = {{"ctx_voluntary", 1000 + 90 * t}, {"ctx_involuntary", 50 + 30 * t}};
            a.metrics.push_back(m);
        }
    }
    return a;
}

// Arms "train_grad_enabled_baseline", "eval_inference_mode_frozen_optimized" and
// "sweep_inference_mode" (batch sizes 1, 8, 64, 256; 256 failed out of memory).
inline pitlane::results::RunResult sampleRun() {
    using namespace pitlane;
    results::RunResult r;
    r.preset.name = "resnet18: long arm names, a long input and a sweep";
    r.preset.model = "resnet18";
    r.started_at = "2026-01-01T00:00:00Z";
    r.arms.push_back(sampleArm("train_grad_enabled_baseline", 0, {1}));
    r.arms.push_back(sampleArm("eval_inference_mode_frozen_optimized", 1, {1}));
    auto sweep = sampleArm("sweep_inference_mode", 2, {1, 8, 64});
    sweep.batch_sizes.push_back(256);
    sweep.sweep_failures[256] = {"out_of_memory", "CPU out of memory at batch 256", {}};
    r.arms.push_back(std::move(sweep));
    return r;
}

}  // namespace report_test
