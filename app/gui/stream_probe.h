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

private:
    void tick();

    const MainWindow* window_;
    QTimer heartbeat_;
    QElapsedTimer clock_;
    double lastCpuMs_ = 0, maxBusyMs_ = 0, finishBusyMs_ = 0;
    qint64 lastTick_ = 0, firstSampleMs_ = -1, lastSampleMs_ = -1, finishGapMs_ = 0;
    std::size_t seen_ = 0;
    std::vector<qint64> gaps_;
};

}  // namespace pitlane::app
