// run: the timing loop. Nothing on it allocates except torch itself; samples are flushed in
// batches (every 50 ms and at the end of the block), outside the timed region.
#include "engine_impl.h"

namespace pitlane::engine {

using namespace detail;

bool Engine::runBlock(const json& cmd) {
    auto& d = *impl_;
    if (!d.configured)
        return d.sink.error(code::kNotConfigured, "run before a successful configure"), false;
    const int block = cmd.value("block", -1);
    const std::string phase = cmd.value("phase", std::string("measure"));
    const int iters = cmd.value("iters", 0);
    const double timeMs = cmd.value("time_ms", 0.0);
    const int bs = cmd.value("batch_size", d.knobs.batch_size.front());
    const auto& sweep = d.knobs.batch_size;
    if (std::find(sweep.begin(), sweep.end(), bs) == sweep.end())
        return d.sink.error(code::kBadCommand,
                            "batch_size " + std::to_string(bs) + " is not in this arm's sweep"),
               false;
    auto it = d.inputs.find(bs);
    if (it == d.inputs.end()) {
        try {
            torch::manual_seed(d.seed);
            it = d.inputs.emplace(bs, d.makeInputs(bs, d.knobs.input_on_host)).first;
        } catch (const std::exception& e) {
            const auto reason = torchReason(e);
            d.sink.error(classifyForwardError(reason),
                         "creating the input for batch size " + std::to_string(bs) + ": " + reason,
                         {{"batch_size", bs}});
            return false;
        }
    }
    if (iters <= 0 && timeMs <= 0)
        return d.sink.error(code::kBadCommand, "run needs iters > 0 or time_ms > 0"), false;
    const auto& variants = it->second;

    const std::size_t capacity = iters > 0 ? std::size_t(iters) : 1 << 16;
    std::vector<std::int64_t> lat, deviceNs;
    lat.reserve(capacity);
    if (d.device.is_cuda()) deviceNs.reserve(capacity);
    protocol::Samples batch;
    batch.block = block;
    batch.phase = phase;
    batch.batch_size = bs;
    std::size_t flushed = 0;
    auto flush = [&]() {
        if (flushed == lat.size()) return true;
        batch.first_iter = static_cast<int>(flushed);
        batch.latency_ns.assign(lat.begin() + flushed, lat.end());
        auto ev = protocol::toJson(batch);
        if (deviceNs.size() == lat.size())  // CUDA: device time from CUDA events
            ev["device_ns"] = std::vector<std::int64_t>(deviceNs.begin() + flushed, deviceNs.end());
        flushed = lat.size();
        return d.sink.emit(ev);
    };

    // Page faults of the block: read once before and once after the timed loop, never inside it.
    const PageFaults faults0 = readPageFaults();
    const auto blockStart = Clock::now();
    auto lastFlush = blockStart;
    std::size_t variant = 0;
    try {
        GradScope g(d.knobs.grad);
        AutocastScope ac(d.knobs.precision);
        for (int i = 0;; ++i) {
            if (iters > 0 && i >= iters) break;
            if (stopRequested()) break;
            if (iters <= 0 && (msSince(blockStart) >= timeMs || lat.size() >= capacity)) break;
            const auto& in = variants[variant];
            variant = (variant + 1) % variants.size();
            const auto t0 = Clock::now();
#ifdef PITLANE_WITH_CUDA
            if (d.device.is_cuda()) d.eventTimer.start();
            if (d.graph) {
                d.graph->replay();
            } else
#endif
            {
                auto out = d.forward(in);
                if (d.knobs.host_sync_each_iter) {
                    auto t = firstTensor(out);
                    if (t.defined()) t = t.cpu();  // what .cpu() / .item() do
                }
            }
#ifdef PITLANE_WITH_CUDA
            if (d.device.is_cuda()) deviceNs.push_back(std::int64_t(d.eventTimer.stopMs() * 1e6));
#endif
            if (d.device.is_cuda()) torch::cuda::synchronize();
            const auto t1 = Clock::now();
            lat.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
            if (t1 - lastFlush > std::chrono::milliseconds(50)) {
                if (!flush()) return false;
                lastFlush = Clock::now();
            }
        }
    } catch (const std::exception& e) {
        flush();  // keep what was measured
        const auto reason = torchReason(e);
        d.sink.error(classifyForwardError(reason),
                     "forward failed in block " + std::to_string(block) + " at iteration " +
                         std::to_string(lat.size()) + ": " + reason,
                     {{"batch_size", bs}});
        return false;
    }
    const PageFaults faults1 = readPageFaults();
    if (!flush()) return false;
    auto done = protocol::makeEvent(protocol::kBlockDone);
    done["block"] = block;
    done["phase"] = phase;
    done["iters"] = lat.size();
    done["batch_size"] = bs;
    done["wall_ms"] = msSince(blockStart);
    // The whole process (every thread) during the block; per iteration = block / iters.
    const auto minor = faults1.minor - faults0.minor, major = faults1.major - faults0.major;
    done["minor_faults"] = minor;
    done["major_faults"] = major;
    const double n = lat.empty() ? 1.0 : double(lat.size());
    done["minor_faults_per_iter"] = lat.empty() ? 0.0 : double(minor) / n;
    done["major_faults_per_iter"] = lat.empty() ? 0.0 : double(major) / n;
    if (stopRequested()) done["stopped"] = true;
    return d.sink.emit(done);
}

}  // namespace pitlane::engine
