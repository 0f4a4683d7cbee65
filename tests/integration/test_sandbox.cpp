// The worker's sandbox, proven from inside real workers started by the real runner: what it
// reads back (no new privileges, the seccomp filter, the memory limit, probes of a socket and of
// writes beside and inside the scratch folder), a model that writes a file outside its scratch
// folder (torch.save in a scripted forward), a model that allocates above the memory limit, and
// the opt-out knob. Every check has its counterpart with the sandbox off, so none can pass
// because nothing was tried.
#include "cli.h"
#include "harness.h"

#include "pitlane/spec/preset.h"

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QScopeGuard>
#include <QThread>

#include <fstream>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

using namespace pitlane;
using namespace pitlane::itest;

const json kRun = {{"warmup_iters", 1}, {"iters", 4}, {"block_iters", 2}, {"processes", 1}};

int landlockAbi() {
#ifdef SYS_landlock_create_ruleset
    const long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U);
    return v < 0 ? 0 : int(v);
#else
    return 0;
#endif
}

// A worker's share of the memory budget when `workers` run at once, from MemTotal read here:
// physical memory less max(2 GiB, 10 %) (at most a quarter), split evenly, at most 75 %. The
// machines this runs on have no cgroup limit below physical memory (checked: skipped otherwise).
std::int64_t budgetShareMiB(int workers) {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    std::int64_t kib = 0, mib = 0;
    while (in >> key >> kib >> unit)
        if (key == "MemTotal:") mib = kib / 1024;
    const std::int64_t margin = std::min(std::max<std::int64_t>(2048, mib / 10), mib / 4);
    return std::min(mib * 3 / 4, (mib - margin) / workers);
}

bool refused(const json& probe) { return probe.is_string() && probe.get<std::string>().rfind("refused", 0) == 0; }

results::RunResult runOne(const json& knobs, const std::string& model = "mlp", const json& input = json()) {
    json p = {{"name", "sandbox"}, {"model", model}, {"run", kRun},
              {"arms", json::array({{{"name", "A"}, {"knobs", knobs}}})}};
    if (!input.is_null()) p["input"] = input;
    const auto preset = spec::parsePreset(p, "", modelDir());
    auto result = runPreset(preset, 90000);
    EXPECT_EQ(result.arms.size(), 1u);
    return result;
}

results::ArmResult runOneArm(const json& knobs, const std::string& model = "mlp",
                             const json& input = json()) {
    auto result = runOne(knobs, model, input);
    return result.arms.empty() ? results::ArmResult{} : result.arms.front();
}

TEST(Sandbox, OnByDefaultAndReadBackFromInsideTheWorker) {
    const auto a = runOneArm({{"intra_op_threads", 1}});
    ASSERT_EQ(a.status, "ok") << (a.error ? a.error->message : "");
    const json& sb = a.applied.extraField("sandbox");
    ASSERT_TRUE(sb.is_object()) << pitlane::protocol::appliedFields(a.applied).dump();
    EXPECT_EQ(sb["enabled"], true);
    EXPECT_EQ(sb["threads_at_start"], 1) << "Landlock must be applied before any thread exists";
    const json& rb = sb["read_back"];
    EXPECT_EQ(rb["no_new_privs"], true);
    EXPECT_EQ(rb["seccomp_mode"], "2");
    EXPECT_TRUE(refused(rb["socket_inet"])) << rb.dump();
    EXPECT_EQ(rb["socket_unix"], "allowed");
    // Least privilege: no program, no process, no path socket, no file metadata, no way to
    // outlive the parent, no capabilities.
    for (const char* probe : {"exec", "fork", "connect_unix_path", "chmod", "clear_pdeathsig"})
        EXPECT_TRUE(refused(rb[probe])) << probe << ": " << rb.dump();
    for (const char* caps : {"capabilities_effective", "capabilities_permitted"})
        EXPECT_EQ(rb[caps], "0000000000000000") << caps;
    EXPECT_NE(sb["capabilities"].get<std::string>().find("no capabilities"), std::string::npos) << sb.dump();
    // The limit is on top of what the worker had mapped when it started (libtorch's data).
    EXPECT_EQ(sb["memory_limit_bytes"], budgetShareMiB(1) << 20);
    ASSERT_TRUE(sb["data_at_start_bytes"].is_number_integer()) << sb.dump();
    EXPECT_GT(sb["data_at_start_bytes"].get<std::int64_t>(), 0);
    EXPECT_EQ(rb["rlimit_data_bytes"], (budgetShareMiB(1) << 20) + sb["data_at_start_bytes"].get<std::int64_t>());
    ASSERT_TRUE(sb["scratch"].is_string());
    const QString scratch = QString::fromStdString(sb["scratch"].get<std::string>());
    EXPECT_TRUE(scratch.startsWith(QDir::tempPath() + "/pitlane-run-")) << scratch.toStdString();
    EXPECT_FALSE(QFileInfo::exists(scratch)) << "the run's scratch folder outlived the run";
    if (landlockAbi() < 1) GTEST_SKIP() << "this kernel has no Landlock: writes are not confined";
    EXPECT_NE(sb["filesystem"].get<std::string>().find("landlock"), std::string::npos) << sb.dump();
    EXPECT_EQ(rb["write_scratch"], "allowed");
    EXPECT_TRUE(refused(rb["write_outside"])) << rb.dump();
    EXPECT_TRUE(refused(rb["read_etc"])) << rb.dump();
    EXPECT_TRUE(sb["errors"].empty()) << sb["errors"].dump();
}

