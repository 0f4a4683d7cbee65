#include "pitlane/widgets/setup/knob_form.h"

#include "pitlane/session/allocator.h"
#include "pitlane/spec/preset.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>
#include <QHBoxLayout>
#include <QFileDialog>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardItemModel>

#include <algorithm>

namespace pitlane::widgets {

using json = nlohmann::json;

QString cudaDisabledReason(const CudaAvailability& cuda) {
    if (cuda.known && cuda.available) return {};
    if (cuda.known) return QObject::tr("Disabled: this build's worker reports no CUDA.");
    return QObject::tr(
        "Disabled: this build's worker reports no CUDA (assumed until a worker "
        "has started: run once to check).");
}

json parseIntList(const QString& text) {
    json out = json::array();
    for (const QString& token :
         text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int v = token.toInt(&ok);
        if (ok)
            out.push_back(v);
        else
            out.push_back(token.toStdString());
    }
    return out;
}

QString intListText(const std::vector<int>& values) {
    QStringList parts;
    for (int v : values) parts << QString::number(v);
    return parts.join(QStringLiteral(", "));
}

KnobForm::KnobForm(QWidget* parent) : QWidget(parent), form_(new QFormLayout(this)) {
    form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form_->setVerticalSpacing(3);
    name_ = new QLineEdit(this);
    name_->setObjectName(QStringLiteral("armName"));
    name_->setToolTip(tr("Arm name (unique; the first arm is the baseline of every ratio)"));
    form_->addRow(tr("Name"), name_);
    connect(name_, &QLineEdit::textChanged, this, &KnobForm::nameChanged);
    watch(name_);
    host_ = new QLineEdit(this);
    host_->setObjectName(QStringLiteral("armHost"));
    host_->setPlaceholderText(tr("this machine"));
    host_->setToolTip(tr("Run this arm's workers on another machine over ssh: user@host or an ssh config "
                         "alias (keys only: ssh runs with BatchMode). Empty: this machine. Arms on "
                         "different hosts are compared only when the preset's run.compare_hosts is true."));
    form_->addRow(tr("Host"), host_);
    watch(host_);
    // The arm's own model (issue 26): typed (a bundled name or a path) or picked.
    model_ = new QLineEdit(this);
    model_->setObjectName(QStringLiteral("armModel"));
    model_->setPlaceholderText(tr("the preset's model"));
    model_->setToolTip(tr("This arm's own model: a TorchScript file (.pt), an AOTInductor package (.pt2) or a "
                          "bundled name (resnet18.pt2 is the bundled resnet18's package). Empty: the preset's "
                          "model. Arms with different models are interleaved, replicated and paired like any "
                          "arms, and the verdict names each file."));
    auto* browse = new QToolButton(this);
    browse->setObjectName(QStringLiteral("armModelBrowse"));
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Pick this arm's model file"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Model for arm %1").arg(armName()), model_->text(),
                                                          tr("Models (*.pt *.pt2);;All files (*)"));
        if (!path.isEmpty()) model_->setText(path);
    });
    auto* modelRow = new QWidget(this);
    auto* modelLayout = new QHBoxLayout(modelRow);
    modelLayout->setContentsMargins(0, 0, 0, 0);
    modelLayout->setSpacing(2);
    modelLayout->addWidget(model_, 1);
    modelLayout->addWidget(browse);
    form_->addRow(tr("Model"), modelRow);
    watch(model_);
    connect(model_, &QLineEdit::textChanged, this, [this] {
        if (!loading_) emit modelChanged();
    });

    cudaNote_ = new QLabel(this);
    cudaNote_->setWordWrap(true);
    cudaNote_->setObjectName(QStringLiteral("cudaNote"));
    controls_.reserve(spec::knobTable().size());
    for (const auto& group : spec::knobGroups()) {
        addSection(QString::fromStdString(group));
        if (group == "CUDA") form_->addRow(cudaNote_);
        for (const auto& knob : spec::knobTable()) {
            if (knob.group != group) continue;
            Control c;
            c.knob = &knob;
            c.widget = makeControl(knob, c);
            c.widget->setObjectName(QString::fromStdString(knob.name));
            const QString longDefault = c.widget->property("pitlaneDefaultText").toString();
            c.widget->setToolTip(QString::fromStdString(knob.help) +
                                 (longDefault.isEmpty() ? QString() : tr(" (default: %1)").arg(longDefault)));
            c.widget->setProperty("pitlaneTip", c.widget->toolTip());
            watch(c.widget);
            form_->addRow(QString::fromStdString(knob.label), c.widget);
            if (c.cores) {
                form_->addRow(tr("Cores"), c.cores);
                watch(c.cores);
            }
            controls_.push_back(c);
        }
    }
    updateAllocators();
    // The Inductor options follow the compile knob (on with "aoti" only).
    if (auto* compile = qobject_cast<QComboBox*>(control("compile")))
        connect(compile, &QComboBox::currentIndexChanged, this, [this] { setCuda(cuda_); });
    setKnobs(json::object());
    setCuda({});
}

