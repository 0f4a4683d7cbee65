#pragma once
// Every knob of one arm (spec::Knobs) as a proper control. It reads and writes the knobs JSON of
// a preset: on output it keeps the knobs the preset named plus those changed from the defaults,
// so a preset opened and saved unchanged keeps its shape. Values that are not well-formed (a
// letter in the batch-size list) are passed through as written, so spec::parsePreset reports
// them with their field name instead of the form silently dropping them.
#include <nlohmann/json.hpp>

#include <QWidget>

#include <set>
#include <string>

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
    void setCuda(const CudaAvailability& cuda);

signals:
    void changed();
    void nameChanged(const QString& name);

private:
    QComboBox* choice(const QStringList& values, const QString& tip);
    QComboBox* optionalBool(const QString& tip);
    void addSection(const QString& title);
    void watch(QWidget* w);
    // Disables the allocator entries whose library is missing; the reason is their tooltip.
    void updateAllocators();

    QFormLayout* form_;
    QLineEdit* name_;
    QComboBox *device_, *mode_, *grad_, *jit_, *precision_, *memoryFormat_, *affinity_;
    QComboBox* allocator_;
    QLineEdit *batch_, *cores_;
    QSpinBox *intra_, *inter_, *workers_;
    QComboBox *cudnnEnabled_, *cudnnBenchmark_, *cudnnDeterministic_, *allowTf32_;
    QComboBox *profilingExecutor_, *fuser_;
    QCheckBox *hostSync_, *inputOnHost_;
    QLabel* cudaNote_;
    std::set<std::string> explicit_;  // knobs the loaded preset named
    nlohmann::json loaded_ = nlohmann::json::object();  // as loaded: knobs without a control
                                                         // (cuda_graph) are carried through
    bool loading_ = false;
};

// "1, 2, 8" -> [1, 2, 8]; tokens that are not integers stay strings so validation names them.
nlohmann::json parseIntList(const QString& text);
QString intListText(const std::vector<int>& values);

}  // namespace pitlane::widgets