TEST(Sandbox, OffIsOneKnobAndShownInTheReadBack) {
    const auto a = runOneArm({{"intra_op_threads", 1}, {"sandbox", "off"}});
    ASSERT_EQ(a.status, "ok") << (a.error ? a.error->message : "");
    const json& sb = a.applied.extraField("sandbox");
    EXPECT_EQ(sb["enabled"], false);
    EXPECT_EQ(sb["read_back"]["socket_inet"], "allowed");
    EXPECT_EQ(sb["read_back"]["write_outside"], "allowed");
    EXPECT_EQ(sb["read_back"]["seccomp_mode"], "0");
    for (const char* probe : {"exec", "connect_unix_path", "read_etc"})
        EXPECT_FALSE(refused(sb["read_back"][probe])) << probe << ": " << sb.dump();
    EXPECT_TRUE(sb["memory_limit_bytes"].is_null());
    EXPECT_EQ(a.knobs.sandbox, pitlane::spec::Sandbox::Off);
}

// Scripts `source` (a module class Model taking one str) once per (name, argument), in one
// Python (torch's import is seconds): returns the paths of the models saved in `dir`.
QStringList exportModels(const QString& dir, const QString& source, const QList<QPair<QString, QString>>& models) {
    const QString script = QStringLiteral("import torch, sys\n") + source +
                           QStringLiteral("for i in range(1, len(sys.argv), 2):\n"
                                          "    torch.jit.script(Model(sys.argv[i])).save(sys.argv[i + 1])\n");
    static int n = 0;
    const QString scriptPath = dir + QStringLiteral("/export_%1.py").arg(++n);  // torch.jit.script reads the source
    QFile f(scriptPath);
    if (!f.open(QIODevice::WriteOnly) || f.write(script.toUtf8()) < 0) return {};
    f.close();
    QStringList args{scriptPath}, paths;
    for (const auto& [name, arg] : models) {
        paths << dir + "/" + name + ".pt";
        args << arg << paths.back();
    }
    QProcess py;
    py.start(QStringLiteral(PITLANE_PYTHON), args);
    if (!py.waitForFinished(120000) || py.exitCode() != 0) {
        ADD_FAILURE() << "exporting models failed: " << py.readAllStandardError().toStdString();
        return {};
    }
    return paths;
}

QString exportModel(const QString& dir, const QString& name, const QString& source, const QString& arg) {
    const QStringList paths = exportModels(dir, source, {{name, arg}});
    return paths.value(0);
}

// A scripted forward that calls torch.save(x, <target>): the dropper of the issue.
QString exportDropper(const QString& dir, const QString& target) {
    return exportModel(dir, QStringLiteral("dropper"),
                       QStringLiteral("class Model(torch.nn.Module):\n"
                                      "    def __init__(self, target: str):\n"
                                      "        super().__init__()\n"
                                      "        self.target = target\n"
                                      "    def forward(self, x):\n"
                                      "        torch.save(x, self.target)\n"
                                      "        return x * 2\n"),
                       target);
}