namespace {
// A combo box as narrow as the setup column allows: its width no longer follows its longest
// choice (which pushed the arrow out of the column at 1366x768); the popup still shows every
// choice whole.
QComboBox* compactCombo(QWidget* parent) {
    auto* box = new QComboBox(parent);
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(8);
    return box;
}
}  // namespace

QWidget* KnobForm::makeControl(const spec::KnobInfo& knob, Control& c) {
    using K = spec::KnobKind;
    const QString unit =
        knob.unit.empty() ? QString() : QStringLiteral(" ") + QString::fromStdString(knob.unit);
    switch (knob.kind) {
        case K::Choice:
        case K::Device:
        case K::ChoiceOrCores: {
            auto* box = compactCombo(this);
            for (const auto& v : knob.choices)
                box->addItem(QString::fromStdString(v), QString::fromStdString(v));
            if (knob.kind != K::ChoiceOrCores) return box;
            box->addItem(QStringLiteral("list"), QStringLiteral("list"));
            c.cores = new QLineEdit(this);
            c.cores->setObjectName(QString::fromStdString(knob.name + "_cores"));
            c.cores->setPlaceholderText(tr("e.g. 0, 2, 4"));
            c.cores->setToolTip(tr("Core ids for %1 \"list\"").arg(QString::fromStdString(knob.name)));
            QLineEdit* cores = c.cores;
            connect(box, &QComboBox::currentTextChanged, this,
                    [cores](const QString& t) { cores->setEnabled(t == QLatin1String("list")); });
            return box;
        }
        case K::Bool: return new QCheckBox(this);
        case K::TorchBool: {
            auto* box = compactCombo(this);
            box->addItem(tr("torch default"), QVariant());
            box->addItem(tr("on"), true);
            box->addItem(tr("off"), false);
            return box;
        }
        case K::Count:
        case K::OptionalCount: {
            auto* spin = new QSpinBox(this);
            const bool optional = knob.kind == K::OptionalCount;
            spin->setRange(optional ? knob.min - 1 : knob.min, knob.max);
            // A long default ("75 % of physical memory (sandbox on, CPU); none otherwise") showed
            // as "dbox on, CPU); none otherwise" in the field (issue 44): "default" there, the
            // whole text in the tooltip.
            const QString defaultText = QString::fromStdString(knob.defaultText);
            if (optional) {
                spin->setSpecialValueText(defaultText.size() <= 14 ? defaultText : tr("default"));
                if (defaultText.size() > 14) spin->setProperty("pitlaneDefaultText", defaultText);
            }
            spin->setSuffix(unit);
            return spin;
        }
        case K::CountOrList: {
            auto* edit = new QLineEdit(this);
            edit->setPlaceholderText(QString::fromStdString(knob.defaultText));
            return edit;
        }
        case K::Flags: {  // one check box per option, on one row
            auto* box = new QWidget(this);
            auto* row = new QHBoxLayout(box);
            row->setContentsMargins(0, 0, 0, 0);
            for (const auto& option : knob.choices) {
                auto* check = new QCheckBox(QString::fromStdString(option), box);
                check->setObjectName(QString::fromStdString(knob.name + "." + option));
                row->addWidget(check);
            }
            row->addStretch(1);
            return box;
        }
    }
    return new QWidget(this);
}

