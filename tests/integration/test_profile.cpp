// The worker's profile command (issue 14, first part): libtorch's profiler around a few
// iterations after the measured ones. The operator table of resnet18 names its operators with
// their input shapes; the Chrome trace is valid Trace Event Format (parsed here and by Python's
// json module, as chrome://tracing and Perfetto read it); train mode shows batch norm's
// bookkeeping: at least one aten::add_ (num_batches_tracked += 1) per batch-norm layer and
// iteration more than eval.
#include "cli.h"
#include "harness.h"

#include "pitlane/protocol/protocol.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <fstream>
#include <map>

using namespace pitlane;
using namespace pitlane::itest;

namespace {

json resnetInput() { return json::array({{{"shape", {3, 64, 64}}, {"dtype", "float32"}}}); }

// A worker started as the runner starts one: sandboxed, with a scratch folder (Kineto writes its
// trace to a file there before the worker reads it back).
json profileOf(const std::string& mode, int iters) {
    QTemporaryDir scratch;
    WorkerDriver w({"--sandbox", "on", "--scratch", scratch.path()});
    EXPECT_FALSE(w.start().is_null());
    const json knobs = {{"mode", mode}, {"grad", "no_grad"}, {"intra_op_threads", 1}};
    const auto applied = w.configure(knobs, resnetInput(), modelDir() + "/resnet18.pt");
    EXPECT_EQ(applied.value("type", ""), "applied") << applied.dump();
    const json p = w.profile(iters);
    EXPECT_TRUE(w.quit());
    return p;
}

const json* op(const json& profile, const std::string& name) {
    for (const auto& o : profile["ops"])
        if (o["name"] == name) return &o;
    return nullptr;
}

}  // namespace

TEST(Profile, Resnet18OperatorsAndAChromeTrace) {
    const int iters = 3;
    const json p = profileOf("eval", iters);
    ASSERT_EQ(p.value("type", ""), "profile") << p.dump();
    EXPECT_EQ(p["iters"], iters);
    // resnet18: 20 convolutions, 20 batch norms, one linear layer per forward.
    const json* conv = op(p, "aten::conv2d");
    const json* bn = op(p, "aten::batch_norm");
    const json* linear = op(p, "aten::linear");
    ASSERT_TRUE(conv && bn && linear) << p["ops"].dump().substr(0, 2000);
    EXPECT_EQ((*conv)["calls"], 20 * iters);
    EXPECT_EQ((*bn)["calls"], 20 * iters);
    EXPECT_EQ((*linear)["calls"], iters);
    EXPECT_EQ((*linear)["input_shapes"][0]["shapes"], "[[1, 512], [1000, 512], [1000]]");
    // Self times add up to no more than the forwards' wall time.
    double self = 0;
    for (const auto& o : p["ops"]) {
        EXPECT_GE(o["self_us"].get<double>(), -1e-6) << o.dump();
        EXPECT_LE(o["self_us"].get<double>(), o["total_us"].get<double>() + 1e-6) << o.dump();
        self += o["self_us"].get<double>();
    }
    EXPECT_LE(self / 1e3, p["wall_ms"].get<double>() * 1.05);
    // The trace is the one Kineto writes (schemaVersion, its thread names, cpu_op events with
    // the input shapes): complete events with a name, start and duration; written out and read
    // back by Python's json module (test KinetoTraceLoadsInHolisticTraceAnalysis reads it with
    // HTA).
    EXPECT_NE(p["profiler"].get<std::string>().find("kineto"), std::string::npos) << p["profiler"];
    EXPECT_TRUE(p["trace"].contains("schemaVersion")) << "not Kineto's trace";
    const auto& events = p["trace"]["traceEvents"];
    ASSERT_GT(events.size(), 100u);
    int cpuOps = 0, threadNames = 0, convShapes = 0;
    for (const auto& e : events) {
        ASSERT_TRUE(e.contains("ph")) << e.dump();
        if (e["ph"] == "M" && e["name"] == "thread_name") ++threadNames;
        if (e["ph"] != "X") continue;
        ASSERT_TRUE(e["name"].is_string() && e["ts"].is_number() && e["dur"].is_number()) << e.dump();
        ASSERT_GE(e["dur"].get<double>(), 0);
        if (e.value("cat", "") == "cpu_op") {
            ++cpuOps;
            // Input shapes are recorded (Kineto writes them for operators with tensor inputs).
            if (e["name"] == "aten::conv2d")
                convShapes += e.contains("args") && e["args"].contains("Input Dims") &&
                              e["args"]["Input Dims"][0] == json::array({1, 3, 64, 64});
        }
    }
    EXPECT_GE(threadNames, 1);
    EXPECT_GT(cpuOps, 60 * iters);
    EXPECT_EQ(convShapes, iters) << "the first convolution of each iteration, with its input shape";
    QTemporaryDir dir;
    const std::string path = dir.filePath("trace.json").toStdString();
    std::ofstream(path) << p["trace"].dump();
    QProcess py;
    py.start(PITLANE_PYTHON,
             {"-c",
              "import json,sys; t=json.load(open(sys.argv[1])); ev=t['traceEvents']; "
              "assert all(e['dur']>=0 for e in ev if e['ph']=='X'); "
              "print(sum(1 for e in ev if e['ph']=='X' and e['name']=='aten::conv2d'))",
              QString::fromStdString(path)});
    ASSERT_TRUE(py.waitForFinished(30000));
    EXPECT_EQ(py.exitCode(), 0) << py.readAllStandardError().toStdString();
    EXPECT_EQ(py.readAllStandardOutput().trimmed().toInt(), 20 * iters);
}