// A forward that writes protocol events (ten 1 ns samples of block 0, a warning, the block's
// end) into its target (torch.save of a string: its bytes go out raw, between newlines).
const QString kForger =
        QStringLiteral(
            "class Model(torch.nn.Module):\n"
            "    def __init__(self, target: str):\n"
            "        super().__init__()\n"
            "        self.target = target\n"
            "        s = '{\"v\":1,\"type\":\"samples\",\"block\":0,\"phase\":\"measure\",\"first_iter\":0,'\n"
            "        s += '\"batch_size\":1,\"latency_ns\":[1,1,1,1,1,1,1,1,1,1]}'\n"
            "        w = '{\"v\":1,\"type\":\"warning\",\"code\":\"forged\",\"message\":\"forged by the model\"}'\n"
            "        d = '{\"v\":1,\"type\":\"block_done\",\"block\":0,\"phase\":\"measure\",\"iters\":10,'\n"
            "        d += '\"batch_size\":1,\"wall_ms\":0.01}'\n"
            "        self.payload = '\\n' + s + '\\n' + w + '\\n' + d + '\\n'\n"
            "    def forward(self, x):\n"
            "        torch.save(self.payload, self.target)\n"
            "        return x * 2\n");

// A forward that reads 16 bytes of its target into a tensor (torch.from_file) and uses them.
const QString kReader = QStringLiteral("class Model(torch.nn.Module):\n"
                                      "    def __init__(self, target: str):\n"
                                      "        super().__init__()\n"
                                      "        self.target = target\n"
                                      "    def forward(self, x):\n"
                                      "        secret = torch.from_file(self.target, False, 16, dtype=torch.uint8)\n"
                                      "        return x * 2 + secret.sum().float()\n");

const json kVectorInput = json::array({{{"shape", {4}}, {"dtype", "float32"}}});

TEST(Sandbox, AModelCannotWriteOutsideItsScratchFolder) {
    if (landlockAbi() < 1) GTEST_SKIP() << "this kernel has no Landlock: writes are not confined";
    QTemporaryDir dir;
    const QString target = dir.path() + "/dropped.pt";
    const QString model = exportDropper(dir.path(), target);
    ASSERT_FALSE(model.isEmpty());
    const json input = kVectorInput;

    // torch's aten::save writes through an unchecked std::fstream: the refused open is silent
    // and the forward goes on. What matters: the file is not there.
    const auto on = runOneArm({{"intra_op_threads", 1}}, model.toStdString(), input);
    EXPECT_EQ(on.status, "ok") << (on.error ? on.error->message : "");
    EXPECT_FALSE(QFileInfo::exists(target)) << "the sandboxed model wrote " << target.toStdString();

    // The same model with the sandbox off writes the file: the test above can fail.
    const auto off = runOneArm({{"intra_op_threads", 1}, {"sandbox", "off"}}, model.toStdString(), input);
    EXPECT_EQ(off.status, "ok") << (off.error ? off.error->message : "");
    EXPECT_TRUE(QFileInfo::exists(target));
}

TEST(Sandbox, AnAllocationAboveTheMemoryLimitIsOutOfMemory) {
    const std::string hog = modelDir() + "/mem_hog.pt";  // 768 MiB per forward
    const auto limited = runOneArm({{"intra_op_threads", 1}, {"memory_limit_mb", 512}}, hog);
    EXPECT_EQ(limited.status, "failed");
    ASSERT_TRUE(limited.error.has_value());
    EXPECT_EQ(limited.error->code, "out_of_memory") << limited.error->message;
    EXPECT_NE(limited.error->message.find("memory limit is 512 MiB"), std::string::npos)
        << limited.error->message;

    const auto roomy = runOneArm({{"intra_op_threads", 1}, {"memory_limit_mb", 4096}}, hog);
    EXPECT_EQ(roomy.status, "ok") << (roomy.error ? roomy.error->message : "");
    const json& sb = roomy.applied.extraField("sandbox");
    EXPECT_EQ(sb["memory_limit_bytes"], std::int64_t(4096) << 20);
    EXPECT_EQ(sb["read_back"]["rlimit_data_bytes"],
              (std::int64_t(4096) << 20) + sb.value("data_at_start_bytes", std::int64_t(0)));
}

