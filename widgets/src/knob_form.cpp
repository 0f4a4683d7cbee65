#include "pitlane/widgets/knob_form.h"

#include "pitlane/session/allocator.h"
#include "pitlane/spec/preset.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardItemModel>

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

    addSection(tr("Execution"));
    device_ = choice({QStringLiteral("cpu"), QStringLiteral("cuda:0")}, tr("Where the model runs"));
    form_->addRow(tr("Device"), device_);
    mode_ = choice({QStringLiteral("train"), QStringLiteral("eval")},
                   tr("module.train() or module.eval(): dropout, batch-norm statistics"));
    form_->addRow(tr("Mode"), mode_);
    grad_ = choice(
        {QStringLiteral("enabled"), QStringLiteral("no_grad"), QStringLiteral("inference_mode")},
        tr("Autograd: record the graph (enabled), torch::NoGradGuard, or "
           "c10::InferenceMode"));
    form_->addRow(tr("Grad mode"), grad_);
    jit_ = choice(
        {QStringLiteral("none"), QStringLiteral("freeze"), QStringLiteral("freeze_optimize")},
        tr("TorchScript as loaded, torch::jit::freeze, or freeze + "
           "optimize_for_inference (needs eval mode)"));
    form_->addRow(tr("JIT"), jit_);
    precision_ = choice({QStringLiteral("fp32"), QStringLiteral("autocast_bf16"),
                         QStringLiteral("autocast_fp16"), QStringLiteral("half")},
                        tr("Numeric precision: fp32, autocast to bf16 (CPU) or fp16 (CUDA), or "
                           "the whole model in half"));
    form_->addRow(tr("Precision"), precision_);
    memoryFormat_ = choice({QStringLiteral("contiguous"), QStringLiteral("channels_last")},
                           tr("Memory layout of 4-D inputs (and the model)"));
    form_->addRow(tr("Memory format"), memoryFormat_);
    allocator_ =
        choice({QStringLiteral("system"), QStringLiteral("jemalloc"), QStringLiteral("tcmalloc")},
               tr("Heap allocator of the worker process: glibc malloc (system), or "
                  "jemalloc / tcmalloc preloaded (LD_PRELOAD) when the worker starts"));
    allocator_->setObjectName(QStringLiteral("allocator"));
    form_->addRow(tr("Allocator"), allocator_);
    updateAllocators();

    addSection(tr("Batch and threads"));
    batch_ = new QLineEdit(this);
    batch_->setObjectName(QStringLiteral("batchSize"));
    batch_->setPlaceholderText(QStringLiteral("1"));
    batch_->setToolTip(tr("Batch size, or a comma-separated list to sweep (e.g. 1, 8, 32)"));
    form_->addRow(tr("Batch size"), batch_);
    watch(batch_);
    intra_ = new QSpinBox(this);
    intra_->setRange(0, 4096);
    intra_->setSpecialValueText(tr("all allowed cores"));
    intra_->setToolTip(
        tr("at::set_num_threads: intra-op threads (default: every core the "
           "worker may run on)"));
    form_->addRow(tr("Intra-op threads"), intra_);
    watch(intra_);
    inter_ = new QSpinBox(this);
    inter_->setRange(1, 4096);
    inter_->setToolTip(tr("at::set_num_interop_threads: inter-op threads"));
    form_->addRow(tr("Inter-op threads"), inter_);
    watch(inter_);
    affinity_ = choice({QStringLiteral("none"), QStringLiteral("compact"), QStringLiteral("spread"),
                        QStringLiteral("list")},
                       tr("CPU pinning: none, compact (neighbouring cores), spread (one per "
                          "physical core first), or an explicit core list"));
    form_->addRow(tr("Affinity"), affinity_);
    cores_ = new QLineEdit(this);
    cores_->setObjectName(QStringLiteral("affinityCores"));
    cores_->setPlaceholderText(tr("e.g. 0, 2, 4"));
    cores_->setToolTip(tr("Core ids for affinity \"list\""));
    form_->addRow(tr("Cores"), cores_);
    watch(cores_);
    connect(affinity_, &QComboBox::currentTextChanged, this,
            [this](const QString& t) { cores_->setEnabled(t == QLatin1String("list")); });
    workers_ = new QSpinBox(this);
    workers_->setRange(1, 64);
    workers_->setToolTip(tr("Concurrent worker processes for this arm"));
    form_->addRow(tr("Workers"), workers_);
    watch(workers_);
    hostSync_ = new QCheckBox(tr("output to host each iteration"), this);
    hostSync_->setToolTip(tr("host_sync_each_iter: .item()/.cpu() on the output every iteration"));
    form_->addRow(tr("Sync"), hostSync_);
    watch(hostSync_);

    addSection(tr("TorchScript executor"));
    profilingExecutor_ = optionalBool(tr("torch::jit::getProfilingMode(): the profiling executor"));
    form_->addRow(tr("Profiling executor"), profilingExecutor_);
    fuser_ = optionalBool(tr("The NNC (TensorExpr) fuser"));
    form_->addRow(tr("Fuser"), fuser_);

    addSection(tr("CUDA"));
    cudaNote_ = new QLabel(this);
    cudaNote_->setWordWrap(true);
    cudaNote_->setObjectName(QStringLiteral("cudaNote"));
    form_->addRow(cudaNote_);
    cudnnEnabled_ = optionalBool(tr("at::globalContext().setUserEnabledCuDNN"));
    form_->addRow(tr("cuDNN enabled"), cudnnEnabled_);
    cudnnBenchmark_ = optionalBool(tr("cuDNN benchmark mode (autotuning per input shape)"));
    form_->addRow(tr("cuDNN benchmark"), cudnnBenchmark_);
    cudnnDeterministic_ = optionalBool(tr("cuDNN deterministic algorithms only"));
    form_->addRow(tr("cuDNN deterministic"), cudnnDeterministic_);
    allowTf32_ = optionalBool(tr("TF32 tensor cores for fp32 matmul / convolution"));
    form_->addRow(tr("Allow TF32"), allowTf32_);
    inputOnHost_ = new QCheckBox(tr("copy from host each iteration"), this);
    inputOnHost_->setToolTip(
        tr("input_on_host: include the host-to-device copy in every iteration"));
    form_->addRow(tr("Input"), inputOnHost_);
    watch(inputOnHost_);

    setKnobs(json::object());
    setCuda({});
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
}

