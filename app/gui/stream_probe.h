#pragma once
// Measures how the window copes with a sample stream (issue 3: "a 20 000 samples/s stream must
// not freeze the window"). A 10 ms heartbeat timer on the UI thread: every gap between two ticks
// while the run is going is time the event loop could not answer a click or repaint. It also
// clocks the stream as the UI thread saw it, first to last sample. Used by the GUI stream test
// and, with PITLANE_STREAM_PROBE=1, by `pitlane --run` for bench/gui_stream.sh.
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <cstddef>
#include <string>
#include <vector>

namespace pitlane::app {

class MainWindow;

class StreamProbe : public QObject {
    Q_OBJECT
public:
    explicit StreamProbe(const MainWindow* window, int intervalMs = 10);

    void start();  // before or right after startRun()
    void stop();

    std::size_t samples() const { return seen_; }
    double streamSeconds() const;     // first to last sample the UI thread saw
    double samplesPerSecond() const;  // 0 until two ticks saw samples
    // Event-loop gaps in ms between heartbeat ticks while samples streamed (expected: interval).
    qint64 maxGapMs() const;
    qint64 gapPercentileMs(double p) const;
    // The longest gap between the last worker stopping and stop() (finishing the run off).
    qint64 finishGapMs() const { return finishGapMs_; }
    // CPU time the UI thread itself spent between two ticks, at most (during the stream, and
    // after it): a gap much longer than this is the OS running other threads and processes
    // (the workers, on a loaded 2-core machine), not work of the window.
    double maxBusyMs() const { return maxBusyMs_; }
    double finishBusyMs() const { return finishBusyMs_; }
    std::size_t ticks() const { return gaps_.size(); }
    QString summary() const;  // one line: rate, stream time, gap median / p99 / max
    // What the longest gap (during the stream or after it) was made of: the UI thread's CPU
    // time in it and its costliest events (receiver class and event type, each event's wall and
    // CPU time until the next event began), e.g. "23 ms, UI thread CPU 9.1 ms:
    // LatencyTimelinePlot MetaCall 6.1/5.9 ms, ...". A gap with little CPU was the OS.
    QString longestGap() const;
    // Replots of each plot from start() to stop() and the UI-thread time they took (QCustomPlot's
    // own replotTime), e.g. "latencyPlot 31 x 1.9 ms (2 resized), ...", the costliest first;
    // replots while hidden and resize events counted.
    QString replots() const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void tick();

    const MainWindow* window_;
    QTimer heartbeat_;
    QElapsedTimer clock_;
    double lastCpuMs_ = 0, maxBusyMs_ = 0, finishBusyMs_ = 0;
    double firstSampleCpuMs_ = 0, lastSampleCpuMs_ = 0;  // the UI thread's, at those ticks
    qint64 lastTick_ = 0, firstSampleMs_ = -1, lastSampleMs_ = -1, finishGapMs_ = 0;
    std::size_t seen_ = 0;
    std::vector<qint64> gaps_;
    // Events delivered on the UI thread since the last tick (wall ns, thread CPU ms).
    struct Delivered {
        qint64 ns;
        double cpuMs;
        const char* receiver;
        int type;
    };
    std::vector<Delivered> delivered_;
    struct Replots {
        int count = 0;
        double ms = 0;
        int hidden = 0;
        int resized = 0;  // resize events (a relayout of the window while the run went)
    };
    std::vector<Replots> replots_;  // per plot of the panel
    void explainGap(qint64 gap, qint64 endNs, double endCpuMs);
    qint64 longestGap_ = -1;
    std::string longestWhat_;
};

}  // namespace pitlane::app