TEST(Sandbox, WorkersRunAtOnceShareTheMachinesMemory) {
    // Two concurrent workers of one arm: each gets half of the budget, together never more than
    // physical memory less the margin.
    const auto a = runOneArm({{"intra_op_threads", 1}, {"workers", 2}});
    ASSERT_EQ(a.status, "ok") << (a.error ? a.error->message : "");
    ASSERT_EQ(a.worker_applied.size(), 2u);
    std::int64_t sum = 0;
    for (const auto& applied : a.worker_applied) {
        const json& sb = applied.extraField("sandbox");
        EXPECT_EQ(sb["memory_limit_bytes"], budgetShareMiB(2) << 20) << sb.dump();
        sum += sb.value("memory_limit_bytes", std::int64_t(0));
    }
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    std::int64_t kib = 0, mib = 0;
    while (in >> key >> kib >> unit)
        if (key == "MemTotal:") mib = kib / 1024;
    EXPECT_LE(sum, (mib - 2048) << 20) << "two workers may take more than physical memory less 2 GiB";
    // A knob above the share is lowered to it, and the arm says so.
    const auto big = runOneArm({{"intra_op_threads", 1}, {"workers", 2}, {"memory_limit_mb", 1 << 20}});
    ASSERT_EQ(big.status, "ok") << (big.error ? big.error->message : "");
    EXPECT_EQ(big.applied.extraField("sandbox")["memory_limit_bytes"], budgetShareMiB(2) << 20);
    bool said = false;
    for (const auto& w : big.warnings) said |= w.find("memory_limit_mb 1048576 lowered to") != std::string::npos;
    EXPECT_TRUE(said) << json(big.warnings).dump();
}

TEST(Sandbox, AModelCannotReadFilesOutsideWhatItNeeds) {
    if (landlockAbi() < 1) GTEST_SKIP() << "this kernel has no Landlock: reads are not confined";
    QTemporaryDir dir;  // beside the model: its folder is not readable, only the model file
    const QString secretPath = dir.path() + "/secret.txt";
    const std::string secret = "PITLANE-SECRET-" + std::to_string(::getpid()) + "-0123456789";
    {
        QFile f(secretPath);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(secret.c_str());
    }
    const QStringList models = exportModels(dir.path(), kReader, {{QStringLiteral("reader"), secretPath},
                                                                  {QStringLiteral("shadow"), QStringLiteral("/etc/shadow")}});
    ASSERT_EQ(models.size(), 2);
    const QString model = models[0], shadow = models[1];
    const auto run = runOne({{"intra_op_threads", 1}}, model.toStdString(), kVectorInput);
    ASSERT_EQ(run.arms.size(), 1u);
    const auto& on = run.arms.front();
    EXPECT_EQ(on.status, "failed");
    ASSERT_TRUE(on.error.has_value());
    EXPECT_NE(on.error->message.find("Permission denied"), std::string::npos) << on.error->message;
    EXPECT_EQ(results::toResultsJson(run).dump().find("PITLANE-SECRET"), std::string::npos);
    // With the sandbox off the same model reads it: the refusal above is the sandbox's.
    const auto off = runOneArm({{"intra_op_threads", 1}, {"sandbox", "off"}}, model.toStdString(), kVectorInput);
    EXPECT_EQ(off.status, "ok") << (off.error ? off.error->message : "");

    // /etc/shadow (root can read it, capabilities or not: root owns it).
    if (!QFileInfo::exists(QStringLiteral("/etc/shadow"))) return;
    const auto s = runOneArm({{"intra_op_threads", 1}}, shadow.toStdString(), kVectorInput);
    EXPECT_EQ(s.status, "failed");
    ASSERT_TRUE(s.error.has_value());
    EXPECT_NE(s.error->message.find("Permission denied"), std::string::npos) << s.error->message;
}

// Samples of an arm all come from its timed loop: none is 1 ns, and there are as many as planned.
void expectOnlyRealSamples(const results::ArmResult& a, const std::string& what) {
    EXPECT_EQ(a.samples.size(), std::size_t(kRun["iters"].get<int>())) << what;
    for (const auto& s : a.samples) EXPECT_GT(s.latency_ns, 1) << what;
    for (const auto& w : a.warnings) EXPECT_EQ(w.find("forged"), std::string::npos) << what << ": " << w;
}

