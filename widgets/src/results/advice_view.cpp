#include "pitlane/widgets/results/advice_view.h"

#include "pitlane/widgets/common/arm_palette.h"
#include "pitlane/widgets/common/wrapping_label.h"

#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

namespace pitlane::widgets {

using json = nlohmann::json;

AdviceSnapshot adviceSnapshot(const results::RunResult& run) {
    AdviceSnapshot s;
    s.serving = run.preset.serving.enabled;
    for (const auto& a : run.arms) {
        s.arms.push_back(a.name);
        s.profiled.push_back(a.profile.is_object() && a.profile.contains("ops"));
        s.measured.push_back(!a.samples.empty() && a.status != results::kFailed &&
                             a.status != results::kCrashed && a.status != results::kKilled &&
                             a.status != results::kTimeout);
    }
    s.advice = results::advise(run);
    for (const auto& a : s.advice) s.suggested.push_back(results::suggestedArm(run, a));
    return s;
}

namespace {
QString esc(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

// What the share is a share of, by tier (results::Advice::share).
QString shareOf(results::AdviceTier tier) {
    switch (tier) {
        case results::AdviceTier::Latency: return AdviceView::tr("of the time");
        case results::AdviceTier::Throughput: return AdviceView::tr("of the cores");
        case results::AdviceTier::Startup: return AdviceView::tr("of start-up");
    }
    return {};
}

QLabel* cell(const QString& text, QWidget* parent, bool wrap = false) {
    QLabel* l = wrap ? new WrappingLabel(parent) : new QLabel(parent);
    l->setTextFormat(Qt::RichText);
    l->setText(text);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    l->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    return l;
}
}  // namespace

AdviceView::AdviceView(QWidget* parent)
    : QWidget(parent), hint_(new WrappingLabel), rows_(nullptr), grid_(nullptr) {
    setObjectName(QStringLiteral("adviceView"));
    hint_->setObjectName(QStringLiteral("adviceHint"));
    hint_->setTextFormat(Qt::RichText);
    hint_->setContentsMargins(4, 2, 4, 2);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("adviceScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // The hint scrolls with the rows: above them, outside the scroll area, its wrapped height
    // was the tab page's minimum and so the window's (issue 27: 1366x872 on a 768 screen).
    auto* page = new QWidget;
    page->setObjectName(QStringLiteral("advicePage"));
    page_ = new QVBoxLayout(page);
    page_->setContentsMargins(0, 0, 0, 0);
    page_->setSpacing(2);
    page_->addWidget(hint_);
    scroll->setWidget(page);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(scroll, 1);
    clear(tr("Advice appears when a run finishes, or when a run is opened from the history."));
}

QString AdviceView::title() const {
    const std::size_t n = snapshot_ ? snapshot_->advice.size() : 0;
    return n == 0 ? tr("Advice") : tr("Advice (%1)").arg(n);
}

QPushButton* AdviceView::addButton(std::size_t i) const {
    return i < buttons_.size() ? buttons_[i] : nullptr;
}

void AdviceView::clear(const QString& note) {
    snapshot_.reset();
    hint_->setWrappedText(note.toHtmlEscaped());
    hint_->setVisible(!note.isEmpty());
    clearRows();
    emit titleChanged(title());
}

void AdviceView::setSnapshot(std::shared_ptr<const AdviceSnapshot> snapshot) {
    snapshot_ = std::move(snapshot);
    if (!snapshot_) return clear(QString());
    rebuild();
    emit titleChanged(title());
}

void AdviceView::clearRows() {
    buttons_.clear();
    delete rows_;
    rows_ = new QWidget;
    rows_->setObjectName(QStringLiteral("adviceRows"));
    grid_ = new QGridLayout(rows_);
    grid_->setContentsMargins(4, 2, 4, 4);
    grid_->setHorizontalSpacing(12);
    grid_->setVerticalSpacing(4);
    page_->addWidget(rows_, 1);
}

void AdviceView::rebuild() {
    clearRows();
    const AdviceSnapshot& s = *snapshot_;
    buttons_.assign(s.advice.size(), nullptr);
    // What the rules could not read.
    bool unprofiled = false;
    for (std::size_t i = 0; i < s.arms.size(); ++i)
        if (s.measured[i] && !s.profiled[i]) unprofiled = true;
    QStringList hint;
    if (s.serving)
        hint << tr("A serving run: the advisor reads runs that time iterations, so it has no "
                   "advice here.");
    else if (unprofiled)
        hint << tr("<b>No operator profile</b> for %1: the rules read only the settings, metrics "
                   "and cold costs. Check <i>Profile after measuring</i> in the Run box "
                   "(<code>run.profile_iters</code>; <code>pitlane-cli run --profile</code>) "
                   "so they see where the time goes.")
                    .arg([&] {
                        QStringList names;
                        for (std::size_t i = 0; i < s.arms.size(); ++i)
                            if (s.measured[i] && !s.profiled[i]) names << esc(s.arms[i]);
                        return names.size() == int(s.arms.size()) ? tr("this run")
                                                                  : names.join(QStringLiteral(", "));
                    }());
    if (!s.serving && s.advice.empty())
        hint.prepend(tr("No advice: nothing measured crossed a rule's threshold."));
    hint_->setWrappedText(hint.join(QStringLiteral(" ")));
    hint_->setVisible(!hint.isEmpty());
    if (s.serving) return;

    int row = 0;
    const QStringList heads = {QString(),        tr("Advice (why)"), tr("Improves"),
                               tr("Addresses"), tr("Change"),       QString()};
    for (int c = 0; c < heads.size(); ++c) {
        auto* h = cell(QStringLiteral("<b>%1</b>").arg(heads[c]), rows_);
        if (c == 3)
            h->setToolTip(tr("The share of the arm's time (throughput: of its cores; start-up: "
                             "of its start-up) the change addresses: measured where the profile "
                             "or the metrics show it, else the rule's documented estimate. "
                             "Advice is ranked by it, per-iteration time first."));
        grid_->addWidget(h, row, c);
    }
    ++row;
    for (std::size_t arm = 0; arm < s.arms.size(); ++arm) addArmRows(arm, row);
    grid_->setColumnStretch(1, 3);
    grid_->setColumnStretch(4, 2);
    grid_->setRowStretch(row, 1);
}

void AdviceView::addArmRows(std::size_t arm, int& row) {
    const AdviceSnapshot& s = *snapshot_;
    int count = 0;
    for (const auto& a : s.advice) count += a.arm == arm ? 1 : 0;
    QString head = QStringLiteral("<span style=\"color:%1\">■</span> <b>%2</b>")
                       .arg(armColor(int(arm)).name(), esc(s.arms[arm]));
    if (!s.measured[arm])
        head += tr(" — measured nothing: no advice");
    else if (count == 0)
        head += tr(" — nothing crossed a rule's threshold");
    else
        head += count == 1 ? tr(" — 1 suggestion") : tr(" — %1 suggestions").arg(count);
    // Named per arm only when some arms have a profile (else the hint above says it once).
    bool anyProfile = false;
    for (std::size_t i = 0; i < s.arms.size(); ++i) anyProfile = anyProfile || s.profiled[i];
    if (anyProfile && s.measured[arm] && !s.profiled[arm])
        head += tr(" <i>(no operator profile)</i>");
    auto* h = cell(head, rows_);
    h->setContentsMargins(0, row > 1 ? 8 : 2, 0, 0);
    grid_->addWidget(h, row++, 0, 1, 6);
    int rank = 0;
    for (std::size_t i = 0; i < s.advice.size(); ++i)
        if (s.advice[i].arm == arm) addAdviceRow(i, ++rank, row);
}

void AdviceView::addAdviceRow(std::size_t i, int rank, int& row) {
    const auto& a = snapshot_->advice[i];
    const json& suggested = snapshot_->suggested[i];
    // The evidence and "measured": the text colour a third of the way to the background.
    const QColor fg = palette().color(QPalette::WindowText), bg = palette().color(QPalette::Window);
    const QString dim = QColor((fg.red() * 2 + bg.red()) / 3, (fg.green() * 2 + bg.green()) / 3,
                               (fg.blue() * 2 + bg.blue()) / 3)
                            .name();
    auto* rankLabel = cell(QStringLiteral("%1.").arg(rank), rows_);
    // The evidence's first sentence (the measured numbers) under the title; all of it, with the
    // rule and its threshold, in the tooltip.
    const QString evidence = QString::fromStdString(a.evidence);
    const qsizetype stop = evidence.indexOf(QLatin1String(". "));
    const QString shown = stop < 0 ? evidence : evidence.left(stop + 1) + QStringLiteral(" …");
    auto* what = cell(QStringLiteral("<b>%1</b><br><span style=\"color:%2\">%3</span>")
                          .arg(esc(a.title), dim, shown.toHtmlEscaped()),
                      rows_, true);
    what->setObjectName(QStringLiteral("advice_%1").arg(i));
    what->setProperty("rule", QString::fromStdString(a.rule));
    what->setToolTip(QStringLiteral("<p>%1</p><p><i>%2</i></p>")
                         .arg(evidence.toHtmlEscaped(),
                              tr("rule %1: %2 = %3 (threshold %4)")
                                  .arg(QString::fromStdString(a.rule),
                                       QString::fromStdString(a.metric))
                                  .arg(a.value, 0, 'g', 4)
                                  .arg(a.threshold, 0, 'g', 4)
                                  .toHtmlEscaped()));
    auto* tier = cell(QString::fromLatin1(results::tierName(a.tier)), rows_);
    auto* share = cell(QStringLiteral("<b>%1 %</b> %2<br><span style=\"color:%3\">%4</span>")
                           .arg(100.0 * a.share, 0, 'f', 0)
                           .arg(shareOf(a.tier), dim,
                                a.measured_in_run ? tr("measured by an arm")
                                : a.measured      ? tr("measured")
                                                  : tr("estimated")),
                       rows_);
    share->setToolTip(a.measured_in_run
                          ? tr("arm “%1” of this run measured this change: 1 - 1/%2 of the time")
                                .arg(QString::fromStdString(a.measured_in_run->arm))
                                .arg(a.measured_in_run->ratio, 0, 'f', 2)
                      : a.measured ? tr("measured in this run (profile or metrics)")
                                   : tr("the rule's documented estimate: this run did not show "
                                        "the share"));
    QString change;
    if (!a.change.empty()) change = QStringLiteral("<code>%1</code>").arg(esc(results::changeText(a.change)));
    if (!a.action.empty())
        change += (change.isEmpty() ? QString() : QStringLiteral("<br>")) +
                  QStringLiteral("<i>%1</i> %2")
                      .arg(a.arm_knobs.is_null() ? tr("do:") : tr("also:"), esc(a.action));
    auto* changeLabel = cell(change, rows_, true);

    auto* add = new QPushButton(tr("Add arm"), rows_);
    add->setObjectName(QStringLiteral("addAdviceArm_%1").arg(i));
    add->setProperty("rule", QString::fromStdString(a.rule));
    if (suggested.is_object()) {
        const QString name = QString::fromStdString(suggested.value("name", std::string()));
        add->setToolTip(tr("Add the arm “%1” to the setup on the left (knobs %2); Run measures "
                           "it against the others")
                            .arg(name, QString::fromStdString(suggested["knobs"].dump())));
        connect(add, &QPushButton::clicked, this, [this, add, name, knobs = suggested["knobs"]] {
            emit addArmRequested(name, knobs);
            add->setEnabled(false);
            add->setText(tr("Added"));
            add->setToolTip(tr("“%1” is in the setup on the left: Run (Ctrl+R) measures it")
                                .arg(name));
        });
    } else if (a.measured_in_run) {  // an arm of the run is this change: nothing to add
        add->setEnabled(false);
        add->setText(tr("Measured"));
        add->setToolTip(tr("arm “%1” of this run already measures this change")
                            .arg(QString::fromStdString(a.measured_in_run->arm)));
    } else {
        add->setEnabled(false);
        add->setToolTip(a.action.empty() ? tr("not a knob change") : QString::fromStdString(a.action));
    }
    buttons_[i] = add;

    grid_->addWidget(rankLabel, row, 0);
    grid_->addWidget(what, row, 1);
    grid_->addWidget(tier, row, 2);
    grid_->addWidget(share, row, 3);
    grid_->addWidget(changeLabel, row, 4);
    grid_->addWidget(add, row, 5, Qt::AlignTop);
    ++row;
}

}  // namespace pitlane::widgets
