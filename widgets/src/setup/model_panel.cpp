#include "pitlane/widgets/setup/model_panel.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QStandardItemModel>
#include <QToolButton>

#include <optional>

namespace pitlane::widgets {

using json = nlohmann::json;

namespace {
QString shapeText(const json& shape) {
    QStringList dims;
    if (shape.is_array())
        for (const auto& d : shape) dims << QString::fromStdString(d.dump());
    return QStringLiteral("[%1]").arg(dims.join(QStringLiteral(", ")));
}
const QString kNotYet = QObject::tr("— (reported when a worker loads it)");

// Worker events are read defensively: a field of an unexpected type is treated as absent.
std::optional<double> number(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}
}  // namespace

namespace {
QString text(const json& j, const char* key, const char* fallback = "") {
    const auto it = j.find(key);
    return QString::fromStdString(it != j.end() && it->is_string() ? it->get<std::string>()
                                                                   : std::string(fallback));
}
}  // namespace

QString describeInputs(const json& inputs) {
    QStringList parts;
    if (inputs.is_array())
        for (const auto& in : inputs)
            if (in.is_object()) {
                QString part = QStringLiteral("%1 %2").arg(shapeText(in.value("shape", json::array())),
                                                           text(in, "dtype", "float32"));
                // Integer ids: the range the worker drew them from; an exported program's own values.
                if (in.contains("low") && in.contains("high") && in["low"].is_number_integer() && in["high"].is_number_integer())
                    part += QStringLiteral(" in [%1, %2)").arg(in["low"].get<long long>()).arg(in["high"].get<long long>());
                if (in.value("example", false)) part += QStringLiteral(" (its example values)");
                parts << part;
            }
    return parts.join(QStringLiteral("; "));
}

ModelPanel::ModelPanel(QWidget* parent) : QWidget(parent) {
    picker_ = new QComboBox(this);
    picker_->setObjectName(QStringLiteral("modelPicker"));
    picker_->setToolTip(tr("A bundled model, or a TorchScript file opened with File ▸ Open model"));
    open_ = new QToolButton(this);
    open_->setText(tr("Open…"));
    open_->setToolTip(tr("Open a model file: a torch.export archive or an AOTInductor package (.pt2), or TorchScript (.pt)"));
    connect(open_, &QToolButton::clicked, this, &ModelPanel::openModelRequested);
    connect(picker_, &QComboBox::currentIndexChanged, this, [this] {
        if (!updating_) emit modelChosen(model());
    });

    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->setVerticalSpacing(2);
    auto* row = new QHBoxLayout;
    row->addWidget(picker_, 1);
    row->addWidget(open_);
    form->addRow(tr("Model"), row);
    path_ = addInfo(form, tr("File"), "modelPath");
    path_->setWordWrap(true);
    size_ = addInfo(form, tr("Size"), "modelSize");
    params_ = addInfo(form, tr("Parameters"), "modelParameters");
    input_ = addInfo(form, tr("Input"), "modelInput");
    input_->setWordWrap(true);
    output_ = addInfo(form, tr("Output"), "modelOutput");
    load_ = addInfo(form, tr("Load time"), "modelLoadTime");
    firstForward_ = addInfo(form, tr("First forward"), "modelFirstForward");
    for (QLabel* l : {output_, load_, firstForward_}) l->setWordWrap(true);
    check_ = addInfo(form, tr("Check"), "modelCheck");
    check_->setWordWrap(true);
    check_->setToolTip(tr("Each arm's model loaded in a sandboxed worker, with one forward on the arm's input, "
                          "before any run (pitlane-cli validate does the same)"));
    // A model is code (README "Models are code"): said under a file the user opened.
    trust_ = new QLabel(tr("A model is code: its forward runs as you. Pitlane confines each "
                           "worker (knob Sandbox: writes only to the run's scratch folder, no "
                           "network, a memory limit), but run only models you trust."),
                        this);
    trust_->setObjectName(QStringLiteral("modelTrustNote"));
    trust_->setWordWrap(true);
    trust_->setStyleSheet(QStringLiteral("color: #8a5a00;"));
    trust_->setVisible(false);
    form->addRow(trust_);
    clearLoaded();
}

QLabel* ModelPanel::addInfo(QFormLayout* form, const QString& label, const char* objectName) {
    auto* l = new QLabel(this);
    l->setObjectName(QString::fromLatin1(objectName));
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(label, l);
    return l;
}

void ModelPanel::setModelDir(const QString& dir) {
    modelDir_ = dir;
    const QString current = model();
    updating_ = true;
    picker_->clear();
    for (const auto& name : spec::bundledModelNames()) {
        const QString n = QString::fromStdString(name);
        picker_->addItem(n, n);
        const bool present =
            !dir.isEmpty() && QFileInfo::exists(QDir(dir).filePath(n + QStringLiteral(".pt")));
        if (auto* m = qobject_cast<QStandardItemModel*>(picker_->model())) {
            m->item(picker_->count() - 1)->setEnabled(present);
            if (!present)
                m->item(picker_->count() - 1)
                    ->setToolTip(tr("not built: run the 'models' build target"));
        }
    }
    // The AOTInductor packages of the bundled models that the build exported (issue 26).
    for (const auto& name : spec::bundledModelNames()) {
        const QString n = QString::fromStdString(name) + QStringLiteral(".pt2");
        if (dir.isEmpty() || !QFileInfo::exists(QDir(dir).filePath(n))) continue;
        picker_->addItem(n, n);
        picker_->setItemData(picker_->count() - 1, tr("%1 compiled by AOTInductor (torch.export)").arg(QString::fromStdString(name)),
                             Qt::ToolTipRole);
    }
    // Their torch.export archives (issue 40): run through NativeRT, or compiled by Pitlane.
    for (const auto& name : spec::bundledModelNames()) {
        const QString n = QString::fromStdString(name) + QStringLiteral(".exported.pt2");
        if (dir.isEmpty() || !QFileInfo::exists(QDir(dir).filePath(n))) continue;
        picker_->addItem(n, n);
        picker_->setItemData(picker_->count() - 1,
                             tr("%1 as a torch.export archive: NativeRT, or compile aoti").arg(QString::fromStdString(name)),
                             Qt::ToolTipRole);
    }
    updating_ = false;
    if (!current.isEmpty()) setModel(current);
}

void ModelPanel::setModel(const QString& model) {
    updating_ = true;
    int i = picker_->findData(model);
    if (i < 0) {
        // A file: one entry for it above the bundled names (replacing an earlier file).
        if (picker_->count() > 0 && !spec::bundledModelNames().empty() &&
            picker_->itemData(0).toString() !=
                QString::fromStdString(spec::bundledModelNames().front()))
            picker_->removeItem(0);
        picker_->insertItem(0, QFileInfo(model).fileName(), model);
        picker_->setItemData(0, model, Qt::ToolTipRole);
        i = 0;
    }
    picker_->setCurrentIndex(i);
    updating_ = false;
    const auto& names = spec::bundledModelNames();
    const bool package = model.endsWith(QLatin1String(".pt2")) &&
                         std::find(names.begin(), names.end(), model.section(QLatin1Char('.'), 0, 0).toStdString()) != names.end() &&
                         !QFileInfo(model).isAbsolute();
    const bool bundled = package || std::find(names.begin(), names.end(), model.toStdString()) != names.end();
    const QString path = package   ? QDir(modelDir_).filePath(model)
                         : bundled ? QDir(modelDir_).filePath(model + QStringLiteral(".pt"))
                                   : model;
    // Zero-width spaces after each '/' let a long path wrap inside the narrow panel.
    path_->setText(QString(path).replace(QLatin1Char('/'), QStringLiteral("/\u200b")));
    path_->setToolTip(path);
    trust_->setVisible(!bundled && !model.isEmpty());
}

QString ModelPanel::model() const {
    return picker_->currentData().toString();
}

void ModelPanel::clearLoaded() {
    for (QLabel* l : {size_, params_, input_, output_, load_, firstForward_}) l->setText(kNotYet);
    if (check_) {
        check_->setStyleSheet(QString());
        check_->setText(tr("— (when the setup is valid)"));
    }
}

void ModelPanel::showLoaded(const results::RunResult& run) {
    const json* loaded = nullptr;
    QStringList loads, firsts;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        if (!a.loaded.is_object() || a.loaded.empty()) continue;
        if (!loaded) loaded = &a.loaded;
        const QString who =
            QStringLiteral("<span style='color:%1'>■</span> %2")
                .arg(armColor(int(i)).name(), QString::fromStdString(a.name).toHtmlEscaped());
        if (const auto ms = number(a.loaded, "load_ms"))
            loads << QStringLiteral("%1 %2 ms").arg(who).arg(*ms, 0, 'f', 1);
        if (const auto ms = number(a.loaded, "first_forward_ms"))
            firsts << QStringLiteral("%1 %2 ms").arg(who).arg(*ms, 0, 'f', 1);
    }
    if (!loaded) return;
    const auto& l = *loaded;
    if (const auto bytes = number(l, "file_size_bytes"))
        size_->setText(QString::fromStdString(results::formatBytes(*bytes)));
    if (const auto params = number(l, "parameters"))  // thin spaces group the digits
        params_->setText(
            QLocale::c().toString(qlonglong(*params)).replace(QLatin1Char(','), QChar(0x202f)));
    if (l.contains("input")) {
        bool whole = false;
        for (const auto& in : l["input"])
            if (in.is_object() && in.value("batch_dim", true) == false) whole = true;
        input_->setText(describeInputs(l["input"]) +
                        (whole ? tr(" (whole shape: no batch dim)") : tr(" + batch dim")));
    }
    if (l.contains("output") && l["output"].is_object())
        output_->setText(QStringLiteral("%1 %2").arg(
            shapeText(l["output"].value("shape", json::array())), text(l["output"], "dtype")));
    if (!loads.isEmpty()) load_->setText(loads.join(QStringLiteral(" · ")));
    if (!firsts.isEmpty()) firstForward_->setText(firsts.join(QStringLiteral(" · ")));
    if (!loads.isEmpty()) {  // showProbes says more when it is the model check
        check_->setStyleSheet(QString());
        check_->setText(tr("✓ loaded by the workers"));
    }
}

