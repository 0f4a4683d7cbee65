// pitlane-cli history [list|show|label|baseline|delete] and compare on a real history file: two
// real runs of the bundled mlp (few iterations, two processes per arm) recorded once for the
// whole suite, then every command, its --json parsed back, and its errors: a missing run id, a
// missing arm, no history, a damaged history (exit 3 as `run` gives for one).
#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include "cli_run.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

using nlohmann::json;

namespace {

constexpr int kIters = 40;

using pitlane::testing::cli;

json parse(const QString& text) {
    try {
        return json::parse(text.toStdString());
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not JSON (" << e.what() << "): " << text.toStdString();
        return json();
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

class CliHistoryCommands : public ::testing::Test {
protected:
    // Two runs into one history: run 1 of preset "hist one", run 2 of preset "hist two" (both the
    // mlp, arms A and B), each with its results JSON as `run --json` wrote it.
    static void SetUpTestSuite() {
        dir_ = std::make_unique<QTemporaryDir>();
        db_ = dir_->filePath(QStringLiteral("h.sqlite"));
        for (int i = 0; i < 2; ++i) {
            const QString name = i == 0 ? QStringLiteral("hist one") : QStringLiteral("hist two");
            const QString preset = dir_->filePath(QStringLiteral("p%1.json").arg(i));
            QFile f(preset);
            ASSERT_TRUE(f.open(QIODevice::WriteOnly));
            f.write(QStringLiteral(R"({"name": "%1", "model": "mlp",
                "run": {"warmup_iters": 3, "iters": %2, "block_iters": 20, "processes": 2},
                "arms": [{"name": "A", "knobs": {"grad": "enabled", "intra_op_threads": 1}},
                         {"name": "B", "knobs": {"grad": "no_grad", "intra_op_threads": 1}}]})")
                        .arg(name)
                        .arg(kIters)
                        .toUtf8());
            f.close();
            const QString out = dir_->filePath(QStringLiteral("r%1.json").arg(i));
            const auto r = cli({"run", preset, "--db", db_, "--json", out, "--quiet"});
            ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
            const auto m = QRegularExpression(QStringLiteral("run id: (\\d+)")).match(r.out);
            ASSERT_TRUE(m.hasMatch()) << r.out.toStdString();
            ids_[i] = m.captured(1).toLongLong();
            QFile results(out);
            ASSERT_TRUE(results.open(QIODevice::ReadOnly));
            written_[i] = json::parse(results.readAll().toStdString());
        }
    }
    static void TearDownTestSuite() { dir_.reset(); }
    void SetUp() override {
        // A failed setup is a failure, never a skip: nothing would have been checked.
        if (ids_[1] == 0) FAIL() << "the runs the suite needs were not recorded";
    }
    // A copy of the history for a test that changes it.
    static QString copyOfHistory(const QString& name) {
        const QString path = dir_->filePath(name);
        QFile::remove(path);
        EXPECT_TRUE(QFile::copy(db_, path));
        return path;
    }
    static QString id(int i) { return QString::number(ids_[i]); }

    static std::unique_ptr<QTemporaryDir> dir_;
    static QString db_;
    static qint64 ids_[2];
    static json written_[2];
};
std::unique_ptr<QTemporaryDir> CliHistoryCommands::dir_;
QString CliHistoryCommands::db_;
qint64 CliHistoryCommands::ids_[2] = {0, 0};
json CliHistoryCommands::written_[2];

// An error is one line naming what is wrong and one hint, not the whole usage.
void expectOneLineAndAHint(const pitlane::testing::CliRun& r, const char* what) {
    EXPECT_TRUE(r.err.contains(QLatin1String(what))) << r.err.toStdString();
    EXPECT_EQ(r.err.count(QLatin1Char('\n')), 2) << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(QStringLiteral("hint: "))) << r.err.toStdString();
    EXPECT_FALSE(r.err.contains(QStringLiteral("usage:"))) << r.err.toStdString();
}

}  // namespace

