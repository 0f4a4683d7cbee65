// The `profile` command (issue 14): a few iterations under libtorch's profiler, after the
// measured blocks and never inside them, so the profiler's overhead never touches a reported
// latency. Debian's libtorch 1.13 has no Kineto (torch.autograd.kineto_available() is False), so
// the legacy profiler records the CPU operators (with their input shapes); a libtorch without
// its header answers with an error naming why. The event carries the operator table (calls,
// self and total time, the most frequent input shapes) and a Chrome trace (Trace Event Format,
// complete "X" events) that Perfetto and chrome://tracing open.
#include "engine_impl.h"

#if __has_include(<torch/csrc/autograd/profiler_legacy.h>)
#include <torch/csrc/autograd/profiler_legacy.h>
#define PITLANE_LEGACY_PROFILER 1
#endif

#include <algorithm>
#include <map>

#include <unistd.h>

namespace pitlane::engine {

using namespace detail;

namespace {

std::string shapesText(const std::vector<std::vector<std::int64_t>>& shapes) {
    std::string out = "[";
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        out += i ? ", [" : "[";
        for (std::size_t k = 0; k < shapes[i].size(); ++k)
            out += (k ? ", " : "") + std::to_string(shapes[i][k]);
        out += "]";
    }
    return out + "]";
}

struct OpStats {
    std::int64_t calls = 0;
    double self_us = 0, total_us = 0;
    std::map<std::string, std::int64_t> shapes;  // input shapes -> calls
};

}  // namespace

bool Engine::profileBlock(const json& cmd) {
    auto& d = *impl_;
    if (!d.configured)
        return d.sink.error(code::kNotConfigured, "profile before a successful configure"), false;
#ifndef PITLANE_LEGACY_PROFILER
    (void)cmd;
    return d.sink.error(code::kBadCommand,
                        "profile: this libtorch has no legacy profiler header "
                        "(torch/csrc/autograd/profiler_legacy.h)"),
           false;
#else
    namespace prof = torch::autograd::profiler;
    const int iters = cmd.value("iters", 5);
    if (iters < 1 || iters > 1000)
        return d.sink.error(code::kBadCommand, "profile: iters must be in [1, 1000]"), false;
    const int bs = cmd.value("batch_size", d.knobs.batch_size.front());
    const auto* variants = d.inputsFor(bs);
    if (!variants) return false;
    prof::thread_event_lists lists;
    const auto start = Clock::now();
    try {
        GradScope g(d.knobs.grad);
        const bool train = d.trainStepWorkload();
        AutocastScope ac(train ? std::string("fp32") : d.knobs.precision, d.device.is_cuda());
        prof::enableProfilerLegacy(torch::profiler::impl::ProfilerConfig(
            torch::profiler::impl::ProfilerState::CPU, /*report_input_shapes=*/true));
        try {
            for (int i = 0; i < iters; ++i) {
                const auto& in = (*variants)[std::size_t(i) % variants->size()];
                auto out = train ? d.trainStep(in) : d.forward(in);
                if (d.device.is_cuda()) torch::cuda::synchronize();
            }
        } catch (...) {
            prof::disableProfilerLegacy();
            throw;
        }
        lists = prof::disableProfilerLegacy();
    } catch (const std::exception& e) {
        return d.sink.error(classifyForwardError(torchReason(e)), "profile: " + torchReason(e),
                            {{"batch_size", bs}}),
               false;
    }
    const double wallMs = msSince(start);
    // Push/pop pairs per thread, nested: total = pop - push, self = total - the children's.
    std::map<std::string, OpStats> ops;
    json trace = json::array();
    const double t0 = [&] {
        double m = 1e300;
        for (const auto& l : lists)
            for (const auto& e : l)
                if (e.kind() == prof::EventKind::PushRange) m = std::min(m, e.cpuUs());
        return m == 1e300 ? 0.0 : m;
    }();
    for (std::size_t t = 0; t < lists.size(); ++t) {
        struct Open {
            const prof::LegacyEvent* push;
            double children_us;
        };
        std::vector<Open> stack;
        for (const auto& e : lists[t]) {
            if (e.kind() == prof::EventKind::PushRange) {
                stack.push_back({&e, 0.0});
            } else if (e.kind() == prof::EventKind::PopRange && !stack.empty()) {
                const Open open = stack.back();
                stack.pop_back();
                const double total = e.cpuUs() - open.push->cpuUs();
                auto& s = ops[open.push->name()];
                ++s.calls;
                s.total_us += total;
                s.self_us += total - open.children_us;
                const std::string shapes = shapesText(open.push->shapes());
                ++s.shapes[shapes];
                if (!stack.empty()) stack.back().children_us += total;
                trace.push_back({{"name", open.push->name()},
                                 {"ph", "X"},
                                 {"ts", open.push->cpuUs() - t0},
                                 {"dur", total},
                                 {"pid", ::getpid()},
                                 {"tid", open.push->threadId()},
                                 {"cat", "cpu_op"},
                                 {"args", {{"Input Dims", shapes}}}});
            }
        }
    }
    json table = json::array();
    for (const auto& [name, s] : ops) {
        std::vector<std::pair<std::int64_t, std::string>> byCalls;
        for (const auto& [shape, n] : s.shapes) byCalls.push_back({n, shape});
        std::sort(byCalls.rbegin(), byCalls.rend());
        json shapes = json::array();
        for (std::size_t k = 0; k < byCalls.size() && k < 3; ++k)
            shapes.push_back({{"shapes", byCalls[k].second}, {"calls", byCalls[k].first}});
        table.push_back({{"name", name},
                         {"calls", s.calls},
                         {"self_us", s.self_us},
                         {"total_us", s.total_us},
                         {"input_shapes", shapes}});
    }
    std::sort(table.begin(), table.end(), [](const json& a, const json& b) {
        return a["self_us"].get<double>() > b["self_us"].get<double>();
    });
    auto ev = protocol::makeEvent(protocol::kProfile);
    ev["iters"] = iters;
    ev["batch_size"] = bs;
    ev["wall_ms"] = wallMs;
    ev["profiler"] = "legacy (autograd profiler, CPU)";
    ev["ops"] = std::move(table);
    ev["trace"] = {{"traceEvents", std::move(trace)}, {"displayTimeUnit", "ms"}};
    return d.sink.emit(ev);
#endif
}

}  // namespace pitlane::engine