TEST(Sandbox, AModelCannotWriteIntoTheProtocol) {
    // Every descriptor the worker holds, reopened through /proc/self/fd: stdin (/dev/null), the
    // stderr pipe (fd 1 and 2), the channel socket (fd 3, which cannot be reopened), and beyond.
    QTemporaryDir dir;
    QList<QPair<QString, QString>> forgers;
    for (int fd = 0; fd <= 6; ++fd)
        forgers.append({QStringLiteral("forger_fd%1").arg(fd), QStringLiteral("/proc/self/fd/%1").arg(fd)});
    const QStringList models = exportModels(dir.path(), kForger, forgers);
    ASSERT_EQ(models.size(), forgers.size());
    for (int fd = 0; fd <= 6; ++fd) {
        const auto a = runOneArm({{"intra_op_threads", 1}}, models[fd].toStdString(), kVectorInput);
        const std::string what = "writing to /proc/self/fd/" + std::to_string(fd);
        if (a.status == "ok") {
            expectOnlyRealSamples(a, what);
        } else {
            ASSERT_TRUE(a.error.has_value()) << what;
            EXPECT_EQ(a.error->code, "protocol_violation") << what << ": " << a.error->message;
        }
    }
}

TEST(Sandbox, EventsThatDoNotFitWhatTheWorkerWasToldFailTheArm) {
    // On stdin and stdout (as behind ssh) the model can reach the protocol's pipe (fd 3): the
    // session's checks catch what it writes, and the arm fails with protocol_violation.
    qputenv("PITLANE_WORKER_CHANNEL", "stdio");
    QTemporaryDir dir;
    const QString model = exportModel(dir.path(), QStringLiteral("forger_stdio"), kForger, QStringLiteral("/proc/self/fd/3"));
    ASSERT_FALSE(model.isEmpty());
    const auto run = runOne({{"intra_op_threads", 1}}, model.toStdString(), kVectorInput);
    qunsetenv("PITLANE_WORKER_CHANNEL");
    ASSERT_EQ(run.arms.size(), 1u);
    const auto& a = run.arms.front();
    EXPECT_EQ(a.status, "failed");
    ASSERT_TRUE(a.error.has_value());
    EXPECT_EQ(a.error->code, "protocol_violation") << a.error->message;
    EXPECT_NE(a.error->message.find("broke the protocol"), std::string::npos) << a.error->message;
    for (const auto& s : a.samples) EXPECT_GT(s.latency_ns, 1);
    // Stored where every failure is: the results JSON (and from it the history and the reports).
    EXPECT_NE(results::toResultsJson(run).dump().find("protocol_violation"), std::string::npos);
    // The same model on the channel socket cannot reach it: the arm measures as planned.
    const auto socket = runOneArm({{"intra_op_threads", 1}}, model.toStdString(), kVectorInput);
    EXPECT_EQ(socket.status, "ok") << (socket.error ? socket.error->message : "");
    expectOnlyRealSamples(socket, "on the socket");
}

