#pragma once
// The model of the experiment: a bundled model or a TorchScript file, and what the workers
// reported when they loaded it (file size, parameters, input and output signature, load time).
// The window links no torch, so nothing here is guessed: it stays empty until a worker loads it.
#include "pitlane/results/run_result.h"
#include "pitlane/session/model_probe.h"

#include <QWidget>

class QComboBox;
class QFormLayout;
class QLabel;
class QToolButton;

namespace pitlane::widgets {

class ModelPanel : public QWidget {
    Q_OBJECT
public:
    explicit ModelPanel(QWidget* parent = nullptr);

    // Which bundled models exist (those with a .pt in the model directory are enabled).
    void setModelDir(const QString& dir);
    // `model` as written in a preset: a bundled name or a path.
    void setModel(const QString& model);
    QString model() const;

    void showLoaded(const results::RunResult& run);
    void clearLoaded();
    // The model check (issue 26, SetupPanel): each arm's model loaded in a sandboxed worker with
    // one forward, before any run. Shows "checking…", then what loaded (its size, parameters,
    // output, load time) or, next to the model, why it cannot run.
    void showChecking();
    void showProbes(const std::vector<session::ArmProbe>& probes);
    QString checkText() const;
    QString loadedSummary() const;  // one line, for the log and tests

signals:
    // The user picked another model (bundled name or file path).
    void modelChosen(const QString& model);
    void openModelRequested();

private:
    QLabel* addInfo(QFormLayout* form, const QString& label, const char* objectName);

    QComboBox* picker_;
    QToolButton* open_;
    QLabel *path_, *size_, *params_, *input_, *output_, *load_, *firstForward_;
    QLabel* check_ = nullptr;  // the model check's verdict
    QLabel* trust_ = nullptr;  // "a model is code", under a file the user opened
    QString modelDir_;
    bool updating_ = false;
};

// A TorchScript input signature in words: "[3, 224, 224] float32" per input.
QString describeInputs(const nlohmann::json& inputs);

}  // namespace pitlane::widgets
