#include "pitlane/widgets/plots/latency_timeline_plot.h"

#include "pitlane/widgets/common/arm_palette.h"

#include <QCoreApplication>
#include <QMenu>
#include <QSettings>
#include <QThreadPool>
#include <QTimer>
#include <QToolButton>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace pitlane::widgets {

namespace {
// Beyond this many points markers cost more than they tell.
constexpr int kMarkerLimit = 1500;
// Beyond this many blocks the boundary lines become a grey wall.
constexpr std::size_t kBoundaryLimit = 300;
// Envelope jobs start at most this often, and wait four times the last one's cost.
constexpr qint64 kJobSpacingMs = 40;
const char* const kLogScaleKey = "plots/latencyLogScale";
}  // namespace

LatencyTimelinePlot::LatencyTimelinePlot(QWidget* parent)
    : LivePlot(tr("Latency per iteration"), parent) {
    xAxis->setLabel(tr("measured iteration (warmup < 0)"));
    yAxis->setLabel(tr("latency (ms)"));
    placeLegendInTitleRow();
    warmupShade_ = new QCPItemRect(this);
    warmupShade_->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    warmupShade_->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    warmupShade_->topLeft->setCoords(-1, 0);
    warmupShade_->bottomRight->setCoords(-0.5, 1);
    warmupShade_->setLayer(QStringLiteral("background"));
    warmupShade_->setVisible(false);
    warmupLabel_ = new QCPItemText(this);
    warmupLabel_->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    warmupLabel_->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
    warmupLabel_->setText(tr("warmup"));
    warmupLabel_->setClipToAxisRect(true);
    warmupLabel_->setVisible(false);
    pool_ = new QThreadPool(this);
    pool_->setMaxThreadCount(1);
    jobTimer_ = new QTimer(this);
    jobTimer_->setSingleShot(true);
    connect(jobTimer_, &QTimer::timeout, this, &LatencyTimelinePlot::requestEnvelope);
    clock_.start();
    // One column per pixel: a new width of the axis (the widget resized, wider tick labels) asks
    // for a new envelope once the layout is done.
    connect(this, &QCustomPlot::afterLayout, this, [this] {
        if (!series_.empty() && !jobTimer_->isActive() && !upToDate(request())) jobTimer_->start(0);
    });
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] {
        fitWarmupLabel();
        // The user's zoom or pan: the envelope of what is in view, once the events settle.
        if (!followsData() && !jobTimer_->isActive()) jobTimer_->start(0);
    });
    logButton_ = new QToolButton(this);
    logButton_->setObjectName(QStringLiteral("logScale"));
    logButton_->setText(tr("log"));
    logButton_->setCheckable(true);
    logButton_->setAutoRaise(true);
    logButton_->setToolTip(tr("Logarithmic latency axis: arms that differ 100x both stay "
                              "readable (remembered)"));
    connect(logButton_, &QToolButton::toggled, this, [this](bool on) {
        setLogScale(on);
        QSettings().setValue(QLatin1String(kLogScaleKey), on);
    });
    setLogScale(QSettings().value(QLatin1String(kLogScaleKey), false).toBool());
    restyle();
}

void LatencyTimelinePlot::setLogScale(bool on) {
    if (logButton_->isChecked() != on) logButton_->setChecked(on);  // re-enters once
    if (on == logScale()) return;
    yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (on)
        yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else
        yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    yAxis->setLabel(on ? tr("latency (ms, log)") : tr("latency (ms)"));
    fitView();
    replot(rpQueuedReplot);
}

void LatencyTimelinePlot::resizeEvent(QResizeEvent* event) {
    logButton_->adjustSize();
    logButton_->move(2, 2);
    LivePlot::resizeEvent(event);  // places the Auto range button right of it
}

int LatencyTimelinePlot::cornerInUse() const {
    return logButton_ ? logButton_->sizeHint().width() + 2 : 0;
}

