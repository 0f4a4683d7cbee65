#include "pitlane/widgets/setup/arm_editor.h"

#include "pitlane/widgets/common/arm_palette.h"
#include "pitlane/widgets/common/wheel_guard.h"
#include "pitlane/spec/model_file.h"

#include <QHBoxLayout>
#include <QStyle>
#include <QTabBar>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace pitlane::widgets {

using json = nlohmann::json;

ArmEditor::ArmEditor(QWidget* parent) : QWidget(parent), tabs_(new QTabWidget(this)) {
    tabs_->setObjectName(QStringLiteral("armTabs"));
    tabs_->setDocumentMode(true);
    auto makeButton = [this](const QString& text, const QString& tip) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        return b;
    };
    add_ = makeButton(tr("Add"), tr("Add an arm with default knobs"));
    duplicate_ = makeButton(tr("Duplicate"), tr("Add a copy of the current arm"));
    remove_ = makeButton(tr("Remove"), tr("Remove the current arm"));
    add_->setObjectName(QStringLiteral("addArm"));
    duplicate_->setObjectName(QStringLiteral("duplicateArm"));
    remove_->setObjectName(QStringLiteral("removeArm"));
    connect(add_, &QToolButton::clicked, this, &ArmEditor::addArm);
    connect(duplicate_, &QToolButton::clicked, this, &ArmEditor::duplicateArm);
    connect(remove_, &QToolButton::clicked, this, &ArmEditor::removeArm);

    auto* buttons = new QHBoxLayout;
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addWidget(add_);
    buttons->addWidget(duplicate_);
    buttons->addWidget(remove_);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(buttons);
    layout->addWidget(tabs_);
}

int ArmEditor::armCount() const {
    return tabs_->count();
}

KnobForm* ArmEditor::form(int arm) const {
    return qobject_cast<KnobForm*>(tabs_->widget(arm));
}

KnobForm* ArmEditor::appendForm(const QString& name, const json& knobs) {
    auto* form = new KnobForm;
    form->setKnobs(knobs);
    form->setArmName(name);
    form->setCuda(cuda_);
    guardWheel(form);  // scrolling the arm must not change its knobs
    // No scroll area of its own: the setup column scrolls, so the wheel moves one panel and a
    // short screen shows as many knob rows as fit (issue 27: 3 rows in a nested scroll area).
    tabs_->addTab(form, name);
    connect(form, &KnobForm::changed, this, &ArmEditor::changed);
    connect(form, &KnobForm::changed, this, &ArmEditor::renumber);  // the host in the tooltip
    connect(form, &KnobForm::modelChanged, this, &ArmEditor::updateModelFormats);
    connect(form, &KnobForm::nameChanged, this, [this, form](const QString& n) {
        const int i = tabs_->indexOf(form);
        if (i >= 0) tabs_->setTabText(i, n.isEmpty() ? tr("(unnamed)") : n);
    });
    renumber();
    return form;
}

void ArmEditor::renumber() {
    for (int i = 0; i < tabs_->count(); ++i) {
        tabs_->setTabIcon(
            i, i == invalid_ ? style()->standardIcon(QStyle::SP_MessageBoxWarning) : armSwatch(i));
        QString tip = i == 0 ? tr("baseline arm: the others are compared to it") : QString();
        const QString host = form(i) ? form(i)->armHost() : QString();
        if (!host.isEmpty()) {
            if (!tip.isEmpty()) tip += QLatin1Char('\n');
            tip += tr("runs on host %1 over ssh").arg(host);
        }
        const QString model = form(i) ? form(i)->armModel() : QString();
        if (!model.isEmpty()) {
            if (!tip.isEmpty()) tip += QLatin1Char('\n');
            tip += tr("measures its own model: %1").arg(model);
        }
        tabs_->setTabToolTip(i, tip);
    }
    remove_->setEnabled(tabs_->count() > 1);
}

void ArmEditor::setArms(const json& arms) {
    while (tabs_->count() > 0) {
        QWidget* w = tabs_->widget(0);
        tabs_->removeTab(0);
        delete w;
    }
    invalid_ = -1;
    if (arms.is_array())
        for (const auto& a : arms) {
            const auto name = a.is_object() ? a.value("name", std::string()) : std::string();
            appendForm(QString::fromStdString(name),
                       a.is_object() ? a.value("knobs", json::object()) : json::object());
            if (a.is_object() && a.contains("host"))  // a host that is not a string is shown as written
                form(tabs_->count() - 1)
                    ->setArmHost(QString::fromStdString(a["host"].is_string() ? a["host"].get<std::string>()
                                                                              : a["host"].dump()));
            if (a.is_object() && a.contains("model"))
                form(tabs_->count() - 1)
                    ->setArmModel(QString::fromStdString(a["model"].is_string() ? a["model"].get<std::string>()
                                                                                : a["model"].dump()));
            if (a.is_object() && a.contains("input")) form(tabs_->count() - 1)->setArmInput(a["input"]);
        }
    renumber();
    if (tabs_->count() == 0) appendForm(QStringLiteral("A"), json::object());
    updateModelFormats();
    tabs_->setCurrentIndex(0);
    emit changed();
}