TEST(Profile, TrainModeShowsBatchNormBookkeeping) {
    const int iters = 2;
    const json eval = profileOf("eval", iters), train = profileOf("train", iters);
    ASSERT_EQ(eval.value("type", ""), "profile") << eval.dump();
    ASSERT_EQ(train.value("type", ""), "profile") << train.dump();
    auto calls = [](const json& p, const std::string& name) {
        const json* o = op(p, name);
        return o ? (*o)["calls"].get<int>() : 0;
    };
    // num_batches_tracked += 1 in each of the 20 batch-norm layers, every training forward: at
    // least that many more in-place adds (measured here: 40 per forward, the running statistics'
    // updates add more; the 1.13 autograd profiler on a first forward of the same file counted 23).
    EXPECT_GE(calls(train, "aten::add_") - calls(eval, "aten::add_"), 20 * iters);
    EXPECT_EQ(calls(train, "aten::batch_norm"), calls(eval, "aten::batch_norm"));
}

// Through pitlane-cli: --profile adds each arm's operator table (and trace) after the measured
// blocks; the measured samples are exactly those asked for (the profiled iterations are not
// among them); the table says where the time goes.
TEST(Profile, CliProfileFlagAddsEachArmsOperatorsAfterTheMeasuredBlocks) {
    QTemporaryDir dir;
    const json preset = {{"name", "profiled"},
                         {"model", "mlp"},
                         {"run", {{"warmup_iters", 2}, {"iters", 20}, {"block_iters", 10}, {"processes", 2}}},
                         {"arms",
                          {{{"name", "grad"}, {"knobs", {{"grad", "enabled"}, {"intra_op_threads", 1}}}},
                           {{"name", "nograd"}, {"knobs", {{"grad", "no_grad"}, {"intra_op_threads", 1}}}}}}};
    const QString path = writeJson(dir.filePath("p.json"), preset);
    const QString out = dir.filePath("r.json");
    const QString md = dir.filePath("r.md"), html = dir.filePath("r.html");
    const auto r = runCli({"run", path, "--db", "none", "--quiet", "--profile", "4", "--json", out,
                           "--md", md, "--report", html},
                          120000);
    ASSERT_TRUE(r.finished);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("Where the time goes"), std::string::npos) << r.out;
    const json j = readJson(out);
    for (const auto& arm : j["arms"]) {
        SCOPED_TRACE(arm["name"].get<std::string>());
        EXPECT_EQ(arm["latency_ns"].size(), 20u) << "profiled iterations are never samples";
        ASSERT_TRUE(arm.contains("profile"));
        EXPECT_EQ(arm["profile"]["iters"], 4);
        bool linear = false;
        for (const auto& o : arm["profile"]["ops"]) linear |= o["name"] == "aten::linear";
        EXPECT_TRUE(linear);
        EXPECT_FALSE(arm["profile"]["trace"]["traceEvents"].empty());
    }
    // The reports carry the same table: the operator the first arm spends most self time in (the
    // reports list the largest; aten::linear, a wrapper with little self time of its own, may
    // fall below the cut on a busy machine).
    const std::string top = j["arms"][0]["profile"]["ops"][0]["name"].get<std::string>();
    auto readText = [](const QString& f) {
        QFile file(f);
        return file.open(QIODevice::ReadOnly) ? file.readAll().toStdString() : std::string();
    };
    const std::string mdText = readText(md), htmlText = readText(html);
    EXPECT_NE(mdText.find("## Where the time goes"), std::string::npos);
    EXPECT_NE(mdText.find("| `" + top + "` |"), std::string::npos) << top << "\n" << mdText.substr(0, 3000);
    EXPECT_NE(htmlText.find("<h2>Where the time goes</h2>"), std::string::npos);
    EXPECT_NE(htmlText.find("<code>" + top + "</code>"), std::string::npos) << top;
    // The preset field is validated like every other.
    json bad = preset;
    bad["run"]["profile_iters"] = 5000;
    const auto v = runCli({"validate", writeJson(dir.filePath("bad.json"), bad)}, 30000);
    EXPECT_NE(v.exitCode, 0);
    EXPECT_NE((v.out + v.err).find("run.profile_iters"), std::string::npos) << v.out << v.err;
}

