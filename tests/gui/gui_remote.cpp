// Remote arms in the window (issue 15): a preset with one local arm and one arm on localhost over
// ssh (a real sshd started by the test, tests/common/sshd_fixture.h) runs in the window; the arm
// editor keeps the arm's host; cutting the ssh connection mid-run fails that arm with its
// samples kept. Skipped when sshd cannot start.
#include "gui_test_support.h"

#include "../common/sshd_fixture.h"
#include "main_window.h"
#include "pitlane/session/experiment_runner.h"
#include "pitlane/widgets/live/log_pane.h"
#include "pitlane/widgets/setup/setup_panel.h"

#include <QLineEdit>

#include <csignal>

using namespace pitlane;
using json = nlohmann::json;

namespace {

json remotePreset(int iters, int blockIters) {
    return {{"name", "remote"},
            {"model", "mlp"},
            {"remote_worker", qEnvironmentVariable("PITLANE_WORKER").toStdString()},
            {"run", {{"iters", iters}, {"block_iters", blockIters}, {"warmup_iters", 2},
                     {"processes", 1}, {"compare_hosts", true}}},
            {"arms", json::array({{{"name", "local"}, {"knobs", {{"intra_op_threads", 1}}}},
                                  {{"name", "remote"}, {"host", testing::kHost},
                                   {"knobs", {{"intra_op_threads", 1}}}}})}};
}

}  // namespace

class GuiRemote : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        testing::failOnQtWarnings();
        if (!testing::sshd().skip.isEmpty()) QSKIP(qPrintable(testing::sshd().skip));
    }

    void localAndSshArmsRunInTheWindow() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(QStringLiteral("none")));
        QVERIFY(w.openPreset(testing::writeJson(dir, "remote.json", remotePreset(20, 10))));
        // The arm editor keeps the host (and the run keeps compare_hosts).
        const json shown = w.setupPanel()->presetJson();
        QCOMPARE(QString::fromStdString(shown["arms"][1].value("host", std::string())),
                 QString::fromLatin1(testing::kHost));
        QVERIFY(!shown["arms"][0].contains("host"));
        // ... in a field of each arm's form: the remote arm's shows the host, the local arm's is
        // empty ("this machine"); typing a host there puts it in the preset, clearing removes it.
        const auto hosts = w.findChildren<QLineEdit*>(QStringLiteral("armHost"));
        QCOMPARE(hosts.size(), 2);
        QStringList texts;
        for (auto* h : hosts) texts << h->text();
        texts.sort();
        QCOMPARE(texts, (QStringList{QString(), QString::fromLatin1(testing::kHost)}));
        QLineEdit* local = hosts[0]->text().isEmpty() ? hosts[0] : hosts[1];
        local->setText(QStringLiteral("user@elsewhere"));
        QCOMPARE(w.setupPanel()->presetJson()["arms"][0].value("host", std::string()), std::string("user@elsewhere"));
        local->clear();
        QVERIFY(!w.setupPanel()->presetJson()["arms"][0].contains("host"));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        QVERIFY(w.startRun());
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
        const auto& r = w.runner()->result();
        QCOMPARE(r.arms.size(), std::size_t(2));
        QCOMPARE(QString::fromStdString(r.arms[1].status), QStringLiteral("ok"));
        QCOMPARE(QString::fromStdString(r.arms[1].host), QString::fromLatin1(testing::kHost));
        QCOMPARE(r.arms[1].samples.size(), std::size_t(20));
        QCOMPARE(r.arms[0].samples.size(), std::size_t(20));
    }

    void cuttingTheConnectionFailsTheArmAndKeepsItsSamples() {
        QTemporaryDir dir;
        app::MainWindow w;
        w.setInteractive(false);
        QVERIFY(w.setDatabasePath(QStringLiteral("none")));
        QVERIFY(w.openPreset(testing::writeJson(dir, "remote.json", remotePreset(4000, 50))));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(&w, &app::MainWindow::runFinished);
        bool cut = false;
        QVERIFY(w.startRun());
        QObject::connect(w.runner(), &session::ExperimentRunner::samplesAppended, &w,
                         [&](int arm, int, int) {
                             if (arm != 1 || cut || w.runner()->result().arms[1].samples.size() < 100) return;
                             for (pid_t pid : testing::sshChildren()) ::kill(pid, SIGKILL);
                             cut = true;
                         });
        QVERIFY(finished.wait(60000));
        QVERIFY(cut);
        QCOMPARE(finished.first().first().toBool(), false);
        const auto& a = w.runner()->result().arms[1];
        QCOMPARE(QString::fromStdString(a.status), QStringLiteral("failed"));
        QVERIFY(a.error);
        QCOMPARE(QString::fromStdString(a.error->code), QStringLiteral("remote_connection_lost"));
        QVERIFY(a.samples.size() >= 100);
        const QString log = w.logPane()->plainText();
        QVERIFY2(log.contains(QStringLiteral("the ssh connection to %1 was cut").arg(QLatin1String(testing::kHost))),
                 qPrintable(log.right(2000)));
    }
};

PITLANE_GUI_TEST_MAIN(GuiRemote)
#include "gui_remote.moc"