// A memory cgroup of our own under this process's (cgroup v1 or v2) limited to `limitMiB`, or ""
// when this machine does not let us make one.
QString makeMemoryCgroup(int limitMiB) {
    QFile f(QStringLiteral("/proc/self/cgroup"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    QString dir, limitFile;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QList<QByteArray> parts = line.split(':');
        if (parts.size() < 3) continue;
        const QString path = QString::fromUtf8(parts.mid(2).join(':')).trimmed();
        if (parts[1].split(',').contains("memory")) {
            dir = "/sys/fs/cgroup/memory" + path;
            limitFile = QStringLiteral("memory.limit_in_bytes");
        } else if (parts[0] == "0" && parts[1].isEmpty() && dir.isEmpty()) {
            dir = "/sys/fs/cgroup" + path;
            limitFile = QStringLiteral("memory.max");
        }
    }
    if (dir.isEmpty()) return {};
    const QString child = dir + QStringLiteral("/pitlane-test-%1").arg(::getpid());
    if (!QDir().mkpath(child)) return {};
    QFile limit(child + "/" + limitFile);
    if (!limit.open(QIODevice::WriteOnly) || limit.write(QByteArray::number(qint64(limitMiB) << 20)) < 0) {
        QDir().rmdir(child);
        return {};
    }
    return child;
}

// pitlane-cli run PRESET --json OUT inside `cgroup`: the results JSON's only arm.
json runCliInCgroup(const QString& cgroup, const QString& preset, const QString& out) {
    QProcess sh;
    sh.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    sh.start(QStringLiteral("sh"), {QStringLiteral("-c"), QStringLiteral("echo $$ > \"$1/cgroup.procs\" && exec \"$2\" run \"$3\" --json \"$4\""),
                                    QStringLiteral("sh"), cgroup, cliPath(), preset, out});
    EXPECT_TRUE(sh.waitForFinished(120000));
    const json results = readJson(out);
    return results.contains("arms") && !results["arms"].empty() ? results["arms"][0] : json();
}

TEST(Sandbox, AWorkerTheKernelKillsForMemoryIsOutOfMemory) {
    // 640 MiB for the CLI and its worker, whose model takes 768 MiB per forward.
    const QString cgroup = makeMemoryCgroup(640);
    if (cgroup.isEmpty()) GTEST_SKIP() << "cannot make a memory cgroup here (not root, or no cgroup memory controller)";
    const auto removeCgroup = qScopeGuard([&] {
        for (int i = 0; i < 50 && !QDir().rmdir(cgroup); ++i) QThread::msleep(100);
    });
    QTemporaryDir dir;
    // 800 MiB of ones: every page touched (mem_hog's untouched pages are never faulted in).
    const QString toucher = exportModel(dir.path(), QStringLiteral("toucher"),
                                        QStringLiteral("class Model(torch.nn.Module):\n"
                                                       "    def __init__(self, unused: str):\n"
                                                       "        super().__init__()\n"
                                                       "    def forward(self, x):\n"
                                                       "        big = torch.ones(200 * 1024 * 1024) + x[0]\n"
                                                       "        return x + big.sum()\n"),
                                        QStringLiteral("-"));
    ASSERT_FALSE(toucher.isEmpty());
    json p = {{"name", "oom"}, {"model", toucher.toStdString()}, {"input", kVectorInput}, {"run", kRun},
              {"arms", json::array({{{"name", "A"}, {"knobs", {{"intra_op_threads", 1}, {"sandbox", "off"}}}}})}};
    // Without the sandbox there is no limit: the kernel's OOM killer ends the worker, and the arm
    // says so (it said "died by signal 9" before).
    const json off = runCliInCgroup(cgroup, writeJson(dir.path() + "/off.json", p), dir.path() + "/off-results.json");
    EXPECT_EQ(off.value("status", ""), "failed") << off.dump();
    ASSERT_TRUE(off.contains("error") && off["error"].is_object()) << off.dump();
    EXPECT_EQ(off["error"].value("code", ""), "out_of_memory") << off.dump();
    EXPECT_NE(off["error"].value("message", "").find("out-of-memory killer"), std::string::npos) << off.dump();
    // With it, the worker's share of the cgroup's memory is its limit: its allocation fails
    // cleanly before the kernel has to kill anything.
    p["arms"][0]["knobs"]["sandbox"] = "on";
    const json on = runCliInCgroup(cgroup, writeJson(dir.path() + "/on.json", p), dir.path() + "/on-results.json");
    EXPECT_EQ(on.value("status", ""), "failed") << on.dump();
    ASSERT_TRUE(on.contains("error") && on["error"].is_object()) << on.dump();
    EXPECT_EQ(on["error"].value("code", ""), "out_of_memory") << on.dump();
    EXPECT_NE(on["error"].value("message", "").find("memory limit is"), std::string::npos) << on.dump();
}

TEST(Sandbox, AWorkerStartedOtherwiseThanTheArmAsksIsRefused) {
    WorkerDriver w;  // started without arguments: sandbox on
    ASSERT_FALSE(w.start().is_null());
    const json ev = w.configure({{"sandbox", "off"}});
    EXPECT_EQ(ev.value("type", ""), "error");
    EXPECT_EQ(ev.value("code", ""), "bad_knob");
    EXPECT_NE(ev.value("message", "").find("knob sandbox"), std::string::npos) << ev.dump();
    w.quit();
}

}  // namespace