TEST_F(CliHistoryCommands, ListShowsTheRunsNewestFirstAndFilters) {
    auto r = cli({"history", "--db", db_});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    ASSERT_EQ(lines.size(), 3) << r.out.toStdString();  // a header and one line per run
    EXPECT_TRUE(lines[0].startsWith(QStringLiteral("id"))) << r.out.toStdString();
    EXPECT_TRUE(lines[1].startsWith("#" + id(1))) << r.out.toStdString();
    EXPECT_TRUE(lines[2].startsWith("#" + id(0))) << r.out.toStdString();
    for (const char* part : {"hist two", "mlp", "A, B"})
        EXPECT_TRUE(lines[1].contains(QLatin1String(part))) << part << " in " << r.out.toStdString();

    // Every line fits 120 columns (issue 44: ~300 before), a long label or verdict cut with "…";
    // --json and `history show` keep them whole.
    {
        const QString db = copyOfHistory(QStringLiteral("long_label.sqlite"));
        const QString label = QStringLiteral("a label as long as a sentence: the nightly regression run of the "
                                             "transformer × batch 32 on the shared machine");
        ASSERT_EQ(cli({"history", "label", id(1), label, "--db", db}).exitCode, 0);
        const auto listed = cli({"history", "--db", db});
        ASSERT_EQ(listed.exitCode, 0) << listed.err.toStdString();
        for (const QString& line : listed.out.split('\n', Qt::SkipEmptyParts))
            EXPECT_LE(line.toStdU32String().size(), 120u) << line.toStdString();
        EXPECT_TRUE(listed.out.contains(QStringLiteral("a label as lo\u2026"))) << listed.out.toStdString();
        EXPECT_FALSE(listed.out.contains(label)) << listed.out.toStdString();
        EXPECT_EQ(parse(cli({"history", "--json", "--db", db}).out)[0]["label"], label.toStdString());
    }

    r = cli({"history", "list", "--json", "--db", db_});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    const json all = parse(r.out);
    ASSERT_TRUE(all.is_array());
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0]["id"], ids_[1]);
    EXPECT_EQ(all[1]["id"], ids_[0]);
    EXPECT_EQ(all[0]["preset"], "hist two");
    EXPECT_EQ(all[0]["model"], "mlp");
    EXPECT_EQ(all[0]["arms"].size(), 2u);
    EXPECT_EQ(all[0]["arms"][1]["name"], "B");
    EXPECT_EQ(all[0]["arms"][1]["status"], "ok");
    EXPECT_EQ(all[0]["baseline"], false);
    EXPECT_EQ(all[0]["complete"], true);
    EXPECT_FALSE(all[0]["verdict"].get<std::string>().empty());
    EXPECT_FALSE(all[0]["started_at"].get<std::string>().empty());

    r = cli({"history", "--limit", "1", "--json", "--db", db_});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    const json one = parse(r.out);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0]["id"], ids_[1]);
    r = cli({"history", "--preset", "hist one", "--json", "--db", db_});
    const json filtered = parse(r.out);
    ASSERT_EQ(filtered.size(), 1u);
    EXPECT_EQ(filtered[0]["id"], ids_[0]);
    r = cli({"history", "--preset", "nothing like it", "--json", "--db", db_});
    EXPECT_EQ(parse(r.out), json::array());
}

