// Issue 3: "A 20 000 samples/s stream must not freeze the window". The real window, offscreen,
// with two real workers on the tiny_probe test model (x * 2, a few microseconds per forward, so
// the stream is limited by the pipeline, not by the model). A 10 ms heartbeat timer measures the
// event loop: any refresh, parse or replot that blocks the UI thread shows up as a long gap.
// What is asserted is what the window controls, in its UI thread's own CPU time: how long it is
// busy at once, and how many samples per second of that time it handles. The rate the stream
// reached in wall-clock time is logged: it is the workers' and the machine's load as much as the
// window's (bench/gui_stream.sh measures it; docs/PERFORMANCE.md).
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/results/verdict_calculator.h"
#include "pitlane/widgets/plots/latency_timeline_plot.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "pitlane/widgets/live/run_status_panel.h"
#include "stream_probe.h"
#include "ui_thread_fills.h"

#include <QElapsedTimer>
#include <QPainter>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QThreadPool>

#include <map>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <time.h>

using namespace pitlane;
using json = nlohmann::json;

namespace {
// What the window itself may spend on the UI thread at once (its CPU time between two heartbeat
// ticks), during the stream and when the run ends. Wall-clock gaps are logged, not asserted: on
// a loaded 2-core CI machine they hold the OS running the workers and everyone else (bench/
// gui_stream.sh measures them; docs/PERFORMANCE.md). Before the history writer thread, the end of
// the run held the UI thread 0.7-1.0 s.
constexpr double kMaxBusyMs = 250;
constexpr double kRequiredRate = 20000;  // samples/s, the figure
constexpr int kWarmup = 100;             // per arm; the timeline shows warmup too

QString tinyProbe() {
    return QDir(qEnvironmentVariable("PITLANE_MODEL_DIR"))
        .filePath(QStringLiteral("tiny_probe.pt"));
}

json tinyPreset(int iters, int blockIters) {
    const json knobs = {{"mode", "eval"}, {"grad", "inference_mode"}, {"intra_op_threads", 1}};
    return {{"name", "fast stream"},
            {"model", tinyProbe().toStdString()},
            // Exactly three processes per arm: identical arms would otherwise add replicate
            // rounds (inconclusive A/A) and the sample count would not follow `iters`.
            {"run",
             {{"warmup_iters", kWarmup},
              {"iters", iters},
              {"block_iters", blockIters},
              {"processes", 3}}},
            {"arms", {{{"name", "A"}, {"knobs", knobs}}, {{"name", "B"}, {"knobs", knobs}}}}};
}

// CPU time of the calling (UI) thread, in seconds.
double uiThreadCpuSeconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// Another connection holding the history file's write lock, from its own thread, until
// release() (or the end of the scope).
struct HistoryLock {
    std::atomic<bool> taken{false}, held{false}, released{false};
    std::thread holder;
    explicit HistoryLock(const QString& db) {
        holder = std::thread([this, db] {
            {
                QSqlDatabase other = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("holder"));
                other.setDatabaseName(db);
                if (other.open()) {
                    QSqlQuery q(other);
                    held = q.exec(QStringLiteral("BEGIN IMMEDIATE"));
                    taken = true;
                    while (!released) std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    q.exec(QStringLiteral("COMMIT"));
                }
                taken = true;
                other.close();
            }
            QSqlDatabase::removeDatabase(QStringLiteral("holder"));
        });
    }
    void release() {
        released = true;
        if (holder.joinable()) holder.join();
    }
    ~HistoryLock() { release(); }
};

std::size_t samplesOf(const results::RunResult& r) {
    std::size_t n = 0;
    for (const auto& a : r.arms) n += a.samples.size();
    return n;
}
}  // namespace

