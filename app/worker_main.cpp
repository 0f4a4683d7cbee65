// pitlane-worker: one arm's engine. Speaks the JSON-lines protocol on stdin / (saved) stdout.
#include "pitlane/engine/engine.h"
#include "pitlane/engine/event_sink.h"
#include "pitlane/engine/nvml.h"
#include "pitlane/engine/sampler.h"
#include "pitlane/engine/system.h"
#include "pitlane/protocol/protocol.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

using namespace pitlane;

int main(int argc, char** argv) {
    // Before anything can print: the protocol keeps the real stdout, fd 1 goes to stderr.
    auto sink = engine::EventSink::takeOverStdout();
    std::signal(SIGPIPE, SIG_IGN);
    engine::installStopHandler();
    int metricsPeriodMs = 100;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--metrics-ms" && i + 1 < argc) metricsPeriodMs = std::max(10, std::atoi(argv[++i]));
        else if (a == "--help" || a == "-h") {
            std::cerr << "pitlane-worker [--metrics-ms N]\n"
                         "The Pitlane engine for one arm: reads JSON commands on stdin (configure, "
                         "run, quit), writes JSON events on stdout. Started by pitlane and "
                         "pitlane-cli.\n";
            return 0;
        }
    }

    engine::Engine eng(sink);
    auto hello = protocol::makeEvent(protocol::kHello);
    hello["pid"] = static_cast<long>(getpid());
    hello["protocol"] = protocol::kVersion;
    hello["worker_version"] = PITLANE_VERSION;
    auto manifest = engine::systemManifest();
    manifest.update(eng.torchManifest());
    manifest["gpu"] = engine::Nvml::instance().manifest();
    manifest["blas"] = engine::mappedBlas()["name"];
    hello["environment"] = manifest;
    if (!sink.emit(hello)) return 0;

    // The sampler starts with the first command, not at hello: the session starts the worker
    // processes of later replicates ahead of their turn, and an idle worker must cost nothing
    // (no thread waking every period) while other processes are measured.
    engine::MetricsSampler sampler(sink, metricsPeriodMs);
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
        try {
            if (name == protocol::kConfigure) {
                eng.configure(*cmd);
            } else if (name == protocol::kRun) {
                eng.runBlock(*cmd);
                sampler.tickNow();
                if (engine::stopRequested()) break;
            } else if (name == protocol::kQuit) {
                break;
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
    }
    sampler.stop();
    auto bye = protocol::makeEvent(protocol::kBye);
    bye["malformed_commands"] = malformed;
    bye["sampler_ticks"] = sampler.ticks();
    bye["sampler_cpu_s"] = sampler.selfCpuSeconds();
    const auto mem = engine::readMemory();
    bye["peak_rss_bytes"] = mem.peak_rss_bytes;
    sink.emit(bye);
    return 0;
}
