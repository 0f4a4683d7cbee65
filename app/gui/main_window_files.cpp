// MainWindow: files (presets, models), recent files, drag and drop, and QSettings. Exports are
// ExportController's (export_controller.cpp).
#include "main_window.h"

#include "app_paths.h"
#include "recent_files.h"

#include "pitlane/spec/preset.h"
#include "pitlane/store/run_store.h"
#include "pitlane/spec/model_preset.h"
#include "pitlane/widgets/live/log_pane.h"
#include "pitlane/widgets/setup/setup_panel.h"
#include "pitlane/protocol/json_limits.h"

#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMimeData>
#include <QSaveFile>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>

#include <fstream>

namespace pitlane::app {

using json = nlohmann::json;

namespace {
bool isModelFile(const QString& path) {
    return path.endsWith(QLatin1String(".pt"), Qt::CaseInsensitive) ||
           path.endsWith(QLatin1String(".pt2"), Qt::CaseInsensitive);
}
bool isJsonFile(const QString& path) {
    return path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive);
}

bool writeFile(const QString& path, const std::string& data, QString* error) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) ||
        f.write(data.data(), qint64(data.size())) != qint64(data.size()) || !f.commit()) {
        if (error) *error = QObject::tr("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}
}  // namespace

bool MainWindow::openPath(const QString& path) {
    return isModelFile(path) ? openModel(path) : openPreset(path);
}

bool MainWindow::openPreset(const QString& path) {
    spec::Preset preset;
    try {
        preset = spec::loadPresetFile(path.toStdString(), setup_->modelDir().toStdString());
    } catch (const spec::SpecError& e) {
        // A preset that is JSON but not valid opens anyway, as written, so it can be fixed
        // here: the setup shows it and its validation line the first error; the dialog lists
        // them all (issue 27: only the first, then a blank setup with no arms and warmup 0).
        // A file the bounded reader stopped in (more than 64 arms, nested too deep: "not read
        // further") is not read whole to be shown: 1.5 M arms would take 10 s and 1 GB, then
        // fill the setup (issue 28).
        QStringList all;
        bool stopped = false;
        for (const auto& err : spec::validatePresetFile(path.toStdString(), setup_->modelDir().toStdString())) {
            all << QString::fromUtf8(err.what());
            stopped |= err.reason().find("read further") != std::string::npos;
        }
        json raw;
        std::string why;
        if (stopped || !spec::readJsonFile(path.toStdString(), &raw, &why) || !raw.is_object() ||
            raw.contains("schema")) {
            report(tr("Cannot open preset"), QString::fromUtf8(e.what()));
            return false;
        }
        if (all.isEmpty()) all << QString::fromUtf8(e.what());
        setup_->loadJson(raw, QFileInfo(path).absoluteFilePath());
        setWindowModified(false);
        updateTitle();
        recent_->add(path);
        rememberFolder(path);
        report(tr("The preset is not valid yet"),
               tr("%1 opened as written; fix these to run it:\n\n%2")
                   .arg(path, all.join(QLatin1Char('\n'))));
        return true;
    }
    if (preset.raw.contains("schema")) {  // a results file, not a preset
        report(tr("Cannot open preset"), tr("%1 is a results file, not a preset").arg(path));
        return false;
    }
    setup_->loadJson(preset.raw, QFileInfo(path).absoluteFilePath());
    setWindowModified(false);
    updateTitle();
    recent_->add(path);
    rememberFolder(path);
    statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    return true;
}

bool MainWindow::openModel(const QString& path, bool asNewSetup) {
    const QFileInfo info(path);
    if (!info.isFile()) {
        report(tr("Cannot open model"), tr("%1 is not a file").arg(path));
        return false;
    }
    // Nothing set up yet (a first start, a blank window): the model opens as a new A/B, as
    // `pitlane MODEL.pt` does, not as the model of a setup with no arms.
    const json current = setup_->presetJson();
    if (current.value("model", std::string()).empty() || !current.contains("arms") ||
        !current["arms"].is_array() || current["arms"].empty())
        asNewSetup = true;
    if (asNewSetup) {
        try {
            const auto p = spec::presetForModel(info.absoluteFilePath().toStdString(),
                                                setup_->modelDir().toStdString());
            setup_->loadJson(p.raw, QString());
        } catch (const spec::SpecError& e) {
            // Typically a model without a sidecar: open the same two arms and let the user type
            // the input signature the validation line asks for.
            setup_->loadJson(spec::newModelPresetJson(info.absoluteFilePath().toStdString()),
                             QString());
            log_->append(-1, QString(), QStringLiteral("warning"), QString::fromUtf8(e.what()));
        }
        setWindowModified(false);
    } else {
        setup_->setModel(info.absoluteFilePath());
    }
    updateTitle();
    recent_->add(path);
    rememberFolder(path);
    return true;
}

bool MainWindow::savePreset(const QString& path, QString* error) {
    const auto built = setup_->build();
    if (!built.preset) {
        if (error) *error = tr("the setup is not valid: %1").arg(built.error);
        return false;
    }
    spec::Preset p = *built.preset;
    // A model file is written relative to the new preset's folder, so the pair can move together.
    if (!p.bundled)
        p.model = QFileInfo(path)
                      .absoluteDir()
                      .relativeFilePath(QString::fromStdString(p.model_path))
                      .toStdString();
    if (!writeFile(path, spec::presetToJson(p).dump(2) + "\n", error)) return false;
    setup_->loadJson(spec::presetToJson(p), QFileInfo(path).absoluteFilePath());
    setWindowModified(false);
    updateTitle();
    recent_->add(path);
    rememberFolder(path);
    return true;
}

void MainWindow::openStartupSetup() {
    QSettings s;
    const QString last = s.value(QStringLiteral("setup/last")).toString();
    if (!last.isEmpty()) {
        try {
            // Depth-bounded like every JSON read: the settings file is a file like any other.
            const json j = protocol::parseJsonBounded(last.toStdString());
            if (j.is_discarded()) throw std::runtime_error("unreadable setup/last");
            setup_->loadJson(j, s.value(QStringLiteral("setup/lastFile")).toString());
            setWindowModified(false);
            updateTitle();
            return;
        } catch (const std::exception&) {
        }
    }
    const QString def = defaultPresetPath();
    if (!def.isEmpty()) openPreset(def);
}

bool MainWindow::loadSetupOfRun(qint64 runId) {
    if (isRunning()) return false;
    const store::RunStore* store = history();
    const auto preset = store ? store->runPreset(runId) : std::nullopt;
    if (!preset) {
        report(tr("Cannot load the setup"),
               store ? store->lastError() : tr("No run history is open, so run #%1 cannot be read").arg(runId));
        return false;
    }
    setup_->loadJson(*preset, QString());
    setWindowModified(true);  // a preset no file holds yet
    updateTitle();
    statusBar()->showMessage(
        tr("Setup: the preset of run #%1 (%2) — Run measures it again")
            .arg(runId)
            .arg(QString::fromStdString(preset->value("model", std::string()))),
        8000);
    return true;
}

void MainWindow::openPresetDialog() {
    const QString start = lastFolder().isEmpty() ? presetsDir() : lastFolder();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open preset"), start,
                                                      tr("Presets (*.json);;All files (*)"));
    if (!path.isEmpty()) openPreset(path);
}