// One rule for the model column (issue 44: full paths for bare-model runs, file names for
// two-model presets, "mlp" for a preset naming the bundled model): the file name; arms with
// models of their own "a.pt, b.pt", "2 models" where those do not fit. `history show` gives the
// paths. Three more real runs, into a copy of the history.
TEST_F(CliHistoryCommands, ListNamesModelsByFileNameAndShowGivesTheirPaths) {
    const QString db = copyOfHistory(QStringLiteral("models.sqlite"));
    const QString mlp = QDir(qEnvironmentVariable("PITLANE_MODEL_DIR")).absoluteFilePath(QStringLiteral("mlp.pt"));
    ASSERT_TRUE(QFile::exists(mlp)) << mlp.toStdString();
    auto runOk = [&](const QString& what) {
        const auto r = cli({"run", what, "--iters", "20", "--db", db, "--quiet"});
        EXPECT_EQ(r.exitCode, 0) << r.err.toStdString();
        const auto m = QRegularExpression(QStringLiteral("run id: (\\d+)")).match(r.out);
        EXPECT_TRUE(m.hasMatch()) << r.out.toStdString();
        return m.captured(1);
    };
    // A bare model named by its full path.
    const QString bare = runOk(mlp);
    // Two presets whose arms carry their own copies of the mlp (a copy's .json says its input).
    auto twoModels = [&](const QString& name, const QString& a, const QString& b) {
        for (const QString& f : {a, b}) {
            const QString path = dir_->filePath(f);
            QFile::remove(path);
            EXPECT_TRUE(QFile::copy(mlp, path));
            const QString sidecar = QString(path).replace(QStringLiteral(".pt"), QStringLiteral(".json"));
            QFile::remove(sidecar);
            EXPECT_TRUE(QFile::copy(QString(mlp).replace(QStringLiteral(".pt"), QStringLiteral(".json")), sidecar));
        }
        const QString preset = dir_->filePath(name + QStringLiteral(".json"));
        QFile f(preset);
        EXPECT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral(R"({"name": "%1", "model": "mlp", "run": {"warmup_iters": 3, "processes": 1},
            "arms": [{"name": "A", "model": "%2", "knobs": {"intra_op_threads": 1}},
                     {"name": "B", "model": "%3", "knobs": {"intra_op_threads": 1}}]})")
                    .arg(name, dir_->filePath(a), dir_->filePath(b))
                    .toUtf8());
        f.close();
        return runOk(preset);
    };
    const QString shortNames = twoModels(QStringLiteral("short"), QStringLiteral("a.pt"), QStringLiteral("b.pt"));
    const QString longNames = twoModels(QStringLiteral("long"), QStringLiteral("the_first_model.pt"),
                                        QStringLiteral("the_second_model.pt"));
    ASSERT_FALSE(longNames.isEmpty());

    const auto listed = cli({"history", "--db", db});
    ASSERT_EQ(listed.exitCode, 0) << listed.err.toStdString();
    // The model column: the header's "model" to its "arms".
    const QStringList lines = listed.out.split('\n', Qt::SkipEmptyParts);
    ASSERT_EQ(lines.size(), 6) << listed.out.toStdString();
    const int from = int(lines[0].indexOf(QStringLiteral("model"))), to = int(lines[0].indexOf(QStringLiteral("arms")));
    ASSERT_GT(from, 0);
    std::map<QString, QString> model;  // run id -> its model cell
    for (const QString& line : lines.mid(1))
        model[line.section(QLatin1Char(' '), 0, 0).mid(1)] = line.mid(from, to - from).trimmed();
    EXPECT_EQ(model[bare], QStringLiteral("mlp.pt"));
    EXPECT_EQ(model[shortNames], QStringLiteral("a.pt, b.pt"));
    EXPECT_EQ(model[longNames], QStringLiteral("2 models"));
    EXPECT_EQ(model[id(0)], QStringLiteral("mlp.pt"));  // the preset said "mlp"
    EXPECT_FALSE(listed.out.contains(mlp)) << listed.out.toStdString();

    // `history show`: the paths in full.
    auto show = cli({"history", "show", bare, "--db", db});
    ASSERT_EQ(show.exitCode, 0) << show.err.toStdString();
    EXPECT_TRUE(show.out.contains("model file: " + mlp + ", sha256 ")) << show.out.toStdString();
    show = cli({"history", "show", longNames, "--db", db});
    ASSERT_EQ(show.exitCode, 0) << show.err.toStdString();
    EXPECT_TRUE(show.out.contains("model files:\n  A: " + dir_->filePath(QStringLiteral("the_first_model.pt")) + ", sha256 "))
        << show.out.toStdString();
    EXPECT_TRUE(show.out.contains("  B: " + dir_->filePath(QStringLiteral("the_second_model.pt")) + ", sha256 "))
        << show.out.toStdString();
}

// `history show` prints the table `run` printed, and --json gives back the results JSON `run
// --json` wrote: the same arms and every latency.
TEST_F(CliHistoryCommands, ShowPrintsTheRunsTableAndItsResultsJson) {
    auto r = cli({"history", "show", id(0), "--db", db_});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    for (const char* part : {"median", "comparison", "B vs A", "95% CI"})
        EXPECT_TRUE(r.out.contains(QLatin1String(part))) << part << " in " << r.out.toStdString();
    EXPECT_TRUE(r.out.contains("run id: " + id(0))) << r.out.toStdString();

    r = cli({"history", "show", id(0), "--json", "--db", db_});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    const json j = parse(r.out);
    EXPECT_EQ(j["history_id"], id(0).toStdString());
    EXPECT_EQ(j["schema"], written_[0]["schema"]);
    ASSERT_EQ(j["arms"].size(), 2u);
    for (std::size_t a = 0; a < 2; ++a) {
        EXPECT_EQ(j["arms"][a]["name"], written_[0]["arms"][a]["name"]);
        EXPECT_EQ(j["arms"][a]["status"], "ok");
        EXPECT_EQ(j["arms"][a]["latency_ns"].size(), std::size_t(kIters));
        EXPECT_EQ(j["arms"][a]["latency_ns"], written_[0]["arms"][a]["latency_ns"]);
        EXPECT_EQ(j["arms"][a]["processes"].size(), 2u);
    }
    ASSERT_EQ(j["comparisons"].size(), 1u);
    EXPECT_DOUBLE_EQ(j["comparisons"][0]["ratio"].get<double>(),
                     written_[0]["comparisons"][0]["ratio"].get<double>());
}

