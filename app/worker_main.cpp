// pitlane-worker: one arm's engine. Speaks the JSON-lines protocol on stdin / (saved) stdout.
#include "pitlane/engine/engine.h"
#include "pitlane/engine/event_sink.h"
#include "pitlane/engine/nvml.h"
#include "pitlane/engine/sampler.h"
#include "pitlane/engine/system.h"
#include "pitlane/protocol/protocol.h"

#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

using namespace pitlane;

namespace {

// The command line. False when it asked for --help (printed to stderr): the worker exits 0.
bool parseArgs(int argc, char** argv, int& metricsPeriodMs) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--metrics-ms" && i + 1 < argc) metricsPeriodMs = std::max(10, std::atoi(argv[++i]));
        else if (a == "--help" || a == "-h") {
            std::cerr << "pitlane-worker [--metrics-ms N]\n"
                         "The Pitlane engine for one arm: reads JSON commands on stdin (configure, "
                         "run, quit), writes JSON events on stdout. Started by pitlane and "
                         "pitlane-cli.\n";
            return false;
        }
    }
    return true;
}

// The hello event: who this worker is and the environment manifest.
nlohmann::json helloEvent(const engine::Engine& eng) {
    auto hello = protocol::makeEvent(protocol::kHello);
    hello["pid"] = static_cast<long>(getpid());
    hello["protocol"] = protocol::kVersion;
    hello["worker_version"] = PITLANE_VERSION;
    auto manifest = engine::systemManifest();
    manifest.update(eng.torchManifest());
    manifest["gpu"] = engine::Nvml::instance().manifest();
    manifest["blas"] = engine::mappedBlas()["name"];
    hello["environment"] = manifest;
    return hello;
}

// Runs one well-formed command. False when the worker should stop reading commands (quit, or a
// stop request during a run).
bool dispatch(engine::Engine& eng, engine::EventSink& sink, engine::MetricsSampler& sampler,
              const std::string& name, const nlohmann::json& cmd) {
    try {
        if (name == protocol::kConfigure) {
            eng.configure(cmd);
        } else if (name == protocol::kRun) {
            eng.runBlock(cmd);
            sampler.tickNow();
            if (engine::stopRequested()) return false;
        } else if (name == protocol::kQuit) {
            return false;
        } else {
            sink.error(protocol::code::kBadCommand, "unknown command \"" + name + "\"");
        }
    } catch (const std::exception& e) {
        // torch's c10::Error carries a backtrace: the first line is the reason, the rest detail.
        std::string what = e.what();
        const auto nl = what.find('\n');
        sink.error(protocol::code::kInternal,
                   "unexpected error: " + what.substr(0, nl),
                   {{"detail", nl == std::string::npos ? std::string() : what.substr(nl + 1, 4000)}});
    }
    return true;
}

// Reads commands until quit, end of input or a stop request. Returns the malformed line count.
int serve(engine::Engine& eng, engine::EventSink& sink, engine::MetricsSampler& sampler) {
    bool samplerStarted = false;
    int malformed = 0;
    std::string line;
    while (!engine::stopRequested() && std::getline(std::cin, line)) {
        if (line.empty()) continue;
        std::string why;
        auto cmd = protocol::decode(line, protocol::Kind::Command, &why);
        if (!cmd) {
            ++malformed;
            sink.error(protocol::code::kBadCommand, "malformed command line: " + why,
                       {{"line", line.substr(0, 200)}, {"malformed_count", malformed}});
            continue;
        }
        const auto name = (*cmd)["cmd"].get<std::string>();
        if (!samplerStarted && name != protocol::kQuit) {
            sampler.start();
            samplerStarted = true;
        }
        if (!dispatch(eng, sink, sampler, name, *cmd)) break;
    }
    return malformed;
}

// The bye event: malformed lines, the sampler's own cost, peak RSS.
nlohmann::json byeEvent(const engine::MetricsSampler& sampler, int malformed) {
    auto bye = protocol::makeEvent(protocol::kBye);
    bye["malformed_commands"] = malformed;
    bye["sampler_ticks"] = sampler.ticks();
    bye["sampler_cpu_s"] = sampler.selfCpuSeconds();
    const auto mem = engine::readMemory();
    bye["peak_rss_bytes"] = mem.peak_rss_bytes;
    return bye;
}

}  // namespace

int main(int argc, char** argv) {
    // Before anything can print: the protocol keeps the real stdout, fd 1 goes to stderr.
    auto sink = engine::EventSink::takeOverStdout();
    std::signal(SIGPIPE, SIG_IGN);
    engine::installStopHandler();
#ifdef __linux__
    // Dies with the process that started it: a killed pitlane-cli or window must not leave a
    // worker running under init, maybe inside a forward that takes minutes.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    int metricsPeriodMs = 100;
    if (!parseArgs(argc, argv, metricsPeriodMs)) return 0;

    engine::Engine eng(sink);
    if (!sink.emit(helloEvent(eng))) return 0;

    // The sampler starts with the first command, not at hello: the session starts the worker
    // processes of later replicates ahead of their turn, and an idle worker must cost nothing
    // (no thread waking every period) while other processes are measured.
    engine::MetricsSampler sampler(sink, metricsPeriodMs);
    const int malformed = serve(eng, sink, sampler);
    sampler.stop();
    sink.emit(byeEvent(sampler, malformed));
    return 0;
}