void MainWindow::openModelDialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open model"), lastFolder(),
        tr("Models: torch.export archives, AOTInductor packages, TorchScript (*.pt2 *.pt);;All files (*)"));
    if (!path.isEmpty()) openModel(path);
}

void MainWindow::compareModelsDialog() {
    const QString filter = tr("Models: torch.export archives, AOTInductor packages, TorchScript (*.pt2 *.pt);;All files (*)");
    const QString first = QFileDialog::getOpenFileName(this, tr("Compare two models: arm A"), lastFolder(), filter);
    if (first.isEmpty()) return;
    const QString second = QFileDialog::getOpenFileName(this, tr("Compare two models: arm B"),
                                                        QFileInfo(first).absolutePath(), filter);
    if (!second.isEmpty()) compareModels(first, second);
}

bool MainWindow::compareModels(const QString& first, const QString& second) {
    try {
        const auto p = spec::presetForModels(QFileInfo(first).absoluteFilePath().toStdString(),
                                             QFileInfo(second).absoluteFilePath().toStdString(),
                                             setup_->modelDir().toStdString());
        setup_->loadJson(p.raw, QString());
    } catch (const spec::SpecError& e) {
        // Typically a model without a sidecar: the same A/B, and the validation line asks for
        // the input.
        const json knobs = {{"mode", "eval"}, {"grad", "inference_mode"}, {"intra_op_threads", 1}};
        setup_->loadJson({{"name", (QFileInfo(first).fileName() + QStringLiteral(" vs ") + QFileInfo(second).fileName()).toStdString()},
                          {"model", QFileInfo(first).absoluteFilePath().toStdString()},
                          {"arms", {{{"name", "A"}, {"knobs", knobs}},
                                    {{"name", "B"}, {"model", QFileInfo(second).absoluteFilePath().toStdString()}, {"knobs", knobs}}}}},
                         QString());
        log_->append(-1, QString(), QStringLiteral("warning"), QString::fromUtf8(e.what()));
    }
    setWindowModified(false);
    updateTitle();
    for (const QString& path : {first, second}) recent_->add(path);
    rememberFolder(first);
    statusBar()->showMessage(tr("A: %1 vs B: %2 — Run to compare them").arg(QFileInfo(first).fileName(), QFileInfo(second).fileName()), 8000);
    return true;
}

