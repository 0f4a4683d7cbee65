#include "pitlane/engine/sampler.h"

#include "pitlane/engine/nvml.h"
#include "pitlane/engine/system.h"
#include "pitlane/protocol/protocol.h"

#include <time.h>

#include <chrono>
#include <map>

namespace pitlane::engine {

TensorCounters& tensorCounters() {
    static TensorCounters counters;
    return counters;
}

namespace {
std::mutex g_hookMutex;
std::function<void(nlohmann::json&)> g_hook;

std::int64_t threadCpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

void setMetricsHook(std::function<void(nlohmann::json&)> hook) {
    std::lock_guard<std::mutex> lock(g_hookMutex);
    g_hook = std::move(hook);
}

MetricsSampler::MetricsSampler(EventSink& sink, int period_ms)
    : sink_(sink), period_ms_(period_ms) {}

MetricsSampler::~MetricsSampler() { stop(); }

void MetricsSampler::start() {
    if (thread_.joinable()) return;
    stopping_ = false;
    thread_ = std::thread([this] { loop(); });
}

void MetricsSampler::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void MetricsSampler::tickNow() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        tickRequested_ = true;
    }
    cv_.notify_all();
}

void MetricsSampler::loop() {
    const auto t0 = std::chrono::steady_clock::now();
    auto prevCores = readCoreTimes();
    std::map<int, double> lastUtil;
    auto next = t0;
    for (;;) {
        next += std::chrono::milliseconds(period_ms_);
        {
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait_until(lock, next, [this] { return stopping_ || tickRequested_; });
            if (stopping_) return;
            if (tickRequested_) {
                tickRequested_ = false;
                next = std::chrono::steady_clock::now();  // the period restarts from here
            }
        }
        const auto c0 = threadCpuNs();
        auto e = protocol::makeEvent(protocol::kMetrics);
        const auto mem = readMemory();
        e["rss_bytes"] = mem.rss_bytes;
        e["peak_rss_bytes"] = mem.peak_rss_bytes;
        // The CPU counters and the time they were read, together (issue 41): the session takes a
        // process's CPU rate over this clock, not over when the tick reached it. The reading is
        // bracketed by two clock reads and stamped at their middle; one the scheduler split (more
        // than 1 ms between them: this thread was preempted, the counters of the others ran on)
        // is taken again, up to three times.
        ProcCpu cpu;
        double sampledMs = 0;
        for (int attempt = 0; attempt < 3; ++attempt) {
            const auto before = std::chrono::steady_clock::now();
            cpu = readCpu();
            const auto after = std::chrono::steady_clock::now();
            sampledMs = std::chrono::duration<double, std::milli>(before - t0).count() +
                        std::chrono::duration<double, std::milli>(after - before).count() / 2;
            if (after - before < std::chrono::milliseconds(1)) break;
        }
        e["t_ms"] = sampledMs;
        e["cpu_user_s"] = cpu.user_s;
        e["cpu_sys_s"] = cpu.sys_s;
        e["ctx_voluntary"] = cpu.voluntary_ctx;
        e["ctx_involuntary"] = cpu.involuntary_ctx;
        e["minor_faults"] = cpu.minor_faults;  // cumulative, the whole process
        e["major_faults"] = cpu.major_faults;
        e["migrations"] = readMigrations();
        auto& tc = tensorCounters();
        if (tc.installed.load()) {
            e["tensor_bytes"] = tc.current.load();
            e["tensor_peak_bytes"] = tc.peak.load();
        }
        const auto cores = readCoreTimes();
        // Utilization since the previous reading; a core whose counters did not advance (two
        // ticks within one jiffy) keeps its previous value instead of reading 0.
        nlohmann::json util = nlohmann::json::array();
        nlohmann::json ids = nlohmann::json::array();
        std::vector<CoreTimes> next;
        for (const auto& c : cores) {
            double pct = lastUtil.count(c.cpu) ? lastUtil[c.cpu] : 0.0;
            CoreTimes keep = c;
            for (const auto& p : prevCores) {
                if (p.cpu != c.cpu) continue;
                if (c.total > p.total)
                    pct = 100.0 * double(c.busy - p.busy) / double(c.total - p.total);
                else
                    keep = p;  // measure the next delta from the older reading
            }
            lastUtil[c.cpu] = pct;
            util.push_back(pct);
            ids.push_back(c.cpu);
            next.push_back(keep);
        }
        prevCores = next;
        e["core_util_pct"] = util;
        e["core_ids"] = ids;
        {
            std::lock_guard<std::mutex> lock(g_hookMutex);
            if (g_hook) g_hook(e);
        }
        const auto& nvml = Nvml::instance();
        if (nvml.available())
            e["gpu"] = nvml.sample();
        else
            e["gpu_status"] = nvml.whyNot();
        ++ticks_;
        const bool ok = sink_.emit(e);
        self_cpu_ns_ += threadCpuNs() - c0;
        if (!ok) return;
    }
}

}  // namespace pitlane::engine
