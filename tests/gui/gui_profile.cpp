// The operator profile in the window (issue 14): a real run of the bundled mlp with
// run.profile_iters, measured by real workers in the window and recorded in a real history file,
// shows the Operators tab: one row per operator in results::profileRows' order (the largest
// difference from the first arm first), self ms and calls per iteration for each arm, a total
// row, the input shapes in the tooltips; the same table when the run is read back from the
// history; Export trace writes the chosen arm's Chrome trace; a run without a profile hides the
// tab.
#include "gui_layout.h"
#include "gui_test_support.h"

#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/store/run_store.h"
#include "pitlane/widgets/results/profile_table_model.h"
#include "pitlane/widgets/results/profile_view.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>

#include <cmath>
#include <limits>
#include <map>

using namespace pitlane;
using json = nlohmann::json;
using M = widgets::ProfileTableModel;

namespace {

json profiledPreset() {
    return {{"name", "gui profile"},
            {"model", "mlp"},
            {"run",
             {{"warmup_iters", 2},
              {"iters", 20},
              {"block_iters", 10},
              {"processes", 1},
              {"profile_iters", 3}}},
            {"arms",
             {{{"name", "grad"}, {"knobs", {{"grad", "enabled"}, {"intra_op_threads", 1}}}},
              {{"name", "nograd"}, {"knobs", {{"grad", "no_grad"}, {"intra_op_threads", 1}}}}}}};
}

// Calls per iteration of each operator in one arm's profile, straight from the worker's event.
std::map<std::string, double> callsPerIter(const json& profile) {
    std::map<std::string, double> out;
    const double iters = profile["iters"].get<double>();
    for (const auto& o : profile["ops"]) out[o["name"]] += o["calls"].get<double>() / iters;
    return out;
}

bool tabShown(app::MainWindow& w) {
    QTabWidget* tabs = w.resultsTabs();
    return tabs->isTabVisible(tabs->indexOf(w.profileView()));
}

// The table against the run it shows: the rows of results::profileRows in its order, each arm's
// self ms and calls per iteration, the total row.
void checkTable(const M* m, const results::RunResult& run) {
    const auto rows = results::profileRows(run, std::numeric_limits<std::size_t>::max());
    QCOMPARE(m->profiledArms(), int(rows.arms.size()));
    QCOMPARE(m->profiledArms(), 2);
    QCOMPARE(m->rowCount(), int(rows.ops.size()) + 1);
    QCOMPARE(m->columnCount(), 1 + 2 * 2);
    QCOMPARE(m->headerData(M::selfColumn(0), Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("grad ms/iter"));
    QCOMPARE(m->headerData(M::callsColumn(1), Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("nograd calls/iter"));
    std::vector<std::map<std::string, double>> calls;
    for (std::size_t a : rows.arms) calls.push_back(callsPerIter(run.arms[a].profile));
    bool sawLinear = false;
    double previousKey = std::numeric_limits<double>::infinity();
    std::vector<double> sum(2, 0);
    for (int r = 0; r < int(rows.ops.size()); ++r) {
        const auto& [name, self] = rows.ops[std::size_t(r)];
        QCOMPARE(m->operatorAt(r), QString::fromStdString(name));
        QCOMPARE(m->index(r, M::Operator).data().toString(), QString::fromStdString(name));
        // Ordered by the largest change from the first arm (grad), largest first.
        const double key = std::fabs(self[1] - self[0]);
        QVERIFY2(key <= previousKey + 1e-12, name.c_str());
        previousKey = key;
        for (int k = 0; k < 2; ++k) {
            QCOMPARE(m->index(r, M::selfColumn(k)).data(M::ValueRole).toDouble(), self[std::size_t(k)]);
            QCOMPARE(m->index(r, M::selfColumn(k)).data().toString(),
                     QString::number(self[std::size_t(k)], 'f', self[std::size_t(k)] >= 100 ? 1 : 3));
            const auto it = calls[std::size_t(k)].find(name);
            const double expected = it == calls[std::size_t(k)].end() ? -1 : it->second;
            QCOMPARE(m->callsPerIter(r, k), expected);
            sum[std::size_t(k)] += self[std::size_t(k)];
        }
        const QString tip = m->index(r, M::selfColumn(1)).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.startsWith(QString::fromStdString(name)), qPrintable(tip));
        if (name == "aten::linear") {
            sawLinear = true;
            // The mlp (256-512-512-10): three layers, once each per iteration, in both arms;
            // the first layer's shapes in each arm's line of the tooltip.
            const QString first = QStringLiteral("[[1, 256], [512, 256], [512]]");
            const QStringList lines = tip.split(QLatin1Char('\n'));
            QCOMPARE(lines.size(), 3);
            QVERIFY2(lines[1].startsWith(QStringLiteral("grad: ")) && lines[1].contains(first),
                     qPrintable(tip));
            QVERIFY2(lines[2].startsWith(QStringLiteral("nograd: ")) && lines[2].contains(first),
                     qPrintable(tip));
            QCOMPARE(m->callsPerIter(r, 0), 3.0);
            QCOMPARE(m->callsPerIter(r, 1), 3.0);
            QCOMPARE(m->index(r, M::callsColumn(0)).data().toString(),
                     QString::number(std::llround(m->callsPerIter(r, 0))));
        }
    }
    QVERIFY(sawLinear);
    const int total = m->rowCount() - 1;
    QVERIFY(m->isTotalRow(total));
    QVERIFY(m->index(total, M::Operator).data().toString().startsWith(QStringLiteral("total")));
    QVERIFY(m->index(total, M::Operator).data(Qt::FontRole).value<QFont>().bold());
    for (int k = 0; k < 2; ++k) {
        QCOMPARE(m->selfMs(total, k), rows.totals[std::size_t(k)]);
        QVERIFY(std::fabs(m->selfMs(total, k) - sum[std::size_t(k)]) < 1e-9);
    }
}

}  // namespace

class GuiProfile : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void init() {
        testing::failOnQtWarnings();
        QSettings().clear();
    }

