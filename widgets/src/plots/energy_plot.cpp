#include "pitlane/widgets/plots/energy_plot.h"

#include "pitlane/results/energy.h"
#include "pitlane/widgets/common/arm_palette.h"

#include <algorithm>

namespace pitlane::widgets {

namespace {

// The counter as the axis names it: "GPU 0 (nvml)", "GPU 0 (fake) (nvml)", "CPU package (rapl)",
// "CPU packages (rapl)" (several summed), "DRAM (rapl)".
QString counterName(const results::EnergySource& s) {
    QString device = QString::fromStdString(s.device);
    if (s.key == "gpu" && device.startsWith(QStringLiteral("gpu ")))
        device.replace(0, 3, QStringLiteral("GPU"));
    else if (s.key == "cpu")
        device = device.contains(QStringLiteral(" + ")) ? EnergyPlot::tr("CPU packages")
                                                        : EnergyPlot::tr("CPU package");
    else if (s.key == "dram")
        device = EnergyPlot::tr("DRAM");
    return QStringLiteral("%1 (%2)").arg(device, QString::fromStdString(s.source));
}

}  // namespace

EnergyPlot::EnergyPlot(QWidget* parent) : LivePlot(tr("Energy per inference"), parent) {
    hint_ = toolTip();
    // Each bar's arm name fits the arm's share of the axis, elided after each layout (as the
    // throughput plot's); the full names are in the tooltip.
    elideCategoryTicksAfterLayout([this] { return tickNames_; });
    restyle();
}

void EnergyPlot::restyle() {
    LivePlot::restyle();
    for (auto* ci : grossCi_) ci->setPen(QPen(textColor(), 1.2));
    for (auto* ci : netCi_) ci->setPen(QPen(textColor(), 1.2));
}

void EnergyPlot::resetRun(const results::RunResult& run) {
    clearPlottables();
    gross_.clear();
    net_.clear();
    grossCi_.clear();
    netCi_.clear();
    seen_.clear();
    measured_ = false;
    counter_.clear();
    scale_ = 1;
    unit_ = QStringLiteral("J");
    tickNames_.clear();
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        tickNames_ << QString::fromStdString(run.arms[i].name);
        ticker->addTick(double(i + 1), tickNames_.back());
    }
    xAxis->setTicker(ticker);
    xAxis->setLabel(QString());
    yAxis->setLabel(tr("J/inference"));
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const QColor c = armColor(int(i));
        auto bars = [&](const QBrush& brush, std::vector<QCPBars*>& list,
                        std::vector<QCPErrorBars*>& cis) {
            auto* b = new QCPBars(xAxis, yAxis);
            b->setPen(QPen(c.darker(120), 1));
            b->setBrush(brush);
            b->setName(QString::fromStdString(run.arms[i].name));
            auto* ci = new QCPErrorBars(xAxis, yAxis);
            ci->setDataPlottable(b);
            ci->setErrorType(QCPErrorBars::etValueError);
            ci->setWhiskerWidth(7);
            list.push_back(b);
            cis.push_back(ci);
        };
        bars(QBrush(c), gross_, grossCi_);
        bars(QBrush(c, Qt::BDiagPattern), net_, netCi_);
    }
    setToolTip(hint_);
    restyle();
}

void EnergyPlot::refresh(const results::RunResult& run) {
    if (gross_.size() != run.arms.size()) resetRun(run);
    std::vector<double> seen;
    for (const auto& arm : run.arms) {
        double blocks = 0;
        for (const auto& p : arm.processes) blocks += double(p.energy_blocks);
        seen.push_back(double(arm.processes.size()));
        seen.push_back(blocks);
        seen.push_back(arm.applied.extraField("energy").is_object() ? 1 : 0);
    }
    seen.push_back(results::runIdle(run).is_object() ? 1 : 0);
    if (seen == seen_) return;
    seen_ = std::move(seen);
    rebuild(run);
    fitView();
}

