#pragma once
// The arms of an experiment: one tab per arm (a KnobForm), tab icons in the arm's colour, and
// add / duplicate / remove. The first arm is the baseline.
#include "pitlane/widgets/setup/knob_form.h"

#include <QWidget>

#include <functional>

#include <vector>

class QTabWidget;
class QToolButton;

namespace pitlane::widgets {

class ArmEditor : public QWidget {
    Q_OBJECT
public:
    explicit ArmEditor(QWidget* parent = nullptr);

    // [{"name": "A", "knobs": {...}}, ...] as in a preset.
    void setArms(const nlohmann::json& arms);
    nlohmann::json armsJson() const;
    int armCount() const;
    KnobForm* form(int arm) const;
    void setCuda(const CudaAvailability& cuda);
    // Marks the tab of an arm that failed validation (-1: none).
    void markInvalid(int arm);
    // Appends an arm with these knobs (the Advice tab's "Add arm") and shows it; the name is
    // made unique with " (2)", " (3)"... Returns the name given.
    QString addArmWith(const QString& name, const nlohmann::json& knobs);
    // Where a model field points (a bundled name or a path relative to the preset): set by the
    // setup panel, which knows the model folder and the preset's file; and the preset's own model
    // (resolved) for arms without one. Each arm's knobs follow its model's format.
    void setModelResolver(std::function<QString(const QString&)> resolve);
    void setPresetModelPath(const QString& path);

public slots:
    void addArm();
    void duplicateArm();
    void removeArm();

signals:
    void changed();

private:
    KnobForm* appendForm(const QString& name, const nlohmann::json& knobs);
    QString freeName(const QString& wanted) const;
    void renumber();

    void updateModelFormats();
    QString modelPathOf(int arm) const;

    QTabWidget* tabs_;
    std::function<QString(const QString&)> resolveModel_;
    QString presetModelPath_;
    QToolButton *add_, *duplicate_, *remove_;
    CudaAvailability cuda_;
    int invalid_ = -1;
};

}  // namespace pitlane::widgets
