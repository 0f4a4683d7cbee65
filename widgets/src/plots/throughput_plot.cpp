#include "pitlane/widgets/plots/throughput_plot.h"

#include "pitlane/stats/stats.h"
#include "pitlane/widgets/common/arm_palette.h"

#include <map>

namespace pitlane::widgets {

ThroughputPlot::ThroughputPlot(QWidget* parent) : LivePlot(tr("Throughput"), parent) {
    restyle();
    // Each bar's arm name fits the bar's share of the axis ("grad enabledinference_mode" ran
    // together at 1366x768): elided after each layout (the tick labels were made in it, so a
    // change is drawn by one more replot), the full names in the other plots' legends.
    elideCategoryTicksAfterLayout([this] { return sweep_ ? QStringList() : armNames_; });
}

void ThroughputPlot::restyle() {
    LivePlot::restyle();
    for (auto* label : barLabels_) label->setColor(textColor());
}

void ThroughputPlot::resetRun(const results::RunResult& run) {
    clearPlottables();
    for (auto* label : barLabels_) removeItem(label);
    bars_.clear();
    barLabels_.clear();
    throughputLines_.clear();
    latencyLines_.clear();
    samplesSeen_.assign(run.arms.size(), std::size_t(-1));
    totals_.assign(run.arms.size(), {});
    sweep_ = false;
    for (const auto& arm : run.preset.arms) sweep_ |= arm.knobs.batchSweep();

    if (sweep_) {
        setTitle(tr("Throughput and latency vs batch size"));
        xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        xAxis->setScaleType(QCPAxis::stLogarithmic);
        qSharedPointerCast<QCPAxisTickerLog>(xAxis->ticker())->setLogBase(2);
        // Every power of two labelled ran together on a narrow plot ("163264", issue 27): at
        // most about four labels, no sub ticks between them.
        xAxis->ticker()->setTickCount(4);
        qSharedPointerCast<QCPAxisTickerLog>(xAxis->ticker())->setSubTickCount(0);
        xAxis->setLabel(tr("batch size"));
        yAxis->setLabel(tr("items/s · solid"));
        yAxis2->setVisible(true);
        yAxis2->setLabel(tr("median latency (ms) · dashed"));
        for (std::size_t i = 0; i < run.arms.size(); ++i) {
            const QColor c = armColor(int(i));
            auto* t = addGraph(xAxis, yAxis);
            t->setPen(QPen(c, 2));
            t->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
            t->setName(QString::fromStdString(run.arms[i].name));
            auto* l = addGraph(xAxis, yAxis2);
            l->setPen(QPen(c, 1.5, Qt::DashLine));
            l->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
            throughputLines_.push_back(t);
            latencyLines_.push_back(l);
        }
    } else {
        setTitle(tr("Throughput per arm"));
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        armNames_.clear();
        for (std::size_t i = 0; i < run.arms.size(); ++i) {
            armNames_ << QString::fromStdString(run.arms[i].name);
            ticker->addTick(double(i + 1), armNames_.back());
        }
        xAxis->setScaleType(QCPAxis::stLinear);
        xAxis->setTicker(ticker);
        xAxis->setLabel(QString());  // the bars are named after their arms
        yAxis->setLabel(tr("items/s"));
        yAxis2->setVisible(false);
        for (std::size_t i = 0; i < run.arms.size(); ++i) {
            const QColor c = armColor(int(i));
            auto* b = new QCPBars(xAxis, yAxis);
            b->setWidth(0.6);
            b->setPen(QPen(c.darker(120), 1));
            b->setBrush(c);
            b->setName(QString::fromStdString(run.arms[i].name));
            bars_.push_back(b);
            auto* label = new QCPItemText(this);
            label->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
            label->setColor(textColor());
            label->setClipToAxisRect(false);
            label->setVisible(false);
            barLabels_.push_back(label);
        }
    }
    restyle();
}

void ThroughputPlot::refresh(const results::RunResult& run) {
    if (samplesSeen_.size() != run.arms.size()) resetRun(run);
    bool changed = false;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        changed |= samplesSeen_[i] != run.arms[i].samples.size();
        samplesSeen_[i] = run.arms[i].samples.size();
    }
    if (!changed) return;
    if (sweep_)
        refreshSweep(run);
    else
        refreshBars(run);
    fitView();
}