QWidget* KnobForm::control(const std::string& knob) const {
    for (const auto& c : controls_)
        if (c.knob->name == knob) return c.widget;
    return nullptr;
}

void KnobForm::addSection(const QString& title) {
    auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()), this);
    label->setContentsMargins(0, 6, 0, 0);
    form_->addRow(label);
}

void KnobForm::watch(QWidget* w) {
    if (auto* e = qobject_cast<QLineEdit*>(w))
        connect(e, &QLineEdit::textChanged, this, [this] {
            if (!loading_) emit changed();
        });
    else if (auto* s = qobject_cast<QSpinBox*>(w))
        connect(s, &QSpinBox::valueChanged, this, [this] {
            if (!loading_) emit changed();
        });
    else if (auto* c = qobject_cast<QCheckBox*>(w))
        connect(c, &QCheckBox::toggled, this, [this] {
            if (!loading_) emit changed();
        });
    else if (auto* b = qobject_cast<QComboBox*>(w))
        connect(b, &QComboBox::currentIndexChanged, this, [this] {
            if (!loading_) emit changed();
        });
    else  // a Flags knob: its check boxes
        for (auto* check : w->findChildren<QCheckBox*>())
            connect(check, &QCheckBox::toggled, this, [this] {
                if (!loading_) emit changed();
            });
}

void KnobForm::updateAllocators() {
    auto* allocator_ = qobject_cast<QComboBox*>(control("allocator"));
    auto* items = allocator_ ? qobject_cast<QStandardItemModel*>(allocator_->model()) : nullptr;
    if (!items) return;
    for (int i = 0; i < allocator_->count(); ++i) {
        const QString name = allocator_->itemData(i).toString();
        const auto launch = session::allocatorLaunch(name.toStdString());
        items->item(i)->setEnabled(launch.error.isEmpty());
        if (!launch.error.isEmpty())
            items->item(i)->setToolTip(tr("Disabled: %1").arg(launch.error));
        else if (!launch.preload.isEmpty())
            items->item(i)->setToolTip(tr("Worker started with LD_PRELOAD=%1").arg(launch.preload));
        else
            items->item(i)->setToolTip(tr("glibc malloc, as the worker starts without preloads"));
    }
}

QString KnobForm::armName() const {
    return name_->text().trimmed();
}
void KnobForm::setArmName(const QString& name) {
    name_->setText(name);
}
QString KnobForm::armHost() const {
    return host_->text().trimmed();
}
void KnobForm::setArmHost(const QString& host) {
    host_->setText(host);
}
QString KnobForm::armModel() const {
    return model_->text().trimmed();
}
void KnobForm::setArmModel(const QString& model) {
    model_->setText(model);
}

void KnobForm::setModelFormat(const std::string& format) {
    format_ = format;
    setCuda(cuda_);  // re-derives every control's enabled state and tooltip
}

namespace {
void selectValue(QComboBox* c, const QString& value) {
    int i = c->findData(value);
    if (i < 0) {  // e.g. "cuda:3": keep what the preset asked for
        c->addItem(value, value);
        i = c->count() - 1;
    }
    c->setCurrentIndex(i);
}

QString text(const json& v) {
    return QString::fromStdString(v.is_string() ? v.get<std::string>() : v.dump());
}

json listOrOne(const json& list) {
    return list.size() == 1 ? list[0] : list;
}
}  // namespace