void LatencyTimelinePlot::addMenuActions(QMenu* menu) {
    QAction* log = menu->addAction(tr("Logarithmic latency axis"));
    log->setCheckable(true);
    log->setChecked(logScale());
    connect(log, &QAction::toggled, logButton_, &QToolButton::setChecked);
}

void LatencyTimelinePlot::restyle() {
    LivePlot::restyle();
    const QColor shade = overBase(faintColor(), 90);
    if (warmupShade_) {
        warmupShade_->setBrush(shade);
        warmupShade_->setPen(Qt::NoPen);
    }
    if (warmupLabel_) warmupLabel_->setColor(textColor());
    for (auto* line : boundaryLines_) line->setPen(QPen(faintColor(), 1, Qt::DashLine));
}

LatencyTimelinePlot::~LatencyTimelinePlot() {
    // The job's answer is posted to this object: wait for it here, and QObject's destructor
    // drops the posted answer.
    pool_->waitForDone();
}

void LatencyTimelinePlot::resetRun(const results::RunResult& run) {
    clearGraphs();
    for (auto* line : boundaryLines_) removeItem(line);
    boundaryLines_.clear();
    boundaries_.clear();
    arms_.assign(run.arms.size(), {});
    series_.assign(run.arms.size(), {});
    ++generation_;  // a job for the previous run is not drawn
    jobQueued_ = false;
    jobTimer_->stop();
    maxWarmup_ = 0;
    warmupShade_->setVisible(false);
    warmupLabel_->setVisible(false);
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const QColor c = armColor(int(i));
        auto& s = arms_[i];
        s.warmup = addGraph();
        QColor faded = c;
        faded.setAlphaF(0.55f);
        s.warmup->setPen(QPen(faded, 1));
        s.warmup->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 3));
        s.warmup->removeFromLegend();
        s.measured = addGraph();
        s.measured->setName(QString::fromStdString(run.arms[i].name));
        s.measured->setPen(QPen(c, 1.5));
        s.measured->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 3));
    }
}

void LatencyTimelinePlot::addBoundary(double x) {
    if (boundaries_.size() >= kBoundaryLimit || !boundaries_.insert(int(x * 2)).second) return;
    auto* line = new QCPItemStraightLine(this);
    // y as a fraction of the axis rect: valid on a log axis too.
    line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
    line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(faintColor(), 1, Qt::DashLine));
    line->setLayer(QStringLiteral("background"));
    boundaryLines_.push_back(line);
}

// A line at each block change: one run of samples has one block, so the runs not walked yet
// tell (a few hundred runs for millions of samples).
void LatencyTimelinePlot::addBoundaries(std::size_t i, const results::SampleSeries& samples) {
    auto& s = arms_[i];
    const auto& runs = samples.runs();
    if (runs.size() < s.runsSeen) {  // other samples than those walked: start again
        s.runsSeen = 0;
        s.lastBlock = -1;
    }
    for (std::size_t r = s.runsSeen; r < runs.size(); ++r) {
        if (s.lastBlock >= 0 && runs[r].block != s.lastBlock) addBoundary(runs[r].first_iter - 0.5);
        s.lastBlock = runs[r].block;
    }
    s.runsSeen = runs.size();
}

int LatencyTimelinePlot::columnOf(double x, double x0, double x1, int columns) {
    if (columns <= 1 || !(x1 > x0)) return 0;
    const double c = std::floor((x - x0) / (x1 - x0) * double(columns));
    return int(std::clamp(c, 0.0, double(columns - 1)));
}