// label, baseline and delete set what the window's history panel sets, on a copy of the file.
TEST_F(CliHistoryCommands, LabelBaselineAndDeleteMarkTheRun) {
    const QString db = copyOfHistory(QStringLiteral("marks.sqlite"));
    auto r = cli({"history", "label", id(0), "before the fix", "--db", db});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    r = cli({"history", "baseline", id(0), "--db", db});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    EXPECT_TRUE(r.out.contains(QStringLiteral("baseline of mlp"))) << r.out.toStdString();
    json list = parse(cli({"history", "--json", "--db", db}).out);
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[1]["label"], "before the fix");
    EXPECT_EQ(list[1]["baseline"], true);
    EXPECT_EQ(list[0]["baseline"], false);
    r = cli({"history", "--db", db});
    EXPECT_TRUE(r.out.contains(QStringLiteral("before the fix"))) << r.out.toStdString();

    // One baseline per model: marking run 2 takes the mark from run 1.
    ASSERT_EQ(cli({"history", "baseline", id(1), "--db", db}).exitCode, 0);
    list = parse(cli({"history", "--json", "--db", db}).out);
    EXPECT_EQ(list[0]["baseline"], true);
    EXPECT_EQ(list[1]["baseline"], false);
    ASSERT_EQ(cli({"history", "baseline", id(1), "--off", "--db", db}).exitCode, 0);
    ASSERT_EQ(cli({"history", "label", id(0), "", "--db", db}).exitCode, 0);
    list = parse(cli({"history", "--json", "--db", db}).out);
    EXPECT_EQ(list[0]["baseline"], false);
    EXPECT_EQ(list[1]["label"], "");

    r = cli({"history", "delete", id(0), "--db", db});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    list = parse(cli({"history", "--json", "--db", db}).out);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0]["id"], ids_[1]);
    r = cli({"history", "show", id(0), "--db", db});
    EXPECT_EQ(r.exitCode, 2);
    expectOneLineAndAHint(r, "no such run");
}

// compare: the ratio is baseline median / other median of the stored latencies, its CI from the
// unpaired bootstrap over processes, said in words; the environment is compared field by field.
TEST_F(CliHistoryCommands, CompareTwoRunsArmsUnpaired) {
    auto r = cli({"compare", id(0) + ":A", id(1) + ":B", "--json", "--db", db_});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    const json j = parse(r.out);
    std::vector<double> a, b;
    for (const auto& v : written_[0]["arms"][0]["latency_ns"]) a.push_back(v.get<double>());
    for (const auto& v : written_[1]["arms"][1]["latency_ns"]) b.push_back(v.get<double>());
    const double ratio = median(a) / median(b);
    EXPECT_NEAR(j["ratio"].get<double>(), ratio, 1e-12 * ratio);
    EXPECT_LE(j["ci95"][0].get<double>(), j["ratio"].get<double>());
    EXPECT_GE(j["ci95"][1].get<double>(), j["ratio"].get<double>());
    EXPECT_EQ(j["paired"], false);
    EXPECT_EQ(j["unit"], "processes");
    EXPECT_EQ(j["units"], 2);
    EXPECT_NE(j["method"].get<std::string>().find("unpaired"), std::string::npos) << j.dump();
    EXPECT_NE(j["note"].get<std::string>().find("share no blocks"), std::string::npos) << j.dump();
    EXPECT_EQ(j["baseline"]["run"], ids_[0]);
    EXPECT_EQ(j["baseline"]["arm"], "A");
    EXPECT_EQ(j["other"]["arm"], "B");
    EXPECT_EQ(j["other"]["preset"], "hist two");
    EXPECT_EQ(j["baseline"]["processes"].size(), 2u);
    // The same machine and build: no field differs, and the named ones are said to be equal.
    // The load average is recorded and compared: listed as a difference only when the machine's
    // load moved by half a core or more between the runs (other builds may run beside this test).
    bool loadListed = false;
    for (const auto& d : j["environment_differences"]) {
        EXPECT_EQ(d["field"], "load_average") << j.dump();
        loadListed = true;
    }
    for (const char* f : {"cpu", "libtorch", "kernel", "allocator"})
        EXPECT_NE(std::find(j["environment_same"].begin(), j["environment_same"].end(), f),
                  j["environment_same"].end())
            << f << " in " << j.dump();
    const bool loadSame = std::any_of(j["environment_same"].begin(), j["environment_same"].end(),
                                      [](const json& s) {
                                          return s.get<std::string>().rfind("load_average", 0) == 0;
                                      });
    EXPECT_NE(loadListed, loadSame) << j.dump();
    EXPECT_EQ(j["not_recorded"], json::array());

    // Without arms: the first run's first arm against the arm of the same name.
    r = cli({"compare", id(0), id(1), "--db", db_});
    ASSERT_EQ(r.exitCode, 0) << r.err.toStdString();
    for (const char* part : {"compare: run ", " arm A (baseline", "share no blocks", "unpaired",
                             "95% CI", "the same in both: cpu, libtorch, kernel, allocator"})
        EXPECT_TRUE(r.out.contains(QLatin1String(part))) << part << " in " << r.out.toStdString();
    EXPECT_TRUE(r.out.contains("vs run " + id(1) + " arm A")) << r.out.toStdString();
    EXPECT_TRUE(r.out.contains("load_average")) << r.out.toStdString();
    EXPECT_FALSE(r.out.contains("not recorded")) << r.out.toStdString();
}

