// The report's reference sections: knobs, applied settings, environment, raw-data summary.
#include "html_builder.h"

#include <QSet>

#include <algorithm>
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

// One row per key, one column per arm (or a single column when every arm agrees on every
// key). Rows whose values differ get `diffClass` unless the key is in `expectedToDiffer`. In the
// PDF at most three arms side by side (a table per three arms), so no column is squeezed.
QString keyValueTable(const RunResult& run, const SettingsTable& t, Flavor flavor,
                      const QString& diffClass, const std::set<std::string>& expectedToDiffer,
                      const QString& missing, int* differing) {
    auto differs = [&](const std::string& key) {
        const auto first = t.perArm.front().find(key);
        const json* v0 = first == t.perArm.front().end() ? nullptr : &first->second;
        for (const auto& m : t.perArm) {
            const auto it = m.find(key);
            const json* v = it == m.end() ? nullptr : &it->second;
            if ((v == nullptr) != (v0 == nullptr) || (v && *v != *v0)) return true;
        }
        return false;
    };
    *differing = 0;
    bool anyDiff = false;
    for (const auto& k : t.keys) anyDiff |= differs(k);
    const bool single = !anyDiff && run.arms.size() > 1;
    const std::size_t columns = single ? 1 : t.perArm.size();
    QStringList headers = {QStringLiteral("<th>setting</th>")};
    if (single)
        headers << QStringLiteral("<th>all %1 arms</th>").arg(run.arms.size());
    else
        for (std::size_t i = 0; i < columns; ++i) headers << "<th>" + armLabel(run, i) + "</th>";
    std::vector<GridRow> rows;
    for (const auto& k : t.keys) {
        const bool flagged = differs(k) && !expectedToDiffer.count(k);
        *differing += flagged;
        GridRow row{flagged ? diffClass : QString(), {}};
        row.cells << QStringLiteral("<td class=\"key\">%1%2</td>")
                         .arg(flagged ? QStringLiteral("&ne;&nbsp;") : QString(), esc(k));
        for (std::size_t i = 0; i < columns; ++i) {
            const auto it = t.perArm[i].find(k);
            row.cells << "<td>" +
                             cell(it == t.perArm[i].end() ? nullptr : &it->second, flavor, missing, k) +
                             "</td>";
        }
        rows.push_back(std::move(row));
    }
    return gridTable(QStringLiteral("kv"), headers, rows, flavor, 4);
}

}  // namespace

QString valueText(const json& v) {
    if (v.is_string()) return QString::fromStdString(v.get<std::string>());
    return QString::fromStdString(v.dump());
}

