#include "pitlane/widgets/plots/queue_length_plot.h"

#include "pitlane/serving/serve_summary.h"
#include "pitlane/widgets/common/arm_palette.h"
#include "pitlane/widgets/results/serving_snapshot.h"

#include <algorithm>

namespace pitlane::widgets {

namespace {
// About 400 samples over the level's arrivals, at least 0.1 ms apart.
std::int64_t stepFor(const results::ServingLevel& l) {
    return std::max<std::int64_t>(100'000, std::int64_t(l.load.duration_ms * 1e6 / 400));
}
bool sameLevel(const results::ServingLevel& a, const results::ServingLevel& b) {
    return a.process == b.process && a.level == b.level && a.rate_per_s == b.rate_per_s &&
           a.clients == b.clients;
}
}  // namespace

QueueLengthPlot::QueueLengthPlot(QWidget* parent) : LivePlot(tr("Queue length"), parent) {
    xAxis->setLabel(tr("time since the level started (ms)"));
    yAxis->setLabel(tr("requests queued"));
    setToolTip(tr("Requests arrived and not yet dispatched, during the level each arm serves now "
                  "(or served last; its rate in the legend), from that level's start. A queue that "
                  "keeps climbing is a saturated level.") +
               QStringLiteral("\n\n") + toolTip());
    placeLegendInTitleRow();
    restyle();
}

void QueueLengthPlot::restyle() {
    LivePlot::restyle();
    if (empty_) empty_->setColor(faintColor().darker(isDarkPalette(palette()) ? 60 : 140));
}

void QueueLengthPlot::resetRun(const results::RunResult& run) {
    clearPlottables();
    clearItems();
    graphs_.clear();
    seen_.assign(run.arms.size(), {});
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        auto* g = addGraph();
        g->setPen(QPen(armColor(int(i)), 1.5));
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setName(QString::fromStdString(run.arms[i].name));
        graphs_.push_back(g);
    }
    empty_ = new QCPItemText(this);
    empty_->setPositionAlignment(Qt::AlignCenter);
    empty_->position->setType(QCPItemPosition::ptAxisRectRatio);
    empty_->position->setCoords(0.5, 0.5);
    empty_->setText(QString::fromStdString(servingEmptyText(run, "no level served yet")));
    setTitle(tr("Queue length"));
    restyle();
}

void QueueLengthPlot::refresh(const results::RunResult& run) {
    if (graphs_.size() != run.arms.size()) resetRun(run);
    bool changed = false, any = false;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& levels = run.arms[i].serving;
        any |= !levels.empty();
        if (levels.empty()) continue;
        // The level served last (its workers are the entries of the same level and process).
        const std::size_t last = levels.size() - 1;
        std::vector<const results::ServingLevel*> group;
        std::size_t batches = 0, arrivals = 0, first = last;
        for (std::size_t k = levels.size(); k-- > 0;) {
            if (!sameLevel(levels[k], levels[last])) break;
            group.push_back(&levels[k]);
            batches += levels[k].record.batches.size();
            arrivals += levels[k].record.arrival_ns.size();
            first = k;
        }
        auto& seen = seen_[i];
        if (seen.level == first && seen.batches == batches && seen.arrivals == arrivals) continue;
        seen = {first, batches, arrivals};
        changed = true;
        const std::int64_t step = stepFor(*group.front());
        std::vector<std::int64_t> total;
        for (const auto* l : group) {
            const auto series = serving::queueLengthSeries(l->record, step);
            if (series.size() > total.size()) total.resize(series.size(), 0);
            for (std::size_t t = 0; t < series.size(); ++t) total[t] += series[t];
        }
        QVector<double> x(int(total.size())), y(int(total.size()));
        for (std::size_t t = 0; t < total.size(); ++t) {
            x[int(t)] = double(t) * double(step) / 1e6;
            y[int(t)] = double(total[t]);
        }
        graphs_[i]->setData(x, y, true);
        const auto& l = *group.front();
        QString name = QStringLiteral("%1 · %2")
                           .arg(QString::fromStdString(run.arms[i].name),
                                QString::fromStdString(servingLevelName(l.rate_per_s, l.clients)));
        if (run.preset.run.processes > 1) name += tr(" · process %1").arg(l.process + 1);
        graphs_[i]->setName(name);
    }
    if (!empty_ || (!changed && any == !empty_->visible())) return;  // no run yet, or nothing new
    empty_->setVisible(!any);
    fitView();
}

QCPGraph* QueueLengthPlot::graph(int arm) const {
    return arm >= 0 && arm < int(graphs_.size()) ? graphs_[std::size_t(arm)] : nullptr;
}

void QueueLengthPlot::fitView() {
    if (!followsData()) return;
    fitToData(true);
    if (yAxis->range().upper < 4) yAxis->setRangeUpper(4);  // a queue of 0-1 is not a flat zero line
}

}  // namespace pitlane::widgets