TEST_F(CliHistoryCommands, ErrorsNameWhatIsWrongWithAHint) {
    auto r = cli({"history", "show", "999", "--db", db_});
    EXPECT_EQ(r.exitCode, 2);
    expectOneLineAndAHint(r, "run 999: no such run");
    r = cli({"history", "label", "999", "x", "--db", db_});
    EXPECT_EQ(r.exitCode, 2);
    expectOneLineAndAHint(r, "no such run");
    r = cli({"compare", id(0) + ":A", "999:A", "--db", db_});
    EXPECT_EQ(r.exitCode, 2);
    expectOneLineAndAHint(r, "run 999: no such run");
    r = cli({"compare", id(0) + ":A", id(1) + ":C", "--db", db_});
    EXPECT_EQ(r.exitCode, 2);
    expectOneLineAndAHint(r, "has no arm \"C\" (its arms: A, B)");
    r = cli({"compare", "twelve", id(1), "--db", db_});
    EXPECT_EQ(r.exitCode, 2);
    expectOneLineAndAHint(r, "not a run id");
    r = cli({"history", "frobnicate", "--db", db_});
    EXPECT_EQ(r.exitCode, 2);
    expectOneLineAndAHint(r, "unknown subcommand");
    r = cli({"history", "--db", dir_->filePath(QStringLiteral("missing.sqlite"))});
    EXPECT_EQ(r.exitCode, 2);
    expectOneLineAndAHint(r, "no run history at");
    EXPECT_FALSE(QFile::exists(dir_->filePath(QStringLiteral("missing.sqlite"))));
    r = cli({"history", "--db", "none"});
    EXPECT_EQ(r.exitCode, 2);
    expectOneLineAndAHint(r, "--db none");

    for (const char* cmd : {"history", "compare"}) {
        r = cli({cmd, "--help"});
        EXPECT_EQ(r.exitCode, 0) << cmd;
        EXPECT_TRUE(r.out.startsWith(QStringLiteral("usage:"))) << r.out.toStdString();
        EXPECT_TRUE(r.out.contains(QStringLiteral("pitlane-cli ") + cmd)) << r.out.toStdString();
    }
}

// A damaged history (a page overwritten) is refused as `run` refuses it: exit 3, the file named.
TEST_F(CliHistoryCommands, ADamagedHistoryExitsThree) {
    const QString db = copyOfHistory(QStringLiteral("damaged.sqlite"));
    QFile f(db);
    ASSERT_TRUE(f.open(QIODevice::ReadWrite));
    ASSERT_GT(f.size(), 4 * 4096);
    f.seek(2 * 4096);
    f.write(QByteArray(4096, char(0xAB)));
    f.close();
    for (const QStringList& args :
         {QStringList{"history", "--db", db}, QStringList{"history", "show", id(0), "--db", db},
          QStringList{"history", "baseline", id(0), "--db", db},
          QStringList{"compare", id(0), id(1), "--db", db}}) {
        const auto r = cli(args);
        EXPECT_EQ(r.exitCode, 3) << args.join(' ').toStdString() << "\n" << r.err.toStdString();
        expectOneLineAndAHint(r, "cannot be opened");
        EXPECT_TRUE(r.err.contains(db)) << r.err.toStdString();
        EXPECT_TRUE(r.err.contains(QStringLiteral("check-history"))) << r.err.toStdString();
    }
}
