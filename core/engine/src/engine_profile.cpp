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
#include <cmath>
#include <map>
#include <tuple>

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

// The span of each profiled iteration in the trace ("pitlane: iteration 3").
const std::string kIterationPrefix = "pitlane: iteration ";

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
                // One span per iteration in the trace (not an operator: kept out of the table).
                RECORD_USER_SCOPE(kIterationPrefix + std::to_string(i));
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
    // Times are whole nanoseconds since the profiler started (its "__start_profile" mark), taken
    // as differences of the events' own integer clock (cpuElapsedUs): the absolute cpuUs() is a
    // double of CLOCK_REALTIME and keeps only a quarter of a microsecond. Along each thread's
    // list (recorded in order) a time never goes back, so a child lies within its parent and
    // siblings never overlap even if the wall clock is stepped: what a trace viewer needs of
    // complete events on one thread.
    std::map<std::string, OpStats> ops;
    const prof::LegacyEvent* origin = nullptr;  // the start mark, else the earliest push
    for (const auto& l : lists)
        for (const auto& e : l)
            if (e.kind() == prof::EventKind::Mark && std::string(e.name()) == "__start_profile")
                origin = &e;
    if (!origin)
        for (const auto& l : lists)
            for (const auto& e : l)
                if (e.kind() == prof::EventKind::PushRange &&
                    (!origin || e.cpuElapsedUs(*origin) > 0))
                    origin = &e;
    auto nsOf = [&](const prof::LegacyEvent& e) {
        return origin ? std::max<std::int64_t>(0, std::llround(origin->cpuElapsedUs(e) * 1e3)) : 0;
    };
    struct Span {
        std::int64_t ts_ns, dur_ns;
        std::size_t thread, seq;  // push order within the thread: a parent before its children
        const prof::LegacyEvent* push;
        bool iteration;
        std::string shapes;
    };
    std::vector<Span> spans;
    std::map<std::uint64_t, std::string> threadNames;
    const std::uint64_t mainTid = at::RecordFunction::currentThreadId();
    for (std::size_t t = 0; t < lists.size(); ++t) {
        struct Open {
            const prof::LegacyEvent* push;
            std::int64_t ns;
            std::size_t seq;
            double children_us;
        };
        std::vector<Open> stack;
        std::int64_t last = 0;
        std::size_t seq = 0;
        for (const auto& e : lists[t]) {
            if (e.kind() != prof::EventKind::PushRange && e.kind() != prof::EventKind::PopRange)
                continue;
            const std::int64_t ns = last = std::max(last, nsOf(e));
            if (e.kind() == prof::EventKind::PushRange) {
                stack.push_back({&e, ns, seq++, 0.0});
                continue;
            }
            // A pop closes the innermost open range with its handle (ranges left open inside it,
            // which a RecordFunction never does, are dropped).
            auto it = std::find_if(stack.rbegin(), stack.rend(),
                                   [&](const Open& o) { return o.push->handle() == e.handle(); });
            if (it == stack.rend()) continue;
            stack.erase(it.base(), stack.end());
            const Open open = stack.back();
            stack.pop_back();
            const std::int64_t durNs = ns - open.ns;
            const double total = double(durNs) / 1e3;
            const std::string name = open.push->name();
            const bool iteration = name.rfind(kIterationPrefix, 0) == 0;
            std::string shapes;
            if (!iteration) {
                auto& s = ops[name];
                ++s.calls;
                s.total_us += total;
                s.self_us += total - open.children_us;
                shapes = shapesText(open.push->shapes());
                ++s.shapes[shapes];
                if (!stack.empty()) stack.back().children_us += total;
            }
            spans.push_back({open.ns, durNs, t, open.seq, open.push, iteration, std::move(shapes)});
            const std::uint64_t tid = open.push->threadId();
            if (!threadNames.count(tid))
                threadNames[tid] = "libtorch thread " + std::to_string(tid) +
                                   (tid == mainTid ? " (the worker's main thread: forward)" : "");
        }
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return std::tie(a.ts_ns, a.thread, a.seq) < std::tie(b.ts_ns, b.thread, b.seq);
    });
    json trace = json::array();
    const long pid = ::getpid();
    for (const auto& [tid, name] : threadNames) {
        trace.push_back({{"name", "thread_name"},
                         {"ph", "M"},
                         {"pid", pid},
                         {"tid", tid},
                         {"args", {{"name", name}}}});
        // The forward's thread first.
        trace.push_back({{"name", "thread_sort_index"},
                         {"ph", "M"},
                         {"pid", pid},
                         {"tid", tid},
                         {"args", {{"sort_index", tid == mainTid ? 0 : 1 + std::int64_t(tid)}}}});
    }
    for (const auto& s : spans) {
        json ev = {{"name", s.push->name()},
                   {"ph", "X"},
                   {"ts", double(s.ts_ns) / 1e3},
                   {"dur", double(s.dur_ns) / 1e3},
                   {"pid", pid},
                   {"tid", s.push->threadId()},
                   {"cat", s.iteration ? "iteration" : "cpu_op"}};
        if (!s.iteration) ev["args"] = {{"Input Dims", s.shapes}};
        trace.push_back(std::move(ev));
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