SettingsTable collectSettings(const RunResult& run,
                              const std::function<json(const results::ArmResult&)>& get) {
    SettingsTable t;
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

QString th(const char* name) {
    return QStringLiteral("<th>%1</th>").arg(QString::fromUtf8(name));
}
QString td(const QString& v, const QString& cls) {
    return cls.isEmpty() ? QStringLiteral("<td>%1</td>").arg(v)
                         : QStringLiteral("<td class=\"%1\">%2</td>").arg(cls, v);
}
QString num(const QString& v) {
    return td(v, QStringLiteral("num"));
}

QString gridTable(const QString& cls, const QStringList& headers, const std::vector<GridRow>& rows,
                  Flavor flavor, int maxColumns, int keep) {
    const int n = int(headers.size());
    const int per = flavor == Flavor::RichText && maxColumns > keep ? maxColumns - keep : n;
    QString h;
    for (int from = keep; from < n || from == keep; from += per) {
        const int to = std::min(n, from + per);
        auto pick = [&](const QStringList& cells) {
            return cells.mid(0, keep).join(QString()) + cells.mid(from, to - from).join(QString());
        };
        h += QStringLiteral("<table class=\"%1\"><tr>%2</tr>\n").arg(cls, pick(headers));
        for (const auto& r : rows)
            h += (r.cls.isEmpty() ? QStringLiteral("<tr>")
                                  : QStringLiteral("<tr class=\"%1\">").arg(r.cls)) +
                 pick(r.cells) + QStringLiteral("</tr>\n");
        h += QStringLiteral("</table>\n");
        if (to >= n) break;
    }
    return h;
}

QString shapeText(const json& shape) {
    if (!shape.is_array()) return valueText(shape);
    QStringList dims;
    for (const auto& d : shape) dims << valueText(d);
    return QLatin1Char('[') + dims.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QString inputsText(const results::ArmResult& arm) {
    QStringList inputs;
    for (const auto& in : arm.loaded.value("input", json::array()))
        if (in.is_object())
            inputs << QString::fromStdString(in.value("dtype", std::string())) +
                          shapeText(in.value("shape", json::array()));
    return inputs.join(QStringLiteral(", "));
}

QString knobsSection(const RunResult& run, Flavor flavor) {
    const SettingsTable t = collectSettings(run, [](const results::ArmResult& a) { return results::knobsJson(a); });
    int differing = 0;
    QString table = keyValueTable(run, t, flavor, QStringLiteral("diff"), {},
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
    const SettingsTable t = collectSettings(run, [](const results::ArmResult& a) { return protocol::appliedFields(a.applied); });
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

// The arms whose exported program Pitlane compiled (issue 40): one line each, with the package.
QString compiledArmsLines(const RunResult& run) {
    QString rows;
    for (const auto& a : run.arms)
        if (a.compile)
            rows += QStringLiteral("<li>%1: %2, package <code>%3</code></li>\n")
                        .arg(esc(QString::fromStdString(a.name)), esc(QString::fromStdString(results::compileLine(*a.compile))),
                             esc(QString::fromStdString(a.compile->package)));
    return rows.isEmpty() ? QString() : QStringLiteral("<p>Compiled by Pitlane:</p>\n<ul>\n") + rows + QStringLiteral("</ul>\n");
}

// The model file(s) measured, each with its SHA-256.
QString modelFilesLine(const RunResult& run) {
    if (results::armsDifferInModel(run)) {
        QString rows;
        for (const auto& a : run.arms)
            rows += QStringLiteral("<li>%1: <code>%2</code> (%3), SHA-256 <code>%4</code></li>\n")
                        .arg(esc(QString::fromStdString(a.name)), esc(QString::fromStdString(a.model)),
                             esc(QString::fromStdString(a.model_format)), esc(QString::fromStdString(a.model_sha256)));
        return QStringLiteral("<p>Model files, each arm its own:</p>\n<ul>\n") + rows + QStringLiteral("</ul>\n");
    }
    if (run.model_sha256.empty()) return {};
    const std::string format = run.arms.empty() ? std::string() : run.arms.front().model_format;
    return QStringLiteral("<p>Model file <code>%1</code>%3: SHA-256 <code>%2</code>.</p>\n")
        .arg(esc(QString::fromStdString(run.preset.model)), esc(QString::fromStdString(run.model_sha256)),
             format.empty() ? QString() : QStringLiteral(" (%1)").arg(esc(QString::fromStdString(format))));
}

// Which bytes were measured: the model file's SHA-256, checked before any worker started (and
// what Pitlane compiled them into).
QString modelDigestLine(const RunResult& run) {
    return modelFilesLine(run) + compiledArmsLines(run);
}

QString environmentSection(const RunResult& run, Flavor flavor) {
    const SettingsTable t = collectSettings(run, [](const results::ArmResult& a) { return a.environment; });
    if (t.keys.empty())
        return QStringLiteral("<h2>Environment</h2>\n") + modelDigestLine(run) +
               QStringLiteral("<p>No worker reported its environment.</p>\n");
    int drift = 0;
    const QString table = keyValueTable(run, t, flavor, QStringLiteral("drift"),
                                        {"pid", "hostname", "load_average"}, QStringLiteral("&mdash;"), &drift);
    QString h = QStringLiteral(
        "<h2>Environment</h2>\n<p>The manifest each worker reported when it "
        "started. ");
    h += drift ? QStringLiteral(
                     "<b class=\"bad\">%1 field(s) differ between arms although no knob "
                     "sets them (red rows): the arms did not run in the same "
                     "conditions.</b></p>\n")
                     .arg(drift)
               : QStringLiteral("Identical for every arm: no drift.</p>\n");
    if (const QString hosts = hostsText(run); !hosts.isEmpty())
        h += QStringLiteral("<p>Where the arms ran: %1.</p>\n").arg(esc(hosts));
    return h + modelDigestLine(run) + table;
}

// A serving arm's "measured" and "blocks" cells: requests served, and levels (complete of all).
static QStringList servingRawCells(const results::ArmResult& a) {
    std::int64_t served = 0;
    int complete = 0;
    for (const auto& l : a.serving) {
        served += l.record.served();
        complete += l.complete ? 1 : 0;
    }
    QString levels = QString::number(a.serving.size());
    if (complete != int(a.serving.size()))
        levels += QStringLiteral(" (%1 cut short)").arg(int(a.serving.size()) - complete);
    return {QStringLiteral("%1 requests").arg(served), levels};
}

QString rawDataSection(const RunResult& run, Flavor flavor) {
    const bool serving = run.preset.serving.enabled;
    QString h = QStringLiteral(
        "<h2>Raw data</h2>\n<p>What was recorded per arm. Every measured iteration is in the CSV "
        "export (one row per iteration) and the JSON export (<code>latency_ns</code>, "
        "<code>block</code>).</p>\n");
    if (serving)
        h = QStringLiteral(
            "<h2>Raw data</h2>\n<p>What was recorded per arm. Every served request is in the CSV "
            "export (one row per request: its arrival, batch size, queue and formation wait, "
            "inference and end-to-end time) and every level's batches and arrivals in the JSON "
            "export (<code>serving.levels</code>).</p>\n");
    const QStringList headers = {
        QStringLiteral("<th>arm</th>"),     QStringLiteral("<th>status</th>"),
        QStringLiteral("<th>measured</th>"), QStringLiteral("<th>blocks</th>"),
        QStringLiteral("<th>batch</th>"),   QStringLiteral("<th>warmup</th>"),
        QStringLiteral("<th>metric ticks</th>"), QStringLiteral("<th>pid</th>"),
        QStringLiteral("<th>model</th>"),   QStringLiteral("<th>input</th>")};
    QStringList headerCells = headers;
    if (serving) headerCells[3] = QStringLiteral("<th>serving levels</th>");
    std::vector<GridRow> rows;
    for (std::size_t i = 0; i < run.arms.size(); ++i) {
        const auto& a = run.arms[i];
        std::map<int, int> blocks;
        for (const auto& s : a.samples) ++blocks[s.block];
        QStringList sizes;
        for (const auto& [b, n] : blocks) sizes << QString::number(n);
        if (sizes.size() > 8) sizes = sizes.mid(0, 8) << QStringLiteral("&hellip;");
        QString span;
        if (a.metrics.size() > 1)
            span = QStringLiteral(" (%1&ndash;%2&nbsp;s)")
                       .arg(a.metrics.front().t_ms / 1000, 0, 'f', 1)
                       .arg(a.metrics.back().t_ms / 1000, 0, 'f', 1);
        QString model;
        if (a.loaded.contains("parameters"))
            model = QStringLiteral("%1 parameters, %2")
                        .arg(a.loaded.value("parameters", 0LL))
                        .arg(QString::fromStdString(
                            results::formatBytes(a.loaded.value("file_size_bytes", 0.0))));
        const QString input = inputsText(a);
        const auto td = [](const QString& v) { return "<td>" + v + "</td>"; };
        const auto num = [](const QString& v) { return "<td class=\"num\">" + v + "</td>"; };
        rows.push_back(
            {{},
             {td(armLabel(run, i)), td(esc(a.status)), num(QString::number(a.samples.size())),
              td(QStringLiteral("%1 (%2)").arg(blocks.size()).arg(sizes.join(QStringLiteral(", ")))),
              num(QString::number(a.batch_size)), num(QString::number(a.warmup_ns.size())),
              num(QString::number(a.metrics.size()) + span), num(QString::number(a.pid)),
              td(model.isEmpty() ? QStringLiteral("&mdash;") : esc(model)),
              td(input.isEmpty() ? QStringLiteral("&mdash;") : esc(input))}});
        if (serving) {
            const QStringList cells = servingRawCells(a);
            rows.back().cells[2] = num(cells[0]);
            rows.back().cells[3] = td(cells[1]);
        }
    }
    return h + gridTable(QStringLiteral("grid"), headerCells, rows, flavor, 8);
}

namespace {

// The arms' read-back of one applied field: "openblas", or "A openblas, B mkl" when they differ.
QString appliedText(const RunResult& run, const char* key) {
    QStringList perArm;
    QSet<QString> values;
    for (const auto& a : run.arms)
        if (const json fields = protocol::appliedFields(a.applied); fields.contains(key)) {
            const QString v = valueText(fields[key]);
            perArm << QString::fromStdString(a.name) + QLatin1Char(' ') + v;
            values.insert(v);
        }
    if (values.size() == 1) return *values.begin();
    return perArm.join(QStringLiteral(", "));
}

}  // namespace

QString hostsText(const RunResult& run) {
    bool remote = false;
    QStringList parts;
    for (const auto& a : run.arms) {
        remote |= !a.host.empty();
        parts << QString::fromStdString(a.name) +
                     (a.host.empty() ? QStringLiteral(" on this machine")
                                     : QStringLiteral(" on %1 (over ssh)").arg(QString::fromStdString(a.host)));
    }
    return remote ? parts.join(QStringLiteral("; ")) : QString();
}

QString machineText(const RunResult& run) {
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
    for (const char* key : {"blas", "allocator"}) {
        const QString v = appliedText(run, key);
        if (!v.isEmpty())
            parts << (key[0] == 'b' ? QStringLiteral("BLAS ") : QStringLiteral("allocator ")) + v;
    }
    if (e.contains("governor")) parts << QStringLiteral("governor ") + valueText(e["governor"]);
    return parts.join(QStringLiteral(", "));
}

QString machineLine(const RunResult& run) {
    return esc(machineText(run));
}

std::vector<std::pair<std::string, std::string>> headerModels(const RunResult& run) {
    if (!results::armsDifferInModel(run)) {
        if (run.preset.model.empty()) return {};
        return {{std::string(), run.preset.model}};
    }
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& a : run.arms) {
        std::string shown = spec::modelLabel(a.model);
        for (const auto& b : run.arms)  // v1/model.pt and v2/model.pt: their paths
            if (b.model != a.model && spec::modelLabel(b.model) == shown) shown = a.model;
        out.emplace_back(a.name, shown);
    }
    return out;
}

}  // namespace pitlane::report::detail