namespace {

QString readAll(const QString& f) {
    QFile file(f);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

// Complete events on one thread must nest (a child inside its parent) or follow each other:
// what a trace viewer needs. Events in file order: start ascending, the longer first.
std::string nestingProblem(const json& events) {
    std::map<std::pair<long, long>, std::vector<std::pair<double, double>>>
        open;  // thread -> stack
    double lastTs = -1;
    for (const auto& e : events) {
        // Kineto's whole-profile span sits on a lane of its own (pid "Spans"), not a thread.
        if (e["ph"] != "X" || !e["pid"].is_number_integer()) continue;
        const double ts = e["ts"].get<double>(), end = ts + e["dur"].get<double>();
        if (ts < lastTs) return "out of order at " + e.dump();
        lastTs = ts;
        auto& stack = open[{e["pid"].get<long>(), e["tid"].get<long>()}];
        while (!stack.empty() && ts >= stack.back().second) stack.pop_back();
        if (!stack.empty() && end > stack.back().second + 1e-9)
            return "overlaps its parent: " + e.dump();
        stack.push_back({ts, end});
    }
    return {};
}

}  // namespace

// pitlane-cli run --trace DIR: one Chrome trace per profiled arm, named after the arm (made safe
// for a file name), with the arm's name on its process, named threads, an iteration span around
// each profiled forward and its operators nested inside; --trace alone profiles 10 iterations;
// its folder is created; a folder that cannot be made is refused before anything runs, and so is
// --trace outside `run`.
TEST(Profile, CliTraceWritesOneChromeTracePerArm) {
    QTemporaryDir dir;
    const json preset = {
        {"name", "traced"},
        {"model", "mlp"},
        {"run", {{"warmup_iters", 2}, {"iters", 10}, {"block_iters", 10}, {"processes", 1}}},
        {"arms",
         {{{"name", "grad / A"}, {"knobs", {{"grad", "enabled"}, {"intra_op_threads", 1}}}},
          {{"name", "no grad"}, {"knobs", {{"grad", "no_grad"}, {"intra_op_threads", 1}}}}}}};
    const QString path = writeJson(dir.filePath("p.json"), preset);
    const QString traces = dir.filePath("traces/new");  // created by pitlane-cli
    const auto r = runCli(
        {"run", path, "--db", "none", "--trace", traces, "--json", dir.filePath("r.json")}, 120000);
    ASSERT_TRUE(r.finished);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("Where the time goes"), std::string::npos) << "--trace implies --profile";
    const json results = readJson(dir.filePath("r.json"));
    const std::map<std::string, QString> files = {{"grad / A", "grad___A.trace.json"},
                                                  {"no grad", "no_grad.trace.json"}};
    for (const auto& arm : results["arms"]) {
        const std::string name = arm["name"];
        SCOPED_TRACE(name);
        EXPECT_EQ(arm["profile"]["iters"], 10)
            << "--trace alone profiles the default 10 iterations";
        const QString file = QDir(traces).filePath(files.at(name));
        EXPECT_NE(r.err.find(file.toStdString()), std::string::npos) << r.err;
        const json t = json::parse(readAll(file).toStdString(), nullptr, false);
        ASSERT_TRUE(t.is_object()) << file.toStdString();
        EXPECT_EQ(t["displayTimeUnit"], "ms");
        EXPECT_EQ(t["otherData"]["pitlane_arm"], name);
        const auto& ev = t["traceEvents"];
        ASSERT_GT(ev.size(), 10u);
        EXPECT_EQ(ev[0]["ph"], "M");
        EXPECT_EQ(ev[0]["name"], "process_name");
        EXPECT_EQ(ev[0]["args"]["name"], name);
        const long pid = ev[0]["pid"];
        int iterations = 0, linear = 0, threadNames = 0;
        for (const auto& e : ev) {
            // One process: the worker's. Kineto's own lanes (pids "Spans", "Traces", "") are
            // labels of the profile, not processes.
            if (!e["pid"].is_number_integer()) {
                EXPECT_TRUE(e["pid"].is_string()) << e.dump();
                EXPECT_NE(e.value("cat", ""), "cpu_op") << e.dump();
                continue;
            }
            EXPECT_EQ(e["pid"], pid) << e.dump();
            if (e["ph"] == "M") threadNames += e["name"] == "thread_name";
            if (e["ph"] != "X") continue;
            EXPECT_GT(e["ts"].get<double>(), 0) << e.dump();
            EXPECT_GE(e["dur"].get<double>(), 0) << e.dump();
            iterations += e["name"].get<std::string>().rfind("pitlane: iteration ", 0) == 0;
            linear += e["name"] == "aten::linear";
        }
        EXPECT_GE(threadNames, 1);
        EXPECT_EQ(iterations, 10);
        EXPECT_EQ(linear, 3 * 10) << "the mlp's three linear layers per iteration";
        EXPECT_EQ(nestingProblem(ev), "");
    }
    // A trace file that cannot be written (a folder stands in its place): the message names it,
    // the other arm's trace is still written, and the run exits 1.
    const QString crowded = dir.filePath("crowded");
    ASSERT_TRUE(QDir().mkpath(crowded + "/no_grad.trace.json"));
    const auto w = runCli({"run", path, "--db", "none", "--quiet", "--trace", crowded}, 120000);
    EXPECT_EQ(w.exitCode, 1) << w.err;
    EXPECT_NE(w.err.find("cannot write the trace of arm no grad to " + crowded.toStdString() +
                         "/no_grad.trace.json"),
              std::string::npos)
        << w.err;
    EXPECT_TRUE(QFileInfo(crowded + "/grad___A.trace.json").isFile());
    // The folder cannot be made: refused before anything is measured, naming the path.
    const QString blocker = writeJson(dir.filePath("a_file"), json::object());
    for (const QString& bad : {blocker, blocker + "/sub"}) {
        const auto b = runCli({"run", path, "--db", "none", "--trace", bad}, 30000);
        EXPECT_EQ(b.exitCode, 2) << b.err;
        EXPECT_NE(b.err.find("--trace " + bad.toStdString() + ": "), std::string::npos) << b.err;
        EXPECT_EQ(b.err.find("worker pid"), std::string::npos) << "refused before the run";
    }
    const auto rep = runCli({"report", dir.filePath("r.json"), "--trace", traces}, 30000);
    EXPECT_EQ(rep.exitCode, 2);
    EXPECT_NE(rep.err.find("--trace applies to `run` only"), std::string::npos) << rep.err;
}

