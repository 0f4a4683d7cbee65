// pitlane-cli sweep / sweep-status / collect (issue 15, "Cluster sweeps") against a real
// single-node Slurm: Debian's slurm-wlm, slurmctld and slurmd started here with a slurm.conf for
// this host in a temporary folder (auth/none, no accounting: sacct answers "accounting storage
// is disabled", so the states come from squeue and the results files). A 4-slice sweep (mlp and
// tiny_probe x batch sizes 1 and 4) submitted with --slurm runs as a 4-task job array and is
// collected into one history run and one report; a failed task is listed and resubmitted alone;
// the same sweep runs locally without --slurm; a bad sweep block is refused naming the field.
// Skipped, saying why, where the daemons cannot start (not root, slurm-wlm missing).
#include "cli.h"
#include "harness.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <string>
#include <thread>

namespace {

using namespace pitlane::itest;

// The slices of `sweepPreset`, as collect names their arms.
const std::vector<std::string> kSliceArms = {"mlp/b1/A", "mlp/b1/B", "mlp/b4/A", "mlp/b4/B",
                                             "tiny_probe/b1/A", "tiny_probe/b1/B",
                                             "tiny_probe/b4/A", "tiny_probe/b4/B"};

json sweepPreset(const std::string& secondModel) {
    return {{"name", "sweep test"},
            {"model", "mlp"},
            {"run", {{"warmup_iters", 2}, {"iters", 6}, {"block_iters", 3}, {"processes", 1}}},
            {"sweep", {{"models", {"mlp", secondModel}}, {"batch_sizes", {1, 4}}, {"arms", "all"}}},
            {"arms", json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}}}},
                                  {{"name", "B"},
                                   {"knobs", {{"intra_op_threads", 1}, {"grad", "inference_mode"}}}}})}};
}

std::string slurpFile(const QString& path) {
    std::ifstream f(path.toStdString());
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A single-node Slurm cluster for the whole suite.
class SlurmCluster {
public:
    // "" when it is up; else why not (the tests skip with it).
    std::string start() {
        if (::geteuid() != 0) return "slurmd must run as root to launch jobs";
        for (const char* tool : {"slurmctld", "slurmd", "sbatch", "squeue", "sinfo"})
            if (QStandardPaths::findExecutable(tool).isEmpty() &&
                QStandardPaths::findExecutable(tool, {"/usr/sbin", "/sbin"}).isEmpty())
                return std::string(tool) + " not found (apt-get install slurm-wlm)";
        if (!dir_.isValid()) return "no temporary folder";
        char name[256] = {};
        ::gethostname(name, sizeof name - 1);
        const QString host = QString::fromLocal8Bit(name).section('.', 0, 0);
        const int port = 20000 + int(::getpid() % 20000) * 2 % 40000;
        const QString d = dir_.path();
        QDir().mkpath(d + "/state");
        QDir().mkpath(d + "/spool");
        conf_ = d + "/slurm.conf";
        std::ofstream c(conf_.toStdString());
        c << "ClusterName=pitlanetest\nSlurmctldHost=" << host.toStdString() << "\n"
          << "SlurmctldPort=" << port << "\nSlurmdPort=" << port + 1 << "\n"
          << "AuthType=auth/none\nCredType=cred/none\nSlurmUser=root\nSlurmdUser=root\n"
          << "StateSaveLocation=" << d.toStdString() << "/state\n"
          << "SlurmdSpoolDir=" << d.toStdString() << "/spool\n"
          << "SlurmctldPidFile=" << d.toStdString() << "/slurmctld.pid\n"
          << "SlurmdPidFile=" << d.toStdString() << "/slurmd.pid\n"
          << "SlurmctldLogFile=" << d.toStdString() << "/slurmctld.log\n"
          << "SlurmdLogFile=" << d.toStdString() << "/slurmd.log\n"
          << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
          << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
          << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
          << "MpiDefault=none\nReturnToService=2\nSchedulerParameters=sched_interval=1\n"
          << "NodeName=" << host.toStdString() << " CPUs=" << std::thread::hardware_concurrency()
          << " RealMemory=1000 State=UNKNOWN\n"
          << "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
        c.close();
        qputenv("SLURM_CONF", conf_.toLocal8Bit());  // for sbatch, squeue and the CLI's children
        for (const char* daemon : {"slurmctld", "slurmd"}) {
            QString exe = QStandardPaths::findExecutable(daemon, {"/usr/sbin", "/sbin"});
            if (exe.isEmpty()) exe = QStandardPaths::findExecutable(daemon);
            auto* p = new QProcess;
            p->setStandardOutputFile(d + "/" + daemon + ".out");
            p->setStandardErrorFile(d + "/" + daemon + ".out");
            p->start(exe, {"-D", "-f", conf_});
            if (!p->waitForStarted(5000)) return std::string(daemon) + " did not start: " + p->errorString().toStdString();
            daemons_.push_back(p);
        }
        // Up when sinfo sees the node idle.
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 20000) {
            QProcess s;
            s.start("sinfo", {"-h", "-o", "%t"});
            s.waitForFinished(5000);
            if (s.readAllStandardOutput().trimmed() == "idle") return "";
            for (auto* p : daemons_)
                if (p->state() == QProcess::NotRunning)
                    return std::string("a Slurm daemon exited: ") +
                           slurpFile(d + "/" + (p == daemons_[0] ? "slurmctld" : "slurmd") + ".out");
            QThread::msleep(200);
        }
        return "the node never became idle (" + slurpFile(d + "/slurmd.log").substr(0, 2000) + ")";
    }
    void stop() {
        for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) {
            QProcess* p = *it;
            if (p->state() != QProcess::NotRunning) {
                p->terminate();
                if (!p->waitForFinished(5000)) {
                    p->kill();
                    p->waitForFinished(2000);
                }
            }
            delete p;
        }
        daemons_.clear();
        qunsetenv("SLURM_CONF");
    }