QComboBox* KnobForm::choice(const QStringList& values, const QString& tip) {
    auto* c = new QComboBox(this);
    for (const auto& v : values) c->addItem(v, v);
    c->setToolTip(tip);
    watch(c);
    return c;
}

QComboBox* KnobForm::optionalBool(const QString& tip) {
    auto* c = new QComboBox(this);
    c->addItem(tr("torch default"), QVariant());
    c->addItem(tr("on"), true);
    c->addItem(tr("off"), false);
    c->setToolTip(tip);
    watch(c);
    return c;
}

void KnobForm::updateAllocators() {
    auto* items = qobject_cast<QStandardItemModel*>(allocator_->model());
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

namespace {
void selectValue(QComboBox* c, const QString& value) {
    int i = c->findData(value);
    if (i < 0) {  // e.g. "cuda:3": keep what the preset asked for
        c->addItem(value, value);
        i = c->count() - 1;
    }
    c->setCurrentIndex(i);
}

void selectOptional(QComboBox* c, const std::optional<bool>& v) {
    c->setCurrentIndex(!v ? 0 : (*v ? 1 : 2));
}

void putOptional(json& j, const char* key, const QComboBox* c) {
    const QVariant v = c->currentData();
    if (v.isValid()) j[key] = v.toBool();
}
}  // namespace

void KnobForm::setKnobs(const json& knobs) {
    spec::Knobs k;
    explicit_.clear();
    loaded_ = knobs.is_object() ? knobs : json::object();
    try {
        k = spec::parseKnobs(knobs.is_object() ? knobs : json::object(), "<editor>", "knobs");
        for (const auto& [key, v] : knobs.items()) explicit_.insert(key);
    } catch (const std::exception&) {
        k = spec::Knobs{};
    }
    loading_ = true;
    selectValue(device_, QString::fromStdString(k.device));
    selectValue(mode_, QString::fromStdString(k.mode));
    selectValue(grad_, QString::fromStdString(k.grad));
    selectValue(jit_, QString::fromStdString(k.jit));
    selectValue(precision_, QString::fromStdString(k.precision));
    selectValue(memoryFormat_, QString::fromStdString(k.memory_format));
    selectValue(allocator_, QString::fromStdString(k.allocator));
    batch_->setText(intListText(k.batch_size));
    intra_->setValue(k.intra_op_threads.value_or(0));
    inter_->setValue(k.inter_op_threads);
    selectValue(affinity_, QString::fromStdString(k.affinity));
    cores_->setText(intListText(k.affinity_cores));
    cores_->setEnabled(k.affinity == "list");
    workers_->setValue(k.workers);
    hostSync_->setChecked(k.host_sync_each_iter);
    inputOnHost_->setChecked(k.input_on_host);
    selectOptional(cudnnEnabled_, k.cudnn_enabled);
    selectOptional(cudnnBenchmark_, k.cudnn_benchmark);
    selectOptional(cudnnDeterministic_, k.cudnn_deterministic);
    selectOptional(allowTf32_, k.allow_tf32);
    selectOptional(profilingExecutor_, k.profiling_executor);
    selectOptional(fuser_, k.fuser);
    loading_ = false;
    emit changed();
}

json KnobForm::knobsJson() const {
    json j;
    j["device"] = device_->currentData().toString().toStdString();
    j["mode"] = mode_->currentData().toString().toStdString();
    j["grad"] = grad_->currentData().toString().toStdString();
    j["jit"] = jit_->currentData().toString().toStdString();
    j["precision"] = precision_->currentData().toString().toStdString();
    const json batch = parseIntList(batch_->text());
    j["batch_size"] = batch.size() == 1 ? batch[0] : batch;
    if (intra_->value() > 0) j["intra_op_threads"] = intra_->value();
    j["inter_op_threads"] = inter_->value();
    const QString affinity = affinity_->currentData().toString();
    if (affinity == QLatin1String("list"))
        j["affinity"] = parseIntList(cores_->text());
    else
        j["affinity"] = affinity.toStdString();
    putOptional(j, "cudnn_enabled", cudnnEnabled_);
    putOptional(j, "cudnn_benchmark", cudnnBenchmark_);
    putOptional(j, "cudnn_deterministic", cudnnDeterministic_);
    putOptional(j, "allow_tf32", allowTf32_);
    j["memory_format"] = memoryFormat_->currentData().toString().toStdString();
    j["allocator"] = allocator_->currentData().toString().toStdString();
    j["workers"] = workers_->value();
    j["host_sync_each_iter"] = hostSync_->isChecked();
    j["input_on_host"] = inputOnHost_->isChecked();
    putOptional(j, "profiling_executor", profilingExecutor_);
    putOptional(j, "fuser", fuser_);

    // Keep what the preset named and what differs from the defaults; drop the rest.
    static const json defaults = spec::knobsToJson(spec::Knobs{});
    json out = json::object();
    for (const auto& [key, v] : j.items())
        if (explicit_.count(key) || !defaults.contains(key) || defaults[key] != v) out[key] = v;
    // A knob the form has no control for (cuda_graph, and any knob added before its control) is
    // kept as the preset gave it, never dropped on save or run.
    for (const auto& [key, v] : loaded_.items())
        if (!j.contains(key)) out[key] = v;
    return out;
}

void KnobForm::setCuda(const CudaAvailability& cuda) {
    const QString why = cudaDisabledReason(cuda);
    const bool on = why.isEmpty();
    cudaNote_->setText(on ? QString() : QStringLiteral("<i>%1</i>").arg(why.toHtmlEscaped()));
    cudaNote_->setVisible(!on);
    // Offer one entry per device the worker reported (at least cuda:0, disabled without CUDA).
    for (int d = 1; d < cuda.devices; ++d)
        if (device_->findData(QStringLiteral("cuda:%1").arg(d)) < 0)
            device_->addItem(QStringLiteral("cuda:%1").arg(d), QStringLiteral("cuda:%1").arg(d));
    auto* items = qobject_cast<QStandardItemModel*>(device_->model());
    for (int i = 0; i < device_->count(); ++i)
        if (device_->itemData(i).toString().startsWith(QLatin1String("cuda:")) && items) {
            items->item(i)->setEnabled(on);
            items->item(i)->setToolTip(why);
        }
    if (auto* p = qobject_cast<QStandardItemModel*>(precision_->model())) {
        const int i = precision_->findData(QStringLiteral("autocast_fp16"));
        p->item(i)->setEnabled(on);
        p->item(i)->setToolTip(on ? QString() : why + tr(" autocast_fp16 is a CUDA autocast."));
    }
    for (QWidget* w : std::initializer_list<QWidget*>{
             cudnnEnabled_, cudnnBenchmark_, cudnnDeterministic_, allowTf32_, inputOnHost_}) {
        w->setEnabled(on);
        // Keep the knob's own explanation and say why it is off.
        const QString base = w->property("pitlaneTip").toString().isEmpty()
                                 ? w->toolTip()
                                 : w->property("pitlaneTip").toString();
        w->setProperty("pitlaneTip", base);
        w->setToolTip(on ? base : base + QStringLiteral("\n") + why);
    }
}

}  // namespace pitlane::widgets