// `v` as knobsToJson writes it (null: absent, torch's default).
void KnobForm::setValue(const Control& c, const json& v) {
    using K = spec::KnobKind;
    switch (c.knob->kind) {
        case K::Choice:
        case K::Device: selectValue(static_cast<QComboBox*>(c.widget), text(v)); break;
        case K::ChoiceOrCores: {
            const bool list = v.is_array();
            selectValue(static_cast<QComboBox*>(c.widget),
                        list ? QStringLiteral("list") : text(v));
            c.cores->setText(list ? intListText(v.get<std::vector<int>>()) : QString());
            c.cores->setEnabled(list);
            break;
        }
        case K::Bool: static_cast<QCheckBox*>(c.widget)->setChecked(v.is_boolean() && v.get<bool>()); break;
        case K::TorchBool:
            static_cast<QComboBox*>(c.widget)->setCurrentIndex(!v.is_boolean() ? 0 : (v.get<bool>() ? 1 : 2));
            break;
        case K::Count:
        case K::OptionalCount: {
            auto* spin = static_cast<QSpinBox*>(c.widget);
            spin->setValue(v.is_number_integer() ? v.get<int>() : spin->minimum());
            break;
        }
        case K::CountOrList:
            static_cast<QLineEdit*>(c.widget)->setText(
                v.is_array() ? intListText(v.get<std::vector<int>>()) : text(v));
            break;
        case K::Flags:
            for (auto* check : c.widget->findChildren<QCheckBox*>()) {
                const std::string option = check->text().toStdString();
                const json& d = c.knob->defaultValue;
                const json& set = v.is_object() && v.contains(option) ? v[option] : d.value(option, json(false));
                check->setChecked(set.is_boolean() && set.get<bool>());
            }
            break;
    }
}

json KnobForm::value(const Control& c) const {
    using K = spec::KnobKind;
    switch (c.knob->kind) {
        case K::Choice:
        case K::Device:
            return static_cast<QComboBox*>(c.widget)->currentData().toString().toStdString();
        case K::ChoiceOrCores: {
            const QString v = static_cast<QComboBox*>(c.widget)->currentData().toString();
            if (v == QLatin1String("list")) return parseIntList(c.cores->text());
            return v.toStdString();
        }
        case K::Bool: return static_cast<QCheckBox*>(c.widget)->isChecked();
        case K::TorchBool: {
            const QVariant v = static_cast<QComboBox*>(c.widget)->currentData();
            return v.isValid() ? json(v.toBool()) : json();
        }
        case K::Count: return static_cast<QSpinBox*>(c.widget)->value();
        case K::OptionalCount: {
            auto* spin = static_cast<QSpinBox*>(c.widget);
            return spin->value() == spin->minimum() ? json() : json(spin->value());
        }
        case K::CountOrList: return listOrOne(parseIntList(static_cast<QLineEdit*>(c.widget)->text()));
        case K::Flags: {
            json out = json::object();
            for (auto* check : c.widget->findChildren<QCheckBox*>()) out[check->text().toStdString()] = check->isChecked();
            return out;
        }
    }
    return {};
}

void KnobForm::setKnobs(const json& knobs) {
    spec::Knobs k;
    explicit_.clear();
    loaded_ = knobs.is_object() ? knobs : json::object();
    bool whole = true;
    try {
        k = spec::parseKnobs(loaded_, "<editor>", "knobs");
    } catch (const std::exception&) {
        k = spec::Knobs{};
        whole = false;
    }
    for (const auto& [key, v] : loaded_.items()) explicit_.insert(key);
    loading_ = true;
    for (const auto& c : controls_) {
        const auto& key = c.knob->name;
        if (whole || !loaded_.contains(key)) {
            setValue(c, c.knob->get(k));
            continue;
        }
        // An invalid preset (issue 27): each knob on its own, the valid ones as parsed, an
        // invalid one as written (a combo box shows it as an extra choice), so validation names
        // it instead of every knob going back to its default.
        try {
            setValue(c, c.knob->get(spec::parseKnobs(json{{key, loaded_[key]}}, "<editor>", "knobs")));
        } catch (const std::exception&) {
            setValue(c, loaded_[key]);
        }
    }
    loading_ = false;
    emit changed();
}