namespace {
// The iterations [first, last] of a series' samples (false when it has none).
bool iterationRange(const results::SampleSeries& samples, double& first, double& last) {
    bool any = false;
    for (const auto& r : samples.runs()) {
        if (r.count == 0) continue;
        const double a = r.first_iter, b = double(r.first_iter) + double(r.count) - 1;
        first = any ? std::min(first, a) : a;
        last = any ? std::max(last, b) : b;
        any = true;
    }
    return any;
}

// Samples of a series whose iteration lies in [x0, x1].
std::size_t samplesIn(const results::SampleSeries& samples, double x0, double x1) {
    std::size_t n = 0;
    for (const auto& r : samples.runs()) {
        const double lo = std::max(double(r.first_iter), std::ceil(x0));
        const double hi = std::min(double(r.first_iter) + double(r.count) - 1, std::floor(x1));
        if (hi >= lo) n += std::size_t(hi - lo) + 1;
    }
    return n;
}
}  // namespace

LatencyTimelinePlot::Envelope LatencyTimelinePlot::envelope(const results::SampleSeries& samples,
                                                            double x0, double x1, int columns) {
    Envelope e;
    e.x0 = x0;
    e.x1 = x1;
    e.columns = std::max(columns, 1);
    e.stamp = samples.stamp();
    e.size = samples.size();
    e.samples = samplesIn(samples, x0, x1);
    e.raw = e.samples <= std::size_t(kRawPerColumn) * std::size_t(e.columns);
    e.points = QSharedPointer<QCPGraphDataContainer>::create();

    struct Point {
        double x;
        std::int64_t ns;
    };
    QVector<QCPGraphData> out;
    out.reserve(int(e.raw ? e.samples + 2 : std::size_t(4) * std::size_t(e.columns) + 2));
    auto put = [&](const Point& p) { out.append(QCPGraphData(p.x, toMs(double(p.ns)))); };
    bool haveBefore = false, haveAfter = false;
    Point before{0, 0}, after{0, 0};
    // The column being gathered: its first, lowest, highest and last sample (the first of equal
    // extremes).
    int column = -1;
    Point first{0, 0}, lo{0, 0}, hi{0, 0}, last{0, 0};
    auto closeColumn = [&] {
        if (column < 0) return;
        Point p[4] = {first, lo, hi, last};
        std::sort(p, p + 4, [](const Point& a, const Point& b) { return a.x < b.x; });
        for (int k = 0; k < 4; ++k)
            if (k == 0 || p[k].x != p[k - 1].x) put(p[k]);
        column = -1;
    };
    const double width = (x1 - x0) / double(e.columns);
    samples.forEachSpan([&](const results::SampleSeries::Run& r, std::size_t offset,
                            const std::int64_t* ns, std::size_t n) {
        const double xs = double(r.first_iter) + double(offset);
        std::size_t k = 0;
        if (xs < x0) {  // samples left of the range: keep the last one
            k = std::min(n, std::size_t(std::ceil(x0 - xs)));
            if (k > 0) {
                before = {xs + double(k - 1), ns[k - 1]};
                haveBefore = true;
            }
        }
        // Samples [k, inEnd) lie in the range.
        const double right = std::floor(x1 - xs) + 1;
        const std::size_t inEnd = right <= double(k) ? k : std::min(n, std::size_t(right));
        if (inEnd < n && !haveAfter) {
            after = {xs + double(inEnd), ns[inEnd]};
            haveAfter = true;
        }
        if (e.raw) {
            for (; k < inEnd; ++k) put({xs + double(k), ns[k]});
            return;
        }
        while (k < inEnd) {
            const double x = xs + double(k);
            const int c = columnOf(x, x0, x1, e.columns);
            if (c != column) {
                closeColumn();
                column = c;
                first = lo = hi = {x, ns[k]};
            }
            // The samples of this span in column c: [k, end).
            std::size_t end = inEnd;
            if (c < e.columns - 1) {
                const double guess = std::ceil(x0 + double(c + 1) * width - xs);
                end = std::clamp(guess < 0 ? std::size_t(0) : std::size_t(guess), k + 1, inEnd);
                while (end > k + 1 && columnOf(xs + double(end - 1), x0, x1, e.columns) > c) --end;
                while (end < inEnd && columnOf(xs + double(end), x0, x1, e.columns) <= c) ++end;
            }
            std::int64_t mn = lo.ns, mx = hi.ns;
            std::size_t at = k, mnAt = n, mxAt = n;
            for (; at < end; ++at) {
                const std::int64_t v = ns[at];
                if (v < mn) {
                    mn = v;
                    mnAt = at;
                }
                if (v > mx) {
                    mx = v;
                    mxAt = at;
                }
            }
            if (mnAt < n) lo = {xs + double(mnAt), mn};
            if (mxAt < n) hi = {xs + double(mxAt), mx};
            last = {xs + double(end - 1), ns[end - 1]};
            k = end;
        }
    });
    closeColumn();
    if (haveBefore) out.prepend(QCPGraphData(before.x, toMs(double(before.ns))));
    if (haveAfter) out.append(QCPGraphData(after.x, toMs(double(after.ns))));
    // Runs come in iteration order (live and stored); were they not, the container sorts.
    const bool sorted = std::is_sorted(out.begin(), out.end(), [](const QCPGraphData& a, const QCPGraphData& b) {
        return a.key < b.key;
    });
    e.points->set(out, sorted);
    return e;
}

