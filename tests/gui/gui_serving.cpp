// A serving run in the window (issue 13): a real serving preset of the bundled mlp model (Poisson
// arrivals at two rates, an SLO, max_batch 1 against 4) shows latency vs offered rate, the batch
// sizes and the queue length instead of the per-iteration plots, live as levels complete, and
// the verdict carries the serving lines; a constructed saturated run marks its points and the SLO.
#include "gui_layout.h"
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/serving/serve_loop.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/plots/batch_size_plot.h"
#include "pitlane/widgets/results/comparison_table_model.h"
#include "pitlane/widgets/plots/latency_distribution_plot.h"
#include "pitlane/widgets/plots/latency_timeline_plot.h"
#include "pitlane/widgets/plots/plot_panel.h"
#include "pitlane/widgets/plots/queue_length_plot.h"
#include "pitlane/widgets/plots/serving_latency_plot.h"
#include "pitlane/widgets/plots/throughput_plot.h"
#include "pitlane/widgets/common/wrapping_label.h"

#include <QPlainTextEdit>
#include <QSettings>
#include <QTabWidget>

using namespace pitlane;
using json = nlohmann::json;
using C = widgets::ComparisonTableModel;

namespace {

const json kPreset = {
    {"name", "serving b1 vs b4"},
    {"model", "mlp"},
    {"run", {{"warmup_iters", 2}, {"processes", 1}}},
    {"serving",
     {{"arrival", "poisson"}, {"rates", {100, 400}}, {"duration_ms", 500}, {"slo_p99_ms", 20}}},
    {"arms",
     {{{"name", "b1"}, {"knobs", {{"intra_op_threads", 1}}}},
      {{"name", "b4"}, {"knobs", {{"intra_op_threads", 1}, {"max_batch", 4}, {"max_wait_ms", 1}}}}}}};

// A virtual clock for serving::runLevel: sleeping jumps to the deadline.
class VirtualClock : public serving::LoopClock {
public:
    std::int64_t now() override { return t; }
    void sleepUntil(std::int64_t ns) override { t = std::max(t, ns); }
    std::int64_t t = 0;
};

// One arm's level served by a model that takes `cost_ms` per batch whatever its size.
results::ServingLevel servedLevel(int level, double rate, int maxBatch, double cost_ms) {
    results::ServingLevel l;
    l.level = level;
    l.rate_per_s = rate;
    l.load.rate_per_s = rate;
    l.load.duration_ms = 400;
    l.load.seed = 7 + std::uint64_t(level);
    l.load.max_batch = maxBatch;
    l.load.saturation_ms = 150;
    VirtualClock clock;
    l.record = serving::runLevel(l.load, clock, [&](int) {
        clock.t += std::int64_t(cost_ms * 1e6);
        return true;
    });
    l.complete = true;
    return l;
}

// Two arms at 100 and 1000 req/s with a 5 ms model: batch 1 saturates at 1000 req/s (capacity
// 200/s), batch 8 keeps up.
results::RunResult saturatedRun() {
    results::RunResult run;
    run.preset.name = "saturated";
    run.preset.model = "mlp";
    run.preset.serving.enabled = true;
    run.preset.serving.rates = {100, 1000};
    run.preset.serving.slo_p99_ms = 30;
    run.preset.serving.duration_ms = 400;
    for (int a = 0; a < 2; ++a) {
        results::ArmResult arm;
        arm.name = a == 0 ? "b1" : "b8";
        arm.status = results::kOk;
        for (int level = 0; level < 2; ++level)
            arm.serving.push_back(servedLevel(level, level == 0 ? 100 : 1000, a == 0 ? 1 : 8, 5));
        run.arms.push_back(std::move(arm));
    }
    return run;
}

}  // namespace

class GuiServing : public QObject {
    Q_OBJECT
private slots:
    void init() {
        testing::failOnQtWarnings();
        QSettings().clear();
    }

