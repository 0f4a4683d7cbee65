// pitlane-cli history [list|show|label|baseline|delete]: the run history from the command line,
// through the same RunStore calls as the window's Run history panel (listRuns, loadRun,
// renameRun, setBaseline, deleteRun).
#include "cli_history.h"

#include "pitlane/report/report.h"
#include "pitlane/store/model_names.h"

#include <QDateTime>
#include <QFileInfo>

#include <algorithm>
#include <iostream>
#include <optional>

namespace pitlane::cli {

namespace hist {

int failWith(int code, const std::string& what, const std::string& hint) {
    std::string line = what;  // SQLite's findings come in lines of their own
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::cerr << "pitlane-cli: " << line << "\npitlane-cli: hint: " << hint << "\n";
    return code;
}

bool parseArgs(const QStringList& args, int from, const QStringList& allowed, Args& a,
               std::string& err) {
    for (int i = from; i < args.size(); ++i) {
        const QString s = args[i];
        auto value = [&](QString& dst) {
            if (i + 1 >= args.size()) return err = s.toStdString() + " needs a value", false;
            dst = args[++i];
            return true;
        };
        if (s == "--help" || s == "-h") a.help = true;
        else if (!s.startsWith("--") || s == "--") a.positional << s;
        else if (!allowed.contains(s)) return err = "unknown option " + s.toStdString(), false;
        else if (s == "--json") a.json = true;
        else if (s == "--off") a.off = true;
        else if (s == "--db") {
            if (!value(a.db)) return false;
        } else if (s == "--preset") {
            if (!value(a.preset)) return false;
        } else if (s == "--limit") {
            QString n;
            bool ok = false;
            if (!value(n)) return false;
            a.limit = n.toInt(&ok);
            if (!ok || a.limit < 1) return err = "--limit takes a whole number >= 1, not " + n.toStdString(), false;
        }
    }
    return true;
}

History openExisting(const QString& dbChoice) {
    History h;
    h.path = store::RunStore::resolvePath(dbChoice);
    if (h.path.isEmpty()) {
        h.exitCode = failWith(kExitUsage, "--db none: there is no run history to read",
                              "name a history file with --db PATH");
        return h;
    }
    if (!QFileInfo::exists(h.path)) {
        h.exitCode = failWith(kExitUsage, "no run history at " + h.path.toStdString(),
                              "`pitlane-cli run` stores its runs there; --db PATH names another file");
        return h;
    }
    auto db = std::make_unique<store::RunStore>();
    if (!db->open(h.path)) {
        h.exitCode = failWith(kExitNotStored,
                              "run history cannot be opened: " + db->lastError().toStdString(),
                              "`pitlane-cli check-history --db " + h.path.toStdString() +
                                  "` lists what is damaged");
        return h;
    }
    h.store = std::move(db);
    return h;
}

std::optional<qint64> parseRunId(const QString& text, int* exitCode) {
    bool ok = false;
    const qint64 id = text.toLongLong(&ok);
    if (ok && id > 0) return id;
    *exitCode = failWith(kExitUsage, "not a run id: \"" + text.toStdString() + "\"",
                         "run ids are the numbers `pitlane-cli history` lists");
    return std::nullopt;
}

bool checkRun(const History& h, qint64 id, int* exitCode) {
    if (h.store->runInfo(id)) return true;
    *exitCode = failWith(kExitUsage,
                         "run " + std::to_string(id) + ": no such run in " + h.path.toStdString(),
                         "`pitlane-cli history --db " + h.path.toStdString() +
                             "` lists the stored runs");
    return false;
}

int sampleCheckOutcome(qint64 runId, const store::SampleCheck& check) {
    if (const QString note = check.uncheckedNote(runId); !note.isEmpty())
        std::cerr << "pitlane-cli: note: " << note.toStdString() << "\n";
    if (!check.isDamaged()) return kExitOk;
    for (const QString& d : check.damaged)
        std::cerr << "pitlane-cli: damaged: " << d.toStdString() << "\n";
    std::cerr << "pitlane-cli: " << check.damagedArms.join(QStringLiteral(", ")).toStdString()
              << (check.damagedArms.size() == 1 ? " is" : " are")
              << " damaged in the history: shown as failed (code damaged) without "
                 "figures; the others are as stored (exit status 3)\n";
    return kExitNotStored;
}

int storeFailure(const History& h) {
    return failWith(kExitNotStored,
                    "run history " + h.path.toStdString() + ": " + h.store->lastError().toStdString(),
                    "`pitlane-cli check-history --db " + h.path.toStdString() +
                        "` says whether the file is damaged");
}

}  // namespace hist

namespace {

using namespace hist;
using nlohmann::json;

const char* const kHistoryUsage =
    "usage:\n"
    "  pitlane-cli history [list] [--limit N] [--preset NAME] [--json] [--db PATH]\n"
    "      the stored runs, newest first: id, date, preset, model (file names; \"2 models\"\n"
    "      when the arms' own do not fit), arms, label, baseline mark (*), verdict; --json: an\n"
    "      array on stdout\n"
    "  pitlane-cli history show RUN_ID [--json] [--db PATH]\n"
    "      the run's table as `run` printed it and its model files' paths; --json: its results\n"
    "      JSON (as `run --json`)\n"
    "  pitlane-cli history label RUN_ID TEXT [--db PATH]      name the run (\"\" clears it)\n"
    "  pitlane-cli history baseline RUN_ID [--off] [--db PATH]\n"
    "      mark the run as the baseline of its model (the mark leaves the model's other runs)\n"
    "  pitlane-cli history delete RUN_ID [--db PATH]          remove the run and its samples\n"
    "exit codes: 0 done, 2 bad arguments or no such run, 3 the history cannot be opened or read,\n"
    "or the run's stored samples fail their check (damaged: its damaged arms are shown as failed,\n"
    "code damaged, without figures)\n";

std::string localDate(const QString& iso) {
    const QDateTime t = QDateTime::fromString(iso, Qt::ISODate);
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")).toStdString()
                       : iso.toStdString();
}

// "A, B (failed)": the window's Arms column.
std::string armsText(const store::RunInfo& r) {
    QStringList parts;
    for (int i = 0; i < r.arms.size(); ++i) {
        const QString status = i < r.armStatuses.size() ? r.armStatuses[i] : QString();
        parts << (status.isEmpty() || status == QLatin1String(results::kOk)
                      ? r.arms[i]
                      : QStringLiteral("%1 (%2)").arg(r.arms[i], status));
    }
    return parts.join(QStringLiteral(", ")).toStdString();
}

// `history list` fits a terminal of this many columns (issue 44: its lines ran to ~300).
constexpr std::size_t kListWidth = 120;

// Characters as a terminal shows them: UTF-8 code points ("…", "×" are one each).
std::size_t textWidth(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
    return n;
}

// `s` in at most `width` characters: cut at a code point, ending in "…" when cut.
std::string clipText(const std::string& s, std::size_t width) {
    if (textWidth(s) <= width) return s;
    if (width == 0) return {};
    std::string out;
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool start = (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
        if (start && ++n > width - 1) break;
        out += s[i];
    }
    return out + "\u2026";
}

std::string verdictText(const store::RunInfo& r) {
    return r.complete() ? r.verdict.toStdString() : std::string("(interrupted, not finished)");
}

json infoJson(const store::RunInfo& r) {
    json arms = json::array();
    for (int i = 0; i < r.arms.size(); ++i)
        arms.push_back({{"name", r.arms[i].toStdString()},
                        {"status", i < r.armStatuses.size() ? r.armStatuses[i].toStdString() : ""}});
    json models = json::array();
    for (const auto& m : r.armModels) models.push_back(m.toStdString());
    return {{"id", r.id},
            {"started_at", r.startedAt.toStdString()},
            {"finished_at", r.finishedAt.isEmpty() ? json() : json(r.finishedAt.toStdString())},
            {"wall_s", r.wallS},
            {"preset", r.name.toStdString()},
            {"model", r.model.toStdString()},
            {"arm_models", models},
            {"arms", arms},
            {"label", r.label.toStdString()},
            {"baseline", r.baseline},
            {"verdict", r.verdict.toStdString()},
            {"complete", r.complete()},
            {"source", r.source.toStdString()},
            {"lesson_status", r.lessonStatus().toStdString()}};
}

int historyList(const Args& a) {
    if (a.positional.size() > 1)
        return failWith(kExitUsage, "history list takes no argument (got \"" +
                                        a.positional[1].toStdString() + "\")",
                        "filter with --preset NAME, shorten with --limit N");
    const History h = openExisting(a.db);
    if (!h.store) return h.exitCode;
    const auto all = h.store->listRuns();
    if (all.isEmpty() && !h.store->lastError().isEmpty()) return storeFailure(h);
    QList<store::RunInfo> runs;
    for (const auto& r : all)
        if ((a.preset.isEmpty() || r.name == a.preset) && (a.limit == 0 || runs.size() < a.limit))
            runs << r;
    if (a.json) {
        json out = json::array();
        for (const auto& r : runs) out.push_back(infoJson(r));
        std::cout << out.dump(2) << "\n";
        return kExitOk;
    }
    if (runs.isEmpty()) {
        std::cout << "no stored runs" << (a.preset.isEmpty() ? "" : " of preset \"" + a.preset.toStdString() + "\"")
                  << " in " << h.path.toStdString() << "\n";
        return kExitOk;
    }
    // Aligned columns within kListWidth characters: each column's width is capped and a longer
    // cell ends in "…"; the verdict takes what is left (`history show ID` and --json give all).
    // Caps for preset, model, arms, label; id, date and base are short.
    const std::vector<std::size_t> cap = {8, 16, 24, 20, 18, 14, 4, 0};
    std::vector<std::vector<std::string>> rows = {
        {"id", "date", "preset", "model", "arms", "label", "base", "verdict"}};
    for (const auto& r : runs) {
        // Models by the window's rule: file names ("2 models" where the arms' do not fit).
        rows.push_back({"#" + std::to_string(r.id), localDate(r.startedAt), r.name.toStdString(),
                        store::listedModels(r, int(cap[3])).toStdString(), armsText(r),
                        r.label.toStdString(), r.baseline ? "*" : "", verdictText(r)});
    }
    std::vector<std::size_t> width(rows.front().size(), 0);
    for (const auto& row : rows)
        for (std::size_t c = 0; c + 1 < row.size(); ++c) width[c] = std::max(width[c], std::min(cap[c], textWidth(row[c])));
    std::size_t used = 0;
    for (std::size_t c = 0; c + 1 < width.size(); ++c) used += width[c] + 2;
    width.back() = kListWidth > used + 20 ? kListWidth - used : 20;
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            const std::string cell = clipText(row[c], width[c]);
            line += cell;
            if (c + 1 < row.size()) line += std::string(width[c] - textWidth(cell) + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::cout << line << "\n";
    }
    return kExitOk;
}

// The model files in full, which `history list` names by file name: one line, or one per arm
// when the arms measured models of their own.
std::string modelFilesText(const results::RunResult& run) {
    const auto line = [](const results::ArmResult& a) {
        return a.model + (a.model_sha256.empty() ? std::string() : ", sha256 " + a.model_sha256) + "\n";
    };
    if (run.arms.empty() || run.arms.front().model.empty())
        return run.preset.model.empty() ? std::string() : "model: " + run.preset.model + "\n";
    if (!results::armsDifferInModel(run)) return "model file: " + line(run.arms.front());
    std::string s = "model files:\n";
    for (const auto& a : run.arms) s += "  " + a.name + ": " + (a.model.empty() ? std::string("-\n") : line(a));
    return s;
}

int historyShow(const Args& a) {
    if (a.positional.size() != 2)
        return failWith(kExitUsage, "history show takes one run id", "pitlane-cli history show 12");
    int code = kExitOk;
    const auto id = parseRunId(a.positional[1], &code);
    if (!id) return code;
    const History h = openExisting(a.db);
    if (!h.store) return h.exitCode;
    if (!checkRun(h, *id, &code)) return code;
    store::SampleCheck check;
    const auto run = h.store->loadRun(*id, &check);
    if (!run) return storeFailure(h);
    if (a.json) {
        report::ReportOptions o;
        o.runId = QString::number(*id);
        std::cout << report::resultsJson(*run, o).toStdString() << std::flush;
    } else {
        std::cout << results::comparisonTable(*run) << "\n" << modelFilesText(*run) << "run id: " << *id << " (history "
                  << h.path.toStdString() << ")\n";
    }
    std::cout.flush();
    return sampleCheckOutcome(*id, check);
}

// label / baseline / delete: the marks of the window's history panel, by the same store calls.
int historyMark(const QString& sub, const Args& a) {
    const bool label = sub == "label";
    const int want = label ? 3 : 2;
    if (a.positional.size() != want)
        return failWith(kExitUsage,
                        "history " + sub.toStdString() + " takes " +
                            (label ? "a run id and a text" : "one run id"),
                        label ? "pitlane-cli history label 12 \"before the fix\""
                              : "pitlane-cli history " + sub.toStdString() + " 12");
    if (a.off && sub != "baseline")
        return failWith(kExitUsage, "--off applies to `history baseline` only",
                        "pitlane-cli history baseline 12 --off");
    int code = kExitOk;
    const auto id = parseRunId(a.positional[1], &code);
    if (!id) return code;
    const History h = openExisting(a.db);
    if (!h.store) return h.exitCode;
    if (!checkRun(h, *id, &code)) return code;
    const std::string run = "run " + std::to_string(*id);
    if (label) {
        const QString text = a.positional[2].trimmed();  // as the panel stores it
        if (!h.store->renameRun(*id, text)) return storeFailure(h);
        std::cout << run << (text.isEmpty() ? ": label cleared" : ": labelled \"" + text.toStdString() + "\"")
                  << "\n";
    } else if (sub == "baseline") {
        if (!h.store->setBaseline(*id, !a.off)) return storeFailure(h);
        const auto info = h.store->runInfo(*id);
        const std::string model = info ? info->model.toStdString() : std::string();
        std::cout << run << (a.off ? ": no longer the baseline of " : " is the baseline of ") << model
                  << (a.off ? "" : " (the mark left the model's other runs)") << "\n";
    } else {
        if (!h.store->deleteRun(*id)) return storeFailure(h);
        std::cout << run << " deleted from " << h.path.toStdString() << "\n";
    }
    return kExitOk;
}

}  // namespace

int cmdHistory(const QStringList& args) {
    Args a;
    std::string err;
    if (!parseArgs(args, 2, {"--db", "--json", "--limit", "--preset", "--off"}, a, err))
        return failWith(kExitUsage, "history: " + err, "pitlane-cli history --help");
    if (a.help) {
        std::cout << kHistoryUsage;
        return kExitOk;
    }
    const QString sub = a.positional.isEmpty() ? QStringLiteral("list") : a.positional.front();
    if (a.positional.isEmpty()) a.positional << sub;
    const bool listing = sub == "list";
    if (!listing && (a.limit || !a.preset.isEmpty()))
        return failWith(kExitUsage, "--limit and --preset apply to `history list` only",
                        "pitlane-cli history --preset NAME --limit 5");
    if (listing) return historyList(a);
    if (sub == "show") return historyShow(a);
    if (sub == "label" || sub == "baseline" || sub == "delete") {
        if (a.json)
            return failWith(kExitUsage, "--json applies to `history list`, `history show` and `compare`",
                            "pitlane-cli history " + sub.toStdString() + " RUN_ID");
        return historyMark(sub, a);
    }
    return failWith(kExitUsage, "history: unknown subcommand \"" + sub.toStdString() + "\"",
                    "list, show, label, baseline or delete (pitlane-cli history --help)");
}

}  // namespace pitlane::cli