std::shared_ptr<LatencyTimelinePlot::Prepared> LatencyTimelinePlot::prepare(const results::RunResult& run) {
    auto out = std::make_shared<Prepared>();
    double x0 = 0, x1 = 0;
    bool any = false;
    for (const auto& arm : run.arms) {
        double a = 0, b = 0;
        if (!iterationRange(arm.samples, a, b)) continue;
        x0 = any ? std::min(x0, a) : a;
        x1 = any ? std::max(x1, b) : b;
        any = true;
    }
    for (const auto& arm : run.arms) out->arms.push_back(envelope(arm.samples, x0, x1, kPreparedColumns));
    return out;
}

LatencyTimelinePlot::Request LatencyTimelinePlot::request() const {
    Request r;
    // One column per device pixel of the axis (at least a few hundred while not laid out).
    r.columns = std::max(200, int(std::lround(axisRect()->width() * devicePixelRatioF())));
    if (!followsData()) {
        r.x0 = xAxis->range().lower;
        r.x1 = xAxis->range().upper;
        return r;
    }
    bool any = false;
    for (const auto& s : series_) {
        double a = 0, b = 0;
        if (!iterationRange(s, a, b)) continue;
        r.x0 = any ? std::min(r.x0, a) : a;
        r.x1 = any ? std::max(r.x1, b) : b;
        any = true;
    }
    return r;
}

bool LatencyTimelinePlot::upToDate(const Request& r) const {
    for (std::size_t i = 0; i < arms_.size() && i < series_.size(); ++i) {
        const Envelope& e = arms_[i].shown;
        if (e.stamp != series_[i].stamp() || e.size != series_[i].size()) return false;
        if (e.size == 0) continue;
        if (e.x0 != r.x0 || e.x1 != r.x1) return false;
        // A few pixels more or less (the tick labels' width changed) need no new envelope.
        if (!e.raw && std::abs(e.columns - r.columns) > r.columns / 8) return false;
        if (e.raw && std::size_t(kRawPerColumn) * std::size_t(r.columns) < e.samples) return false;
    }
    return true;
}

void LatencyTimelinePlot::requestEnvelope() {
    const bool wasPending = envelopePending();
    const Request r = request();
    if (upToDate(r)) {
        jobQueued_ = false;
        if (wasPending && !jobRunning_) emit envelopeShown();
        return;
    }
    // Few samples: every one is drawn, gathered here (as cheap as handing them to a thread).
    bool small = true;
    for (const auto& s : series_) small &= samplesIn(s, r.x0, r.x1) <= std::size_t(kRawPerColumn) * std::size_t(r.columns);
    if (small && !jobRunning_) {
        std::vector<Envelope> envelopes;
        for (const auto& s : series_) envelopes.push_back(envelope(s, r.x0, r.x1, r.columns));
        jobQueued_ = false;
        showEnvelopes(std::move(envelopes));
        return;
    }
    jobQueued_ = true;
    if (jobRunning_) return;  // its answer asks again
    const qint64 now = clock_.elapsed();
    if (now < nextJobMs_) {
        if (!jobTimer_->isActive()) jobTimer_->start(int(nextJobMs_ - now));
        return;
    }
    startJob(r);
}