json KnobForm::knobsJson() const {
    // Keep what the preset named and what differs from the defaults; drop the rest.
    static const json defaults = spec::knobsToJson(spec::Knobs{});
    json out = json::object();
    for (const auto& c : controls_) {
        const json v = value(c);
        const auto& key = c.knob->name;
        if (v.is_null()) continue;  // torch's default: absent
        if (explicit_.count(key) || !defaults.contains(key) || defaults[key] != v) out[key] = v;
    }
    // A name the table does not know is kept as the preset gave it, so validation names it.
    for (const auto& [key, v] : loaded_.items())
        if (!spec::findKnob(key)) out[key] = v;
    return out;
}

void KnobForm::setCuda(const CudaAvailability& cuda) {
    cuda_ = cuda;
    const QString why = cudaDisabledReason(cuda);
    const bool on = why.isEmpty();
    cudaNote_->setText(on ? QString() : QStringLiteral("<i>%1</i>").arg(why.toHtmlEscaped()));
    cudaNote_->setVisible(!on);
    for (const auto& c : controls_) {
        const QString unavailable = QString::fromStdString(c.knob->unavailable);
        auto* box = qobject_cast<QComboBox*>(c.widget);
        if (c.knob->kind == spec::KnobKind::Device && box) {
            // One entry per device the worker reported (at least cuda:0, disabled without CUDA).
            for (int d = 1; d < cuda.devices; ++d)
                if (box->findData(QStringLiteral("cuda:%1").arg(d)) < 0)
                    box->addItem(QStringLiteral("cuda:%1").arg(d), QStringLiteral("cuda:%1").arg(d));
        }
        // Entries that need CUDA (cuda:N, autocast_fp16) are disabled with the reason.
        if (auto* items = box ? qobject_cast<QStandardItemModel*>(box->model()) : nullptr)
            for (int i = 0; i < box->count(); ++i) {
                const auto data = box->itemData(i).toString().toStdString();
                const auto& cudaChoices = c.knob->cudaChoices;
                const bool needsCuda =
                    std::find(cudaChoices.begin(), cudaChoices.end(), data) != cudaChoices.end() ||
                    (c.knob->kind == spec::KnobKind::Device && data.rfind("cuda:", 0) == 0);
                if (!needsCuda) continue;
                items->item(i)->setEnabled(on);
                items->item(i)->setToolTip(on ? QString() : why + QStringLiteral(" ") + unavailable);
            }
        const QString base = c.widget->property("pitlaneTip").toString();
        // A knob the arm's model cannot take (an AOTInductor package) is off, with the reason.
        std::string notHere = spec::knobNotForFormat(c.knob->name, format_);
        if (notHere.empty() && c.knob->name == "inductor") {
            auto* compile = qobject_cast<QComboBox*>(control("compile"));
            if (compile && compile->currentData().toString() != QLatin1String("aoti"))
                notHere = "Inductor options apply when Pitlane compiles the program (compile aoti)";
        }
        if (!notHere.empty()) {
            c.widget->setEnabled(false);
            c.widget->setToolTip(base + QStringLiteral("\n") + tr("Off for this arm: ") + QString::fromStdString(notHere));
            continue;
        }
        if (!c.knob->cudaOnly) {
            c.widget->setEnabled(true);
            c.widget->setToolTip(base);
            continue;
        }
        // A CUDA-only knob keeps its own explanation and says why it is off.
        c.widget->setEnabled(on);
        c.widget->setToolTip(on ? base : base + QStringLiteral("\n") + why + QStringLiteral(" ") + unavailable);
    }
}

}  // namespace pitlane::widgets
