#include "stream_probe.h"

#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/plots/live_plot.h"
#include "pitlane/widgets/plots/plot_panel.h"

#include <QCoreApplication>
#include <QEvent>
#include <QMetaEnum>

#include <algorithm>
#include <cmath>
#include <cstdio>
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
    const auto plots = window_->plotPanel()->plots();
    replots_.assign(plots.size(), {});
    for (std::size_t i = 0; i < plots.size(); ++i)
        connect(plots[i], &QCustomPlot::afterReplot, this, [this, i, plot = plots[i]] {
            if (!heartbeat_.isActive()) return;
            auto& r = replots_[i];
            ++r.count;
            r.ms += plot->replotTime();
            r.hidden += plot->isVisible() ? 0 : 1;
        });
}

QString StreamProbe::replots() const {
    const auto plots = window_->plotPanel()->plots();
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < replots_.size(); ++i)
        if (replots_[i].count > 0) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return replots_[a].ms > replots_[b].ms; });
    QStringList parts;
    for (auto i : order) {
        const auto& r = replots_[i];
        QStringList notes;
        if (r.hidden) notes << QStringLiteral("%1 hidden").arg(r.hidden);
        if (r.resized) notes << QStringLiteral("%1 resized").arg(r.resized);
        parts << QStringLiteral("%1 %2 x %3 ms%4")
                     .arg(plots[i]->objectName())
                     .arg(r.count)
                     .arg(r.ms / r.count, 0, 'f', 1)
                     .arg(notes.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(notes.join(QStringLiteral(", "))));
    }
    return parts.isEmpty() ? QStringLiteral("none") : parts.join(QStringLiteral(", "));
}

bool StreamProbe::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Resize && heartbeat_.isActive()) {
        const auto plots = window_->plotPanel()->plots();
        for (std::size_t i = 0; i < plots.size(); ++i)
            if (watched == plots[i]) ++replots_[i].resized;
    }
    if (heartbeat_.isActive() && delivered_.size() < 100000)
        delivered_.push_back({clock_.nsecsElapsed(), threadCpuMs(), watched->metaObject()->className(),
                              int(event->type())});
    return false;
}

void StreamProbe::explainGap(qint64 gap, qint64 endNs, double endCpuMs) {
    if (gap <= longestGap_) return;
    longestGap_ = gap;
    struct Span {
        double wallMs, cpuMs;
        std::size_t at;
    };
    std::vector<Span> spans;
    double cpu = 0;
    for (std::size_t i = 0; i < delivered_.size(); ++i) {
        const bool last = i + 1 == delivered_.size();
        const double wall = double((last ? endNs : delivered_[i + 1].ns) - delivered_[i].ns) / 1e6;
        const double c = (last ? endCpuMs : delivered_[i + 1].cpuMs) - delivered_[i].cpuMs;
        cpu += c;
        spans.push_back({wall, c, i});
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.cpuMs > b.cpuMs; });
    static const QMetaEnum types = QMetaEnum::fromType<QEvent::Type>();
    char head[128];
    // Ending at CLOCK_MONOTONIC's time (s), to find it in a `perf sched record -k monotonic`.
    const double endMonotonic = double(clock_.msecsSinceReference() * 1'000'000 + endNs) / 1e9;
    std::snprintf(head, sizeof head, "%lld ms ending at %.6f s, UI thread CPU %.1f ms in %zu events:",
                  static_cast<long long>(gap), endMonotonic, cpu, delivered_.size());
    longestWhat_ = head;
    for (std::size_t k = 0; k < spans.size() && k < 5; ++k) {
        const auto& d = delivered_[spans[k].at];
        const char* type = types.valueToKey(d.type);
        char figures[64];
        std::snprintf(figures, sizeof figures, " %.1f/%.1f ms", spans[k].wallMs, spans[k].cpuMs);
        longestWhat_ += std::string(k ? ", " : " ") + d.receiver + " " + (type ? type : std::to_string(d.type)) + figures;
    }
}

QString StreamProbe::longestGap() const {
    return longestGap_ < 0 ? QStringLiteral("none") : QString::fromStdString(longestWhat_);
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
    longestGap_ = -1;
    longestWhat_.clear();
    for (auto& r : replots_) r = {};
    delivered_.clear();
    QCoreApplication::instance()->installEventFilter(this);
    heartbeat_.start();
}

void StreamProbe::stop() {
    // No last tick: the final verdict runs between the last sample and runFinished, and the
    // 10 ms ticks have seen every sample already.
    heartbeat_.stop();
    QCoreApplication::instance()->removeEventFilter(this);
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
        explainGap(now - lastTick_, clock_.nsecsElapsed(), cpu);
        if (window_->runner()->isRunning()) {
            gaps_.push_back(now - lastTick_);
            maxBusyMs_ = std::max(maxBusyMs_, busy);
        } else {
            finishGapMs_ = std::max(finishGapMs_, now - lastTick_);
            finishBusyMs_ = std::max(finishBusyMs_, busy);
        }
    }
    if (n > seen_) {
        if (firstSampleMs_ < 0) {
            firstSampleMs_ = now;
            firstSampleCpuMs_ = cpu;
        }
        lastSampleMs_ = now;
        lastSampleCpuMs_ = cpu;
        seen_ = n;
    }
    lastTick_ = now;
    delivered_.clear();
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
               "busy at most %9 ms between two ticks during the stream, %10 ms after it; UI "
               "thread CPU %11 % of the stream")
        .arg(seen_)
        .arg(streamSeconds(), 0, 'f', 2)
        .arg(samplesPerSecond(), 0, 'f', 0)
        .arg(gapPercentileMs(50))
        .arg(gapPercentileMs(99))
        .arg(maxGapMs())
        .arg(gaps_.size())
        .arg(finishGapMs_)
        .arg(maxBusyMs_, 0, 'f', 0)
        .arg(finishBusyMs_, 0, 'f', 0)
        .arg(lastSampleMs_ > firstSampleMs_
                 ? 100.0 * (lastSampleCpuMs_ - firstSampleCpuMs_) / double(lastSampleMs_ - firstSampleMs_)
                 : 0.0,
             0, 'f', 0);
}

}  // namespace pitlane::app
