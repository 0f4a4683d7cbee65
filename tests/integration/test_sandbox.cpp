// The worker's sandbox, proven from inside real workers started by the real runner: what it
// reads back (no new privileges, the seccomp filter, the memory limit, probes of a socket and of
// writes beside and inside the scratch folder), a model that writes a file outside its scratch
// folder (torch.save in a scripted forward), a model that allocates above the memory limit, and
// the opt-out knob. Every check has its counterpart with the sandbox off, so none can pass
// because nothing was tried.
#include "harness.h"

#include "pitlane/spec/preset.h"

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

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

// 75 % of MemTotal, read here independently of the engine.
std::int64_t threeQuartersOfMemory() {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    std::int64_t kib = 0;
    while (in >> key >> kib >> unit)
        if (key == "MemTotal:") return kib * 1024 / 4 * 3;
    return 0;
}

bool refused(const json& probe) { return probe.is_string() && probe.get<std::string>().rfind("refused", 0) == 0; }

results::ArmResult runOneArm(const json& knobs, const std::string& model = "mlp",
                             const json& input = json()) {
    json p = {{"name", "sandbox"}, {"model", model}, {"run", kRun},
              {"arms", json::array({{{"name", "A"}, {"knobs", knobs}}})}};
    if (!input.is_null()) p["input"] = input;
    const auto preset = spec::parsePreset(p, "", modelDir());
    auto result = runPreset(preset, 90000);
    EXPECT_EQ(result.arms.size(), 1u);
    return result.arms.empty() ? results::ArmResult{} : result.arms.front();
}

TEST(Sandbox, OnByDefaultAndReadBackFromInsideTheWorker) {
    const auto a = runOneArm({{"intra_op_threads", 1}});
    ASSERT_EQ(a.status, "ok") << (a.error ? a.error->message : "");
    const json& sb = a.applied["sandbox"];
    ASSERT_TRUE(sb.is_object()) << a.applied.dump();
    EXPECT_EQ(sb["enabled"], true);
    EXPECT_EQ(sb["threads_at_start"], 1) << "Landlock must be applied before any thread exists";
    const json& rb = sb["read_back"];
    EXPECT_EQ(rb["no_new_privs"], true);
    EXPECT_EQ(rb["seccomp_mode"], "2");
    EXPECT_TRUE(refused(rb["socket_inet"])) << rb.dump();
    EXPECT_EQ(rb["socket_unix"], "allowed");
    // The limit is on top of what the worker had mapped when it started (libtorch's data).
    EXPECT_EQ(sb["memory_limit_bytes"], threeQuartersOfMemory());
    ASSERT_TRUE(sb["data_at_start_bytes"].is_number_integer()) << sb.dump();
    EXPECT_GT(sb["data_at_start_bytes"].get<std::int64_t>(), 0);
    EXPECT_EQ(rb["rlimit_data_bytes"], threeQuartersOfMemory() + sb["data_at_start_bytes"].get<std::int64_t>());
    ASSERT_TRUE(sb["scratch"].is_string());
    const QString scratch = QString::fromStdString(sb["scratch"].get<std::string>());
    EXPECT_TRUE(scratch.startsWith(QDir::tempPath() + "/pitlane-run-")) << scratch.toStdString();
    EXPECT_FALSE(QFileInfo::exists(scratch)) << "the run's scratch folder outlived the run";
    if (landlockAbi() < 1) GTEST_SKIP() << "this kernel has no Landlock: writes are not confined";
    EXPECT_NE(sb["filesystem"].get<std::string>().find("landlock"), std::string::npos) << sb.dump();
    EXPECT_EQ(rb["write_scratch"], "allowed");
    EXPECT_TRUE(refused(rb["write_outside"])) << rb.dump();
    EXPECT_TRUE(sb["errors"].empty()) << sb["errors"].dump();
}

TEST(Sandbox, OffIsOneKnobAndShownInTheReadBack) {
    const auto a = runOneArm({{"intra_op_threads", 1}, {"sandbox", "off"}});
    ASSERT_EQ(a.status, "ok") << (a.error ? a.error->message : "");
    const json& sb = a.applied["sandbox"];
    EXPECT_EQ(sb["enabled"], false);
    EXPECT_EQ(sb["read_back"]["socket_inet"], "allowed");
    EXPECT_EQ(sb["read_back"]["write_outside"], "allowed");
    EXPECT_EQ(sb["read_back"]["seccomp_mode"], "0");
    EXPECT_TRUE(sb["memory_limit_bytes"].is_null());
    EXPECT_EQ(a.knobs["sandbox"], "off");
}

// A scripted forward that calls torch.save(x, <target>): the dropper of the issue.
QString exportDropper(const QString& dir, const QString& target) {
    const QString pt = dir + "/dropper.pt";
    const QString script = QStringLiteral(
        "import torch, sys\n"
        "class Dropper(torch.nn.Module):\n"
        "    def __init__(self, target: str):\n"
        "        super().__init__()\n"
        "        self.target = target\n"
        "    def forward(self, x):\n"
        "        torch.save(x, self.target)\n"
        "        return x * 2\n"
        "torch.jit.script(Dropper(sys.argv[1])).save(sys.argv[2])\n");
    const QString scriptPath = dir + "/export_dropper.py";  // torch.jit.script reads the source
    QFile f(scriptPath);
    if (!f.open(QIODevice::WriteOnly) || f.write(script.toUtf8()) < 0) return {};
    f.close();
    QProcess py;
    py.start(QStringLiteral(PITLANE_PYTHON), {scriptPath, target, pt});
    if (!py.waitForFinished(60000) || py.exitCode() != 0) {
        ADD_FAILURE() << "exporting the dropper failed: " << py.readAllStandardError().toStdString();
        return {};
    }
    return pt;
}

TEST(Sandbox, AModelCannotWriteOutsideItsScratchFolder) {
    if (landlockAbi() < 1) GTEST_SKIP() << "this kernel has no Landlock: writes are not confined";
    QTemporaryDir dir;
    const QString target = dir.path() + "/dropped.pt";
    const QString model = exportDropper(dir.path(), target);
    ASSERT_FALSE(model.isEmpty());
    const json input = json::array({{{"shape", {4}}, {"dtype", "float32"}}});

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
    const json& sb = roomy.applied["sandbox"];
    EXPECT_EQ(sb["memory_limit_bytes"], std::int64_t(4096) << 20);
    EXPECT_EQ(sb["read_back"]["rlimit_data_bytes"],
              (std::int64_t(4096) << 20) + sb.value("data_at_start_bytes", std::int64_t(0)));
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