class GuiStream : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(app::keepFillsOnTheUiThread());  // as pitlane's main() does
        testing::failOnQtWarnings();
        if (!QFileInfo::exists(tinyProbe()))
            QFAIL(qPrintable(tinyProbe() + " is missing (build the test_models target)"));
    }

    void twentyThousandSamplesPerSecondDoNotFreezeTheWindow() {
        constexpr int kIters = 200000, kBlock = 50000;
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        // The real history too: every sample batch is written to SQLite on the way.
        QVERIFY(w.setDatabasePath(dir.filePath(QStringLiteral("history.sqlite"))));
        QVERIFY(w.openPreset(testing::writeJson(dir, "fast.json", tinyPreset(kIters, kBlock))));
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);

        // The heartbeat `pitlane --run` uses with PITLANE_STREAM_PROBE=1 (bench/gui_stream.sh).
        app::StreamProbe probe(&w);
        // A plot out of the layout (the GPU plot without a GPU, the serving plots) is not drawn
        // while hidden: a replot draws every layer into its buffers, shown or not.
        std::map<QString, int> hiddenReplots;
        for (auto* plot : w.plotPanel()->plots())
            connect(plot, &QCustomPlot::afterReplot, this, [plot, &hiddenReplots] {
                if (plot->isHidden()) ++hiddenReplots[plot->objectName()];
            });
        const double cpu0 = uiThreadCpuSeconds();
        QVERIFY(w.startRun());
        probe.start();
        QVERIFY(finished.wait(90000));
        probe.stop();
        const double uiCpu = uiThreadCpuSeconds() - cpu0;

        const auto& result = w.runner()->result();
        const std::size_t total = samplesOf(result);
        QCOMPARE(total, std::size_t(2 * kIters));
        QCOMPARE(probe.samples(), total);
        QVERIFY(probe.ticks() > 0);
        // Samples per second of the UI thread's CPU time over the whole run (its start, the
        // stream, the verdict and the end included): the rate the window could follow with one
        // core to itself. The wall-clock rate is logged only: it was 206-210 k samples/s at load
        // 1.9-2.9 on 2 cores and 38-115 k at load 4.2-4.9 (docs/PERFORMANCE.md); it falls with
        // the load and the workers' pace, which the window does not control.
        const double rate = probe.samplesPerSecond();
        const double uiRate = uiCpu > 0 ? double(total) / uiCpu : 0.0;
        qInfo("%s; %d plot refreshes; UI thread %.2f s of CPU: %.0f samples per CPU second",
              qPrintable(probe.summary()), w.plotPanel()->refreshCount(), uiCpu, uiRate);

        QVERIFY2(uiRate >= kRequiredRate,
                 qPrintable(QStringLiteral("the window handles %1 samples per second of its UI "
                                           "thread's CPU time only (the stream ran at %2/s)")
                                .arg(uiRate, 0, 'f', 0)
                                .arg(rate, 0, 'f', 0)));
        QVERIFY2(probe.maxBusyMs() < kMaxBusyMs,
                 qPrintable(QStringLiteral("the UI thread was busy %1 ms at once during the stream")
                                .arg(probe.maxBusyMs())));
        QVERIFY2(probe.finishBusyMs() < kMaxBusyMs,
                 qPrintable(QStringLiteral("finishing the run held the UI thread %1 ms")
                                .arg(probe.finishBusyMs())));
        // The views stay correct: the table reads every sample, the timeline stands for them
        // all (its envelope was computed from every one), drawing at most a few points a column.
        QCOMPARE(w.comparisonModel()->rowCount(), 2);
        auto* timeline = w.plotPanel()->timeline();
        QCOMPARE(timeline->dataPoints(), int(total) + 2 * kWarmup);
        for (std::size_t a = 0; a < 2; ++a) {
            QCOMPARE(timeline->samplesShown(a), std::size_t(kIters));
            // One column a pixel (a few pixels' change of width keeps the envelope).
            const int columns = timeline->envelopeColumns(a);
            QVERIFY2(columns <= timeline->axisRect()->width() * 9 / 8 + 1 && timeline->pointsDrawn(a) <= 4 * columns + 2,
                     qPrintable(QStringLiteral("%1 points, %2 columns, %3 px")
                                    .arg(timeline->pointsDrawn(a))
                                    .arg(columns)
                                    .arg(timeline->axisRect()->width())));
        }
        sameExtremesAsTheSamples(timeline, result);
        // One bootstrap as the run ends, not two side by side: the final verdict reused the
        // comparisons the history writer computed for the run's stored verdict.
        auto* verdict = w.findChild<widgets::VerdictCalculator*>();
        QVERIFY(verdict);
        QVERIFY2(verdict->finalReusedComparisons(), "the final verdict compared the arms again");
        // At most the new run's first (empty) replot of each.
        for (const auto& [name, n] : hiddenReplots)
            QVERIFY2(n <= 1, qPrintable(QStringLiteral("%1 was replotted %2 times while hidden").arg(name).arg(n)));
    }

    // Issue 44: samples streaming do not lay the window out again. The status rows' texts (phases,
    // iteration counts, times) and the plots' tick labels change with every refresh; when they
    // raised a panel's minimum width, a window at its narrowest grew, the splitter moved and
    // every plot was resized and replotted while the first samples came (8-9 ms on the UI thread
    // at once). Counted from the first sample to the run's end, at the window's minimum width,
    // where any rise of a minimum must move something.
    void streamingSamplesDoNotLayTheWindowOut() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.openPreset(testing::writeJson(dir, "fast.json", tinyPreset(60000, 20000))));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.resize(w.minimumSizeHint().width(), 800);
        QTRY_COMPARE(w.width(), w.minimumSizeHint().width());
        QSignalSpy finished(&w, &app::MainWindow::runFinished);

        struct Resizes : QObject {
            bool streaming = false;
            std::map<QString, int> seen;
            bool eventFilter(QObject* o, QEvent* e) override {
                if (streaming && e->type() == QEvent::Resize) ++seen[QString::fromUtf8(o->metaObject()->className()) + QLatin1Char(' ') + o->objectName()];
                return false;
            }
        } resizes;
        std::vector<QWidget*> watched = {&w, w.statusPanel(), w.plotPanel()};
        for (auto* plot : w.plotPanel()->plots()) watched.push_back(plot);
        for (auto* widget : watched) widget->installEventFilter(&resizes);
        QVERIFY(w.startRun());
        // From the first sample (a worker's hello may hide the GPU plot before: a narrower row).
        int statusMin = -1, plotsMin = -1;
        connect(w.runner(), &session::ExperimentRunner::samplesAppended, this, [&] {
            if (resizes.streaming) return;
            resizes.streaming = true;
            statusMin = w.statusPanel()->minimumSizeHint().width();
            plotsMin = w.plotPanel()->minimumSizeHint().width();
        });
        connect(w.runner(), &session::ExperimentRunner::finished, this, [&] { resizes.streaming = false; });
        QVERIFY(finished.wait(90000));
        QCOMPARE(samplesOf(w.runner()->result()), std::size_t(2 * 60000));
        QStringList moved;
        for (const auto& [what, n] : resizes.seen) moved << QStringLiteral("%1 x%2").arg(what).arg(n);
        QVERIFY2(moved.isEmpty(), qPrintable(QStringLiteral("resized while samples streamed: ") + moved.join(QStringLiteral(", "))));
        QCOMPARE(w.statusPanel()->minimumSizeHint().width(), statusMin);
        QCOMPARE(w.plotPanel()->minimumSizeHint().width(), plotsMin);
    }

    // The final verdict waits for the history's write of the run, whose comparisons it reuses
    // (the first test), but not for another process's lock on the history file: a second after
    // the run's end without that write begun, it is computed on its own. The run is stored once
    // the lock goes.
    void aLockedHistoryDoesNotHoldTheVerdict() {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("history.sqlite"));
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db));
        QVERIFY(w.openPreset(testing::writeJson(dir, "short.json", tinyPreset(3000, 1000))));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        HistoryLock lock(db);
        QTRY_VERIFY(lock.taken);
        QElapsedTimer clock;
        QVERIFY(w.startRun());
        clock.start();
        // The run takes a second or two; without the fallback the verdict would wait for the
        // lock (released only after this wait).
        const bool verdictCame = finished.wait(8000);
        const qint64 tookMs = clock.elapsed();
        lock.release();
        QVERIFY(lock.held);
        QVERIFY2(verdictCame, "the run's end waited for the history file's lock");
        QCOMPARE(w.comparisonModel()->rowCount(), 2);
        auto* verdict = w.findChild<widgets::VerdictCalculator*>();
        QVERIFY(verdict);
        QVERIFY(!verdict->finalReusedComparisons());  // computed on its own
        qInfo("run and verdict in %lld ms with the history locked", static_cast<long long>(tookMs));
        // Lock gone: the writer's retries store the run whole.
        QCOMPARE(w.runNotStored(), QString());
    }

    // The window closed while the final verdict waits for the history's write: nothing waits
    // on, nothing is called on what is gone (RunController went before the history's recorder).
    void closingWhileTheVerdictWaitsForTheHistory() {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("history.sqlite"));
        auto w = std::make_unique<app::MainWindow>();
        w->setInteractive(false);
        QVERIFY(w->setDatabasePath(db));
        QVERIFY(w->openPreset(testing::writeJson(dir, "short.json", tinyPreset(3000, 1000))));
        HistoryLock lock(db);
        QTRY_VERIFY(lock.taken);
        QSignalSpy ended(w->runner(), &session::ExperimentRunner::finished);
        QVERIFY(w->startRun());
        QVERIFY(ended.wait(30000));
        QTest::qWait(100);  // the verdict waits (a second at most) for the write, held by the lock
        QVERIFY(!w->isRunning());
        lock.release();  // the recorder, deleted with the window, lets its writer finish first
        QVERIFY(lock.held);
        w.reset();
    }

    // ui_thread_fills.h: fills of many spans on the UI thread (a translucent rectangle, a 2 px
    // polyline down 1000 rows, as a tall background or a plot's line) stay on it: the process
    // starts no thread for them. Any other thread still gets Qt's pool.
    void fillsStayOnTheUiThread() {
        QThreadPool* elsewhere = nullptr;
        std::thread([&] { elsewhere = QThreadPool::globalInstance(); }).join();
        QVERIFY(elsewhere);
        auto threads = [] {
            return QDir(QStringLiteral("/proc/self/task")).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size();
        };
        const auto before = threads();
        QImage image(1000, 1000, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        QPainter p(&image);
        p.fillRect(image.rect(), QColor(255, 0, 0, 100));
        p.setPen(QPen(Qt::blue, 2));
        QPolygonF line;
        for (int y = 0; y < 1000; ++y) line << QPointF(500 + 400 * std::sin(y / 30.0), y);
        p.drawPolyline(line);
        p.end();
        QCOMPARE(image.pixelColor(500, 0).blue(), 255);  // drawn
        QCOMPARE(threads(), before);
    }

    // The envelope holds, for every column, the lowest and the highest sample and nothing that
    // is not a sample, compared with every sample placed in its column one by one: series of
    // several runs (blocks), every iteration or a zoomed part, columns from 1 to many, and few
    // samples (drawn one by one).
    void envelopeHoldsEveryColumnsExtremes() {
        std::mt19937_64 rng(44);
        for (int round = 0; round < 40; ++round) {
            results::SampleSeries samples;
            const int runs = 1 + int(rng() % 12);
            for (int r = 0; r < runs; ++r) {
                std::vector<std::int64_t> ns(1 + rng() % (round % 3 == 0 ? 50 : 9000));
                for (auto& v : ns) v = std::int64_t(100'000 + rng() % 900'000) * (rng() % 97 == 0 ? 20 : 1);
                samples.append(r / 2, int(samples.size()), 1, 0, r % 3, ns.data(), ns.size());
            }
            const double n = double(samples.size());
            const int columns = 1 + int(rng() % 700);
            double x0 = 0, x1 = n - 1;
            if (round % 2 == 1) {  // a zoomed view: a part of the iterations, not on integers
                x0 = double(rng() % std::uint64_t(n)) - 0.37;
                x1 = x0 + 1.7 + double(rng() % std::uint64_t(n));
            }
            const auto e = Timeline::envelope(samples, x0, x1, columns);
            checkEnvelope(samples, e, x0, x1, columns);
            if (QTest::currentTestFailed()) QFAIL(qPrintable(QStringLiteral("round %1").arg(round)));
        }
    }

private:
    using Timeline = widgets::LatencyTimelinePlot;

    // Every column of the envelope against every sample of the column, found one by one.
    static void checkEnvelope(const results::SampleSeries& samples, const Timeline::Envelope& e,
                              double x0, double x1, int columns) {
        struct Column {
            bool any = false;
            double lo = 0, hi = 0;
            int points = 0;
        };
        std::vector<Column> want(static_cast<std::size_t>(columns)), got(static_cast<std::size_t>(columns));
        std::map<double, double> byX;  // every sample, ms by iteration
        std::size_t inRange = 0;
        for (std::size_t i = 0; i < samples.size(); ++i) {
            const auto s = samples[i];
            const double x = s.iter, ms = double(s.latency_ns) / 1e6;
            byX[x] = ms;
            if (x < x0 || x > x1) continue;
            ++inRange;
            auto& c = want[std::size_t(Timeline::columnOf(x, x0, x1, columns))];
            c.lo = c.any ? std::min(c.lo, ms) : ms;
            c.hi = c.any ? std::max(c.hi, ms) : ms;
            c.any = true;
        }
        QCOMPARE(e.samples, inRange);
        QCOMPARE(e.raw, inRange <= std::size_t(Timeline::kRawPerColumn * columns));
        double lastX = -INFINITY;
        int outside = 0;
        std::size_t drawnInRange = 0;
        for (auto it = e.points->constBegin(); it != e.points->constEnd(); ++it) {
            QVERIFY2(it->key > lastX, "the points are not in iteration order");
            lastX = it->key;
            QVERIFY2(byX.count(it->key) && byX[it->key] == it->value, "a point that is no sample");
            if (it->key < x0 || it->key > x1) {
                ++outside;
                continue;
            }
            ++drawnInRange;
            auto& c = got[std::size_t(Timeline::columnOf(it->key, x0, x1, columns))];
            c.lo = c.any ? std::min(c.lo, it->value) : it->value;
            c.hi = c.any ? std::max(c.hi, it->value) : it->value;
            c.any = true;
            ++c.points;
        }
        QVERIFY(outside <= 2);  // the neighbours the line runs on to, at most one a side
        if (e.raw) QCOMPARE(drawnInRange, inRange);
        for (int c = 0; c < columns; ++c) {
            const auto& w = want[std::size_t(c)];
            const auto& g = got[std::size_t(c)];
            QCOMPARE(g.any, w.any);
            if (!w.any) continue;
            QCOMPARE(g.lo, w.lo);
            QCOMPARE(g.hi, w.hi);
            if (!e.raw) QVERIFY(g.points <= 4);
        }
    }

    // The plot draws each arm's envelope for its own width and range: the same extremes per
    // column as the samples, and the value axis shows the lowest and highest sample.
    static void sameExtremesAsTheSamples(Timeline* plot, const results::RunResult& run) {
        double lo = INFINITY, hi = -INFINITY;
        for (std::size_t a = 0; a < run.arms.size(); ++a) {
            const auto& samples = run.arms[a].samples;
            Timeline::Envelope shown;
            shown.points = plot->graph(int(2 * a + 1))->data();
            // The range and columns it was computed for: those of a fresh computation here.
            double x0 = INFINITY, x1 = -INFINITY;
            for (const auto& r : samples.runs()) {
                x0 = std::min(x0, double(r.first_iter));
                x1 = std::max(x1, double(r.first_iter) + double(r.count) - 1);
            }
            const int columns = plot->envelopeColumns(a);
            QVERIFY(columns > 0);
            const auto fresh = Timeline::envelope(samples, x0, x1, columns);
            shown.samples = fresh.samples;
            shown.raw = fresh.raw;
            checkEnvelope(samples, shown, x0, x1, columns);
            for (const auto s : samples) {
                lo = std::min(lo, double(s.latency_ns) / 1e6);
                hi = std::max(hi, double(s.latency_ns) / 1e6);
            }
        }
        QVERIFY2(plot->yAxis->range().contains(lo) && plot->yAxis->range().contains(hi),
                 qPrintable(QStringLiteral("%1..%2 ms not in %3..%4")
                                .arg(lo)
                                .arg(hi)
                                .arg(plot->yAxis->range().lower)
                                .arg(plot->yAxis->range().upper)));
    }
};

PITLANE_GUI_TEST_MAIN(GuiStream)
#include "gui_stream.moc"