void LatencyTimelinePlot::startJob(const Request& r) {
    jobQueued_ = false;
    jobRunning_ = true;
    // Copies share the samples' chunks (a pointer per 65 536 samples): the job reads them on its
    // thread while the runner appends to its own series here.
    std::vector<results::SampleSeries> series = series_;
    const std::uint64_t generation = generation_;
    pool_->start([this, series = std::move(series), r, generation]() mutable {
        // Below the UI thread and the workers: waking this thread must not take the core the
        // window needs for its next frame (nice 10: about a tenth of a contended core).
        ::setpriority(PRIO_PROCESS, pid_t(::syscall(SYS_gettid)), 10);
        QElapsedTimer cost;
        cost.start();
        std::vector<Envelope> envelopes;
        for (const auto& s : series) envelopes.push_back(envelope(s, r.x0, r.x1, r.columns));
        series.clear();  // released on this thread
        const qint64 ms = cost.elapsed();
        QMetaObject::invokeMethod(
            this,
            [this, envelopes = std::move(envelopes), generation, ms]() mutable {
                jobRunning_ = false;
                // The next job waits several times this one's cost: at most a fifth of a core.
                nextJobMs_ = clock_.elapsed() + std::max<qint64>(kJobSpacingMs, 4 * ms);
                if (generation == generation_) showEnvelopes(std::move(envelopes));
                requestEnvelope();
            },
            Qt::QueuedConnection);
    });
}

void LatencyTimelinePlot::showEnvelopes(std::vector<Envelope> envelopes) {
    for (std::size_t i = 0; i < envelopes.size() && i < arms_.size(); ++i) {
        auto& s = arms_[i];
        s.shown = std::move(envelopes[i]);
        s.measured->setData(s.shown.points);  // shared, not copied
        const bool markers = s.shown.raw && s.shown.samples <= std::size_t(kMarkerLimit);
        s.measured->setScatterStyle(QCPScatterStyle(markers ? QCPScatterStyle::ssDisc : QCPScatterStyle::ssNone, 3));
    }
    fitView();
    replot(rpQueuedReplot);
    if (!envelopePending()) emit envelopeShown();
}

void LatencyTimelinePlot::settle() {
    if (series_.empty()) return;
    if (jobRunning_) {
        pool_->waitForDone();
        QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);  // its answer
    }
    // Drawn from every sample already: a finer envelope for the width follows off this thread.
    bool covered = true;
    for (std::size_t i = 0; i < arms_.size() && i < series_.size(); ++i)
        covered &= arms_[i].shown.stamp == series_[i].stamp() && arms_[i].shown.size == series_[i].size();
    if (covered) return;
    const Request r = request();
    std::vector<Envelope> envelopes;
    for (const auto& s : series_) envelopes.push_back(envelope(s, r.x0, r.x1, r.columns));
    jobQueued_ = false;
    jobTimer_->stop();
    showEnvelopes(std::move(envelopes));
    replot(rpImmediateRefresh);
}

std::size_t LatencyTimelinePlot::samplesShown(std::size_t arm) const {
    return arm < arms_.size() ? arms_[arm].shown.samples : 0;
}

int LatencyTimelinePlot::pointsDrawn(std::size_t arm) const {
    return arm < arms_.size() && arms_[arm].measured ? arms_[arm].measured->dataCount() : 0;
}