namespace {

// Holistic Trace Analysis (HTA, from PyPI, in the tests' venv .venv-tests) through
// tools/trace_check/check_trace.py; "" when present, else what is missing.
QString traceCheckMissing(QString* python, QString* script) {
    const QString src = qEnvironmentVariable("PITLANE_SOURCE_DIR");
    if (src.isEmpty()) return "PITLANE_SOURCE_DIR is not set (ctest sets it)";
    *script = src + "/tools/trace_check/check_trace.py";
    *python = PITLANE_PYTHON;
    if (!QFileInfo(*python).isExecutable())
        return *python + " is missing (tools/run_tests.sh makes it: bash tools/bootstrap.sh --tests)";
    QProcess p;
    p.start(*python, {"-c", "import hta"});
    if (!p.waitForFinished(60000) || p.exitCode() != 0)
        return "HolisticTraceAnalysis is not importable by " + *python +
               " (tools/run_tests.sh installs tools/python-requirements-tests.txt into .venv-tests)";
    return {};
}

struct TraceCheck {
    int exitCode = -1;
    json report;
    std::string err;
};

TraceCheck checkTrace(const QString& python, const QString& script, const QString& trace) {
    QProcess p;
    p.start(python, {script, trace});
    TraceCheck out;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        out.err = "check_trace.py did not finish in 120 s";
        return out;
    }
    out.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    out.report = json::parse(p.readAllStandardOutput().toStdString(), nullptr, false);
    out.err = p.readAllStandardError().toStdString();
    return out;
}

}  // namespace