private:
    QTemporaryDir dir_;
    QString conf_;
    std::vector<QProcess*> daemons_;
};

SlurmCluster* g_cluster = nullptr;
std::string g_whyNot;

class SlurmSweep : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        g_cluster = new SlurmCluster;
        g_whyNot = g_cluster->start();
    }
    static void TearDownTestSuite() {
        g_cluster->stop();
        delete g_cluster;
        g_cluster = nullptr;
    }
    void SetUp() override {
        if (!g_whyNot.empty()) GTEST_SKIP() << "no single-node Slurm: " << g_whyNot;
        ASSERT_TRUE(dir.isValid());
    }
    QString path(const char* name) const { return dir.filePath(QString::fromUtf8(name)); }

    // Polls sweep-status until no task is pending or running; its last answer.
    CliResult waitForSweep(const QString& sweepDir, int timeoutMs = 120000) {
        QElapsedTimer t;
        t.start();
        CliResult r;
        do {
            r = runCli({"sweep-status", sweepDir});
            if (r.exitCode != 4) return r;
            QThread::msleep(1000);
        } while (t.elapsed() < timeoutMs);
        ADD_FAILURE() << "the sweep did not finish in " << timeoutMs << " ms:\n" << r.out;
        return r;
    }

    QTemporaryDir dir;
};

std::string tinyProbe() { return modelDir() + "/tiny_probe.pt"; }

TEST_F(SlurmSweep, FourTaskArrayCollectsIntoOneHistoryRunAndOneReport) {
    const QString preset = writeJson(path("sweep.json"), sweepPreset(tinyProbe()));
    const QString out = path("out");
    const auto sub = runCli({"sweep", preset, "--slurm", "--partition", "debug", "--time", "10",
                             "--sbatch", "--cpus-per-task=1", "--out", out});
    ASSERT_EQ(sub.exitCode, 0) << sub.out << sub.err;
    EXPECT_NE(sub.out.find("submitted Slurm job"), std::string::npos) << sub.out;
    // The script is an array of 4 tasks, each running its slice.
    const std::string script = slurpFile(out + "/sweep.sbatch");
    EXPECT_NE(script.find("#SBATCH --array=0-3"), std::string::npos) << script;
    EXPECT_NE(script.find("#SBATCH --partition=debug"), std::string::npos);
    EXPECT_NE(script.find("#SBATCH --cpus-per-task=1\n"), std::string::npos);
    EXPECT_NE(script.find("/logs/%A_%a.out"), std::string::npos);
    for (const char* f : {"000", "001", "002", "003"})
        EXPECT_TRUE(QFile::exists(out + "/slices/" + f + ".json")) << f;

    const auto status = waitForSweep(out);
    EXPECT_EQ(status.exitCode, 0) << status.out << status.err;
    EXPECT_NE(status.out.find("completed 4, failed 0"), std::string::npos) << status.out;
    for (const char* f : {"000", "001", "002", "003"})
        EXPECT_TRUE(QFile::exists(out + "/results/" + f + ".json")) << f;
    // Each task's log is where the script said.
    EXPECT_EQ(QDir(out + "/logs").entryList(QDir::Files).size(), 4);

    // One history run (a real SQLite file), one Markdown and one HTML report.
    const QString db = path("history.sqlite");
    const auto collect = runCli({"collect", out, "--db", db, "--md", path("sweep.md"), "--html", path("sweep.html")});
    ASSERT_EQ(collect.exitCode, 0) << collect.out << collect.err;
    EXPECT_NE(collect.out.find("run id: 1 "), std::string::npos) << collect.out;
    const auto check = runCli({"check-history", "--db", db});
    EXPECT_NE(check.out.find("ok (integrity_check; 1 runs"), std::string::npos) << check.out;
    const std::string md = slurpFile(path("sweep.md"));
    const std::string html = slurpFile(path("sweep.html"));
    for (const auto& arm : kSliceArms) {
        EXPECT_NE(md.find(arm), std::string::npos) << arm;
        EXPECT_NE(html.find(arm), std::string::npos) << arm;
    }
    EXPECT_NE(md.find("4 of 4 slices"), std::string::npos);
    // The stored run gives the same arms back.
    const auto again = runCli({"report", "1", "--db", db, "--md", path("again.md")});
    ASSERT_EQ(again.exitCode, 0) << again.err;
    const std::string md2 = slurpFile(path("again.md"));
    for (const auto& arm : kSliceArms) EXPECT_NE(md2.find(arm), std::string::npos) << arm;
}