int LatencyTimelinePlot::dataPoints() const {
    std::size_t n = 0;
    for (const auto& s : arms_) n += s.shown.samples + std::size_t(s.warmup ? s.warmup->dataCount() : 0);
    return int(n);
}

void LatencyTimelinePlot::refresh(const results::RunResult& run) {
    if (arms_.size() != run.arms.size()) resetRun(run);
    // New samples reach the plot with their envelope (showEnvelopes replots): a refresh
    // replots only for what it draws itself (warmup, block boundaries).
    const std::size_t boundariesBefore = boundaryLines_.size();
    bool changed = false;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& arm = run.arms[i];
        auto& s = arms_[i];
        if (arm.warmup_ns.size() != s.warmupShown) {
            // Warmup can grow later (one warmup per batch size of a sweep): x shifts, so rebuild.
            const double w = double(arm.warmup_ns.size());
            QVector<double> keys, values;
            for (std::size_t k = 0; k < arm.warmup_ns.size(); ++k) {
                keys.push_back(double(k) - w);
                values.push_back(toMs(double(arm.warmup_ns[k])));
            }
            s.warmup->setData(keys, values, true);
            s.warmupShown = arm.warmup_ns.size();
            maxWarmup_ = std::max(maxWarmup_, s.warmupShown);
            changed = true;
        }
        if (arm.samples.stamp() != series_[i].stamp() || arm.samples.size() != series_[i].size()) {
            series_[i] = arm.samples;  // shares its chunks
            addBoundaries(i, arm.samples);
        }
    }
    if (maxWarmup_ > 0) {
        warmupShade_->topLeft->setCoords(-double(maxWarmup_) - 0.5, 0);
        warmupShade_->setVisible(true);
        warmupLabel_->position->setCoords(-double(maxWarmup_) / 2.0 - 0.5, 0.02);
        warmupLabel_->setVisible(true);
    }
    // A stored run's envelopes, computed by the history's reader from these very samples.
    if (prepared_ && prepared_->arms.size() == series_.size()) {
        bool same = true;
        for (std::size_t i = 0; i < series_.size(); ++i)
            same &= prepared_->arms[i].stamp == series_[i].stamp() && prepared_->arms[i].size == series_[i].size();
        if (same) showEnvelopes(std::move(prepared_->arms));
        prepared_.reset();
    }
    fitView();  // the warmup's x
    if (changed || boundaryLines_.size() != boundariesBefore) replot(rpQueuedReplot);
    requestEnvelope();
}

void LatencyTimelinePlot::fitView() {
    fitToData();
    fitWarmupLabel();
    // The first warmup iterations can be 100x slower than steady state; fitting them would flatten
    // the measured series into a line, so y follows the measured samples once there are some.
    if (!followsData()) return;
    bool any = false;
    QCPRange range;
    for (const auto& s : arms_) {
        bool ok = false;
        const QCPRange r = s.measured->getValueRange(ok);
        if (!ok) continue;
        if (any)
            range.expand(r);
        else
            range = r;
        any = true;
    }
    if (!any) return;
    if (logScale() && range.lower > 0) {
        yAxis->setRange(range.lower / 1.25, range.upper * 1.25);  // a constant gap in decades
        return;
    }
    const double pad = std::max(range.size() * 0.08, range.upper * 0.02);
    yAxis->setRange(std::max(0.0, range.lower - pad), range.upper + pad);
}

void LatencyTimelinePlot::fitWarmupLabel() {
    if (maxWarmup_ == 0) return;
    // Only label the shaded region when the word fits in it.
    const double left = xAxis->coordToPixel(-double(maxWarmup_) - 0.5);
    const double right = xAxis->coordToPixel(-0.5);
    warmupLabel_->setVisible(
        right - left >
        QFontMetrics(warmupLabel_->font()).horizontalAdvance(warmupLabel_->text()) + 4);
}

}  // namespace pitlane::widgets