namespace {
// Items per second of the arm's workers together: each worker's n x batch / its summed latency
// (the results' throughput_per_s for one worker, aggregate_throughput_per_s for several).
double aggregateOf(const std::vector<std::pair<std::size_t, double>>& perWorker, int batch) {
    double total = 0;
    for (const auto& [n, sum] : perWorker)
        if (n > 0 && sum > 0) total += double(n) * batch * 1e9 / sum;
    return total;
}
}  // namespace

void ThroughputPlot::refreshBars(const results::RunResult& run) {
    for (std::size_t i = 0; i < run.arms.size() && i < bars_.size(); ++i) {
        const auto& arm = run.arms[i];
        bars_[i]->data()->clear();
        auto& t = totals_[i];
        if (arm.samples.size() < t.upTo) t = {};
        if (t.upTo == 0 && prepared_ && i < prepared_->size() && (*prepared_)[i].stamp == arm.samples.stamp() &&
            (*prepared_)[i].upTo == arm.samples.size())
            t = (*prepared_)[i];  // summed by the history's reader from these samples
        accumulate(arm, t);
        const double tput = aggregateOf(t.perWorker, arm.batch_size);
        if (tput <= 0) {
            barLabels_[i]->setVisible(false);
            continue;
        }
        bars_[i]->addData(double(i + 1), tput);
        barLabels_[i]->position->setCoords(double(i + 1), tput);
        barLabels_[i]->setText(QString::number(tput, 'f', tput < 100 ? 1 : 0));
        barLabels_[i]->setVisible(true);
    }
}

void ThroughputPlot::accumulate(const results::ArmResult& arm, Totals& t) {
    arm.samples.forEachSpan(
        [&](const results::SampleSeries::Run& r, std::size_t, const std::int64_t* ns, std::size_t n) {
            if (r.batch_size != arm.batch_size || r.worker < 0) return;
            if (std::size_t(r.worker) >= t.perWorker.size()) t.perWorker.resize(std::size_t(r.worker) + 1);
            auto& [count, sum] = t.perWorker[std::size_t(r.worker)];
            count += n;
            for (std::size_t k = 0; k < n; ++k) sum += double(ns[k]);  // in the order measured
        },
        t.upTo);
    t.upTo = arm.samples.size();
    t.stamp = arm.samples.stamp();
}

std::shared_ptr<ThroughputPlot::Prepared> ThroughputPlot::prepare(const results::RunResult& run) {
    auto out = std::make_shared<Prepared>(run.arms.size());
    for (std::size_t i = 0; i < run.arms.size(); ++i) accumulate(run.arms[i], (*out)[i]);
    return out;
}

double ThroughputPlot::barValue(int arm) const {
    if (arm < 0 || arm >= int(bars_.size()) || bars_[std::size_t(arm)]->data()->isEmpty())
        return 0;
    return bars_[std::size_t(arm)]->data()->at(0)->value;
}

void ThroughputPlot::refreshSweep(const results::RunResult& run) {
    for (std::size_t i = 0; i < run.arms.size() && i < throughputLines_.size(); ++i) {
        std::map<int, std::vector<double>> byBatch;
        for (const auto& s : run.arms[i].samples)
            byBatch[s.batch_size].push_back(double(s.latency_ns));
        QVector<double> bs, tput, lat;
        for (const auto& [batch, v] : byBatch) {
            const auto s = stats::summarize(v, batch);
            bs.push_back(batch);
            tput.push_back(s.throughput_per_s);
            lat.push_back(toMs(s.median));
        }
        throughputLines_[i]->setData(bs, tput, true);
        latencyLines_[i]->setData(bs, lat, true);
    }
}

void ThroughputPlot::fitView() {
    if (!followsData()) return;
    fitToData(true);
    if (!sweep_) {
        xAxis->setRange(0.4, double(bars_.size()) + 0.6);
        // Room above the tallest bar for its value label.
        yAxis->setRangeUpper(yAxis->range().upper * 1.12);
    } else {
        const QCPRange r = xAxis->range();
        xAxis->setRange(std::max(0.5, r.lower / 1.4), r.upper * 1.4);
    }
}

}  // namespace pitlane::widgets
