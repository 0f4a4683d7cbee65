// The `profile` command (issue 14): a few iterations under libtorch's profiler, after the
// measured blocks and never inside them, so the profiler's overhead never touches a reported
// latency. The profiler is Kineto (libtorch 2.x; issue 25), exactly as torch.profiler drives it
// from Python: CPU operators with their input shapes, and on a CUDA arm the device's kernels and
// copies (CUPTI). The event carries the operator table (calls, self and total time, the most
// frequent input shapes; computed here from Kineto's events) and the Chrome trace that Kineto
// itself writes (ProfilerResult::save, read back from a temporary file beneath the worker's
// scratch folder: $TMPDIR), which Perfetto, chrome://tracing, TensorBoard and Holistic Trace
// Analysis open.
#include "engine_impl.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <fstream>
#include <map>
#include <set>
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

// The operator table's figures from Kineto's CPU events: per thread, nested by time (an event
// inside another one's span is its child), self = total - the children's totals.
std::map<std::string, OpStats> operatorStats(torch::autograd::profiler::ProfilerResult& result) {
    struct Span {
        std::uint64_t start, end;
        std::uint64_t thread;
        std::string name;
        std::string shapes;
    };
    std::vector<Span> spans;
    for (const auto& e : result.events()) {
        if (e.deviceType() != c10::DeviceType::CPU || e.isAsync() || e.isHiddenEvent()) continue;
        if (e.endNs() < e.startNs()) continue;
        std::vector<std::vector<std::int64_t>> shapes;
        if (e.hasShapes())
            for (const auto& sh : e.shapes()) shapes.push_back(sh);
        spans.push_back({e.startNs(), e.endNs(), e.startThreadId(), e.name(), shapesText(shapes)});
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return std::make_tuple(a.thread, a.start, b.end) < std::make_tuple(b.thread, b.start, a.end);
    });
    std::map<std::string, OpStats> ops;
    struct Open {
        const Span* span;
        double children_us;
    };
    std::vector<Open> stack;
    auto close = [&](const Open& o) {
        const double total = double(o.span->end - o.span->start) / 1e3;
        if (o.span->name.rfind(kIterationPrefix, 0) != 0) {
            auto& st = ops[o.span->name];
            ++st.calls;
            st.total_us += total;
            st.self_us += total - o.children_us;
            ++st.shapes[o.span->shapes];
        }
        // The iteration span is no operator: its children's time is nobody's self time.
        if (!stack.empty() && o.span->name.rfind(kIterationPrefix, 0) != 0)
            stack.back().children_us += total;
    };
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const Span& sp = spans[i];
        while (!stack.empty() &&
               (stack.back().span->thread != sp.thread || stack.back().span->end <= sp.start)) {
            const Open o = stack.back();
            stack.pop_back();
            close(o);
        }
        stack.push_back({&sp, 0.0});
    }
    while (!stack.empty()) {
        const Open o = stack.back();
        stack.pop_back();
        close(o);
    }

    return ops;
}

// The time the device spent in kernels and copies (CUPTI's events), in microseconds.
double deviceMicros(torch::autograd::profiler::ProfilerResult& result) {
    double us = 0;
    for (const auto& e : result.events())
        if (e.deviceType() == c10::DeviceType::CUDA) us += double(e.durationNs()) / 1e3;
    return us;
}

