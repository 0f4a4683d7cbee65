// The scripted window of CONTRACT.md, as scripts use it: the real `pitlane` binary with
// PRESET.json --run --screenshot OUT.png --quit-when-done, and its exit codes.
#include "gui_test_support.h"

#include "pitlane/store/run_store.h"

#include <QImage>
#include <QProcess>

using json = nlohmann::json;

namespace {
struct Outcome {
    int exitCode = -1;
    bool crashed = false;
    QString output;
};

Outcome runPitlane(const QStringList& args, int timeoutMs = 90000) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QDir(qEnvironmentVariable("PITLANE_BIN_DIR")).filePath(QStringLiteral("pitlane")),
            args);
    Outcome o;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        o.output = QStringLiteral("timed out\n");
    }
    o.exitCode = p.exitCode();
    o.crashed = p.exitStatus() == QProcess::CrashExit;
    o.output += QString::fromLocal8Bit(p.readAll());
    return o;
}
}  // namespace

class GuiScripted : public QObject {
    Q_OBJECT
private slots:
    void init() { pitlane::testing::failOnQtWarnings(); }

    void runScreenshotQuit() {
        QTemporaryDir dir;
        const QString preset =
            pitlane::testing::writeJson(dir, "p.json", pitlane::testing::mlpPreset(30, 10));
        const QString shot = dir.filePath("shot.png");
        const auto o =
            runPitlane({preset, "--run", "--screenshot", shot, "--quit-when-done", "--db", "none"});
        QVERIFY2(!o.crashed && o.exitCode == 0, qPrintable(o.output));
        const QImage image(shot);
        QVERIFY2(!image.isNull(), qPrintable(o.output));
        QVERIFY(image.width() >= 640 && image.height() >= 480);
        // Not a blank grab: the plots and tables put many colours on it.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
    }

    // --db: the scripted window records its run there, like pitlane-cli; a file named with
    // --db that cannot be a history is an error (exit 2), and the file stays untouched.
    void runIsRecordedInTheGivenHistory() {
        QTemporaryDir dir;
        const QString preset =
            pitlane::testing::writeJson(dir, "p.json", pitlane::testing::mlpPreset(20, 10));
        const QString db = dir.filePath("history.sqlite");
        const auto o = runPitlane({preset, "--run", "--quit-when-done", "--db", db});
        QVERIFY2(!o.crashed && o.exitCode == 0, qPrintable(o.output));
        pitlane::store::RunStore store;
        QVERIFY(store.open(db));
        const auto runs = store.listRuns();
        QCOMPARE(runs.size(), 1);
        QCOMPARE(runs.first().source, QStringLiteral("gui"));
        QVERIFY(runs.first().complete());
        QCOMPARE(store.sampleCount(runs.first().id), qint64(40));

        const QString notHistory = pitlane::testing::writeJson(dir, "n.json", {{"a", 1}});
        const auto bad = runPitlane({preset, "--run", "--quit-when-done", "--db", notHistory});
        QVERIFY2(bad.exitCode == 2, qPrintable(bad.output));
        QVERIFY2(bad.output.contains(QStringLiteral("not an SQLite")), qPrintable(bad.output));
        QCOMPARE(pitlane::testing::readJson(notHistory), json({{"a", 1}}));
    }

    void failedArmExitsOne() {
        QTemporaryDir dir;
        json p = pitlane::testing::mlpPreset(10, 10);
        p["input"] = {{{"shape", {7}}, {"dtype", "float32"}}};  // mlp expects 256 features
        const auto o = runPitlane(
            {pitlane::testing::writeJson(dir, "p.json", p), "--run", "--quit-when-done"});
        QVERIFY2(!o.crashed && o.exitCode == 1, qPrintable(o.output));
    }

    void invalidPresetExitsTwoNamingTheField() {
        QTemporaryDir dir;
        json p = pitlane::testing::mlpPreset(10, 10);
        p["arms"][1]["knobs"]["jit"] = "freeze";
        p["arms"][1]["knobs"]["mode"] = "train";
        const auto o = runPitlane(
            {pitlane::testing::writeJson(dir, "p.json", p), "--run", "--quit-when-done"});
        QVERIFY2(o.exitCode == 2, qPrintable(o.output));
        QVERIFY2(o.output.contains(QStringLiteral("arms[1].knobs.jit")), qPrintable(o.output));
        QCOMPARE(runPitlane({"--run", "--quit-when-done"}).exitCode, 2);
    }
};

PITLANE_GUI_TEST_MAIN(GuiScripted)
#include "gui_scripted.moc"
