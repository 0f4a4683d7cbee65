// Process replicates in the window: the strip of per-process medians under the latency
// distribution (one dot per process per arm, on the histogram's latency axis, with a tooltip per
// dot), the comparison table's faults/iter and processes columns, a run reopened from the
// history, and a real run of the bundled mlp model in 3 processes per arm.
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/results/verdict_calculator.h"
#include "pitlane/widgets/plots/latency_distribution_plot.h"
#include "pitlane/widgets/plots/latency_timeline_plot.h"
#include "pitlane/widgets/plots/throughput_plot.h"
#include "pitlane/widgets/live/log_pane.h"
#include "pitlane/widgets/plots/plot_panel.h"

#include <QAbstractItemModelTester>
#include <QHelpEvent>
#include <QLabel>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

using namespace pitlane;
using json = nlohmann::json;
using C = widgets::ComparisonTableModel;

namespace {
// Two arms in 3 processes each (2 blocks of 10 samples per process). A is bimodal: two
// processes near 10 ms, one near 27 ms taking 30 minor page faults per iteration; B's three
// processes agree near 5 ms and take none.
results::RunResult threeProcessRun() {
    results::RunResult run;
    run.preset.name = "processes";
    run.preset.model = "mlp";
    run.preset.run.processes = 3;
    run.preset_json = {{"name", "processes"}, {"model", "mlp"}, {"run", {{"processes", 3}}}};
    run.started_at = "2024-03-01T10:00:00Z";
    run.wall_s = 2.5;
    const double medians[2][3] = {{10e6, 10.5e6, 27e6}, {5e6, 5.1e6, 5.2e6}};
    for (int a = 0; a < 2; ++a) {
        results::ArmResult arm;
        arm.name = a == 0 ? "A" : "B";
        arm.status = results::kOk;
        arm.applied.allocator = "system";
        int iter = 0;
        for (int r = 0; r < 3; ++r) {
            results::ProcessInfo p;
            p.replicate = r;
            p.pid = 1000 + 10 * a + r;
            p.load_ms = r == 0 ? 12.5 : -1;
            p.first_forward_ms = r == 0 ? 3.5 : -1;
            p.fault_iters = 20;
            p.minor_faults = a == 0 ? (r == 2 ? 600 : 2) : 0;
            arm.processes.push_back(p);
            for (int i = 0; i < 20; ++i) {
                results::Sample s;
                s.block = 2 * r + i / 10;
                s.iter = iter++;
                s.latency_ns = std::int64_t(medians[a][r]) + (i % 5) * 20'000;
                s.process = r;
                arm.samples.push_back(s);
            }
        }
        arm.pid = arm.processes.back().pid;
        run.arms.push_back(arm);
    }
    return run;
}

// Two arms, 3 processes of 4 blocks of 2500 samples each (30 000 an arm), with a tail: enough
// samples for bins on a logarithmic axis and a timeline without markers.
results::RunResult longerRun() {
    auto run = threeProcessRun();
    std::mt19937_64 rng(9);
    for (std::size_t a = 0; a < run.arms.size(); ++a) {
        auto& arm = run.arms[a];
        results::SampleSeries samples;
        int iter = 0;
        for (int r = 0; r < 3; ++r)
            for (int b = 0; b < 4; ++b)
                for (int i = 0; i < 2500; ++i) {
                    std::int64_t ns = std::int64_t(2e6 + 1e6 * double(a) + double(rng() % 400'000));
                    if (rng() % 200 == 0) ns *= 12;
                    samples.push_back({4 * r + b, iter++, 1, 0, ns, r});
                }
        arm.samples = samples;
    }
    return run;
}

// Shows a run in a plot panel of its own, laid out at a usual size.
struct ShownPanel {
    widgets::PlotPanel panel;
    explicit ShownPanel(const results::RunResult& run) {
        panel.resize(1100, 600);
        panel.show();
        if (!QTest::qWaitForWindowExposed(&panel)) qFatal("plot panel not exposed");
        panel.showRun(std::make_shared<const results::RunResult>(run));
        panel.flush();  // showRun draws one plot a turn
    }
    widgets::LatencyDistributionPlot* plot() const { return panel.distribution(); }
};

QString toolTipAt(QWidget* w, QPoint pos) {
    // The offscreen platform cannot raise the tooltip window, and says so.
    if (QGuiApplication::platformName() == QLatin1String("offscreen"))
        QTest::ignoreMessage(QtWarningMsg, "This plugin does not support raise()");
    QHelpEvent help(QEvent::ToolTip, pos, w->mapToGlobal(pos));
    QCoreApplication::sendEvent(w, &help);
    return QToolTip::isVisible() ? QToolTip::text() : QString();
}
}  // namespace

class GuiProcesses : public QObject {
    Q_OBJECT
    QTemporaryDir history_;  // the real run's history, reopened by the test after it
    qint64 liveRunId_ = 0;
    std::vector<std::vector<double>> liveMedians_;

private slots:
    void init() {
        testing::failOnQtWarnings();
        QSettings().clear();
    }

    void stripHasOneDotPerProcessOnTheLatencyAxis() {
        const auto run = threeProcessRun();
        ShownPanel shown(run);
        auto* plot = shown.plot();
        QVERIFY(plot->processStripShown());
        for (int arm = 0; arm < 2; ++arm) {
            QCOMPARE(plot->processDots(arm), 3);
            // The medians of results::processSummaries, the figures of the JSON and warnings.
            std::vector<double> expected;
            for (const auto& p : results::processSummaries(run.arms[std::size_t(arm)]))
                expected.push_back(p.median_ns);
            QCOMPARE(plot->processMedians(arm), expected);
        }
        QCOMPARE(plot->processDots(2), 0);

        // The strip shares the histogram's latency axis: same range, same scale, and every dot
        // (A's 27 ms process too) is inside it, on the histogram's pixels.
        QCPAxis* stripX = plot->processStrip()->axis(QCPAxis::atBottom);
        QCOMPARE(stripX->range(), plot->xAxis->range());
        QCOMPARE(stripX->scaleType(), plot->xAxis->scaleType());
        QVERIFY(plot->logScale());  // 5 to 27 ms: more than 4x
        for (int arm = 0; arm < 2; ++arm)
            for (double ns : plot->processMedians(arm))
                QVERIFY(plot->xAxis->range().contains(ns / 1e6));
        const QRect main = plot->axisRect()->rect(), strip = plot->processStrip()->rect();
        QCOMPARE(strip.left(), main.left());
        QCOMPARE(strip.right(), main.right());
        QVERIFY(strip.top() >= main.bottom());
        QVERIFY(strip.height() >= 20);
        QCOMPARE(qRound(stripX->coordToPixel(10.0)), qRound(plot->xAxis->coordToPixel(10.0)));
        // The latency axis is labelled once, under the strip, and says what the dots are.
        // (In full: the label shown is shortened with "…" when the plot is narrow.)
        QVERIFY(stripX->property("pitlaneFullLabel").toString().contains(QStringLiteral("process medians")));
        QVERIFY(plot->xAxis->label().isEmpty());
        QVERIFY(!plot->xAxis->tickLabels());

        // Panning the histogram pans the strip (and back).
        plot->xAxis->setRange(plot->xAxis->range().lower * 1.1, plot->xAxis->range().upper);
        QCOMPARE(stripX->range(), plot->xAxis->range());
        stripX->setRange(2, 40);
        QCOMPARE(plot->xAxis->range(), QCPRange(2, 40));
        plot->replot(QCustomPlot::rpImmediateRefresh);

        // A tooltip per dot: which process, its pid, n, median and page faults.
        const QPointF slow = plot->processDotPosition(0, 2);
        QVERIFY(plot->processStrip()->rect().contains(slow.toPoint()));
        const QString tip = plot->processToolTip(slow.toPoint());
        QVERIFY2(tip.contains(QStringLiteral("A · process 3 of 3 (pid 1002)")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("n = 20")), qPrintable(tip));
        QVERIFY2(tip.contains(
                     QString::fromStdString(results::formatDuration(plot->processMedians(0)[2]))),
                 qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("minor page faults per iteration: 30.0")),
                 qPrintable(tip));
        const QString first = plot->processToolTip(plot->processDotPosition(1, 0).toPoint());
        QVERIFY2(first.contains(QStringLiteral("B · process 1 of 3 (pid 1010)")) &&
                     first.contains(QStringLiteral("model load 12.5 ms, first forward 3.5 ms")),
                 qPrintable(first));
        QVERIFY(plot->processToolTip(QPoint(2, 2)).isEmpty());
        // Through the widget's own tooltip event, as a hovering user gets it.
        QCOMPARE(toolTipAt(plot, slow.toPoint()), tip);
        QToolTip::hideText();
    }

    // A run reopened from the history: what the plots compute from every sample is computed on
    // the reader's thread (PlotPanel::prepare). The panel must show exactly what it shows when
    // it computes everything itself.
    void aRunPreparedOffTheUiThreadShowsTheSame() {
        const auto run = longerRun();
        ShownPanel computed(run);
        auto copy = std::make_shared<results::RunResult>(run);
        std::shared_ptr<widgets::PreparedRun> prepared;
        std::thread reader([&] { prepared = widgets::PlotPanel::prepare(*copy); });
        reader.join();
        for (const auto& a : copy->arms) QVERIFY(results::memoizedSortedLatencies(a) != nullptr);
        widgets::PlotPanel panel;
        panel.resize(1100, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        // showRun draws one plot a turn of the event loop, then says flushed().
        QSignalSpy flushed(&panel, &widgets::PlotPanel::flushed);
        panel.showRun(copy, prepared);
        QTRY_COMPARE(flushed.count(), 1);
        // The timeline draws the prepared envelope at once, then its own for its width (off
        // the UI thread): compared once both panels have theirs.
        QTRY_VERIFY(!computed.panel.timeline()->envelopePending() && !panel.timeline()->envelopePending());

        const auto sameGraphs = [](QCustomPlot* a, QCustomPlot* b) {
            QCOMPARE(a->graphCount(), b->graphCount());
            for (int g = 0; g < a->graphCount(); ++g) {
                const auto da = a->graph(g)->data(), db = b->graph(g)->data();
                QCOMPARE(da->size(), db->size());
                for (int k = 0; k < da->size(); ++k) {
                    QCOMPARE(da->at(k)->key, db->at(k)->key);
                    QCOMPARE(da->at(k)->value, db->at(k)->value);
                }
            }
        };
        sameGraphs(computed.panel.distribution(), panel.distribution());
        sameGraphs(computed.panel.timeline(), panel.timeline());
        QCOMPARE(panel.timeline()->blockBoundaries(), computed.panel.timeline()->blockBoundaries());
        QCOMPARE(panel.timeline()->blockBoundaries(), 3 * 4 - 1);  // between blocks (both arms alike)
        QCOMPARE(panel.timeline()->samplesShown(0), run.arms[0].samples.size());
        QVERIFY(panel.timeline()->pointsDrawn(0) <= 4 * panel.timeline()->envelopeColumns(0) + 2);
        QCOMPARE(panel.distribution()->xAxis->range(), computed.panel.distribution()->xAxis->range());
        QCOMPARE(panel.throughput()->barValue(1), computed.panel.throughput()->barValue(1));
    }

    // The distribution is computed off the UI thread, each computation sorting only the samples
    // new since the last one into those sorted before. Fed a run that grows in uneven steps
    // (answers awaited after some steps, newer requests replacing waiting ones after others), it
    // ends with the same histogram, CDF, marks and dots as a plot computing the whole run at
    // once; a refresh does not draw on the UI thread (the old answer stays until the new one).
    void distributionOffTheUiThreadEqualsOneComputation() {
        const auto full = longerRun();
        widgets::LatencyDistributionPlot live, whole;
        results::RunResult growing = full;
        for (auto& a : growing.arms) a.samples = results::SampleSeries();
        live.resetRun(growing);
        std::mt19937_64 rng(11);
        std::vector<std::size_t> at(full.arms.size(), 0);
        int step = 0;
        for (bool more = true; more; ++step) {
            more = false;
            for (std::size_t a = 0; a < full.arms.size(); ++a) {
                const auto& all = full.arms[a].samples;
                const std::size_t n = std::min(all.size(), at[a] + 1 + rng() % 4000);
                // Appended in place, as the runner does while a computation reads a copy.
                for (std::size_t k = at[a]; k < n; ++k) growing.arms[a].samples.push_back(all[k]);
                at[a] = n;
                more |= n < all.size();
            }
            const int before = live.graphCount() > 0 ? live.graph(0)->dataCount() : -1;
            live.refresh(growing);
            QVERIFY(live.computePending());
            QCOMPARE(live.graphCount() > 0 ? live.graph(0)->dataCount() : -1, before);
            if (step % 3 == 0) QTRY_VERIFY(!live.computePending());
        }
        // The run's end: a refresh with no new samples brings the process medians up to date
        // (while samples stream they are redone at most once a second).
        live.refresh(growing);
        QTRY_VERIFY(!live.computePending());
        whole.refresh(full);
        whole.settle();
        QVERIFY(!whole.computePending());
        QCOMPARE(live.graphCount(), whole.graphCount());
        for (int g = 0; g < live.graphCount(); ++g) {
            const auto a = live.graph(g)->data(), b = whole.graph(g)->data();
            QCOMPARE(a->size(), b->size());
            for (int k = 0; k < a->size(); ++k) {
                QCOMPARE(a->at(k)->key, b->at(k)->key);
                QCOMPARE(a->at(k)->value, b->at(k)->value);
            }
        }
        QCOMPARE(live.xAxis->range(), whole.xAxis->range());
        QCOMPARE(live.logScale(), whole.logScale());
        for (int arm = 0; arm < 2; ++arm) QCOMPARE(live.processMedians(arm), whole.processMedians(arm));
    }

    // The histogram's counts, found by bisecting the sorted latencies, are those of placing each
    // sample in its bin one by one, at bin edges too (linear and logarithmic bins).
    void binCountsAreThoseOfEverySampleInItsBin() {
        using D = widgets::LatencyDistributionPlot;
        std::mt19937_64 rng(5);
        for (int round = 0; round < 20; ++round) {
            const bool log = round % 2 == 1;
            std::vector<double> v(1 + rng() % 20000);
            for (auto& x : v) x = double(100'000 + rng() % 900'000) * (rng() % 100 == 0 ? 30.0 : 1.0);
            std::sort(v.begin(), v.end());
            const double lo = v.front() / 1e6, hi = v[v.size() * 9 / 10] / 1e6;
            D::Bins bins{log ? std::log2(lo) : lo, log ? std::log2(hi) : hi, 10 + round * 3, log};
            std::vector<std::size_t> expected(std::size_t(bins.count), 0);
            for (double x : v) {
                const double ms = x / 1e6;
                const int b = std::clamp(int(((log ? std::log2(ms) : ms) - bins.from) / bins.width()), 0, bins.count - 1);
                ++expected[std::size_t(b)];
            }
            QCOMPARE(D::binCounts(v, bins), expected);
        }
    }

    void stripStaysHiddenWithoutProcesses() {
        auto run = threeProcessRun();
        run.preset.run.processes = 1;
        for (auto& a : run.arms) {
            a.processes.clear();
            {
                results::SampleSeries one;
                for (auto s : a.samples) {
                    s.process = 0;
                    one.push_back(s);
                }
                a.samples = one;
            }
        }
        ShownPanel shown(run);
        auto* plot = shown.plot();
        QVERIFY(!plot->processStripShown());
        QCOMPARE(plot->processDots(0), 0);
        QVERIFY(plot->dataPoints() > 0);  // the histogram is there
        QVERIFY(plot->xAxis->tickLabels());
        QVERIFY(plot->xAxis->label().startsWith(QStringLiteral("latency")));
        QVERIFY(plot->processToolTip(QPoint(100, 100)).isEmpty());
        // The same plot then shows a run with processes: the strip comes back.
        shown.panel.showRun(std::make_shared<const results::RunResult>(threeProcessRun()));
        shown.panel.flush();
        QVERIFY(plot->processStripShown());
        QCOMPARE(plot->processDots(0), 3);
        QVERIFY(!plot->xAxis->tickLabels());
    }

    // The comparison rows the window's VerdictCalculator computes for `run` (final request).
    static std::vector<widgets::ComparisonRow> windowRows(const results::RunResult& run) {
        widgets::VerdictCalculator calculator;
        std::vector<widgets::ComparisonRow> rows;
        bool done = false;
        QObject::connect(&calculator, &widgets::VerdictCalculator::ready,
                         [&](const std::vector<widgets::ComparisonRow>& r, bool) {
                             rows = r;
                             done = true;
                         });
        calculator.request(run, true);
        for (int waited = 0; !done && waited < 30000; waited += 10) QTest::qWait(10);
        return rows;  // empty when it never answered: the caller's checks fail
    }

    void tableShowsFaultsAndProcesses() {
        const auto run = threeProcessRun();
        C model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        // As the window computes it: from the verdict thread's mirror of the run.
        model.setRows(windowRows(run));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.headerData(C::FaultsPerIter, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QStringLiteral("Faults/iter"));
        QCOMPARE(model.headerData(C::Processes, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QStringLiteral("Processes"));
        // A: (2 + 2 + 600) faults over 60 iterations; B: none.
        QCOMPARE(model.index(0, C::FaultsPerIter).data().toString(), QStringLiteral("10.1"));
        QCOMPARE(model.index(1, C::FaultsPerIter).data().toString(), QStringLiteral("0"));
        QVERIFY(model.index(0, C::FaultsPerIter).data(Qt::FontRole).value<QFont>().bold());
        QVERIFY(!model.index(1, C::FaultsPerIter).data(Qt::FontRole).isValid());
        const auto procs = results::processSummaries(run.arms[0]);
        const double spread = procs[2].median_ns / procs[0].median_ns;
        QCOMPARE(model.index(0, C::Processes).data().toString(),
                 QStringLiteral("3 · %1× apart").arg(spread, 0, 'f', 2));
        QVERIFY(model.index(0, C::Processes).data(Qt::FontRole).value<QFont>().bold());
        QVERIFY(
            model.index(1, C::Processes).data().toString().startsWith(QStringLiteral("3 · 1.0")));
        const QString tip = model.index(0, C::Processes).data(Qt::ToolTipRole).toString();
        const auto shares = results::varianceShares(run.arms[0]);
        QVERIFY(shares.computed);
        QVERIFY2(tip.contains(QStringLiteral("%1 % between processes")
                                  .arg(100 * shares.between_processes, 0, 'f', 0)) &&
                     tip.contains(QStringLiteral("between blocks")) &&
                     tip.contains(QStringLiteral("within blocks")) &&
                     tip.contains(QStringLiteral("pid 1002")),
                 qPrintable(tip));
        QVERIFY(model.index(0, C::FaultsPerIter)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("minor page faults per measured iteration")));
        // The verdict cell is elided when narrow: its tooltip has it whole.
        const auto verdict = QString::fromStdString(model.rows()[1].comparison->verdict);
        QVERIFY(model.index(1, C::Verdict)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(verdict.toHtmlEscaped()));

        // A run without process records (an older one) says so with a dash.
        auto old = run;
        for (auto& a : old.arms) a.processes.clear();
        model.setRows(widgets::comparisonRows(old));
        QCOMPARE(model.index(0, C::FaultsPerIter).data().toString(), QStringLiteral("—"));
        QCOMPARE(model.index(0, C::Processes).data().toString(), QStringLiteral("—"));

        // Arms of different runs stay unpaired in the window's verdict, as in the exports.
        auto cross = run;
        cross.interleaved = false;
        const auto rows = windowRows(cross);
        QVERIFY(rows[1].comparison);
        QCOMPARE(rows[1].comparison->method, results::compareArms(cross).front().method);
        QVERIFY(QString::fromStdString(rows[1].comparison->method)
                    .contains(QStringLiteral("unpaired")));
    }

    // A run reopened from the history shows the same strip, table and warnings.
    void reopenedRunShowsTheStrip() {
        QTemporaryDir dir;
        const auto run = threeProcessRun();
        qint64 id = 0;
        {
            store::RunStore s;
            QVERIFY(s.open(dir.filePath(QStringLiteral("h.sqlite"))));
            const auto imported = s.importRun(run, QStringLiteral("test"));
            QVERIFY(imported);
            id = *imported;
            const auto loaded = s.loadRun(id);
            QVERIFY(loaded);
            QVERIFY2(!loaded->arms[0].processes.empty(), "the run loader did not restore the worker processes");
        }
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(dir.filePath(QStringLiteral("h.sqlite"))));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.showStoredRun(id));
        auto* plot = w.plotPanel()->distribution();
        QVERIFY(plot->processStripShown());
        QCOMPARE(plot->processDots(0), 3);
        QCOMPARE(plot->processDots(1), 3);
        QTRY_COMPARE_WITH_TIMEOUT(w.comparisonModel()->rowCount(), 2, 10000);
        QCOMPARE(w.comparisonModel()->index(0, C::FaultsPerIter).data().toString(),
                 QStringLiteral("10.1"));
        const QString log = w.logPane()->plainText();
        QVERIFY2(log.contains(QStringLiteral("worker processes disagree")), qPrintable(log));
    }

