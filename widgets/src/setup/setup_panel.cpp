#include "pitlane/widgets/setup/setup_panel.h"

#include "pitlane/widgets/setup/arm_editor.h"
#include "pitlane/widgets/setup/model_panel.h"
#include "pitlane/widgets/common/wheel_guard.h"

#include "pitlane/session/model_probe.h"
#include "pitlane/spec/model_file.h"
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

json parseInputText(const QString& text) {
    return spec::parseInputText(text.toStdString());  // the CLI's --input reads the same
}

QString inputText(const json& inputs) {
    if (!inputs.is_array()) return {};
    QStringList parts;
    for (const auto& in : inputs) {
        if (!in.is_object() || in.contains("shapes") || in.contains("batch_dim") ||
            !in.contains("shape") || !in["shape"].is_array())
            return QString::fromStdString(inputs.dump());  // varying or whole shapes: the JSON
        QStringList dims;
        for (const auto& d : in["shape"]) dims << QString::fromStdString(d.dump());
        parts << dims.join(QLatin1Char('x')) + QLatin1Char(' ') +
                     QString::fromStdString(in.value("dtype", std::string("float32")));
    }
    return parts.join(QStringLiteral("; "));
}

namespace {
QSpinBox* runSpin(QWidget* parent, int min, const char* objectName, const QString& tip) {
    auto* s = new QSpinBox(parent);
    s->setRange(min, 100000000);
    s->setObjectName(QString::fromLatin1(objectName));
    s->setToolTip(tip);
    return s;
}
// The Model box: the model picker, the input spec and, right under it, what is wrong with the
// typed spec or where it came from.
QGroupBox* makeModelBox(SetupPanel* panel, QWidget* model, QLineEdit* input, QLabel*& inputNote) {
    auto* box = new QGroupBox(SetupPanel::tr("Model"), panel);
    auto* layout = new QVBoxLayout(box);
    layout->addWidget(model);
    auto* inputForm = new QFormLayout;
    inputForm->addRow(SetupPanel::tr("Input spec"), input);
    inputNote = new QLabel(box);
    inputNote->setObjectName(QStringLiteral("inputNote"));
    inputNote->setWordWrap(true);
    inputNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    inputNote->hide();
    inputForm->addRow(QString(), inputNote);
    layout->addLayout(inputForm);
    return box;
}

// The Run box: the run's counts side by side, the serving note, "Profile after measuring".
QGroupBox* makeRunBox(SetupPanel* panel, std::initializer_list<std::pair<QString, QSpinBox*>> spins,
                      QCheckBox*& profile, QLabel*& servingNote) {
    auto* box = new QGroupBox(SetupPanel::tr("Run"), panel);
    auto* layout = new QGridLayout(box);
    layout->setVerticalSpacing(1);
    int column = 0;
    for (auto [label, spin] : spins) {
        auto* l = new QLabel(label, box);
        l->setBuddy(spin);
        l->setToolTip(spin->toolTip());
        layout->addWidget(l, 0, column);
        layout->addWidget(spin, 1, column++);
    }
    profile = new QCheckBox(SetupPanel::tr("Profile after measuring (for advice)"), box);
    profile->setObjectName(QStringLiteral("profileAfter"));
    profile->setToolTip(
        SetupPanel::tr("After the measured blocks, run %1 more iterations of every arm under libtorch's "
                       "profiler, never timed (run.profile_iters; pitlane-cli run --profile): the operator "
                       "profile the Advice tab's rules read to see where the time goes.")
            .arg(SetupPanel::kProfileIters));
    layout->addWidget(profile, 3, 0, 1, column);
    servingNote = new QLabel(box);
    servingNote->setObjectName(QStringLiteral("servingNote"));
    servingNote->setWordWrap(true);
    servingNote->hide();
    layout->addWidget(servingNote, 2, 0, 1, column);
    return box;
}
}  // namespace

