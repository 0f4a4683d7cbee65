#include "stream_probe.h"

#include "main_window.h"
#include "pitlane/session/experiment_runner.h"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace pitlane::app {

namespace {
// CPU time of the calling (UI) thread, in ms.
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}
}  // namespace

StreamProbe::StreamProbe(const MainWindow* window, int intervalMs) : window_(window) {
    heartbeat_.setInterval(intervalMs);
    heartbeat_.setTimerType(Qt::PreciseTimer);  // a coarse timer would add its own 5 % slack
    connect(&heartbeat_, &QTimer::timeout, this, &StreamProbe::tick);
}

void StreamProbe::start() {
    clock_.start();
    lastTick_ = 0;
    firstSampleMs_ = lastSampleMs_ = -1;
    seen_ = 0;
    finishGapMs_ = 0;
    maxBusyMs_ = finishBusyMs_ = 0;
    lastCpuMs_ = threadCpuMs();
    gaps_.clear();
    heartbeat_.start();
}

void StreamProbe::stop() {
    // No last tick: the final verdict runs between the last sample and runFinished, and the
    // 10 ms ticks have seen every sample already.
    heartbeat_.stop();
}

void StreamProbe::tick() {
    const qint64 now = clock_.elapsed();
    const double cpu = threadCpuMs();
    const double busy = cpu - lastCpuMs_;  // what the UI thread itself ran during the gap
    lastCpuMs_ = cpu;
    std::size_t n = 0;
    for (const auto& arm : window_->runner()->result().arms) n += arm.samples.size();
    // Gaps count from the first sample on: starting the workers (fork, loading torch) happens
    // before any sample and is not the stream's cost.
    if (firstSampleMs_ >= 0) {
        // After the last worker stopped the run is finished off (plots flushed, history row
        // completed): a stall there freezes the window just the same, so it is kept apart.
        if (window_->runner()->isRunning()) {
            gaps_.push_back(now - lastTick_);
            maxBusyMs_ = std::max(maxBusyMs_, busy);
        } else {
            finishGapMs_ = std::max(finishGapMs_, now - lastTick_);
            finishBusyMs_ = std::max(finishBusyMs_, busy);
        }
    }
    if (n > seen_) {
        if (firstSampleMs_ < 0) firstSampleMs_ = now;
        lastSampleMs_ = now;
        seen_ = n;
    }
    lastTick_ = now;
}

double StreamProbe::streamSeconds() const {
    return firstSampleMs_ < 0 ? 0.0 : double(lastSampleMs_ - firstSampleMs_) / 1000.0;
}

double StreamProbe::samplesPerSecond() const {
    const double s = streamSeconds();
    return s > 0 ? double(seen_) / s : 0.0;
}

qint64 StreamProbe::maxGapMs() const {
    return gaps_.empty() ? 0 : *std::max_element(gaps_.begin(), gaps_.end());
}

qint64 StreamProbe::gapPercentileMs(double p) const {
    if (gaps_.empty()) return 0;
    std::vector<qint64> sorted = gaps_;
    std::sort(sorted.begin(), sorted.end());
    const auto i = std::size_t(std::llround(p / 100.0 * double(sorted.size() - 1)));
    return sorted[std::min(i, sorted.size() - 1)];
}

QString StreamProbe::summary() const {
    return QStringLiteral(
               "stream %1 samples in %2 s = %3 samples/s; event-loop gap median %4 ms, "
               "p99 %5 ms, max %6 ms over %7 ticks; after the stream max %8 ms; UI thread "
               "busy at most %9 ms between two ticks during the stream, %10 ms after it")
        .arg(seen_)
        .arg(streamSeconds(), 0, 'f', 2)
        .arg(samplesPerSecond(), 0, 'f', 0)
        .arg(gapPercentileMs(50))
        .arg(gapPercentileMs(99))
        .arg(maxGapMs())
        .arg(gaps_.size())
        .arg(finishGapMs_)
        .arg(maxBusyMs_, 0, 'f', 0)
        .arg(finishBusyMs_, 0, 'f', 0);
}

}  // namespace pitlane::app