void EnergyPlot::rebuild(const results::RunResult& run) {
    std::vector<results::ArmEnergy> energy;
    QStringList counters, distinct;
    double top = 0;
    bool anyNet = false;
    measured_ = false;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        energy.push_back(results::armEnergy(run, i));
        const results::EnergySource* s = energy.back().primary();
        counters << (s ? counterName(*s) : QString());
        if (!s) continue;
        measured_ = true;
        top = std::max({top, s->j_per_inference, s->ci_high});
        if (s->idle_w >= 0) {
            anyNet = true;
            top = std::max({top, s->net_j_per_inference, s->net_ci_high});
        }
        if (!distinct.contains(counters.back())) distinct << counters.back();
    }
    // A unit that keeps the axis's ticks short: an mlp's inference costs millijoules.
    if (top > 0 && top < 1e-3) {
        scale_ = 1e6;
        unit_ = QStringLiteral("µJ");
    } else if (top > 0 && top < 1) {
        scale_ = 1e3;
        unit_ = QStringLiteral("mJ");
    } else {
        scale_ = 1;
        unit_ = QStringLiteral("J");
    }
    yAxis->setLabel(tr("%1/inference").arg(unit_));
    // One counter for every arm: the axis names it. Different counters (arms on different GPUs,
    // or one arm with the GPU's and one with only the CPU's): each bar's tick names its own.
    counter_ = distinct.size() == 1 ? distinct.front() : QString();
    QString axis = counter_.isEmpty() && measured_ ? tr("counters differ") : counter_;
    if (anyNet) axis += tr(" · hatched: net of idle");
    xAxis->setLabel(axis);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        QString name = QString::fromStdString(run.arms[i].name);
        if (counter_.isEmpty() && !counters[int(i)].isEmpty())
            name += QStringLiteral(" · ") + counters[int(i)];
        tickNames_[int(i)] = name;
    }
    auto ticker = qSharedPointerDynamicCast<QCPAxisTickerText>(xAxis->ticker());
    if (ticker) {
        ticker->clear();
        for (int i = 0; i < tickNames_.size(); ++i) ticker->addTick(double(i + 1), tickNames_[i]);
    }

    // Gross and net side by side when the run has an idle draw, else the gross bar alone.
    const double offset = anyNet ? 0.19 : 0, width = anyNet ? 0.34 : 0.6;
    QStringList tip;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        for (auto* b : {gross_[i], net_[i]}) {
            b->data()->clear();
            b->setWidth(width);
        }
        grossCi_[i]->data()->clear();
        netCi_[i]->data()->clear();
        const QString name = QString::fromStdString(run.arms[i].name);
        for (const auto& line : results::energyLines(energy[i])) {
            const QString l = QString::fromStdString(line);
            tip << (l.startsWith(QStringLiteral("  ")) ? QStringLiteral("    ") + l.trimmed()
                                                       : name + QStringLiteral(": ") + l);
        }
        const results::EnergySource* s = energy[i].primary();
        if (!s) continue;
        const double x = double(i + 1);
        const double v = s->j_per_inference * scale_;
        gross_[i]->addData(x - offset, v);
        grossCi_[i]->addData(v - s->ci_low * scale_, s->ci_high * scale_ - v);
        if (s->idle_w >= 0) {
            const double n = s->net_j_per_inference * scale_;
            net_[i]->addData(x + offset, n);
            netCi_[i]->addData(n - s->net_ci_low * scale_, s->net_ci_high * scale_ - n);
        }
    }
    if (measured_)
        tip << QString()
            << tr("Bars: the median across processes; whiskers: its 95 % CI (a bootstrap with one "
                  "unit per process, as latency's). Net of idle: less the idle draw measured "
                  "before the run, over the same window.");
    tip << QString() << hint_;
    setToolTip(tip.join(QLatin1Char('\n')));
}

EnergyPlot::Bar EnergyPlot::barOf(int arm, const std::vector<QCPBars*>& bars,
                                  const std::vector<QCPErrorBars*>& ci) const {
    Bar out;
    if (arm < 0 || arm >= int(bars.size())) return out;
    const auto* b = bars[std::size_t(arm)];
    if (b->data()->isEmpty()) return out;
    const double v = b->data()->at(0)->value;
    out.shown = b->visible();
    out.value = v / scale_;
    out.low = out.high = out.value;
    const auto* e = ci[std::size_t(arm)];
    if (!e->data()->isEmpty()) {
        const QCPErrorBarsData& d = e->data()->at(0);
        out.low = (v - d.errorMinus) / scale_;
        out.high = (v + d.errorPlus) / scale_;
    }
    return out;
}

EnergyPlot::Bar EnergyPlot::gross(int arm) const {
    return barOf(arm, gross_, grossCi_);
}

EnergyPlot::Bar EnergyPlot::net(int arm) const {
    return barOf(arm, net_, netCi_);
}

void EnergyPlot::fitView() {
    if (!followsData()) return;
    fitToData(true);
    xAxis->setRange(0.4, double(gross_.size()) + 0.6);
}

}  // namespace pitlane::widgets
