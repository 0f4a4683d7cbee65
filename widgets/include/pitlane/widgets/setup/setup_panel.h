#pragma once
// The whole experiment setup on the left of the window: preset name, model (with what the
// workers reported about it), input signature, run settings and the arms. It reads and writes a
// preset's JSON; validation is spec::parsePreset on that JSON, so the user sees exactly the
// errors pitlane-cli would print, with their field names.
#include "pitlane/spec/preset.h"
#include "pitlane/widgets/setup/knob_form.h"

#include <QThread>
#include <QTimer>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

#include <optional>

class QCheckBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace pitlane::widgets {

class ArmEditor;
class ModelPanel;

class SetupPanel : public QWidget {
    Q_OBJECT
public:
    // Profiled iterations per arm when "Profile after measuring" is checked (run.profile_iters).
    static constexpr int kProfileIters = 10;

    explicit SetupPanel(QWidget* parent = nullptr);

    void setModelDir(const QString& dir);
    QString modelDir() const { return modelDir_; }

    // Fill from a preset's JSON, valid or not. `file` is where it came from (relative model
    // paths resolve against it); fields the editor does not show (description, lesson, seed...)
    // are carried through untouched.
    void loadJson(const nlohmann::json& preset, const QString& file);
    nlohmann::json presetJson() const;
    QString presetFile() const { return file_; }
    // The preset's "lesson" (null when it has none); only a newly loaded preset changes it.
    nlohmann::json lesson() const { return raw_.value("lesson", nlohmann::json()); }

    struct Built {
        std::optional<spec::Preset> preset;
        QString error;  // "arms[1].knobs.jit: ..." when invalid
        QString field;
    };
    Built build() const;
    bool isValid() const { return valid_; }
    // The line above the setup ("✓ Ready: ..." / "✗ ..."): it agrees with the model check.
    QString validationLine() const;

    // The user chose another model: a bundled name or a file path.
    void setModel(const QString& model);
    void setCuda(const CudaAvailability& cuda);

    // The worker that checks each arm's model once the setup is valid (a sandboxed worker per
    // arm loads it and runs one forward, as `pitlane-cli validate` does); "" turns it off.
    void setWorkerPath(const QString& path);
    // True while a model check runs (tests wait for it).
    bool checkingModels() const { return probing_; }
    // Before a run starts: a check still running is stopped (its workers killed), none starts
    // while the panel is disabled, so nothing but the run's workers runs while it measures.
    void stopModelCheck();

    // The model's SHA-256 is being computed (the remembered input spec waits for it).
    bool hashingModel() const;
    // What keeps Run greyed out ("" when the setup is valid), as shown at the top of the panel.
    QString validationMessage() const;
    // The same in a line the window's status bar shows whole at 1366 px ("" when valid): an
    // input error points at the Input spec field, where the whole reason is (issue 44).
    QString statusMessage() const { return status_; }
    // A line at the top of the setup saying whose setup it is not (issue 44: a stored run shown
    // on the right beside another run's setup read as that run's); rich text, "" hides it. A
    // link in it emits originNoteLinkActivated.
    void setOriginNote(const QString& html);
    QString originNote() const;
    ModelPanel* modelPanel() const { return model_; }
    ArmEditor* armEditor() const { return arms_; }

signals:
    void changed();
    void validityChanged(bool valid);
    // After every validation, valid or not (the message may have changed).
    void validated();
    void openModelRequested();
    void originNoteLinkActivated(const QString& link);

private:
    void scheduleValidation();
    void validate();
    QString resolveModelPath(const QString& model) const;
    void updateInputPlaceholder();

    QLineEdit* name_;
    ModelPanel* model_;
    QLineEdit* input_;
    QSpinBox *warmup_, *iters_, *blockIters_, *processes_;
    // run.budget_ms in seconds (0: none): the run plans its iterations and processes to fit it,
    // and Measured and Processes are then not used.
    QSpinBox* budget_ = nullptr;
    void showBudget();
    // run.profile_iters > 0: every arm is profiled after it is measured (the advisor's evidence).
    QCheckBox* profile_ = nullptr;
    ArmEditor* arms_;
    QLabel* validation_;
    QLabel* originNote_ = nullptr;  // setOriginNote()
    // Under the Input spec: its error, or where a remembered spec came from.
    QLabel* inputNote_ = nullptr;
    QString inputOrigin_;
    void hashModel();
    void applyRememberedInput();
    void rememberInput();
    QString hashedPath_, modelSha_;
    std::unique_ptr<QThread> hashThread_;
    // A serving preset's levels (its `serving` block, kept as written: no editor for it here);
    // Measured and Block do not apply to it.
    QLabel* servingNote_ = nullptr;
    void showServing();
    QTimer validateTimer_;
    // The model check: one at a time, on a thread of its own; a newer setup waits for it, and
    // the destructor stops it (its workers killed) before the panel goes.
    void checkModels();
    void startModelCheck(const spec::Preset& preset, const std::string& key);
    QTimer probeTimer_;
    QString workerPath_;
    std::string probedKey_, pendingKey_;
    std::optional<spec::Preset> pendingProbe_;
    bool probing_ = false;
    std::unique_ptr<QThread> probeThread_;  // a QThread: probeArms runs QProcess and an event loop
    std::shared_ptr<std::atomic<bool>> probeCancel_;
public:
    ~SetupPanel() override;
private:
    nlohmann::json raw_ = nlohmann::json::object();
    QString file_, modelDir_;
    bool valid_ = false;
    QString error_;  // the whole first error ("" when valid): validationMessage()
    QString status_;  // statusMessage()
    bool loading_ = false;
    bool nameTyped_ = false;  // the user typed the name since the last preset was loaded
};

// Input signature text: "3x224x224 float32; 16 int64" (per input, ';'-separated), or a JSON
// array. Returns null for empty text (= the model's sidecar decides).
nlohmann::json parseInputText(const QString& text);
QString inputText(const nlohmann::json& inputs);

}  // namespace pitlane::widgets
