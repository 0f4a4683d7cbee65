// The Markdown summary's sections (markdown_sections.h).
#include "markdown_sections.h"

#include "pitlane/results/environment.h"

#include "html_builder.h"
#include "lesson_sections.h"

#include <cstdio>

namespace pitlane::report::detail {

using nlohmann::json;
using results::RunResult;

std::string formatNumber(double v, const char* format) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string perIterMarkdown(double perIter, const char* missing) {
    if (perIter < 0) return missing;
    return formatNumber(perIter, perIter < 10 ? "%.2f" : perIter < 100 ? "%.1f" : "%.0f");
}

namespace {

std::string md(const std::string& s) {
    return markdownCell(s);
}

// "| a | b |" from cells.
std::string row(const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + c + " |";
    return s + "\n";
}

// The header row and its separator; `align` has one letter per column: l(eft) or r(ight).
std::string header(const std::vector<std::string>& names, const std::string& align) {
    std::string s = row(names) + "|";
    for (std::size_t i = 0; i < names.size(); ++i)
        s += i < align.size() && align[i] == 'r' ? "--:|" : "---|";
    return s + "\n";
}

// A setting's value in a table cell: long or multi-line values (build configuration, thread
// pool dumps) show their start; the JSON export has them whole.
std::string settingText(const json& v) {
    const std::string text = valueText(v).trimmed().toStdString();
    const auto newline = text.find('\n');
    if (newline == std::string::npos && text.size() <= 100) return "`" + markdownCode(text) + "`";
    const std::string head = text.substr(0, std::min<std::size_t>({newline, 60, text.size()}));
    return "`" + markdownCode(head) + "` … _(full value in the JSON)_";
}

// One row per key, one column per arm; "≠" marks the keys whose values differ.
std::string settingsTable(const RunResult& run, const SettingsTable& t, const char* first,
                          const char* missing, int* differing) {
    std::vector<std::string> names = {first};
    for (const auto& a : run.arms) names.push_back(md(a.name));
    std::string s = header(names, "");
    *differing = 0;
    for (const auto& k : t.keys) {
        std::vector<std::string> cells = {""};
        bool differs = false;
        const json* v0 = nullptr;
        for (std::size_t i = 0; i < t.perArm.size(); ++i) {
            const auto it = t.perArm[i].find(k);
            const json* v = it == t.perArm[i].end() ? nullptr : &it->second;
            if (i == 0) v0 = v;
            differs |= (v == nullptr) != (v0 == nullptr) || (v && *v != *v0);
            cells.push_back(v ? settingText(*v) : std::string(missing));
        }
        *differing += differs;
        cells[0] = (differs ? "≠ `" : "`") + markdownCode(k) + "`";
        s += row(cells);
    }
    return s;
}

}  // namespace

std::string countersMarkdown(const RunResult& run) {
    std::string s = "\n" + header({"arm", "minor faults/iter", "major faults/iter",
                                   "voluntary switches/iter", "involuntary switches/iter"},
                                  "lrrrr");
    const char* no = "not measured";
    for (const auto& a : run.arms)
        s += row({md(a.name), perIterMarkdown(results::minorFaultsPerIter(a), no),
                  perIterMarkdown(results::majorFaultsPerIter(a), no),
                  perIterMarkdown(results::contextSwitchesPerIter(a, true), no),
                  perIterMarkdown(results::contextSwitchesPerIter(a, false), no)});
    return s +
           "\n_page faults: over the timed loops of every measured block; context switches: each "
           "worker process's counters (every thread) from its first to its last metric tick, "
           "waits between blocks included; both per measured iteration_\n";
}

std::string sweepMarkdown(const RunResult& run) {
    bool any = false;
    for (const auto& a : run.arms) any |= a.batch_sizes.size() > 1;
    if (!any) return {};
    std::string s = "\n" + header({"arm", "batch size", "status", "n", "median", "p99", "p99.9",
                                   "items/s"},
                                  "lrlrrrrr");
    for (const auto& a : run.arms)
        for (int bs : a.batch_sizes) {
            const auto lat = a.latencies(bs);
            const auto st = stats::summarize(lat, bs);
            auto d = [&](double v) { return st.n ? results::formatDuration(v) : std::string("-"); };
            s += row({md(a.name), std::to_string(bs), md(sweepPointStatus(a, bs, !lat.empty())),
                      std::to_string(st.n), d(st.median), d(st.p99), d(st.p999),
                      st.n ? formatNumber(st.throughput_per_s, "%.1f") : "-"});
        }
    return s + "\n_one row per arm and batch size; items/s = batch size x iterations / "
               "measured time_\n";
}

std::string settingsMarkdown(const RunResult& run) {
    if (run.arms.empty()) return {};
    int differing = 0;
    std::string s = "\n## Knobs\n\n";
    s += settingsTable(run, collectSettings(run, [](const results::ArmResult& a) { return results::knobsJson(a); }),
                       "knob", "_default_", &differing);
    const SettingsTable applied =
        collectSettings(run, [](const results::ArmResult& a) { return protocol::appliedFields(a.applied); });
    if (applied.keys.empty())
        return s + "\n_No arm reported its applied settings (it failed before configuring)._\n";
    const std::string table = settingsTable(run, applied, "setting", "-", &differing);
    return s + "\n<details><summary>Applied settings: what each worker read back after "
               "configuring (" +
           std::to_string(differing) + " differ between arms, ≠)</summary>\n\n" + table +
           "\n</details>\n";
}

std::string environmentMarkdown(const RunResult& run) {
    std::string s = "\n**Environment:** " + md(machineText(run).toStdString()) + "\n";
    if (const QString hosts = hostsText(run); !hosts.isEmpty())
        s += "\n**Where the arms ran:** " + md(hosts.toStdString()) + "\n";
    if (results::armsDifferInModel(run)) {
        s += "\n**Model files (each arm its own):**\n\n";
        for (const auto& a : run.arms)
            s += "- " + md(a.name) + ": " + md(a.model) + " (" + md(a.model_format) + "), SHA-256 `" + a.model_sha256 + "`\n";
    } else if (!run.model_sha256.empty()) {
        const std::string format = run.arms.empty() ? std::string() : run.arms.front().model_format;
        s += "\n**Model file:** " + md(run.preset.model) + (format.empty() ? "" : " (" + md(format) + ")") +
             ", SHA-256 `" + run.model_sha256 + "`\n";
    }
    for (const auto& a : run.arms)
        if (a.compile)
            s += "\n**" + md(a.name) + ":** " + md(results::compileLine(*a.compile)) + ", package `" +
                 a.compile->package + "`\n";
    const SettingsTable env =
        collectSettings(run, [](const results::ArmResult& a) { return a.environment; });
    std::vector<std::string> drift;
    for (const auto& k : env.keys) {
        if (results::momentField(k)) continue;
        const auto first = env.perArm.front().find(k);
        for (const auto& m : env.perArm) {
            const auto it = m.find(k);
            if ((it == m.end()) != (first == env.perArm.front().end()) ||
                (it != m.end() && it->second != first->second)) {
                drift.push_back("`" + markdownCode(k) + "`");
                break;
            }
        }
    }
    if (drift.empty()) return s;
    std::string list;
    for (const auto& d : drift) list += (list.empty() ? "" : ", ") + d;
    return s + "\n_The arms' environments differ in " + list + " (see the HTML report)._\n";
}

}  // namespace pitlane::report::detail