TEST_F(SlurmSweep, AFailedTaskIsListedAndResubmittedAlone) {
    // A model file that is not TorchScript: the preset is valid (the file exists), the slice's
    // arms fail when they run, so its task exits 1.
    const QString broken = path("broken.pt");
    {
        std::ofstream f(broken.toStdString());
        f << "not a TorchScript archive";
    }
    QFile::copy(QString::fromStdString(modelDir() + "/tiny_probe.json"), path("broken.json"));
    json p = sweepPreset("broken.pt");
    p["sweep"]["batch_sizes"] = {1};
    const QString preset = writeJson(path("sweep.json"), p);
    const QString out = path("out");
    const auto sub = runCli({"sweep", preset, "--slurm", "--out", out});
    ASSERT_EQ(sub.exitCode, 0) << sub.out << sub.err;
    auto status = waitForSweep(out);
    EXPECT_EQ(status.exitCode, 1) << status.out;
    EXPECT_NE(status.out.find("completed 1, failed 1"), std::string::npos) << status.out;
    EXPECT_NE(status.out.find("failed slices: 1\n"), std::string::npos) << status.out;
    EXPECT_NE(status.out.find("--resubmit-failed"), std::string::npos);
    EXPECT_NE(runCli({"collect", out, "--status"}).out.find("failed slices: 1\n"), std::string::npos);

    // Where Slurm no longer knows the job (its MinJobAge passed, no accounting), the results
    // files decide: a task whose arms all finished completed, one with a failed arm failed.
    {
        const QString real = out + "/sweep.json";
        json m = readJson(real);
        ASSERT_TRUE(QFile::copy(real, path("kept.json")));
        for (auto& s : m["slices"]) s["job"] = "999999";
        writeJson(real, m);
        const auto gone = runCli({"sweep-status", out});
        EXPECT_EQ(gone.exitCode, 1) << gone.out;
        EXPECT_NE(gone.out.find("COMPLETED    no longer in Slurm's queue; results written [results file]"),
                  std::string::npos) << gone.out;
        EXPECT_NE(gone.out.find("FAILED       no longer in Slurm's queue; arm A failed (model_not_torchscript)"),
                  std::string::npos) << gone.out;
        ASSERT_TRUE(QFile::remove(real));
        ASSERT_TRUE(QFile::copy(path("kept.json"), real));
    }

    // Repaired, only that task is resubmitted.
    ASSERT_TRUE(QFile::remove(broken));
    ASSERT_TRUE(QFile::copy(QString::fromStdString(tinyProbe()), broken));
    const auto re = runCli({"sweep", out, "--resubmit-failed"});
    ASSERT_EQ(re.exitCode, 0) << re.out << re.err;
    EXPECT_NE(re.out.find("resubmitted slices 1 as Slurm job"), std::string::npos) << re.out;
    const json manifest = readJson(out + "/sweep.json");
    ASSERT_EQ(manifest["jobs"].size(), 2u);
    EXPECT_EQ(manifest["jobs"][1]["array"], "1");
    EXPECT_NE(manifest["slices"][0]["job"], manifest["slices"][1]["job"]);
    status = waitForSweep(out);
    EXPECT_EQ(status.exitCode, 0) << status.out;
    EXPECT_NE(status.out.find("completed 2, failed 0"), std::string::npos) << status.out;
    const auto collect = runCli({"collect", out, "--db", "none", "--md", path("s.md")});
    EXPECT_EQ(collect.exitCode, 0) << collect.out << collect.err;
    EXPECT_NE(slurpFile(path("s.md")).find("broken/b1/B"), std::string::npos);
}