    // A real run in 3 processes per arm: the strip fills live and ends with one dot per
    // process, the table has the processes and faults of every arm, and the process warnings
    // (if any) reach the Log as they reach the CLI.
    void realRunInThreeProcesses() {
        QTemporaryDir dir;
        json p = testing::mlpPreset(30, 5, 2);
        p["run"]["processes"] = 3;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(history_.filePath(QStringLiteral("live.sqlite"))));
        QVERIFY(w.openPreset(testing::writeJson(dir, "p.json", p)));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QElapsedTimer clock;
        clock.start();
        QVERIFY(w.startRun());
        auto* plot = w.plotPanel()->distribution();
        // Live: the strip appears with the first round's dots before the run ends.
        QTRY_VERIFY_WITH_TIMEOUT(
            w.isRunning() && plot->processDots(0) >= 1 && plot->processStripShown(), 30000);
        QVERIFY(finished.wait(60000));
        qInfo("3 x 2 processes in %lld ms", clock.elapsed());
        QCOMPARE(finished.first().first().toBool(), true);
        const auto& result = w.runner()->result();
        for (int arm = 0; arm < 2; ++arm) {
            QCOMPARE(result.arms[std::size_t(arm)].processes.size(), std::size_t(3));
            QCOMPARE(plot->processDots(arm), 3);
            QCOMPARE(w.comparisonModel()->index(arm, C::Processes).data().toString().left(4),
                     QStringLiteral("3 · "));
            const QString faults =
                w.comparisonModel()->index(arm, C::FaultsPerIter).data().toString();
            QVERIFY2(!faults.isEmpty() && faults != QStringLiteral("—"), qPrintable(faults));
        }
        QVERIFY(plot->processToolTip(plot->processDotPosition(1, 1).toPoint())
                    .contains(QStringLiteral("B · process 2 of 3")));
        const QString log = w.logPane()->plainText();
        for (const auto& warning : results::runWarnings(result))
            QVERIFY2(log.contains(QString::fromStdString(warning)), warning.c_str());
        // The verdict line has every verdict whole.
        const QString verdict = w.findChild<QLabel*>(QStringLiteral("verdictLine"))->text();
        for (const auto& c : results::compareArms(result))
            QVERIFY2(verdict.contains(QString::fromStdString(c.verdict).toHtmlEscaped()),
                     qPrintable(verdict));
        for (int arm = 0; arm < 2; ++arm) liveMedians_.push_back(plot->processMedians(arm));
        QTRY_VERIFY_WITH_TIMEOUT(w.shownRunId() > 0, 5000);
        liveRunId_ = w.shownRunId();
    }

    // The recorded run, reopened in a new window, shows the same dots as it did live.
    void recordedRunReopensWithTheSameStrip() {
        QVERIFY(liveRunId_ > 0);
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(history_.filePath(QStringLiteral("live.sqlite"))));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.showStoredRun(liveRunId_));
        auto* plot = w.plotPanel()->distribution();
        QVERIFY(plot->processStripShown());
        for (int arm = 0; arm < 2; ++arm)
            QCOMPARE(plot->processMedians(arm), liveMedians_[std::size_t(arm)]);
        QTRY_COMPARE_WITH_TIMEOUT(w.comparisonModel()->rowCount(), 2, 10000);
        QCOMPARE(w.comparisonModel()->index(1, C::Processes).data().toString().left(4),
                 QStringLiteral("3 · "));
    }
};

PITLANE_GUI_TEST_MAIN(GuiProcesses)
#include "gui_processes.moc"