// Issues 14 and 25: a Chrome trace per arm, the one PyTorch's profiler (Kineto) writes, read by an
// independent reader of PyTorch profiler traces: Holistic Trace Analysis (from PyPI). Each
// resnet18 arm's trace file parses; it holds one process named after the arm, whose forward
// thread has each profiled iteration as a root with the operators nested below it (no complete
// event overlaps its parent), and resnet18's operators: 20 convolutions and one linear layer per
// iteration. A truncated trace and one whose events overlap are reported as errors.
TEST(Profile, KinetoTraceLoadsInHolisticTraceAnalysis) {
    QString python, script;
    const QString missing = traceCheckMissing(&python, &script);
    if (!missing.isEmpty())
        GTEST_SKIP() << "no trace parser to load the trace with: " << missing.toStdString();
    QTemporaryDir dir;
    const int iters = 3;
    const json preset = {
        {"name", "traced resnet18"},
        {"model", "resnet18"},
        {"input", json::array({{{"shape", {3, 64, 64}}, {"dtype", "float32"}}})},
        {"run", {{"warmup_iters", 1}, {"iters", 2}, {"block_iters", 2}, {"processes", 1}}},
        {"arms",
         {{{"name", "eval"},
           {"knobs", {{"mode", "eval"}, {"grad", "no_grad"}, {"intra_op_threads", 1}}}},
          {{"name", "train"},
           {"knobs", {{"mode", "train"}, {"grad", "no_grad"}, {"intra_op_threads", 2}}}}}}};
    const QString path = writeJson(dir.filePath("p.json"), preset);
    const QString traces = dir.filePath("traces");
    const auto r = runCli({"run", path, "--db", "none", "--quiet", "--profile",
                           QString::number(iters), "--trace", traces},
                          120000);
    ASSERT_TRUE(r.finished);
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    for (const std::string arm : {"eval", "train"}) {
        SCOPED_TRACE(arm);
        const QString file = QDir(traces).filePath(QString::fromStdString(arm) + ".trace.json");
        const TraceCheck c = checkTrace(python, script, file);
        ASSERT_EQ(c.exitCode, 0) << c.report.dump(1) << c.err;
        const json& rep = c.report;
        EXPECT_EQ(rep["ok"], true);
        EXPECT_EQ(rep["parser"]["name"], "HolisticTraceAnalysis");
        EXPECT_EQ(rep["errors"], json::array());
        ASSERT_EQ(rep["processes"].size(), 1u) << rep.dump(1);
        const json& proc = rep["processes"][0];
        EXPECT_EQ(proc["name"], arm);
        ASSERT_GE(proc["threads"].size(), 1u);
        // The forward runs on the worker's main thread: tid == pid.
        const json* forward = nullptr;
        for (const auto& t : proc["threads"])
            if (t["tid"] == proc["pid"]) forward = &t;
        ASSERT_TRUE(forward) << proc.dump(1);
        EXPECT_EQ((*forward)["roots"], iters) << "one root per profiled iteration";
        EXPECT_GE((*forward)["max_depth"].get<int>(), 4) << "iteration > conv2d > convolution > …";
        EXPECT_EQ((*forward)["dropped"], 0);
        EXPECT_EQ((*forward)["modelled"], (*forward)["complete"]);
        const json& ops = rep["ops"];
        EXPECT_EQ(ops.value("aten::conv2d", 0), 20 * iters) << ops.dump(1);
        EXPECT_EQ(ops.value("aten::batch_norm", 0), 20 * iters);
        EXPECT_EQ(ops.value("aten::linear", 0), iters);
        for (int i = 0; i < iters; ++i)
            EXPECT_EQ(ops.value("pitlane: iteration " + std::to_string(i), 0), 1);
    }
    // A truncated file: the parser says so and exits non-zero.
    const std::string whole = readAll(QDir(traces).filePath("eval.trace.json")).toStdString();
    const QString truncated = dir.filePath("truncated.trace.json");
    std::ofstream(truncated.toStdString()) << whole.substr(0, whole.size() / 2);
    const TraceCheck t = checkTrace(python, script, truncated);
    EXPECT_EQ(t.exitCode, 1) << t.report.dump(1) << t.err;
    ASSERT_TRUE(t.report.is_object()) << t.err;
    EXPECT_EQ(t.report["ok"], false);
    ASSERT_FALSE(t.report["errors"].empty());
    EXPECT_NE(t.report["errors"][0].get<std::string>().find("cannot read the trace"),
              std::string::npos);
    // A convolution that outlasts its iteration: the model cannot nest it and drops it.
    json overlapping = json::parse(whole);
    for (auto& e : overlapping["traceEvents"])
        if (e["name"] == "aten::conv2d") {
            e["dur"] = e["dur"].get<double>() + 1e6;
            break;
        }
    const QString bad = dir.filePath("overlapping.trace.json");
    std::ofstream(bad.toStdString()) << overlapping.dump();
    const TraceCheck o = checkTrace(python, script, bad);
    EXPECT_EQ(o.exitCode, 1) << o.report.dump(1) << o.err;
    ASSERT_TRUE(o.report.is_object()) << o.err;
    ASSERT_FALSE(o.report["errors"].empty());
    EXPECT_NE(o.report["errors"][0].get<std::string>().find("aten::conv2d"), std::string::npos)
        << o.report["errors"].dump();
}