// Without --slurm the same sweep runs here, one slice after another; a missing slice is named.
// A partition the cluster does not have: sbatch's refusal is said, and the sweep folder is kept
// for --resubmit-failed (every slice not submitted).
TEST_F(SlurmSweep, ARefusedSubmissionIsSaid) {
    const QString preset = writeJson(path("sweep.json"), sweepPreset(tinyProbe()));
    const auto sub = runCli({"sweep", preset, "--slurm", "--partition", "nowhere", "--out", path("out")});
    EXPECT_EQ(sub.exitCode, 1);
    EXPECT_NE(sub.err.find("sbatch --parsable"), std::string::npos) << sub.err;
    EXPECT_NE(sub.err.find("nowhere"), std::string::npos) << sub.err;
    const auto status = runCli({"sweep-status", path("out")});
    EXPECT_EQ(status.exitCode, 1);
    EXPECT_NE(status.out.find("never submitted"), std::string::npos) << status.out;
}

TEST(LocalSweep, RunsEachSliceHereAndCollects) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString preset = writeJson(dir.filePath("sweep.json"), sweepPreset(tinyProbe()));
    const QString out = dir.filePath("local");
    // While it runs, sweep-status says which slice is running and which are pending.
    std::string during;
    const auto run = runCli({"sweep", preset, "--out", out, "--quiet"}, 180000,
                            [&](const std::string& line, QProcess&) {
                                if (during.empty() && line.find("slice 001") != std::string::npos)
                                    during = runCli({"sweep-status", out}).out;
                            });
    // (slice 001 was running when asked; by the answer it may have made way for 002)
    EXPECT_NE(during.find("           RUNNING"), std::string::npos) << during;
    EXPECT_NE(during.find("003  tiny_probe/b4           -           PENDING"), std::string::npos) << during;
    EXPECT_NE(during.find("000  mlp/b1                  -           COMPLETED"), std::string::npos) << during;
    ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
    const auto status = runCli({"sweep-status", out});
    EXPECT_EQ(status.exitCode, 0) << status.out;
    EXPECT_NE(status.out.find("completed 4, failed 0"), std::string::npos) << status.out;
    const auto collect = runCli({"collect", out, "--db", "none", "--md", dir.filePath("l.md")});
    ASSERT_EQ(collect.exitCode, 0) << collect.err;
    const std::string md = slurpFile(dir.filePath("l.md"));
    for (const auto& arm : kSliceArms) EXPECT_NE(md.find(arm), std::string::npos) << arm;
    // A slice without results: collected without it, named, exit 1.
    ASSERT_TRUE(QFile::remove(out + "/results/002.json"));
    const auto partial = runCli({"collect", out, "--db", "none", "--md", dir.filePath("p.md")});
    EXPECT_EQ(partial.exitCode, 1);
    EXPECT_NE(partial.err.find("missing slice 002 (tiny_probe/b1)"), std::string::npos) << partial.err;
    EXPECT_NE(slurpFile(dir.filePath("p.md")).find("3 of 4 slices"), std::string::npos);
}

TEST(LocalSweep, ABadSweepBlockIsRefusedNamingTheField) {
    QTemporaryDir dir;
    json p = sweepPreset("mlp");
    p["sweep"] = {{"models", {"mlp", "nowhere.pt"}}, {"batch_sizes", {1, 0}}};
    const QString preset = writeJson(dir.filePath("bad.json"), p);
    const auto r = runCli({"sweep", preset, "--out", dir.filePath("o")});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("bad.json: sweep.batch_sizes[1]: expected a batch size between 1 and"), std::string::npos)
        << r.err;
    EXPECT_FALSE(QFile::exists(dir.filePath("o")));
    // validate says the same; a preset without a sweep block is refused by sweep.
    EXPECT_EQ(runCli({"validate", preset}).exitCode, 2);
    p.erase("sweep");
    const auto none = runCli({"sweep", writeJson(dir.filePath("plain.json"), p)});
    EXPECT_EQ(none.exitCode, 2);
    EXPECT_NE(none.err.find("the preset has no sweep block"), std::string::npos) << none.err;
}

}  // namespace
