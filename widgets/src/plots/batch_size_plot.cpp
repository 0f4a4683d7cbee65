#include "pitlane/widgets/plots/batch_size_plot.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <QMenu>
#include <QStringList>

#include <algorithm>
#include <set>

namespace pitlane::widgets {

namespace {
using Key = BatchSizePlot::LevelKey;
Key keyOf(const results::ServingPoint& p) {
    return {p.clients, p.clients > 0 ? 0.0 : p.rate_per_s};
}
const results::ServingPoint* pointAt(const ServingSnapshot::Arm& arm, const Key& key) {
    for (const auto& p : arm.points)
        if (keyOf(p) == key && p.pooled.served > 0) return &p;
    return nullptr;
}
QString levelText(const Key& k) {
    return QString::fromStdString(servingLevelName(k.second, k.first));
}
}  // namespace

BatchSizePlot::BatchSizePlot(QWidget* parent) : LivePlot(tr("Batch sizes"), parent) {
    xAxis->setLabel(tr("batch size (requests)"));
    yAxis->setLabel(tr("% of batches"));
    hint_ = toolTip();
    placeLegendInTitleRow();
    restyle();
}

void BatchSizePlot::restyle() {
    LivePlot::restyle();
    if (empty_) empty_->setColor(faintColor().darker(isDarkPalette(palette()) ? 60 : 140));
}

void BatchSizePlot::resetRun(const results::RunResult& run) {
    clearPlottables();
    clearItems();
    bars_.clear();
    snapshot_.reset();
    drawn_.reset();
    selected_.reset();
    shown_.reset();
    maxSize_ = 1;
    for (const auto& a : run.preset.arms) maxSize_ = std::max(maxSize_, a.knobs.max_batch);
    const double width = 0.8 / double(std::max<std::size_t>(1, run.arms.size()));
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const QColor c = armColor(int(i));
        auto* b = new QCPBars(xAxis, yAxis);
        b->setWidth(width);
        b->setPen(QPen(c.darker(120), 1));
        b->setBrush(c);
        b->setName(QString::fromStdString(run.arms[i].name));
        bars_.push_back(b);
    }
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    xAxis->setTicker(ticker);
    empty_ = new QCPItemText(this);
    empty_->setPositionAlignment(Qt::AlignCenter);
    empty_->position->setType(QCPItemPosition::ptAxisRectRatio);
    empty_->position->setCoords(0.5, 0.5);
    empty_->setText(QString::fromStdString(servingEmptyText(run, "no level complete yet")));
    setTitle(tr("Batch sizes"));
    restyle();
}

void BatchSizePlot::setSnapshot(std::shared_ptr<const ServingSnapshot> snapshot) {
    snapshot_ = std::move(snapshot);
}

void BatchSizePlot::selectLevel(std::optional<LevelKey> level) {
    selected_ = level;
    drawn_.reset();
    draw();
}

void BatchSizePlot::refresh(const results::RunResult& run) {
    if (bars_.size() != run.arms.size()) resetRun(run);
    if (!snapshot_ || snapshot_ == drawn_) return;
    draw();
}

void BatchSizePlot::draw() {
    if (!snapshot_) return;
    drawn_ = snapshot_;
    // The level shown: the one chosen, else the highest every arm that served has completed
    // (else the highest any has).
    std::optional<Key> key = selected_;
    if (!key) {
        std::set<Key> common, any;
        bool first = true;
        for (const auto& arm : snapshot_->arms) {
            std::set<Key> mine;
            for (const auto& p : arm.points)
                if (p.pooled.served > 0) mine.insert(keyOf(p));
            if (mine.empty()) continue;
            any.insert(mine.begin(), mine.end());
            if (first)
                common = mine;
            else
                for (auto it = common.begin(); it != common.end();)
                    it = mine.count(*it) ? std::next(it) : common.erase(it);
            first = false;
        }
        if (!common.empty())
            key = *common.rbegin();
        else if (!any.empty())
            key = *any.rbegin();
    }
    shown_ = key;
    int drawnBars = 0;
    QStringList means;
    const double n = double(bars_.size());
    for (std::size_t i = 0; i < bars_.size(); ++i) {
        bars_[i]->data()->clear();
        const auto* arm = i < snapshot_->arms.size() ? &snapshot_->arms[i] : nullptr;
        const auto* p = arm && key ? pointAt(*arm, *key) : nullptr;
        QString name = QString::fromStdString(arm ? arm->name : std::string());
        if (!p) {
            if (key) name += tr(" (none)");
            bars_[i]->setName(name);
            continue;
        }
        const auto& h = p->pooled.batch_histogram;
        std::int64_t total = 0;
        for (auto c : h) total += c;
        for (std::size_t size = 1; size < h.size() && total > 0; ++size) {
            if (h[size] == 0) continue;
            // Side by side around the size: arm i's bar at size + its offset.
            const double x = double(size) + (double(i) - (n - 1) / 2) * bars_[i]->width();
            bars_[i]->addData(x, 100.0 * double(h[size]) / double(total));
            maxSize_ = std::max(maxSize_, int(size));
            ++drawnBars;
        }
        bars_[i]->setName(name);
        std::int64_t batches = 0;
        for (auto c : h) batches += c;
        means << tr("%1: %2 requests per batch on average, %3 batches")
                     .arg(name)
                     .arg(p->pooled.mean_batch, 0, 'f', 2)
                     .arg(batches);
    }
    means << tr("Every process pooled. Right-click to pick the level.") << QString() << hint_;
    setToolTip(means.join(QLatin1Char('\n')));
    setTitle(key ? tr("Batch sizes at %1").arg(levelText(*key)) : tr("Batch sizes"));
    if (empty_) empty_->setVisible(drawnBars == 0);
    fitView();
}

QCPBars* BatchSizePlot::bars(int arm) const {
    return arm >= 0 && arm < int(bars_.size()) ? bars_[std::size_t(arm)] : nullptr;
}

void BatchSizePlot::fitView() {
    if (!followsData()) return;
    xAxis->setRange(0.4, double(maxSize_) + 0.6);
    double top = 0;
    for (auto* b : bars_)
        for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it)
            top = std::max(top, it->value);
    yAxis->setRange(0, top > 0 ? std::min(105.0, top * 1.1) : 100);
}

void BatchSizePlot::addMenuActions(QMenu* menu) {
    if (!snapshot_) return;
    std::set<Key> levels;
    for (const auto& arm : snapshot_->arms)
        for (const auto& p : arm.points)
            if (p.pooled.served > 0) levels.insert(keyOf(p));
    if (levels.empty()) return;
    menu->addSeparator();
    QAction* highest = menu->addAction(tr("Highest level every arm completed"), this, [this] {
        selectLevel(std::nullopt);
        replot(rpQueuedReplot);
    });
    highest->setCheckable(true);
    highest->setChecked(!selected_);
    for (const Key& k : levels) {
        QAction* a = menu->addAction(tr("Batch sizes at %1").arg(levelText(k)), this, [this, k] {
            selectLevel(k);
            replot(rpQueuedReplot);
        });
        a->setCheckable(true);
        a->setChecked(selected_ && *selected_ == k);
    }
}

}  // namespace pitlane::widgets
