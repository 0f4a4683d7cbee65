// run: the timing loop. Nothing on it allocates except torch itself; samples are flushed in
// batches (every 50 ms and at the end of the block), outside the timed region.
#include "engine_impl.h"

#include "pitlane/protocol/events.h"

#include "pitlane/serving/serve_loop.h"

namespace pitlane::engine {

using namespace detail;

namespace detail {

// The latencies of one block (and device times on CUDA), pre-reserved so the loop only appends;
// flush() sends those not yet sent as one "samples" event.
class SampleBuffer {
public:
    SampleBuffer(EventSink& sink, int block, const std::string& phase, int batchSize,
                 std::size_t reserve, bool deviceTimes)
        : capacity(reserve), sink_(sink) {
        lat.reserve(capacity);
        if (deviceTimes) deviceNs.reserve(capacity);
        batch_.block = block;
        batch_.phase = phase;
        batch_.batch_size = batchSize;
    }

    bool flush() {
        if (flushed_ == lat.size()) return true;
        batch_.first_iter = static_cast<int>(flushed_);
        batch_.latency_ns.assign(lat.begin() + flushed_, lat.end());
        auto ev = protocol::toJson(batch_);
        if (deviceNs.size() == lat.size())  // CUDA: device time from CUDA events
            ev["device_ns"] = std::vector<std::int64_t>(deviceNs.begin() + flushed_, deviceNs.end());
        flushed_ = lat.size();
        return sink_.emit(ev);
    }

