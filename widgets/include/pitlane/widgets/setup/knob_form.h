#pragma once
// Every knob of one arm (spec::Knobs) as a proper control, one per row of spec::knobTable(): its
// kind picks the control, its group the section, its label, help and CUDA need the label, the
// tooltip and when it is disabled. It reads and writes the knobs JSON of
// a preset: on output it keeps the knobs the preset named plus those changed from the defaults,
// so a preset opened and saved unchanged keeps its shape. Values that are not well-formed (a
// letter in the batch-size list) are passed through as written, so spec::parsePreset reports
// them with their field name instead of the form silently dropping them.
#include "pitlane/spec/knob_table.h"

#include <nlohmann/json.hpp>

#include <QWidget>

#include <set>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QFormLayout;
class QLineEdit;
class QSpinBox;

namespace pitlane::widgets {

// What the worker said about CUDA (hello.environment), if any worker has said anything yet.
struct CudaAvailability {
    bool known = false;
    bool available = false;
    int devices = 0;
};
// Why CUDA-only controls are disabled, in words for a tooltip ("" when they are enabled).
QString cudaDisabledReason(const CudaAvailability& cuda);

class KnobForm : public QWidget {
    Q_OBJECT
public:
    explicit KnobForm(QWidget* parent = nullptr);

    // Knobs as written in a preset (validated or not: what cannot be parsed falls back to the
    // defaults).
    void setKnobs(const nlohmann::json& knobs);
    nlohmann::json knobsJson() const;
    QString armName() const;
    void setArmName(const QString& name);
    // Where the arm's workers run (remote arms, issue 15): "" this machine, else the ssh
    // destination ("user@host" or an ssh config alias), the arm's `host` in the preset.
    QString armHost() const;
    void setArmHost(const QString& host);
    // The arm's own model (issue 26) as written in the preset ("" = the preset's model), and its
    // own `input` (null when it has none; carried through as written).
    QString armModel() const;
    void setArmModel(const QString& model);
    nlohmann::json armInput() const { return input_; }
    void setArmInput(const nlohmann::json& input) { input_ = input; }
    // The format of the model this arm measures (spec::kFormat*; "" unknown): the knobs a package
    // cannot take are disabled, the reason in their tooltip.
    void setModelFormat(const std::string& format);
    void setCuda(const CudaAvailability& cuda);
    // The control of a knob (its objectName is the knob's name); nullptr for an unknown name.
    QWidget* control(const std::string& knob) const;

signals:
    void changed();
    void nameChanged(const QString& name);
    // The model field changed (typed or picked): the editor reads the new file's format.
    void modelChanged();

private:
    // One control per row of spec::knobTable(), built from the row's kind.
    struct Control {
        const spec::KnobInfo* knob = nullptr;
        QWidget* widget = nullptr;
        QLineEdit* cores = nullptr;  // ChoiceOrCores: the core list
    };
    QWidget* makeControl(const spec::KnobInfo& knob, Control& c);
    void setValue(const Control& c, const nlohmann::json& v);
    nlohmann::json value(const Control& c) const;
    void addSection(const QString& title);
    void watch(QWidget* w);
    // Disables the allocator entries whose library is missing; the reason is their tooltip.
    void updateAllocators();

    QFormLayout* form_;
    QLineEdit* name_;
    QLineEdit* host_;
    QLineEdit* model_;
    nlohmann::json input_;  // the arm's own input as loaded (null: none)
    std::string format_;    // of the arm's model; the controls it disables
    CudaAvailability cuda_;
    QLabel* cudaNote_;
    std::vector<Control> controls_;
    std::set<std::string> explicit_;  // knobs the loaded preset named
    nlohmann::json loaded_ = nlohmann::json::object();  // as loaded: names the table does not
                                                         // know are carried through (validation
                                                         // names them)
    bool loading_ = false;
};

// "1, 2, 8" -> [1, 2, 8]; tokens that are not integers stay strings so validation names them.
nlohmann::json parseIntList(const QString& text);
QString intListText(const std::vector<int>& values);

}  // namespace pitlane::widgets