void ModelPanel::showChecking() {
    check_->setStyleSheet(QString());
    check_->setText(tr("checking: loading each arm's model in a worker…"));
}

QString ModelPanel::checkText() const {
    return check_->text();
}

void ModelPanel::showProbes(const std::vector<session::ArmProbe>& probes) {
    QStringList failed, skipped;
    results::RunResult seen;  // what loaded, shown as a run's workers would show it
    for (const auto& p : probes) {
        const QString arm = QString::fromStdString(p.arm);
        if (!p.skipped.empty()) {
            skipped << tr("%1 not checked: %2").arg(arm, QString::fromStdString(p.skipped));
        } else if (!p.ok) {
            failed << QStringLiteral("%1: %2: %3").arg(arm, QString::fromStdString(p.code), QString::fromStdString(p.message));
        } else {
            results::ArmResult a;
            a.name = p.arm;
            a.loaded = p.loaded;
            a.loaded.erase("v");
            a.loaded.erase("type");
            seen.arms.push_back(std::move(a));
        }
    }
    clearLoaded();
    showLoaded(seen);
    if (!failed.isEmpty()) {
        check_->setStyleSheet(QStringLiteral("color: #d0453a; font-weight: bold"));
        check_->setText(QStringLiteral("✗ ") + failed.join(QStringLiteral("\n✗ ")));
    } else {
        check_->setStyleSheet(QString());
        check_->setText(tr("✓ every arm's model loads and runs a forward") +
                        (skipped.isEmpty() ? QString() : QStringLiteral("; ") + skipped.join(QStringLiteral("; "))));
    }
}

QString ModelPanel::loadedSummary() const {
    return QStringLiteral("%1, %2 parameters, input %3")
        .arg(size_->text(), params_->text(), input_->text());
}

}  // namespace pitlane::widgets