    const std::size_t capacity;
    std::vector<std::int64_t> lat, deviceNs;

private:
    EventSink& sink_;
    protocol::Samples batch_;
    std::size_t flushed_ = 0;
};

}  // namespace detail

namespace {

// The block_done event: the counters of the whole process (every thread; the sampler's few
// microseconds included) read by getrusage just before (c0) and just after (c1) the timed loop
// (protocol/loop_counters.h). Per iteration = block / iters.
json blockDone(int block, const std::string& phase, std::size_t iters, int batchSize,
               Clock::time_point blockStart, const ProcCpu& c0, const ProcCpu& c1,
               std::optional<protocol::ServingDone> serving = std::nullopt,
               const EnergyDelta* energy = nullptr) {
    protocol::BlockDone e;
    e.block = block;
    e.phase = phase;
    e.iters = std::int64_t(iters);
    e.batch_size = batchSize;
    e.wall_ms = msSince(blockStart);
    e.minor_faults = c1.minor_faults - c0.minor_faults;
    e.major_faults = c1.major_faults - c0.major_faults;
    // Against wall_ms: how many cores the block kept busy.
    e.cpu_ms = (c1.user_s + c1.sys_s - c0.user_s - c0.sys_s) * 1e3;
    e.involuntary_switches = c1.involuntary_ctx - c0.involuntary_ctx;
    e.voluntary_switches = c1.voluntary_ctx - c0.voluntary_ctx;
    e.serving = std::move(serving);
    e.stopped = stopRequested();
    if (energy) {  // issue 46: the counters read around the getrusage pair
        e.energy_blocks = 1;
        e.energy_inferences = std::int64_t(iters) * batchSize;
        e.energy_window_ms = energy->window_ms;
        e.gpu_energy_mj = energy->gpu_mj;
        e.cpu_energy_mj = energy->cpu_mj;
        e.dram_energy_mj = energy->dram_mj;
        e.energy_stalls = energy->stalls.empty() ? 0 : 1;
    }
    auto done = protocol::toJson(e);
    if (energy && !energy->stalls.empty()) done["energy_stall"] = energy->stalls;
    const double n = iters == 0 ? 1.0 : double(iters);
    done["minor_faults_per_iter"] = iters == 0 ? 0.0 : double(*e.minor_faults) / n;
    done["major_faults_per_iter"] = iters == 0 ? 0.0 : double(*e.major_faults) / n;
    return done;
}

}  // namespace

bool Engine::runBlock(const json& cmd) {
    auto& d = *impl_;
    if (!d.configured)
        return d.sink.error(code::kNotConfigured, "run before a successful configure"), false;
    const int block = cmd.value("block", -1);
    const std::string phase = cmd.value("phase", std::string("measure"));
    const int iters = cmd.value("iters", 0);
    const double timeMs = cmd.value("time_ms", 0.0);
    const int bs = cmd.value("batch_size", d.knobs.batch_size.front());
    const auto* variants = d.inputsFor(bs);
    if (!variants) return false;
    if (iters <= 0 && timeMs <= 0)
        return d.sink.error(code::kBadCommand, "run needs iters > 0 or time_ms > 0"), false;

    const std::size_t capacity = iters > 0 ? std::size_t(iters) : 1 << 16;
    SampleBuffer samples(d.sink, block, phase, bs, capacity, d.device.is_cuda());
    // Page faults of the block: read once before and once after the timed loop, never inside it.
    // Energy counters (issue 46) just outside those reads, on measured blocks only.
    auto& meter = EnergyMeter::instance();
    const bool energy = phase == "measure" && meter.any();
    EnergyReading e0;
    if (energy) e0 = meter.read();
    const ProcCpu faults0 = readCpu();
    const auto blockStart = Clock::now();
    if (!d.timedLoop(block, iters, timeMs, bs, *variants, samples, blockStart)) return false;
    const ProcCpu faults1 = readCpu();
    std::optional<EnergyDelta> used;
    if (energy) used = meter.delta(e0, meter.read());
    if (!samples.flush()) return false;
    return d.sink.emit(blockDone(block, phase, samples.lat.size(), bs, blockStart, faults0, faults1,
                                 std::nullopt, used ? &*used : nullptr));
}

// The inputs of one batch size of the sweep, built (seeded) the first time it is run. Null after
// an error event.
const std::vector<std::vector<c10::IValue>>* Engine::Impl::inputsFor(int bs, bool anySize) {
    const auto& sweep = knobs.batch_size;
    if (!anySize && std::find(sweep.begin(), sweep.end(), bs) == sweep.end())
        return sink.error(code::kBadCommand,
                          "batch_size " + std::to_string(bs) + " is not in this arm's sweep"),
               nullptr;
    auto it = inputs.find(bs);
    if (it == inputs.end()) {
        try {
            torch::manual_seed(seed);
            it = inputs.emplace(bs, makeInputs(bs, knobs.input_on_host)).first;
        } catch (const std::exception& e) {
            const auto reason = torchReason(e);
            const std::string errorCode = classifyForwardError(reason);
            sink.error(errorCode,
                       "creating the input for batch size " + std::to_string(bs) + ": " + reason +
                           oomNote(errorCode),
                       {{"batch_size", bs}});
            return nullptr;
        }
    }
    return &it->second;
}

// The timed loop: iters forwards, or forwards for timeMs (capped by the buffer's capacity),
// cycling through the shape variants. False after an error event or when the reader is gone.
bool Engine::Impl::timedLoop(int block, int iters, double timeMs, int bs,
                             const std::vector<std::vector<c10::IValue>>& variants,
                             SampleBuffer& samples, Clock::time_point blockStart) {
    auto& lat = samples.lat;
    const std::size_t capacity = samples.capacity;
    auto lastFlush = blockStart;
    std::size_t variant = 0;
    try {
        GradScope g(knobs.grad);
        // train_step enters autocast around each step's forward only (trainStep): backward and
        // the update run outside it, and the cast-weight cache is dropped as the weights change.
        const bool train = trainStepWorkload();
        AutocastScope ac(train ? spec::Precision::Fp32 : knobs.precision, device.is_cuda());
        for (int i = 0;; ++i) {
            if (iters > 0 && i >= iters) break;
            if (stopRequested()) break;
            if (iters <= 0 && (msSince(blockStart) >= timeMs || lat.size() >= capacity)) break;
            const auto& in = variants[variant];
            variant = (variant + 1) % variants.size();
            const auto t0 = Clock::now();
            {
                c10::IValue out;
                if (eventTimer) eventTimer->start();
                if (graph) {
                    graph->replay();
                    if (knobs.host_sync_each_iter) out = graph->output();  // its static output
                } else
                    out = train ? trainStep(in) : forward(in);
                if (knobs.host_sync_each_iter) {
                    auto t = firstTensor(out);
                    if (t.defined()) t = t.cpu();  // what .cpu() / .item() do
                }
            }
            if (eventTimer) samples.deviceNs.push_back(std::int64_t(eventTimer->stopMs() * 1e6));
            if (device.is_cuda()) torch::cuda::synchronize();
            const auto t1 = Clock::now();
            lat.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
            if (t1 - lastFlush > std::chrono::milliseconds(50)) {
                if (!samples.flush()) return false;
                lastFlush = Clock::now();
            }
        }
    } catch (const std::exception& e) {
        samples.flush();  // keep what was measured
        const auto reason = torchReason(e);
        const std::string errorCode = classifyForwardError(reason);
        sink.error(errorCode,
                   std::string(trainStepWorkload() ? "train step" : "forward") +
                       " failed in block " + std::to_string(block) + " at iteration " +
                       std::to_string(lat.size()) + ": " + reason + oomNote(errorCode),
                   {{"batch_size", bs}});
        return false;
    }
    return true;
}

namespace {

// A serve command's load, bounded: the runner sends valid values; a hand-written command gets a
// bad_command naming the field.
// The batcher's max_batch / max_wait_ms are the arm's knobs unless the command names them.
bool parseLoad(const json& cmd, const spec::Knobs& knobs, serving::LoadSpec& spec, std::string& why) {
    const std::string arrival = cmd.value("arrival", std::string("poisson"));
    if (!serving::parseArrival(arrival, &spec.arrival))
        return why = "arrival must be poisson, constant or closed, got \"" + arrival + "\"", false;
    spec.rate_per_s = cmd.value("rate_per_s", 0.0);
    spec.clients = cmd.value("clients", 1);
    spec.duration_ms = cmd.value("duration_ms", 0.0);
    spec.seed = cmd.value("seed", std::uint64_t(1));
    spec.max_batch = cmd.value("max_batch", knobs.max_batch);
    spec.max_wait_ms = cmd.value("max_wait_ms", double(knobs.max_wait_ms));
    spec.saturation_ms = cmd.value("saturation_ms", 2000.0);
    const std::string idle = cmd.value("idle_wait", std::string("sleep"));
    if (!serving::parseIdleWait(idle, &spec.idle))
        return why = "idle_wait must be sleep or spin, got \"" + idle + "\"", false;
    if (spec.arrival != serving::Arrival::Closed && !(spec.rate_per_s > 0 && spec.rate_per_s <= 1e6))
        return why = "rate_per_s must be in (0, 1e6]", false;
    if (spec.arrival == serving::Arrival::Closed && (spec.clients < 1 || spec.clients > 4096))
        return why = "clients must be in [1, 4096]", false;
    if (!(spec.duration_ms > 0 && spec.duration_ms <= 600000))
        return why = "duration_ms must be in (0, 600000]", false;
    if (spec.max_batch < 1 || spec.max_batch > 1024) return why = "max_batch must be in [1, 1024]", false;
    if (!(spec.max_wait_ms >= 0 && spec.max_wait_ms <= 60000))
        return why = "max_wait_ms must be in [0, 60000]", false;
    if (!(spec.saturation_ms > 0)) return why = "saturation_ms must be > 0", false;
    return true;
}

// The batches (and the arrivals of their requests) not yet sent, as one serve_batches event.
class BatchFlusher {
public:
    BatchFlusher(EventSink& sink, int block) : sink_(sink), block_(block) {}
    bool flush(const serving::LevelRecord& rec) {
        if (batches_ == rec.batches.size()) return true;
        protocol::ServeBatches ev;
        ev.block = block_;
        ev.first_batch = std::int64_t(batches_);
        ev.first_request = std::int64_t(requests_);
        std::size_t served = requests_;
        for (std::size_t k = batches_; k < rec.batches.size(); ++k) {
            const auto& b = rec.batches[k];
            ev.size.push_back(b.size);
            ev.free_ns.push_back(b.free_ns);
            ev.start_ns.push_back(b.start_ns);
            ev.end_ns.push_back(b.end_ns);
            for (int i = 0; i < b.size && served < rec.arrival_ns.size(); ++i)
                ev.arrival_ns.push_back(rec.arrival_ns[served++]);
        }
        batches_ = rec.batches.size();
        requests_ = served;
        return sink_.emit(protocol::toJson(ev));
    }

private:
    EventSink& sink_;
    int block_;
    std::size_t batches_ = 0, requests_ = 0;
};

}  // namespace

// Inputs for every batch size 1..max_batch are made and run once before the clock starts: a new
// shape costs oneDNN a primitive (and the profiling executor a specialisation), a cold cost that
// is not serving latency. Then the level runs on the real clock; each batch is one forward of a
// batch of `size` requests, with the arm's grad mode, precision and host sync.
bool Engine::serveLevel(const json& cmd) {
    auto& d = *impl_;
    if (!d.configured)
        return d.sink.error(code::kNotConfigured, "serve before a successful configure"), false;
    serving::LoadSpec spec;
    std::string why;
    if (!parseLoad(cmd, d.knobs, spec, why)) return d.sink.error(code::kBadCommand, "serve: " + why), false;
    if (d.trainStepWorkload())
        return d.sink.error(code::kBadCommand, "serve: the workload train_step cannot be served"),
               false;
    const int block = cmd.value("block", 0);
    std::vector<const std::vector<std::vector<c10::IValue>>*> byBatch(
        std::size_t(spec.max_batch) + 1, nullptr);
    auto runBatch = [&](int size) {
        try {
            const auto& in = (*byBatch[std::size_t(size)])[0];
            auto out = d.forward(in);
            if (d.knobs.host_sync_each_iter) {
                auto t = firstTensor(out);
                if (t.defined()) t = t.cpu();
            }
            if (d.device.is_cuda()) torch::cuda::synchronize();
            return true;
        } catch (const std::exception& e) {
            const auto reason = torchReason(e);
            const std::string errorCode = classifyForwardError(reason);
            d.sink.error(errorCode,
                         "serve: forward of a batch of " + std::to_string(size) + " failed: " +
                             reason + oomNote(errorCode),
                         {{"batch_size", size}});
            return false;
        }
    };
    GradScope g(d.knobs.grad);
    AutocastScope ac(d.knobs.precision, d.device.is_cuda());
    for (int b = 1; b <= spec.max_batch; ++b) {
        byBatch[std::size_t(b)] = d.inputsFor(b, /*anySize=*/true);
        if (!byBatch[std::size_t(b)] || !runBatch(b)) return false;
    }
    BatchFlusher flusher(d.sink, block);
    const ProcCpu faults0 = readCpu();
    const auto blockStart = Clock::now();
    auto lastFlush = blockStart;
    serving::SteadyLoopClock clock(spec.idle);
    const auto rec = serving::runLevel(
        spec, clock, runBatch,
        [&](const serving::LevelRecord& r) {
            if (Clock::now() - lastFlush < std::chrono::milliseconds(50)) return true;
            lastFlush = Clock::now();
            return flusher.flush(r);
        },
        [] { return stopRequested(); });
    const ProcCpu faults1 = readCpu();
    if (!flusher.flush(rec)) return false;
    if (rec.failed) return false;
    protocol::ServingDone sv;
    sv.arrival = serving::arrivalName(spec.arrival);
    sv.rate_per_s = spec.rate_per_s;
    sv.clients = spec.clients;
    sv.duration_ms = spec.duration_ms;
    sv.max_batch = spec.max_batch;
    sv.max_wait_ms = spec.max_wait_ms;
    sv.idle_wait = serving::idleWaitName(spec.idle);
    sv.scheduled = rec.scheduled;
    sv.arrived = std::int64_t(rec.arrival_ns.size());
    sv.served = rec.served();
    sv.batches = std::int64_t(rec.batches.size());
    sv.max_queue = rec.max_queue;
    sv.saturated = rec.saturated;
    return d.sink.emit(blockDone(block, "measure", std::size_t(rec.served()), 0, blockStart,
                                 faults0, faults1, std::move(sv)));
}

}  // namespace pitlane::engine
