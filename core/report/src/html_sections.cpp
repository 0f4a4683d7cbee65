// The report's reference sections: knobs, applied settings, environment, raw-data summary.
#include "html_builder.h"

#include <map>
#include <set>

namespace pitlane::report::detail {

using nlohmann::json;
using results::RunResult;

QString esc(const QString& s) {
    return s.toHtmlEscaped();
}
QString esc(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

QString armLabel(const RunResult& run, std::size_t arm) {
    return QStringLiteral("<span style=\"color:%1\">&#9632;</span>&nbsp;%2")
        .arg(armColor(int(arm)).name(), esc(run.arms[arm].name));
}

namespace {

// Nested objects become dotted keys ("cudnn.enabled") so every setting gets its own row.
void flatten(const json& j, const std::string& prefix, std::map<std::string, json>& out) {
    if (!j.is_object()) {
        if (!prefix.empty()) out[prefix] = j;
        return;
    }
    for (const auto& [k, v] : j.items()) {
        const std::string key = prefix.empty() ? k : prefix + "." + k;
        if (v.is_object() && !v.empty())
            flatten(v, key, out);
        else
            out[key] = v;
    }
}

QString valueText(const json& v) {
    if (v.is_string()) return QString::fromStdString(v.get<std::string>());
    return QString::fromStdString(v.dump());
}

QString cell(const json* v, Flavor flavor, const QString& missing, const std::string& key) {
    if (!v) return QStringLiteral("<span class=\"muted\">%1</span>").arg(missing);
    const bool bytes = key.size() > 6 && key.compare(key.size() - 6, 6, "_bytes") == 0;
    if (bytes && v->is_number() && v->get<double>() >= 1024)
        return QStringLiteral("%1 <span class=\"muted\">(%2)</span>")
            .arg(esc(results::formatBytes(v->get<double>())), esc(v->dump()));
    const QString text = valueText(*v).trimmed();
    const QStringList lines = text.split('\n');
    if (lines.size() == 1 && text.size() <= 120) return esc(text);
    // Long values (build configuration, thread pool dumps) must not drown the table.
    const QString first = esc(lines.front().left(100));
    if (flavor == Flavor::Browser)
        return QStringLiteral(
                   "<details><summary>%1 &hellip; (%2 lines)</summary><pre>%3</pre>"
                   "</details>")
            .arg(first)
            .arg(lines.size())
            .arg(esc(text));
    return QStringLiteral(
               "%1 &hellip; <span class=\"muted\">(%2 lines; full text in the HTML "
               "report and the JSON)</span>")
        .arg(first)
        .arg(lines.size());
}

struct Table {
    std::vector<std::map<std::string, json>> perArm;
    std::vector<std::string> keys;  // union, sorted
};

Table collect(const RunResult& run, const std::function<json(const results::ArmResult&)>& get) {
    Table t;
    std::set<std::string> keys;
    for (const auto& a : run.arms) {
        std::map<std::string, json> m;
        flatten(get(a), "", m);
        for (const auto& kv : m) keys.insert(kv.first);
        t.perArm.push_back(std::move(m));
    }
    t.keys.assign(keys.begin(), keys.end());
    return t;
}

// One row per key, one column per arm (or a single column when every arm agrees on every
// key). Rows whose values differ get `diffClass` unless the key is in `expectedToDiffer`.
QString keyValueTable(const RunResult& run, const Table& t, Flavor flavor, const QString& diffClass,
                      const std::set<std::string>& expectedToDiffer, const QString& missing,
                      int* differing) {
    auto differs = [&](const std::string& key) {
        const json* first = nullptr;
        bool firstSeen = false;
        for (const auto& m : t.perArm) {
            const auto it = m.find(key);
            const json* v = it == m.end() ? nullptr : &it->second;
            if (!firstSeen) {
                first = v;
                firstSeen = true;
            } else if ((v == nullptr) != (first == nullptr) || (v && *v != *first)) {
                return true;
            }
        }
        return false;
    };
    *differing = 0;
    bool anyDiff = false;
    for (const auto& k : t.keys) anyDiff |= differs(k);
    const bool single = !anyDiff && run.arms.size() > 1;
    QString h = QStringLiteral("<table class=\"kv\"><tr><th>setting</th>");
    if (single)
        h += QStringLiteral("<th>all %1 arms</th>").arg(run.arms.size());
    else
        for (std::size_t i = 0; i < run.arms.size(); ++i) h += "<th>" + armLabel(run, i) + "</th>";
    h += QStringLiteral("</tr>\n");
    for (const auto& k : t.keys) {
        const bool d = differs(k);
        const bool flagged = d && !expectedToDiffer.count(k);
        *differing += flagged;
        h += flagged ? QStringLiteral("<tr class=\"%1\">").arg(diffClass) : QStringLiteral("<tr>");
        h += QStringLiteral("<td class=\"key\">%1%2</td>")
                 .arg(flagged ? QStringLiteral("&ne;&nbsp;") : QString(), esc(k));
        for (std::size_t i = 0; i < (single ? 1 : t.perArm.size()); ++i) {
            const auto it = t.perArm[i].find(k);
            h += "<td>" +
                 cell(it == t.perArm[i].end() ? nullptr : &it->second, flavor, missing, k) +
                 "</td>";
        }
        h += QStringLiteral("</tr>\n");
    }
    return h + QStringLiteral("</table>\n");
}

}  // namespace

QString knobsSection(const RunResult& run) {
    const Table t = collect(run, [](const results::ArmResult& a) { return a.knobs; });
    int differing = 0;
    QString table = keyValueTable(run, t, Flavor::RichText, QStringLiteral("diff"), {},
                                  QStringLiteral("default"), &differing);
    QString h = QStringLiteral(
        "<h2>Knobs</h2>\n<p>As requested in the preset; "
        "<span class=\"muted\">default</span> = the knob was not set. ");
    h += differing
             ? QStringLiteral("Highlighted rows (&ne;) are what the arms change: %1 knob(s).</p>\n")
                   .arg(differing)
             : QStringLiteral("<b>Every arm requests the same knobs</b> (an A/A test).</p>\n");
    return h + table;
}

QString appliedSection(const RunResult& run, Flavor flavor) {
    const Table t = collect(run, [](const results::ArmResult& a) { return a.applied; });
    if (t.keys.empty())
        return QStringLiteral(
            "<h2>Applied settings</h2>\n<p>No arm reported its applied settings "
            "(it failed before configuring).</p>\n");
    int differing = 0;
    // The worker's own index and pid-like fields differ by nature.
    const QString table = keyValueTable(run, t, flavor, QStringLiteral("diff"), {"worker_index"},
                                        QStringLiteral("&mdash;"), &differing);
    return QStringLiteral(
               "<h2>Applied settings</h2>\n<p>What each worker read back from torch and "
               "the OS after applying the knobs (not a copy of the knobs). %1 setting(s) "
               "differ between arms (&ne;).</p>\n")
               .arg(differing) +
           table;
}

QString environmentSection(const RunResult& run, Flavor flavor) {
    const Table t = collect(run, [](const results::ArmResult& a) { return a.environment; });
    if (t.keys.empty())
        return QStringLiteral("<h2>Environment</h2>\n<p>No worker reported its environment.</p>\n");
    int drift = 0;
    const QString table = keyValueTable(run, t, flavor, QStringLiteral("drift"),
                                        {"pid", "hostname"}, QStringLiteral("&mdash;"), &drift);
    QString h = QStringLiteral(
        "<h2>Environment</h2>\n<p>The manifest each worker reported when it "
        "started. ");
    h += drift ? QStringLiteral(
                     "<b class=\"bad\">%1 field(s) differ between arms although no knob "
                     "sets them (red rows): the arms did not run in the same "
                     "conditions.</b></p>\n")
                     .arg(drift)
               : QStringLiteral("Identical for every arm: no drift.</p>\n");
    return h + table;
}

QString rawDataSection(const RunResult& run) {
    QString h = QStringLiteral(
        "<h2>Raw data</h2>\n<p>What was recorded per arm. Every measured iteration is in the CSV "
        "export (one row per iteration) and the JSON export (<code>latency_ns</code>, "
        "<code>block</code>).</p>\n<table class=\"grid\"><tr><th>arm</th><th>status</th>"
        "<th>measured</th><th>blocks</th><th>batch</th><th>warmup</th><th>metric ticks</th>"
        "<th>model</th><th>input</th><th>pid</th></tr>\n");
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        std::map<int, int> blocks;
        for (const auto& s : a.samples) ++blocks[s.block];
        QStringList sizes;
        for (const auto& [b, n] : blocks) sizes << QString::number(n);
        if (sizes.size() > 8) sizes = sizes.mid(0, 8) << QStringLiteral("&hellip;");
        QString span;
        if (a.metrics.size() > 1)
            span = QStringLiteral(" (%1&ndash;%2 s)")
                       .arg(a.metrics.front().t_ms / 1000, 0, 'f', 1)
                       .arg(a.metrics.back().t_ms / 1000, 0, 'f', 1);
        QString model;
        if (a.loaded.contains("parameters"))
            model = QStringLiteral("%1 parameters, %2")
                        .arg(a.loaded.value("parameters", 0LL))
                        .arg(QString::fromStdString(
                            results::formatBytes(a.loaded.value("file_size_bytes", 0.0))));
        QString input;
        for (const auto& in : a.loaded.value("input", json::array()))
            input += (input.isEmpty() ? QString() : QStringLiteral(", ")) +
                     QString::fromStdString(in.value("dtype", std::string())) +
                     QString::fromStdString(in.value("shape", json::array()).dump());
        h += QStringLiteral(
                 "<tr><td>%1</td><td>%2</td><td class=\"num\">%3</td><td>%4 (%5)</td>"
                 "<td class=\"num\">%6</td><td class=\"num\">%7</td>"
                 "<td class=\"num\">%8%9</td><td>%10</td><td>%11</td><td "
                 "class=\"num\">%12</td></tr>\n")
                 .arg(armLabel(run, i), esc(a.status))
                 .arg(a.samples.size())
                 .arg(blocks.size())
                 .arg(sizes.join(QStringLiteral(", ")))
                 .arg(a.batch_size)
                 .arg(a.warmup_ns.size())
                 .arg(a.metrics.size())
                 .arg(span, model.isEmpty() ? QStringLiteral("&mdash;") : esc(model),
                      input.isEmpty() ? QStringLiteral("&mdash;") : esc(input))
                 .arg(a.pid);
    }
    return h + QStringLiteral("</table>\n");
}

QString machineLine(const RunResult& run) {
    const results::ArmResult* src = nullptr;
    for (const auto& a : run.arms)
        if (a.environment.is_object() && !a.environment.empty()) {
            src = &a;
            break;
        }
    if (!src) return QStringLiteral("unknown (no worker reported its environment)");
    const json& e = src->environment;
    QStringList parts;
    if (e.contains("cpu")) parts << valueText(e["cpu"]);
    if (e.contains("cores"))
        parts << QStringLiteral("%1 cores%2")
                     .arg(valueText(e["cores"]),
                          e.contains("physical_cores")
                              ? QStringLiteral(" (%1 physical)").arg(valueText(e["physical_cores"]))
                              : QString());
    if (e.contains("memory_bytes"))
        parts << QString::fromStdString(results::formatBytes(e.value("memory_bytes", 0.0))) +
                     QStringLiteral(" RAM");
    if (e.contains("kernel")) parts << valueText(e["kernel"]);
    if (e.contains("hostname")) parts << QStringLiteral("host ") + valueText(e["hostname"]);
    if (e.contains("libtorch")) parts << QStringLiteral("libtorch ") + valueText(e["libtorch"]);
    if (src->applied.contains("blas"))
        parts << QStringLiteral("BLAS ") + valueText(src->applied["blas"]);
    if (e.contains("governor")) parts << QStringLiteral("governor ") + valueText(e["governor"]);
    return esc(parts.join(QStringLiteral(", ")));
}

}  // namespace pitlane::report::detail
