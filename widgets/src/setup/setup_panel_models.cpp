// SetupPanel's model (setup_panel.h): the check that loads it in a worker in the background,
// its hash, and the input spec remembered per model file.
#include "pitlane/widgets/setup/setup_panel.h"

#include "pitlane/widgets/setup/arm_editor.h"
#include "pitlane/widgets/setup/model_panel.h"
#include "pitlane/widgets/common/wheel_guard.h"

#include "pitlane/session/model_probe.h"
#include "pitlane/spec/model_preset.h"

#include <QCheckBox>
#include <QCryptographicHash>
#include <QFile>
#include <QSettings>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

namespace pitlane::widgets {

using json = nlohmann::json;

void SetupPanel::stopModelCheck() {
    probeTimer_.stop();
    pendingProbe_.reset();
    if (probeCancel_) probeCancel_->store(true);
    if (probeThread_) probeThread_->wait();
    if (probing_) {  // cancelled before it answered: check again after the run
        probing_ = false;
        probedKey_.clear();
        model_->clearLoaded();
    }
}

void SetupPanel::setWorkerPath(const QString& path) {
    workerPath_ = path;
    probedKey_.clear();
    validate();
}

void SetupPanel::checkModels() {
    if (!pendingProbe_) return;
    if (probing_) {  // one check at a time: this one when the running one is done
        probeTimer_.start();
        return;
    }
    const spec::Preset preset = *pendingProbe_;
    pendingProbe_.reset();
    startModelCheck(preset, pendingKey_);
}

// On a thread of its own (probeArms runs its own event loop and waits for the workers); the
// verdict comes back to this thread. The destructor cancels it (the workers are killed).
void SetupPanel::startModelCheck(const spec::Preset& preset, const std::string& key) {
    if (probeThread_) probeThread_->wait();  // the previous check has answered
    probing_ = true;
    probedKey_ = key;
    model_->showChecking();
    auto cancel = probeCancel_ = std::make_shared<std::atomic<bool>>(false);
    probeThread_.reset(QThread::create([this, preset, worker = workerPath_, cancel, key] {
        auto probes = session::probeArms(preset, worker, 60000, cancel.get());
        if (cancel->load()) return;
        QMetaObject::invokeMethod(
            this,
            [this, probes = std::move(probes), key] {
                probing_ = false;
                if (key == probedKey_) {
                    model_->showProbes(probes);
                    // The top line agrees with the model check (issue 42): "Ready" only when
                    // every arm's model loaded, or was not checked here.
                    QStringList failed;
                    for (const auto& p : probes)
                        if (!p.ok && p.skipped.empty())
                            failed << QStringLiteral("%1 (%2)").arg(QString::fromStdString(p.arm),
                                                                   QString::fromStdString(p.code));
                    if (!failed.isEmpty() && valid_) {
                        validation_->setText(tr("✗ The model check failed for %n arm(s): %1 (see Model)", nullptr,
                                                int(failed.size()))
                                                 .arg(failed.join(QStringLiteral(", "))));
                        validation_->setStyleSheet(QStringLiteral("color: #d0453a; font-weight: bold"));
                    }
                }
                if (pendingProbe_) probeTimer_.start();
            },
            Qt::QueuedConnection);
    }));
    probeThread_->start();
}

void SetupPanel::setModel(const QString& model) {
    const QString previous = QString::fromStdString(raw_.value("model", std::string()));
    model_->setModel(model);
    model_->clearLoaded();
    // The new model's own signature applies when it has one; a typed one stays otherwise.
    const json side = spec::readModelSidecar(resolveModelPath(model).toStdString());
    if (side.is_object() && side.contains("input")) input_->clear();
    // The name follows the model (its file stem) unless the user typed one: a preset's name
    // described the old model.
    const QString name = name_->text().trimmed();
    if (!nameTyped_ || name.isEmpty() || name == previous ||
        name == QFileInfo(previous).completeBaseName())
        name_->setText(QFileInfo(model).completeBaseName());
    raw_["model"] = model.toStdString();
    arms_->setPresetModelPath(resolveModelPath(model));
    updateInputPlaceholder();
    emit changed();
    validate();
}

// Input specs the user gave for a model without a sidecar, remembered per file by its SHA-256
// (QSettings "inputs/<sha256>"): the next time the same bytes are opened, under any name, the
// field is filled again. The hash is computed on a thread of its own (a model can be GBs).
void SetupPanel::hashModel() {
    const QString path = resolveModelPath(model_->model());
    if (path == hashedPath_) return applyRememberedInput();
    hashedPath_ = path;
    modelSha_.clear();
    if (hashThread_) hashThread_->wait();
    auto result = std::make_shared<QString>();
    hashThread_.reset(QThread::create([path, result] {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) return;
        QCryptographicHash hash(QCryptographicHash::Sha256);
        if (hash.addData(&f)) *result = QString::fromLatin1(hash.result().toHex());
    }));
    connect(hashThread_.get(), &QThread::finished, this, [this, path, result] {
        if (path != hashedPath_) return;  // another model was chosen meanwhile
        modelSha_ = *result;
        if (input_->text().trimmed().isEmpty())
            applyRememberedInput();
        else if (valid_)
            rememberInput();  // typed before the hash was known
    });
    hashThread_->start();
}

void SetupPanel::applyRememberedInput() {
    if (modelSha_.isEmpty() || !input_->text().trimmed().isEmpty()) return;
    const json side = spec::readModelSidecar(hashedPath_.toStdString());
    if (side.is_object() && side.contains("input")) return;  // the model describes itself
    const QString remembered =
        QSettings().value(QStringLiteral("inputs/") + modelSha_).toString();
    if (remembered.isEmpty()) return;
    inputOrigin_ = tr("Remembered from the last time this file (SHA-256 %1…) was set up.")
                       .arg(modelSha_.left(12));
    input_->setText(remembered);  // validates (textChanged)
}

void SetupPanel::rememberInput() {
    const QString text = input_->text().trimmed();
    if (text.isEmpty() || modelSha_.isEmpty() ||
        hashedPath_ != resolveModelPath(model_->model()))
        return;
    QSettings().setValue(QStringLiteral("inputs/") + modelSha_, text);
}

bool SetupPanel::hashingModel() const {
    return hashThread_ && hashThread_->isRunning();
}

}  // namespace pitlane::widgets