    void servingRunShowsServingViews() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(QStringLiteral("none")));
        w.resize(1366, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openPreset(testing::writeJson(dir, "serving.json", kPreset)));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());

        // The serving views replace the per-iteration ones from the start of the run.
        auto* plots = w.plotPanel();
        QVERIFY(plots->servingMode());
        QVERIFY(plots->servingLatency()->isVisible());
        QVERIFY(plots->batchSizes()->isVisible());
        QVERIFY(plots->queueLength()->isVisible());
        QVERIFY(!plots->timeline()->isVisible());
        QVERIFY(!plots->distribution()->isVisible());
        QVERIFY(!plots->throughput()->isVisible());

        // Live: the first level's point appears before the run ends (the verdict's thread
        // computes it when the level completes), and the queue of the level being served.
        const auto& result = w.runner()->result();
        auto* latency = plots->servingLatency();
        QTRY_VERIFY_WITH_TIMEOUT(latency->p99Graph(0)->dataCount() >= 1, 60000);
        QVERIFY(w.isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(plots->queueLength()->graph(0)->dataCount() > 0, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(w.findChild<widgets::WrappingLabel*>(QStringLiteral("verdictLine"))
                                     ->text()
                                     .contains(QStringLiteral("(live)")),
                                 5000);
        if (const QByteArray shots = qgetenv("PITLANE_SCREENSHOT_DIR"); !shots.isEmpty())
            QVERIFY(w.saveScreenshot(QString::fromLocal8Bit(shots) + "/serving-live.png"));

        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.first().first().toBool(), true);
        QCOMPARE(result.arms.size(), std::size_t(2));
        if (const QByteArray shots = qgetenv("PITLANE_SCREENSHOT_DIR"); !shots.isEmpty())
            QVERIFY(w.saveScreenshot(QString::fromLocal8Bit(shots) + "/serving-done.png"));

        // One p99 and one p50 curve per arm, a point per offered rate measured (the two listed
        // rates, then the SLO search's steps).
        for (int a = 0; a < 2; ++a) {
            const auto points = results::servingPoints(result, std::size_t(a));
            QVERIFY(points.size() >= 2);
            QCOMPARE(latency->p99Graph(a)->dataCount(), int(points.size()));
            QCOMPARE(latency->p50Graph(a)->dataCount(), int(points.size()));
            for (std::size_t k = 0; k < points.size(); ++k) {
                const auto it = latency->p99Graph(a)->data()->at(int(k));
                QCOMPARE(it->key, points[k].rate_per_s);
                QCOMPARE(it->value, points[k].pooled.p99_ms);
                QCOMPARE(latency->p50Graph(a)->data()->at(int(k))->value, points[k].pooled.p50_ms);
            }
        }
        QCOMPARE(latency->graphCount(), 2 * 2 + 1);  // p99, p50 per arm; the saturated marks
        QVERIFY(latency->sloLine());
        QCOMPARE(latency->sloLine()->point1->coords().y(), 20.0);

        // Batch sizes at the highest level both arms completed: b1 only ever batches 1, b4
        // batches of 1 to 4 requests; each arm's bars add up to 100 %.
        auto* batches = plots->batchSizes();
        QVERIFY(batches->shownLevel().has_value());
        QCOMPARE(batches->bars(0)->dataCount(), 1);
        QCOMPARE(batches->bars(0)->data()->at(0)->value, 100.0);
        QVERIFY(batches->bars(1)->dataCount() >= 1 && batches->bars(1)->dataCount() <= 4);
        double share = 0;
        for (int k = 0; k < batches->bars(1)->dataCount(); ++k) {
            const double x = batches->bars(1)->data()->at(k)->key;
            QVERIFY(x > 0.5 && x < 4.5);
            share += batches->bars(1)->data()->at(k)->value;
        }
        QVERIFY(std::abs(share - 100) < 1e-6);

        // The queue of the level served last, per arm, from its start.
        for (int a = 0; a < 2; ++a) {
            auto* g = plots->queueLength()->graph(a);
            QVERIFY(g->dataCount() > 10);
            QCOMPARE(g->data()->at(0)->key, 0.0);
        }

        // The verdict: capacity within the SLO, then b4 against b1 at each listed rate.
        const QString verdict =
            w.findChild<widgets::WrappingLabel*>(QStringLiteral("verdictLine"))->text();
        QVERIFY2(verdict.contains(QStringLiteral("Highest rate with p99 &lt;= 20 ms")) ||
                     verdict.contains(QStringLiteral("Highest rate with p99 <= 20 ms")),
                 qPrintable(verdict));
        QVERIFY2(verdict.contains(QStringLiteral("at 100 req/s")), qPrintable(verdict));
        QVERIFY2(verdict.contains(QStringLiteral("at 400 req/s")), qPrintable(verdict));
        QVERIFY(!verdict.contains(QStringLiteral("(live)")));
        const auto lines = results::servingVerdict(result);
        QVERIFY(lines.size() >= 3);
        for (const auto& line : lines)
            QVERIFY2(verdict.contains(QString::fromStdString(line).toHtmlEscaped()), line.c_str());

        // The table (issue 44: it was a row of dashes): requests served for n; p50 / p99 and
        // the rate kept at each arm's highest rate within the SLO (else the highest level it kept
        // up with), worked out here from the levels; the arm's p99 against the baseline's there;
        // the comparisons in the verdict column.
        auto* table = w.comparisonModel();
        QCOMPARE(table->rowCount(), 2);
        QVERIFY(table->servingRows());
        QCOMPARE(table->headerData(C::Median, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("p50"));
        QCOMPARE(table->headerData(C::Throughput, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("Rate kept"));
        const auto comparisons = results::compareServing(result);
        for (int a = 0; a < 2; ++a) {
            QVERIFY(table->data(table->index(a, C::Samples)).toString().toLongLong() > 0);
            const auto points = results::servingPoints(result, std::size_t(a));
            const auto capacity = results::sloCapacity(points);
            const results::ServingPoint* at = nullptr;
            for (const auto& p : points)
                if (capacity.max_rate_per_s > 0 ? p.rate_per_s == capacity.max_rate_per_s
                                                : !p.search && !p.pooled.saturated)
                    at = &p;
            if (!at) at = &points.front();
            const auto cell = [&](int c) { return table->data(table->index(a, c)).toString(); };
            QCOMPARE(cell(C::Median), QString::fromStdString(results::formatDuration(at->pooled.p50_ms * 1e6)));
            QCOMPARE(cell(C::P99), QString::fromStdString(results::formatDuration(at->pooled.p99_ms * 1e6)));
            QVERIFY2(cell(C::Throughput).contains(QString::fromStdString(widgets::servingLevelName(at->rate_per_s, at->clients))),
                     qPrintable(cell(C::Throughput)));
            if (a == 0) {
                QCOMPARE(cell(C::Ratio), QStringLiteral("baseline"));
                continue;
            }
            const auto c = std::find_if(comparisons.begin(), comparisons.end(), [&](const results::ServingComparison& c) {
                return c.arm == 1 && c.rate_per_s == at->rate_per_s && c.clients == at->clients;
            });
            if (c == comparisons.end()) {
                QCOMPARE(cell(C::Ratio), QStringLiteral("—"));
            } else {
                QCOMPARE(cell(C::Ratio), QStringLiteral("p99 %1×").arg(c->p99_ratio, 0, 'f', 3));
                QCOMPARE(cell(C::Ci), QStringLiteral("%1 – %2").arg(c->p99_lo, 0, 'f', 3).arg(c->p99_hi, 0, 'f', 3));
            }
        }
        QVERIFY(table->data(table->index(1, C::Verdict)).toString().contains(QStringLiteral("at 400 req/s")));

        // The figures per level are in the Levels tab: the CLI's table, without the verdict
        // lines shown above (issue 27: the window had no per-rate table).
        auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("resultsTabs"));
        auto* levels = w.findChild<QPlainTextEdit*>(QStringLiteral("servingLevels"));
        QVERIFY(tabs && levels);
        QVERIFY(tabs->isTabVisible(tabs->indexOf(levels)));
        const QString text = levels->toPlainText();
        QVERIFY2(text.contains(QStringLiteral("offered/s")) && text.contains(QStringLiteral("p99 ms")), qPrintable(text));
        QString cli = QString::fromStdString(results::servingTable(result));
        for (const auto& line : lines) cli.remove(QString::fromStdString(line) + QLatin1Char('\n'));
        QCOMPARE(text, cli);
        QVERIFY(w.showResultsTab(QStringLiteral("levels")));

        // Readable at both screen sizes with the history open (issue 44: the titles read
        // "-to-end latency · p99 solid, p50 dasl", "Queue lengtl", legends over them).
        QVERIFY(w.showResultsTab(QStringLiteral("verdict")));
        for (const QSize size : {QSize(1366, 708), QSize(1920, 1020)}) {
            const QStringList problems = testing::layoutProblems(w, size);
            QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1x%2: %3").arg(size.width()).arg(size.height()).arg(problems.join(QStringLiteral("; ")))));
            testing::saveScreenshot(w, QStringLiteral("window-serving-%1x%2").arg(size.width()).arg(size.height() + 60));
        }
    }

    void saturatedPointsAndTheSloAreMarked() {
        const auto run = saturatedRun();
        QVERIFY(run.arms[0].serving[1].record.saturated || results::servingPoints(run, 0)[1].pooled.saturated);
        widgets::PlotPanel panel;
        panel.resize(1100, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.showRun(std::make_shared<const results::RunResult>(run));
        panel.flush();
        QVERIFY(panel.servingMode());
        panel.setServingSnapshot(
            std::make_shared<const widgets::ServingSnapshot>(widgets::servingSnapshot(run, false)));
        auto* latency = panel.servingLatency();
        QCOMPARE(latency->p99Graph(0)->dataCount(), 2);
        QCOMPARE(latency->p99Graph(1)->dataCount(), 2);
        // b1 saturated at 1000 req/s: one cross there; b8 kept up.
        QCOMPARE(latency->saturatedGraph()->dataCount(), 1);
        QCOMPARE(latency->saturatedGraph()->data()->at(0)->key, 1000.0);
        QVERIFY(latency->sloLine());
        // The latency axis shows the SLO and every point.
        QVERIFY(latency->yAxis->range().contains(30));
        QVERIFY(latency->yAxis->range().contains(latency->saturatedGraph()->data()->at(0)->value));
        // b8 batches more than one request at 1000 req/s; the queue plot shows the last level.
        QCOMPARE(panel.batchSizes()->shownLevel()->second, 1000.0);
        QVERIFY(panel.batchSizes()->bars(1)->dataCount() > 1);
        // The level picked in the plot's menu, then back to the highest.
        panel.batchSizes()->selectLevel(widgets::BatchSizePlot::LevelKey{0, 100.0});
        QCOMPARE(panel.batchSizes()->shownLevel()->second, 100.0);
        QCOMPARE(panel.batchSizes()->bars(0)->dataCount(), 1);  // b1: batches of one only
        panel.batchSizes()->selectLevel(std::nullopt);
        QCOMPARE(panel.batchSizes()->shownLevel()->second, 1000.0);
        QVERIFY(panel.queueLength()->graph(0)->dataCount() > 0);
        // The verdict table's figures: b1 kept 100 req/s within the 30 ms SLO (it saturated at
        // 1000), b8 1000; b8's p99 against b1's at 1000 req/s, the comparison's own figures.
        {
            const auto snap = widgets::servingSnapshot(run, false);
            const auto points = results::servingPoints(run, 0);
            QCOMPARE(snap.arms[0].headline.level, std::string("100 req/s"));
            QCOMPARE(snap.arms[0].headline.p99_ms, points[0].pooled.p99_ms);
            QVERIFY(!snap.arms[0].headline.saturated);
            const auto b8 = results::servingPoints(run, 1);
            const auto cap8 = results::sloCapacity(b8);
            QCOMPARE(snap.arms[1].headline.level, widgets::servingLevelName(cap8.max_rate_per_s, 0));
            for (const auto& c : results::compareServing(run))
                if (c.arm == 1 && c.rate_per_s == cap8.max_rate_per_s) {
                    QVERIFY(snap.arms[1].headline.compared);
                    QCOMPARE(snap.arms[1].headline.p99_ratio, c.p99_ratio);
                }
        }
        // b1's queue at 1000 req/s climbed well beyond b8's.
        double maxB1 = 0, maxB8 = 0;
        for (auto it = panel.queueLength()->graph(0)->data()->constBegin();
             it != panel.queueLength()->graph(0)->data()->constEnd(); ++it)
            maxB1 = std::max(maxB1, it->value);
        for (auto it = panel.queueLength()->graph(1)->data()->constBegin();
             it != panel.queueLength()->graph(1)->data()->constEnd(); ++it)
            maxB8 = std::max(maxB8, it->value);
        QVERIFY2(maxB1 > 3 * maxB8, qPrintable(QStringLiteral("%1 vs %2").arg(maxB1).arg(maxB8)));

        // Rates the SLO search doubled and bisected (3200 beside 4800): on a narrow plot the rate
        // axis labels only those whose labels do not run into each other, the ends kept.
        {
            auto many = run;
            many.preset.serving.rates = {100, 400, 800, 1600, 3200, 4800, 6400};
            for (auto& a : many.arms) {
                a.serving.clear();
                for (int level = 0; level < 7; ++level)
                    a.serving.push_back(servedLevel(level, many.preset.serving.rates[std::size_t(level)], 8, 0.05));
            }
            panel.resize(760, 600);
            panel.showRun(std::make_shared<const results::RunResult>(many));
            panel.flush();
            panel.setServingSnapshot(
                std::make_shared<const widgets::ServingSnapshot>(widgets::servingSnapshot(many, false)));
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            latency->replot();
            latency->replot();  // the labels thinned after the first layout are drawn by the next
            const QStringList problems = testing::textProblems(latency);
            QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
            const QVector<QString> labels = latency->xAxis->tickVectorLabels();
            QVERIFY(labels.contains(QStringLiteral("100")) && labels.contains(QStringLiteral("6400")));
            QVERIFY2(labels.size() < 7, qPrintable(QStringList(labels.begin(), labels.end()).join(QLatin1Char(' '))));
            panel.resize(1100, 600);
        }

        // A finished run without any level says so instead of waiting for one.
        auto none = run;
        for (auto& a : none.arms) a.serving.clear();
        panel.showRun(std::make_shared<const results::RunResult>(none));
        panel.flush();
        panel.setServingSnapshot(
            std::make_shared<const widgets::ServingSnapshot>(widgets::servingSnapshot(none, false)));
        QCOMPARE(latency->p99Graph(0)->dataCount(), 0);
        QCOMPARE(panel.queueLength()->graph(0)->dataCount(), 0);

        // A non-serving run afterwards gives the per-iteration plots back.
        panel.showRun(std::make_shared<const results::RunResult>(results::RunResult()));
        panel.flush();
        QVERIFY(!panel.servingMode());
        QVERIFY(panel.timeline()->isVisible());
        QVERIFY(!panel.servingLatency()->isVisible());
    }
};

PITLANE_GUI_TEST_MAIN(GuiServing)
#include "gui_serving.moc"