SetupPanel::SetupPanel(QWidget* parent)
    : QWidget(parent),
      name_(new QLineEdit(this)),
      model_(new ModelPanel(this)),
      input_(new QLineEdit(this)),
      arms_(new ArmEditor(this)),
      validation_(new QLabel(this)) {
    name_->setObjectName(QStringLiteral("presetName"));
    name_->setPlaceholderText(tr("experiment name"));
    input_->setObjectName(QStringLiteral("inputSpec"));
    input_->setToolTip(
        tr("Input shapes without the batch dimension (batch_size is prepended) and dtypes, e.g. "
           "\"3x224x224\", \"[3, 224, 224]:float32\", \"Nx3x224x224\" (N marks the batch) or "
           "\"128 int64; 128 int64\" (one input per ';'; float32 when left out; integer ids are drawn "
           "from [0, 100) unless a range follows: \"16:int64[0,50)\"), or the preset's "
           "JSON list; a shape given whole, with nothing prepended: "
           "[{\"shape\": [1, 8, 32], \"batch_dim\": false}]. Empty: the model's own signature "
           "(its sidecar <name>.json, or a package's metadata)."));
    warmup_ = runSpin(this, 0, "warmupIters",
                      tr("Warmup iterations per arm (and per batch size), not measured"));
    iters_ = runSpin(this, 1, "iters", tr("Measured iterations per arm"));
    blockIters_ =
        runSpin(this, 1, "blockIters", tr("Iterations per interleaved block (A B A B ...)"));
    processes_ = runSpin(this, 1, "processes",
                         tr("Fresh worker processes per arm (replicates, each with its own "
                            "warmup): the CI counts processes, so processes that disagree keep "
                            "it wide. Left at its default, rounds of fresh processes are added "
                            "(up to run.max_processes, 6) while a comparison is inconclusive; a "
                            "value you set is exact."));
    processes_->setRange(1, 64);
    validation_->setObjectName(QStringLiteral("validationLabel"));
    validation_->setWordWrap(true);
    validation_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* modelBox = makeModelBox(this, model_, input_, inputNote_);
    auto* runBox = makeRunBox(this, {std::pair{tr("Warmup"), warmup_}, std::pair{tr("Measured"), iters_},
                                     std::pair{tr("Block"), blockIters_}, std::pair{tr("Processes"), processes_}},
                              profile_, servingNote_);
    budget_ = new QSpinBox(runBox);
    budget_->setObjectName(QStringLiteral("budgetSeconds"));
    budget_->setRange(0, 86400);
    budget_->setSuffix(tr(" s"));
    budget_->setSpecialValueText(tr("none"));
    budget_->setToolTip(tr("A time budget (run.budget_ms; pitlane-cli run --time): the first set-ups and "
                           "forwards are timed, then the iterations per process and the processes that fit "
                           "are planned (Kalibera & Jones; at least 3 processes per arm) and shown above the "
                           "plots. none: Measured iterations in Processes, as set."));
    {
        auto* row = new QHBoxLayout;
        auto* label = new QLabel(tr("Time budget"), runBox);
        label->setBuddy(budget_);
        label->setToolTip(budget_->toolTip());
        row->addWidget(label);
        row->addWidget(budget_);
        row->addStretch(1);
        static_cast<QGridLayout*>(runBox->layout())->addLayout(row, 4, 0, 1, 4);
    }
    auto* armsBox = new QGroupBox(tr("Arms"), this);
    auto* armsLayout = new QVBoxLayout(armsBox);
    armsLayout->addWidget(arms_);

    auto* top = new QFormLayout;
    top->addRow(tr("Name"), name_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    // At the top, where it is seen without scrolling: whose setup this is not, and what keeps
    // Run greyed out.
    originNote_ = new QLabel(this);
    originNote_->setObjectName(QStringLiteral("setupOriginNote"));
    originNote_->setWordWrap(true);
    originNote_->setTextFormat(Qt::RichText);
    originNote_->setStyleSheet(QStringLiteral("color: #b35900"));
    originNote_->hide();
    connect(originNote_, &QLabel::linkActivated, this, &SetupPanel::originNoteLinkActivated);
    layout->addWidget(originNote_);
    layout->addWidget(validation_);
    layout->addWidget(modelBox);
    layout->addWidget(runBox);
    layout->addWidget(armsBox, 1);

    validateTimer_.setSingleShot(true);
    validateTimer_.setInterval(120);
    connect(&validateTimer_, &QTimer::timeout, this, &SetupPanel::validate);
    // The model check waits until the setup has been still this long (typing a path).
    probeTimer_.setSingleShot(true);
    probeTimer_.setInterval(700);
    connect(&probeTimer_, &QTimer::timeout, this, &SetupPanel::checkModels);
    auto edited = [this] {
        if (loading_) return;
        emit changed();
        scheduleValidation();
    };
    connect(name_, &QLineEdit::textChanged, this, edited);
    connect(name_, &QLineEdit::textEdited, this, [this] { nameTyped_ = true; });
    connect(input_, &QLineEdit::textChanged, this, edited);
    connect(input_, &QLineEdit::textEdited, this, [this] { inputOrigin_.clear(); });
    for (auto* s : {warmup_, iters_, blockIters_, processes_, budget_})
        connect(s, &QSpinBox::valueChanged, this, edited);
    connect(budget_, &QSpinBox::valueChanged, this, [this] { showBudget(); });
    connect(profile_, &QCheckBox::toggled, this, edited);
    connect(arms_, &ArmEditor::changed, this, edited);
    arms_->setModelResolver([this](const QString& m) { return resolveModelPath(m); });
    connect(model_, &ModelPanel::modelChosen, this, &SetupPanel::setModel);
    connect(model_, &ModelPanel::openModelRequested, this, &SetupPanel::openModelRequested);
    guardWheel(this);  // the model picker and the run settings (the arms guard their own)
}

void SetupPanel::setModelDir(const QString& dir) {
    modelDir_ = dir;
    model_->setModelDir(dir);
}

QString SetupPanel::resolveModelPath(const QString& model) const {
    const auto& names = spec::bundledModelNames();
    if (std::find(names.begin(), names.end(), model.toStdString()) != names.end())
        return QDir(modelDir_).filePath(model + QStringLiteral(".pt"));
    // A bundled model's AOTInductor package (resnet18.pt2).
    if (model.endsWith(QLatin1String(".pt2")) &&
        std::find(names.begin(), names.end(), model.chopped(4).toStdString()) != names.end())
        return QDir(modelDir_).filePath(model);
    // A bundled model's torch.export archive (resnet18.exported.pt2, resnet18.static.exported.pt2).
    if (model.endsWith(QLatin1String(".exported.pt2")) &&
        std::find(names.begin(), names.end(), model.section(QLatin1Char('.'), 0, 0).toStdString()) != names.end())
        return QDir(modelDir_).filePath(model);
    if (QFileInfo(model).isAbsolute() || file_.isEmpty()) return model;
    return QFileInfo(file_).absoluteDir().filePath(model);
}

void SetupPanel::updateInputPlaceholder() {
    hashModel();
    const json side = spec::readModelSidecar(resolveModelPath(model_->model()).toStdString());
    const auto format = spec::readModelFormat(resolveModelPath(model_->model()).toStdString());
    if (side.is_object() && side.contains("input"))
        input_->setPlaceholderText(tr("model default: %1").arg(inputText(side["input"])));
    else if (format.format == spec::kFormatExported && format.metadata.count("input"))
        input_->setPlaceholderText(tr("model default: the example inputs it was exported with"));
    else
        input_->setPlaceholderText(tr("required, e.g. 3x224x224 or [3, 224, 224]:float32"));
}

void SetupPanel::loadJson(const json& preset, const QString& file) {
    loading_ = true;
    raw_ = preset.is_object() ? preset : json::object();
    file_ = file;
    name_->setText(QString::fromStdString(raw_.value("name", std::string())));
    nameTyped_ = false;
    const auto model = raw_.value("model", std::string());
    model_->setModel(QString::fromStdString(model));
    model_->clearLoaded();
    input_->setText(raw_.contains("input") ? inputText(raw_["input"]) : QString());
    const spec::RunSettings defaults;
    const json run = raw_.value("run", json::object());
    auto intOr = [&run](const char* key, int def) {
        return run.is_object() && run.contains(key) && run[key].is_number_integer()
                   ? run[key].get<int>()
                   : def;
    };
    warmup_->setValue(intOr("warmup_iters", defaults.warmup_iters));
    iters_->setValue(intOr("iters", defaults.iters));
    blockIters_->setValue(intOr("block_iters", std::min(defaults.block_iters, iters_->value())));
    processes_->setValue(intOr("processes", std::min(defaults.processes, iters_->value())));
    profile_->setChecked(intOr("profile_iters", 0) > 0);
    budget_->setValue((intOr("budget_ms", 0) + 500) / 1000);
    arms_->setPresetModelPath(resolveModelPath(QString::fromStdString(model)));
    arms_->setArms(raw_.value("arms", json::array()));
    updateInputPlaceholder();
    showServing();
    showBudget();
    loading_ = false;
    emit changed();
    validate();
}

// A time budget plans the iterations and the processes: their fields are not used then.
void SetupPanel::showBudget() {
    const bool budgeted = budget_->value() > 0;
    const bool serving = raw_.value("serving", json()).is_object();
    iters_->setEnabled(!budgeted && !serving);
    processes_->setEnabled(!budgeted);
    const QString planned = tr("planned from the time budget (set it to none to give this)");
    iters_->setToolTip(budgeted ? planned : tr("Measured iterations per arm"));
    processes_->setToolTip(budgeted ? planned
                                    : tr("Fresh worker processes per arm (replicates, each with its own "
                                         "warmup): the CI counts processes, so processes that disagree keep "
                                         "it wide. Left at its default, rounds of fresh processes are added "
                                         "(up to run.max_processes, 6) while a comparison is inconclusive; a "
                                         "value you set is exact."));
}

// Issue 13: a serving preset runs its levels (rates or clients, each for duration_ms) in every
// round of processes; the iteration counts are not used. What it will run, in one line.
void SetupPanel::showServing() {
    const json sv = raw_.value("serving", json());
    const bool serving = sv.is_object();
    const QString unused = tr("not used by a serving preset: it serves its levels for "
                              "serving.duration_ms each");
    iters_->setEnabled(!serving && budget_->value() == 0);
    blockIters_->setEnabled(!serving);
    budget_->setEnabled(!serving);
    iters_->setToolTip(serving ? unused : tr("Measured iterations per arm"));
    blockIters_->setToolTip(serving ? unused : tr("Iterations per interleaved block (A B A B ...)"));
    servingNote_->setVisible(serving);
    if (!serving) return;
    auto list = [&sv](const char* key) {
        QStringList out;
        if (sv.contains(key) && sv[key].is_array())
            for (const auto& v : sv[key]) out << QString::fromStdString(v.dump());
        return out.join(QStringLiteral(", "));
    };
    const std::string arrival = sv.value("arrival", std::string("poisson"));
    QString text = arrival == "closed"
                       ? tr("Serving: closed loop, %1 clients").arg(list("clients"))
                       : tr("Serving: %1 arrivals at %2 req/s")
                             .arg(QString::fromStdString(arrival), list("rates"));
    if (sv.contains("duration_ms") && sv["duration_ms"].is_number())
        text += tr(", %1 ms per level").arg(sv["duration_ms"].get<double>());
    if (sv.contains("slo_p99_ms") && sv["slo_p99_ms"].is_number() && sv["slo_p99_ms"].get<double>() > 0) {
        // The search runs only in an open loop with search_steps > 0 (default 4).
        const json steps = sv.value("search_steps", json(4));
        const int n = steps.is_number_integer() ? steps.get<int>() : 0;
        text += arrival != "closed" && n > 0
                    ? tr("; SLO p99 ≤ %1 ms (then %2 search steps for the highest rate within it)")
                          .arg(sv["slo_p99_ms"].get<double>())
                          .arg(n)
                    : tr("; SLO p99 ≤ %1 ms").arg(sv["slo_p99_ms"].get<double>());
    }
    servingNote_->setText(text + QLatin1Char('.'));
    servingNote_->setToolTip(tr("The preset's serving block, kept as written; edit it in the "
                                "preset file. The batcher's knobs (max batch, max wait) are "
                                "each arm's, under Serving."));
}

json SetupPanel::presetJson() const {
    json j = raw_;
    const QString name = name_->text().trimmed();
    if (name.isEmpty())
        j.erase("name");
    else
        j["name"] = name.toStdString();
    j["model"] = model_->model().toStdString();
    const json input = parseInputText(input_->text());
    if (input.is_null())
        j.erase("input");
    else
        j["input"] = input;
    json run = raw_.contains("run") && raw_["run"].is_object() ? raw_["run"] : json::object();
    run["warmup_iters"] = warmup_->value();
    run["block_iters"] = blockIters_->value();
    if (budget_->value() > 0) {  // the budget plans them: written, they would be exact
        run["budget_ms"] = budget_->value() * 1000;
        run.erase("iters");
        run.erase("processes");
    } else {
        run.erase("budget_ms");
        run["iters"] = iters_->value();
        // Written when the preset had it or the user changed it: an untouched default stays
        // implicit (so it follows `iters` the way the parser's default does).
        const spec::RunSettings defaults;
        if (run.contains("processes") ||
            processes_->value() != std::min(defaults.processes, iters_->value()))
            run["processes"] = processes_->value();
    }
    // The preset's own count when it had one, else kProfileIters; unchecked: none.
    if (!profile_->isChecked())
        run.erase("profile_iters");
    else if (!run.contains("profile_iters") || !run["profile_iters"].is_number_integer() ||
             run["profile_iters"].get<int>() <= 0)
        run["profile_iters"] = kProfileIters;
    j["run"] = run;
    j["arms"] = arms_->armsJson();
    return j;
}

SetupPanel::Built SetupPanel::build() const {
    Built b;
    try {
        b.preset = spec::parsePreset(presetJson(), file_.toStdString(), modelDir_.toStdString());
    } catch (const spec::SpecError& e) {
        b.field = QString::fromStdString(e.field());
        b.error = b.field.isEmpty()
                      ? QString::fromStdString(e.reason())
                      : QStringLiteral("%1: %2").arg(b.field, QString::fromStdString(e.reason()));
    }
    return b;
}

void SetupPanel::scheduleValidation() {
    validateTimer_.start();
}

void SetupPanel::validate() {
    validateTimer_.stop();
    const Built b = build();
    const bool valid = b.preset.has_value();
    if (valid) {
        QString models = QString::fromStdString(b.preset->model);
        if (spec::armsDifferInModel(*b.preset)) {  // issue 26: each arm's own file, by name
            QStringList each;
            for (const auto& a : b.preset->arms)
                each << QStringLiteral("%1 (%2)").arg(QString::fromStdString(spec::modelLabel(a.model_path)),
                                                      QString::fromStdString(a.name));
            models = each.join(QStringLiteral(", "));
        }
        validation_->setText(tr("✓ Ready: %n arm(s), model %1", nullptr, int(b.preset->arms.size())).arg(models));
        validation_->setStyleSheet(QString());
        arms_->markInvalid(-1);
        rememberInput();
    } else {
        validation_->setText(QStringLiteral("✗ %1").arg(b.error));  // shortened below for the input
        validation_->setStyleSheet(QStringLiteral("color: #d0453a; font-weight: bold"));
        const QRegularExpressionMatch m =
            QRegularExpression(QStringLiteral("^arms\\[(\\d+)\\]")).match(b.field);
        arms_->markInvalid(m.hasMatch() ? m.captured(1).toInt() : -1);
    }
    // The preset's input is the Input spec field: its error goes next to it too.
    const bool inputError = !valid && (b.field == QLatin1String("input") ||
                                       b.field.startsWith(QLatin1String("input[")) ||
                                       b.field.startsWith(QLatin1String("input.")));
    error_ = valid ? QString() : b.error;
    // The status bar's line: at most about 100 characters, in the window's words.
    constexpr int kStatusChars = 100;
    status_ = error_.size() > kStatusChars ? error_.left(kStatusChars - 1) + QStringLiteral("…") : error_;
    if (inputError) {
        // Said once, where it is fixed: the top line points there (a model without a sidecar
        // otherwise showed its long explanation twice, pushing the arms below a 768-pixel screen).
        validation_->setText(tr("✗ %1: see the Input spec below").arg(b.field));
        // A model nothing describes: what to type here, not the preset's JSON (issue 44;
        // validationMessage keeps the whole reason, the status bar points here).
        const QRegularExpressionMatch missing =
            QRegularExpression(QStringLiteral("missing: nothing describes (.+)'s input")).match(b.error);
        status_ = missing.hasMatch()
                      ? tr("input: type the shape of one sample in Input spec, e.g. 3x224x224")
                      : tr("input: see the reason under Input spec");
        inputNote_->setText(
            missing.hasMatch()
                ? tr("✗ input: nothing describes %1's input (no sidecar file next to it): type the shape of one "
                     "sample in Input spec, e.g. 3x224x224 (the batch is added), 128 int64 for token ids, "
                     "\"3x224x224; 10\" for two inputs")
                      .arg(missing.captured(1))
                : QStringLiteral("✗ %1").arg(b.error));
        inputNote_->setStyleSheet(QStringLiteral("color: #d0453a"));
        inputNote_->show();
    } else if (!inputOrigin_.isEmpty() && !input_->text().trimmed().isEmpty()) {
        inputNote_->setText(inputOrigin_);
        inputNote_->setStyleSheet(QString());
        inputNote_->show();
    } else {
        inputNote_->hide();
    }
    if (valid != valid_) {
        valid_ = valid;
        emit validityChanged(valid);
    }
    emit validated();
    // What the model check depends on: each arm's file, input and knobs.
    if (!valid || workerPath_.isEmpty() || !isEnabled()) {
        probeTimer_.stop();
        pendingProbe_.reset();
        return;
    }
    json key = json::array();
    for (const auto& a : b.preset->arms)
        key.push_back({a.model_path, spec::inputsToJson(a.input.empty() ? b.preset->input : a.input),
                       spec::knobsToJson(a.knobs), a.host});
    if (key.dump() == probedKey_ && !pendingProbe_) return;
    pendingProbe_ = b.preset;
    pendingKey_ = key.dump();
    probeTimer_.start();
}

SetupPanel::~SetupPanel() {
    if (hashThread_) hashThread_->wait();
    stopModelCheck();
}

void SetupPanel::setOriginNote(const QString& html) {
    originNote_->setText(html);
    originNote_->setVisible(!html.isEmpty());
}

QString SetupPanel::originNote() const {
    return originNote_->isHidden() ? QString() : originNote_->text();
}

QString SetupPanel::validationLine() const {
    return validation_->text();
}

QString SetupPanel::validationMessage() const {
    return error_;
}

void SetupPanel::setCuda(const CudaAvailability& cuda) {
    arms_->setCuda(cuda);
}

}  // namespace pitlane::widgets