void MainWindow::savePresetDialog() {
    QString start = setup_->presetFile();
    if (start.isEmpty() ||
        start.startsWith(presetsDir()))  // do not overwrite shipped presets by default
        start = QDir(lastFolder())
                    .filePath(QStringLiteral("%1.json").arg(
                        QString::fromStdString(
                            setup_->presetJson().value("name", std::string("preset")))
                            .replace(QLatin1Char('/'), QLatin1Char('_'))));
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save preset"), start, tr("Presets (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!savePreset(path, &error))
        report(tr("Cannot save preset"), error);
    else
        statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile() &&
            (isModelFile(url.toLocalFile()) || isJsonFile(url.toLocalFile()))) {
            event->acceptProposedAction();
            return;
        }
}

void MainWindow::dropEvent(QDropEvent* event) {
    if (isRunning()) return;
    QStringList models;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile() && isModelFile(url.toLocalFile())) models << url.toLocalFile();
    if (models.size() == 2) {  // two models dropped at once: their A/B
        event->acceptProposedAction();
        compareModels(models[0], models[1]);
        return;
    }
    for (const QUrl& url : event->mimeData()->urls()) {
        const QString path = url.toLocalFile();
        if (isModelFile(path) || isJsonFile(path)) {
            event->acceptProposedAction();
            openPath(path);
            return;
        }
    }
}

void MainWindow::restoreSettings() {
    QSettings s;
    if (!restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray())) {
        // First start: the whole screen; plots side by side need the room.
        const QRect avail = screen() ? screen()->availableGeometry() : QRect(0, 0, 1600, 1000);
        setGeometry(avail);
        // On a short screen (1366x768) the history starts at its minimum: the plots need the
        // height more than an empty list does.
        if (avail.height() < 900) {
            resizeDocks({historyDock()}, {historyDock()->minimumSizeHint().height()},
                        Qt::Vertical);
            // ...and the plots more than the verdict's empty rows: the results start at the
            // height of the verdict and a few arms (they are a drag away).
            rightSplitter_->setSizes({60, 1000, 150});
        }
    }
    restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    mainSplitter_->restoreState(s.value(QStringLiteral("window/mainSplitter")).toByteArray());
    rightSplitter_->restoreState(s.value(QStringLiteral("window/rightSplitter")).toByteArray());
    if (s.value(QStringLiteral("view/dark"), false).toBool()) setDarkPalette(true);
    if (s.contains(QStringLiteral("worker/cuda_available")))
        setCuda({true, s.value(QStringLiteral("worker/cuda_available")).toBool(),
                 s.value(QStringLiteral("worker/cuda_devices")).toInt()});
}

void MainWindow::saveSettings() {
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState());
    s.setValue(QStringLiteral("window/mainSplitter"), mainSplitter_->saveState());
    s.setValue(QStringLiteral("window/rightSplitter"), rightSplitter_->saveState());
    s.setValue(QStringLiteral("view/dark"), darkAction_->isChecked());
}

void MainWindow::saveLastSetup() {
    QSettings s;
    s.setValue(QStringLiteral("setup/last"), QString::fromStdString(setup_->presetJson().dump()));
    s.setValue(QStringLiteral("setup/lastFile"), setup_->presetFile());
}

}  // namespace pitlane::app