// The Chrome trace as Kineto writes it (ProfilerResult::save into a temporary file beneath
// $TMPDIR, read back, removed). Null with `error` set when it cannot be.
json kinetoTrace(torch::autograd::profiler::ProfilerResult& result, std::string& error) {
    json trace;
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = tmp && *tmp ? tmp : "/tmp";
    std::string path = dir + "/pitlane-profile-XXXXXX";
    std::vector<char> buf(path.begin(), path.end());
    buf.push_back('\0');
    const int fd = ::mkstemp(buf.data());
    if (fd < 0) {
        error = "profile: Kineto writes its trace to a file, and this worker cannot make one in " + dir +
                " (" + std::strerror(errno) +
                "): start it with --scratch DIR (the sandbox allows writes only there), as pitlane-cli and "
                "the window do";
        return nullptr;
    }
    ::close(fd);
    path.assign(buf.data());
    try {
        result.save(path);
        std::ifstream in(path);
        trace = json::parse(in, nullptr, /*allow_exceptions=*/false);
    } catch (const std::exception& e) {
        ::unlink(path.c_str());
        error = std::string("profile: writing Kineto's trace: ") + e.what();
        return nullptr;
    }
    ::unlink(path.c_str());
    if (!trace.is_object() || !trace.contains("traceEvents")) {
        error = "profile: Kineto wrote a trace that is not JSON";
        return nullptr;
    }
    trace.erase("traceName");  // the temporary file's path, gone now
    return trace;
}

// The table the event carries: per operator its calls, self and total time and its three most
// frequent input shapes, the largest self time first.
json operatorTable(const std::map<std::string, OpStats>& ops) {
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
    return table;
}

}  // namespace

bool Engine::profileBlock(const json& cmd) {
    auto& d = *impl_;
    if (!d.configured)
        return d.sink.error(code::kNotConfigured, "profile before a successful configure"), false;
    namespace prof = torch::autograd::profiler;
    namespace pimpl = torch::profiler::impl;
    const int iters = cmd.value("iters", 5);
    if (iters < 1 || iters > 1000)
        return d.sink.error(code::kBadCommand, "profile: iters must be in [1, 1000]"), false;
    const int bs = cmd.value("batch_size", d.knobs.batch_size.front());
    const auto* variants = d.inputsFor(bs);
    if (!variants) return false;
    const bool cuda = d.device.is_cuda();
    std::set<pimpl::ActivityType> activities{pimpl::ActivityType::CPU};
    if (cuda) activities.insert(pimpl::ActivityType::CUDA);
    const pimpl::ProfilerConfig config(pimpl::ProfilerState::KINETO, /*report_input_shapes=*/true);
    std::unique_ptr<prof::ProfilerResult> result;
    const auto start = Clock::now();
    try {
        GradScope g(d.knobs.grad);
        const bool train = d.trainStepWorkload();
        AutocastScope ac(train ? spec::Precision::Fp32 : d.knobs.precision, cuda);
        prof::prepareProfiler(config, activities);
        prof::enableProfiler(config, activities);
        try {
            for (int i = 0; i < iters; ++i) {
                // One span per iteration in the trace (not an operator: kept out of the table).
                RECORD_USER_SCOPE(kIterationPrefix + std::to_string(i));
                const auto& in = (*variants)[std::size_t(i) % variants->size()];
                auto out = train ? d.trainStep(in) : d.forward(in);
                if (cuda) torch::cuda::synchronize();
            }
        } catch (...) {
            prof::disableProfiler();
            throw;
        }
        result = prof::disableProfiler();
    } catch (const std::exception& e) {
        return d.sink.error(classifyForwardError(torchReason(e)), "profile: " + torchReason(e),
                            {{"batch_size", bs}}),
               false;
    }
    const double wallMs = msSince(start);
    if (!result)
        return d.sink.error(code::kBadCommand, "profile: the profiler returned no result"), false;

    const auto ops = operatorStats(*result);
    const double deviceUs = cuda ? deviceMicros(*result) : 0.0;
    std::string traceError;
    json trace = kinetoTrace(*result, traceError);
    if (trace.is_null()) return d.sink.error(code::kBadCommand, traceError), false;
    json table = operatorTable(ops);
    auto ev = protocol::makeEvent(protocol::kProfile);
    ev["iters"] = iters;
    ev["batch_size"] = bs;
    ev["wall_ms"] = wallMs;
    ev["profiler"] = std::string("kineto (libtorch ") + TORCH_VERSION + (cuda ? ", CPU + CUDA)" : ", CPU)");
    if (cuda) ev["device_us"] = deviceUs;
    ev["ops"] = std::move(table);
    ev["trace"] = std::move(trace);
    return d.sink.emit(ev);
}

}  // namespace pitlane::engine