void ArmEditor::setModelResolver(std::function<QString(const QString&)> resolve) {
    resolveModel_ = std::move(resolve);
    updateModelFormats();
}

void ArmEditor::setPresetModelPath(const QString& path) {
    if (path == presetModelPath_) return;
    presetModelPath_ = path;
    updateModelFormats();
}

QString ArmEditor::modelPathOf(int arm) const {
    const QString own = form(arm) ? form(arm)->armModel() : QString();
    if (own.isEmpty()) return presetModelPath_;
    return resolveModel_ ? resolveModel_(own) : own;
}

// The format is read from the file's central directory (spec::readModelFormat: no load).
void ArmEditor::updateModelFormats() {
    for (int i = 0; i < tabs_->count(); ++i) {
        const QString path = modelPathOf(i);
        form(i)->setModelFormat(path.isEmpty() ? std::string() : spec::readModelFormat(path.toStdString()).format);
    }
    renumber();
}

json ArmEditor::armsJson() const {
    json arms = json::array();
    for (int i = 0; i < tabs_->count(); ++i) {
        arms.push_back(
            {{"name", form(i)->armName().toStdString()}, {"knobs", form(i)->knobsJson()}});
        const QString model = form(i)->armModel();
        if (!model.isEmpty()) arms.back()["model"] = model.toStdString();
        if (!form(i)->armInput().is_null()) arms.back()["input"] = form(i)->armInput();
        const QString host = form(i)->armHost();
        if (!host.isEmpty()) arms.back()["host"] = host.toStdString();
    }
    return arms;
}

QString ArmEditor::freeName(const QString& wanted) const {
    QStringList used;
    for (int i = 0; i < tabs_->count(); ++i) used << form(i)->armName();
    if (!wanted.isEmpty() && !used.contains(wanted)) return wanted;
    for (char c = 'A'; c <= 'Z'; ++c)
        if (!used.contains(QString(QLatin1Char(c)))) return QString(QLatin1Char(c));
    for (int n = 1;; ++n)
        if (!used.contains(QStringLiteral("arm %1").arg(n))) return QStringLiteral("arm %1").arg(n);
}

void ArmEditor::addArm() {
    appendForm(freeName({}), json::object());
    tabs_->setCurrentIndex(tabs_->count() - 1);
    emit changed();
}

QString ArmEditor::addArmWith(const QString& name, const json& knobs) {
    QStringList used;
    for (int i = 0; i < tabs_->count(); ++i) used << form(i)->armName();
    QString unique = name.isEmpty() ? freeName({}) : name;
    for (int n = 2; used.contains(unique); ++n) unique = QStringLiteral("%1 (%2)").arg(name).arg(n);
    appendForm(unique, knobs.is_object() ? knobs : json::object());
    tabs_->setCurrentIndex(tabs_->count() - 1);
    emit changed();
    return unique;
}

void ArmEditor::duplicateArm() {
    const int current = tabs_->currentIndex();
    if (current < 0) return addArm();
    auto* copy = appendForm(freeName({}), json::object());
    // Copy every knob as written, including those equal to the defaults the source named.
    copy->setKnobs(form(current)->knobsJson());
    copy->setArmHost(form(current)->armHost());
    copy->setArmModel(form(current)->armModel());
    copy->setArmInput(form(current)->armInput());
    updateModelFormats();
    renumber();
    tabs_->setCurrentIndex(tabs_->count() - 1);
    emit changed();
}

void ArmEditor::removeArm() {
    if (tabs_->count() <= 1) return;
    QWidget* w = tabs_->currentWidget();
    tabs_->removeTab(tabs_->currentIndex());
    delete w;
    invalid_ = -1;
    renumber();
    emit changed();
}

void ArmEditor::setCuda(const CudaAvailability& cuda) {
    cuda_ = cuda;
    for (int i = 0; i < tabs_->count(); ++i) form(i)->setCuda(cuda);
}

void ArmEditor::markInvalid(int arm) {
    if (arm == invalid_) return;
    invalid_ = arm;
    renumber();
}

}  // namespace pitlane::widgets
