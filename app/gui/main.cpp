// pitlane: the workbench window (CONTRACT.md "Commands"). With --run it drives the real window
// through a run of the given preset, optionally saves a screenshot and quits with the CLI's exit
// codes (0 every arm ok, 1 an arm failed, 2 bad arguments or an invalid preset, 3 the run was
// measured but the history could not store it).
#include "command_line.h"
#include "history_controller.h"
#include "main_window.h"
#include "stream_probe.h"
#include "ui_thread_fills.h"

#include "pitlane/widgets/results/verdict_calculator.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QTimer>

#include <malloc.h>

#include <ctime>
#include <iostream>

namespace {

// The file named on the command line (a preset, or a model file: the window's default A/B for
// it), or the startup setup. False when it could not be opened (the window said why).
bool openStartupFile(pitlane::app::MainWindow& window, const QString& path) {
    if (path.isEmpty()) {
        window.openStartupSetup();
        return true;
    }
    if (path.endsWith(QLatin1String(".pt"), Qt::CaseInsensitive) ||
        path.endsWith(QLatin1String(".pt2"), Qt::CaseInsensitive))
        return window.openModel(path, true);
    return window.openPreset(path);
}

// --run's end: the exit code (0 every arm ok, 1 an arm failed or the screenshot was not saved,
// 3 the run is not stored), the stream probe's summary, the screenshot.
int finishScriptedRun(pitlane::app::MainWindow& window, const pitlane::app::CommandLine& cli,
                      pitlane::app::StreamProbe& probe, bool probing, bool allOk) {
    int exitCode = allOk ? 0 : 1;
    // A run the history could not store is never reported as done: the log and the status bar
    // said it; a script hears it too (pitlane-cli's exit 3).
    if (const QString why = window.runNotStored(); !why.isEmpty()) {
        std::cerr << "pitlane: run history: this run is not (completely) stored: " << why.toStdString() << "\n";
        exitCode = 3;
    }
    if (probing) {
        probe.stop();
        std::cerr << "pitlane: " << probe.summary().toStdString() << "\n";
        std::cerr << "pitlane: longest gap: " << probe.longestGap().toStdString() << "\n";
        std::cerr << "pitlane: replots: " << probe.replots().toStdString() << "\n";
    }
    if (!cli.screenshot.isEmpty()) {
        QString error;
        if (window.saveScreenshot(cli.screenshot, &error)) {
            std::cerr << "pitlane: screenshot saved to " << cli.screenshot.toStdString() << "\n";
        } else {
            std::cerr << "pitlane: " << error.toStdString() << "\n";
            exitCode = std::max(exitCode, 1);
        }
    }
    return exitCode;
}

// --open-run's measurement (bench/long_run.sh): the time from the request to the verdict, and the
// longest gap of a 10 ms heartbeat until a second after it (what the views do once the verdict
// is shown counts as well).
class ReopenProbe {
public:
    // `keepSetup`: a file was named on the command line, and stays the setup.
    void start(QApplication& app, pitlane::app::MainWindow& window, qint64 runId, bool quitWhenDone,
               bool keepSetup) {
        heartbeat_.setInterval(10);
        QObject::connect(&heartbeat_, &QTimer::timeout, &app, [this] { beat(); });
        if (auto* verdict = window.findChild<pitlane::widgets::VerdictCalculator*>())
            QObject::connect(verdict, &pitlane::widgets::VerdictCalculator::ready, &app,
                             [this, &app, &window, quitWhenDone](const auto&, bool final) {
                                 if (!final || !clock_.isValid() || verdictAt_ >= 0) return;
                                 verdictAt_ = clock_.elapsed();
                                 QTimer::singleShot(1000, &app, [this, &app, &window, quitWhenDone] {
                                     beat();
                                     std::cerr << "pitlane: reopen " << verdictAt_ / 1000.0
                                               << " s to the verdict, longest event-loop gap "
                                               << longestGap_ << " ms (until 1 s after it), UI "
                                               << "thread busy at most " << maxBusyMs_
                                               << " ms between two ticks, "
                                               << busyAtLongest_ << " ms in the longest gap (ending "
                                               << longestAt_ << " ms after the request)\n";
                                     // Where the window's memory is: malloc's bytes in use,
                                     // and freed but kept by its arenas (not returned).
                                     const struct mallinfo2 heap = ::mallinfo2();
                                     std::cerr << "pitlane: heap a second after reopening: in use "
                                               << (heap.uordblks + heap.hblkhd) / 1'000'000
                                               << " MB, free in malloc's arenas "
                                               << heap.fordblks / 1'000'000 << " MB\n";
                                     // A run damaged in the history: shown, and said by
                                     // the exit code as the CLI says it (3).
                                     if (window.shownRunDamaged())
                                         std::cerr << "pitlane: run is damaged in the history\n";
                                     if (quitWhenDone) app.exit(window.shownRunDamaged() ? 3 : 0);
                                 });
                             });
        QTimer::singleShot(0, &window, [this, &app, &window, runId, quitWhenDone, keepSetup] {
            clock_.start();
            lastCpuMs_ = threadCpuMs();
            heartbeat_.start();
            // The run's own setup beside it (issue 44: the setup shown was another run's).
            auto* history = window.findChild<pitlane::app::HistoryController*>();
            if (!(history && history->openRunWithItsSetup(runId, keepSetup)) && quitWhenDone) app.exit(1);
        });
    }

private:
    // CPU time of the calling (UI) thread: a gap much longer than the thread's own time in it is
    // the OS running other threads and processes, not work of the window.
    static double threadCpuMs() {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
    }
    void beat() {
        const qint64 now = clock_.elapsed();
        const double cpu = threadCpuMs();
        const double busy = cpu - lastCpuMs_;
        lastCpuMs_ = cpu;
        maxBusyMs_ = std::max(maxBusyMs_, busy);
        if (now - lastBeat_ > longestGap_) {
            longestGap_ = now - lastBeat_;
            longestAt_ = now;
            busyAtLongest_ = busy;
        }
        lastBeat_ = now;
    }
    QElapsedTimer clock_;
    QTimer heartbeat_;
    qint64 lastBeat_ = 0, longestGap_ = 0, longestAt_ = 0, verdictAt_ = -1;
    double lastCpuMs_ = 0, maxBusyMs_ = 0, busyAtLongest_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    // --help, --version and a missing display are answered before QApplication looks for one
    // (it would abort with Qt's "Reinstalling the application may fix this problem").
    if (const int rc = pitlane::app::answerBeforeDisplay(argc, argv, PITLANE_VERSION); rc >= 0)
        return rc;
    pitlane::app::installDisplayErrorHandler();
    QGuiApplication::setHighDpiScaleFactorRoundingPolicy(
        Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
    pitlane::app::keepFillsOnTheUiThread();  // ui_thread_fills.h
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("pitlane"));
    QCoreApplication::setApplicationName(QStringLiteral("pitlane"));
    QCoreApplication::setApplicationVersion(QStringLiteral(PITLANE_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("pitlane"));

    const auto cli = pitlane::app::parseCommandLine(app.arguments());
    if (!cli.error.isEmpty()) {
        std::cerr << "pitlane: " << cli.error.toStdString() << "\n" << pitlane::app::usage();
        return 2;
    }

    pitlane::app::MainWindow window;
    window.setInteractive(!cli.run);
    // An explicit --db that cannot be opened: the window says so and runs without history; a
    // script gets the CLI's answer (exit 2) instead of results it believes stored.
    if (!window.setDatabasePath(cli.db) && cli.run && cli.quitWhenDone) return 2;
    if (cli.dark) window.setDarkPalette(true);
    if (!cli.tab.isEmpty() && !window.showResultsTab(cli.tab)) {
        std::cerr << "pitlane: no results tab " << cli.tab.toStdString()
                  << " (verdict, applied, log, advice)\n";
        return 2;
    }

    const bool opened = openStartupFile(window, cli.path);
    window.show();

    // Outside the if: the lambdas below use them while app.exec() runs.
    int exitCode = 0;
    // bench/gui_stream.sh: how long the event loop stalled while the samples streamed.
    pitlane::app::StreamProbe probe(&window);
    const bool probing = qEnvironmentVariableIntValue("PITLANE_STREAM_PROBE") == 1;
    if (cli.run) {
        if (!opened && cli.quitWhenDone) return 2;
        QObject::connect(&window, &pitlane::app::MainWindow::runFinished, &app, [&](bool allOk) {
            exitCode = finishScriptedRun(window, cli, probe, probing, allOk);
            if (cli.quitWhenDone) app.exit(exitCode);
        });
        // Once the window is shown and laid out, like a user pressing Ctrl+R.
        QTimer::singleShot(0, &window, [&] {
            if (!window.startRun() && cli.quitWhenDone) app.exit(2);
            if (probing) probe.start();
        });
    }
    // --open-run: a stored run shown as a user's click in the history would.
    ReopenProbe reopen;
    if (cli.openRun > 0 && !cli.run) reopen.start(app, window, cli.openRun, cli.quitWhenDone, !cli.path.isEmpty());
    return app.exec();
}