    void profiledRunShowsTheOperatorTable() {
        const QString db = dir_.filePath(QStringLiteral("history.sqlite"));
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(db));
        w.resize(1366, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(!tabShown(w));
        QVERIFY(!w.profileView()->exportTraceAction()->isEnabled());
        // Export trace… is in the File menu.
        QVERIFY(w.menuBar()->actions().first()->menu()->actions().contains(
            w.profileView()->exportTraceAction()));

        QVERIFY(w.openPreset(testing::writeJson(dir_, "profiled.json", profiledPreset())));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        QVERIFY(!tabShown(w));  // nothing profiled yet
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.first().first().toBool(), true);

        // The live run: both arms profiled, the tab shown, the table in profileRows' order.
        const auto& live = w.runner()->result();
        QVERIFY(live.arms[0].profile.is_object() && live.arms[1].profile.is_object());
        QVERIFY(tabShown(w));
        QVERIFY(w.profileView()->exportTraceAction()->isEnabled());
        checkTable(w.profileView()->model(), live);
        w.resultsTabs()->setCurrentWidget(w.profileView());
        if (const QByteArray shots = qgetenv("PITLANE_SCREENSHOT_DIR"); !shots.isEmpty())
            QVERIFY(w.saveScreenshot(QString::fromLocal8Bit(shots) + "/profile-live.png"));
        // Readable at both screen sizes with the history open (issue 44), the Operators tab shown.
        for (const QSize size : {QSize(1366, 708), QSize(1920, 1020)}) {
            const QStringList problems = testing::layoutProblems(w, size);
            QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1x%2: %3").arg(size.width()).arg(size.height()).arg(problems.join(QStringLiteral("; ")))));
            w.resultsTabs()->setCurrentWidget(w.profileView());
            testing::saveScreenshot(w, QStringLiteral("window-profile-%1x%2").arg(size.width()).arg(size.height() + 60));
        }
        w.resize(1366, 768);

        // Export trace: the chosen arm's Chrome trace, as the worker sent it.
        auto* view = w.profileView();
        const QModelIndex nogradCell = view->model()->index(0, M::selfColumn(1));
        view->table()->scrollTo(nogradCell);
        QTest::mouseClick(view->table()->viewport(), Qt::LeftButton, {},
                          view->table()->visualRect(nogradCell).center());
        QCOMPARE(view->traceArm(), 1);  // a cell of nograd's columns chose nograd
        const QString trace = dir_.filePath(QStringLiteral("nograd-trace.json"));
        QString error;
        QVERIFY2(view->exportTrace(view->traceArm(), trace, &error), qPrintable(error));
        const json written = testing::readJson(trace);
        QCOMPARE(written, json::parse(results::profileTraceJson(live.arms[1])));
        QVERIFY(written["traceEvents"].size() > 10);
        // Kineto's events as it wrote them: metadata, complete events, its instant marks ("i")
        // and, on CUDA, flow arrows ("s", "f"); the arm's name on the process.
        for (const auto& e : written["traceEvents"])
            QVERIFY(e["ph"] == "X" || e["ph"] == "M" || e["ph"] == "i" || e["ph"] == "s" || e["ph"] == "f");
        QCOMPARE(written["traceEvents"][0]["name"], json("process_name"));
        QCOMPARE(written["traceEvents"][0]["args"]["name"], json("nograd"));
        QVERIFY(!view->exportTrace(2, trace, &error));  // no third profiled arm

        // The same run read back from the history: the same table.
        const qint64 id = w.shownRunId();
        QVERIFY(id > 0);
        QTRY_VERIFY_WITH_TIMEOUT(w.history()->runInfo(id) && w.history()->runInfo(id)->complete(),
                                 10000);
        const results::RunResult liveCopy = live;
        QVERIFY(w.showStoredRun(id));
        QVERIFY(w.showsStoredRun());
        QVERIFY(tabShown(w));
        checkTable(view->model(), w.shownResult());
        for (int k = 0; k < 2; ++k)
            QCOMPARE(w.shownResult().arms[std::size_t(k)].profile,
                     liveCopy.arms[std::size_t(k)].profile);
        QVERIFY(view->exportTrace(0, trace, &error));
        QCOMPARE(testing::readJson(trace), json::parse(results::profileTraceJson(liveCopy.arms[0])));

        // A stored run without a profile hides the tab and disables Export trace.
        results::RunResult plain = liveCopy;
        for (auto& a : plain.arms) a.profile = json();
        const auto plainId = w.history()->importRun(plain, QStringLiteral("test"));
        QVERIFY(plainId);
        QVERIFY(w.showStoredRun(*plainId));
        QVERIFY(!tabShown(w));
        QCOMPARE(view->model()->rowCount(), 0);
        QVERIFY(!view->exportTraceAction()->isEnabled());
        // And back.
        QVERIFY(w.showStoredRun(id));
        QVERIFY(tabShown(w));
        QCOMPARE(view->model()->rowCount(), int(results::profileRows(liveCopy, 1000).ops.size()) + 1);
    }
};

PITLANE_GUI_TEST_MAIN(GuiProfile)
#include "gui_profile.moc"
