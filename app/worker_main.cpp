// pitlane-worker: one arm's engine. Speaks the JSON-lines protocol on the socket handed over as
// --channel-fd (a local worker), else on stdin / (saved) stdout (a worker behind ssh).
#include "pitlane/engine/engine.h"
#include "pitlane/engine/event_sink.h"
#include "pitlane/engine/nvml.h"
#include "pitlane/engine/sampler.h"
#include "pitlane/engine/energy.h"
#include "pitlane/engine/sandbox.h"
#include "pitlane/engine/system.h"
#include "pitlane/protocol/protocol.h"

#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

using namespace pitlane;

namespace {

struct Args {
    int metricsPeriodMs = 100;
    int channelFd = -1;  // -1: stdin and stdout
    engine::SandboxOptions sandbox = [] {
        engine::SandboxOptions o;
        o.memoryLimitBytes = -1;  // the default limit (auto) unless --memory-limit-mb says otherwise
        return o;
    }();
};

const char* const kUsage =
    "pitlane-worker [--channel-fd FD] [--metrics-ms N] [--sandbox on|off] [--scratch DIR] [--read FILE]... [--memory-limit-mb N|auto|none]\n"
    "The Pitlane engine for one arm: reads JSON commands (configure, run, quit) and writes JSON "
    "events on the socket FD (--channel-fd; a model cannot reopen a socket through /proc), else "
    "on stdin and stdout. Started by pitlane and pitlane-cli.\n"
    "The sandbox (on by default) confines the worker before it loads a model: writes only "
    "beneath the scratch directory (none without --scratch); reads only the files given with "
    "--read (the model), the scratch directory and the system's libraries; no sockets but "
    "AF_UNIX and no connect(); no exec or fork; no capabilities or new privileges; and a memory "
    "limit (auto: 75 % of physical memory). --scratch DIR is $TMPDIR, sandbox on or off (an "
    "AOTInductor package is extracted there).\n"
    "pitlane-worker --sandbox-exec --write DIR [--read PATH]... [--memory-limit-mb N|none] -- PROGRAM [ARGS]...\n"
    "The compile step's launcher: the same sandbox (writes only beneath DIR, reads only the PATHs "
    "and the system's libraries, no sockets but AF_UNIX, no connect()), exec and fork allowed; "
    "says {\"sandbox\": ...} on stdout, then runs PROGRAM.\n";

// The command line. Returns 0 to go on, else the exit code (--help: 0 after printing, a bad
// argument: 2 with the reason on stderr).
int parseArgs(int argc, char** argv, Args& args, bool& help) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        const std::string v = hasValue ? argv[i + 1] : "";
        if (a == "--channel-fd" && hasValue) {
            char* end = nullptr;
            const long fd = std::strtol(v.c_str(), &end, 10);
            if (!end || *end != '\0' || fd < 3 || fd > 1024) {
                std::cerr << "pitlane-worker: --channel-fd " << v << ": expected a descriptor number from 3 to 1024\n";
                return 2;
            }
            args.channelFd = int(fd);
            ++i;
        } else if (a == "--metrics-ms" && hasValue) {
            args.metricsPeriodMs = std::max(10, std::atoi(argv[++i]));
        } else if (a == "--sandbox" && (v == "on" || v == "off")) {
            args.sandbox.enabled = v == "on";
            ++i;
        } else if (a == "--scratch" && hasValue) {
            args.sandbox.scratch = v;
            ++i;
        } else if (a == "--read" && hasValue) {
            args.sandbox.readable.push_back(v);
            ++i;
        } else if (a == "--memory-limit-mb" && hasValue) {
            char* end = nullptr;
            const long long mb = std::strtoll(v.c_str(), &end, 10);
            if (v == "auto") args.sandbox.memoryLimitBytes = -1;
            else if (v == "none") args.sandbox.memoryLimitBytes = 0;
            else if (end && *end == '\0' && mb > 0 && mb < (1LL << 40)) args.sandbox.memoryLimitBytes = mb << 20;
            else {
                std::cerr << "pitlane-worker: --memory-limit-mb " << v << ": expected a positive number of MiB, auto or none\n";
                return 2;
            }
            ++i;
        } else if (a == "--help" || a == "-h") {
            std::cerr << kUsage;
            help = true;
            return 0;
        } else {
            std::cerr << "pitlane-worker: unknown or incomplete argument \"" << a << "\"\n" << kUsage;
            return 2;
        }
    }
    return 0;
}

// `pitlane-worker --sandbox-exec --write DIR [--read PATH]... [--memory-limit-mb N|none] --
// PROGRAM ARGS...`: the compile step's launcher (sandbox.h, sandboxExec). Returns only on failure.
int sandboxExecMain(int argc, char** argv) {
    engine::SandboxOptions opts;
    opts.memoryLimitBytes = 0;
    std::vector<std::string> program;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--") {
            program.assign(argv + i + 1, argv + argc);
            break;
        }
        if (a == "--write" && hasValue && opts.scratch.empty()) {
            opts.scratch = argv[++i];
        } else if (a == "--read" && hasValue) {
            opts.readable.push_back(argv[++i]);
        } else if (a == "--memory-limit-mb" && hasValue) {
            const std::string v = argv[++i];
            char* end = nullptr;
            const long long mb = std::strtoll(v.c_str(), &end, 10);
            if (v == "none") opts.memoryLimitBytes = 0;
            else if (end && *end == '\0' && mb > 0 && mb < (1LL << 40)) opts.memoryLimitBytes = mb << 20;
            else {
                std::cerr << "pitlane-worker --sandbox-exec: --memory-limit-mb " << v << ": expected a positive number of MiB or none\n";
                return 2;
            }
        } else {
            std::cerr << "pitlane-worker --sandbox-exec: unknown or incomplete argument \"" << a << "\"\n"
                      << "usage: pitlane-worker --sandbox-exec --write DIR [--read PATH]... [--memory-limit-mb N|none] -- PROGRAM [ARGS]...\n";
            return 2;
        }
    }
    if (opts.scratch.empty() || program.empty()) {
        std::cerr << "pitlane-worker --sandbox-exec: --write DIR and a program after -- are required\n";
        return 2;
    }
    engine::setJemallocBackgroundThreads(false);  // one thread when confined (they end at exec anyway)
    return engine::sandboxExec(opts, program);
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
    manifest["blas"] = engine::mappedBlas(manifest.value("mkl", false))["name"];
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
        } else if (name == protocol::kRun || name == protocol::kServe || name == protocol::kProfileCmd) {
            if (name == protocol::kRun)
                eng.runBlock(cmd);
            else if (name == protocol::kServe)
                eng.serveLevel(cmd);
            else
                eng.profileBlock(cmd);
            sampler.tickNow();
            if (engine::stopRequested()) return false;
        } else if (name == protocol::kQuit) {
            return false;
        } else {
            sink.error(protocol::code::kBadCommand, "unknown command \"" + name + "\"");
        }
    } catch (const std::bad_alloc&) {
        sink.error(protocol::code::kOutOfMemory, engine::outOfMemoryMessage("std::bad_alloc"));
    } catch (const std::exception& e) {
        // torch's c10::Error carries a backtrace: the first line is the reason, the rest detail.
        std::string what = e.what();
        const auto nl = what.find('\n');
        const std::string first = what.substr(0, nl);
        const std::string detail = nl == std::string::npos ? std::string() : what.substr(nl + 1, 4000);
        if (engine::isOutOfMemory(first))
            sink.error(protocol::code::kOutOfMemory, engine::outOfMemoryMessage(first), {{"detail", detail}});
        else
            sink.error(protocol::code::kInternal, "unexpected error: " + first, {{"detail", detail}});
    }
    return true;
}

// Command lines read from a descriptor (the channel, or stdin). A stop request (SIGTERM, no
// SA_RESTART) interrupts a waiting read.
class CommandReader {
public:
    explicit CommandReader(int fd) : fd_(fd) {}
    bool next(std::string& line) {
        for (;;) {
            if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
                line.assign(buffer_, 0, nl);
                buffer_.erase(0, nl + 1);
                return true;
            }
            if (eof_) {
                if (buffer_.empty()) return false;
                line.swap(buffer_);
                buffer_.clear();
                return true;
            }
            char chunk[1 << 16];
            const ssize_t n = ::read(fd_, chunk, sizeof chunk);
            if (n > 0) buffer_.append(chunk, std::size_t(n));
            else if (n < 0 && errno == EINTR) {
                if (engine::stopRequested()) return false;
            } else eof_ = true;
        }
    }

private:
    int fd_;
    std::string buffer_;
    bool eof_ = false;
};

// Reads commands until quit, end of input or a stop request. Returns the malformed line count.
int serve(engine::Engine& eng, engine::EventSink& sink, engine::MetricsSampler& sampler, int commandFd) {
    bool samplerStarted = false;
    int malformed = 0;
    std::string line;
    CommandReader commands(commandFd);
    while (!engine::stopRequested() && commands.next(line)) {
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
    if (argc > 1 && std::string(argv[1]) == "--sandbox-exec") return sandboxExecMain(argc, argv);
    // Before anything can print (the arguments print only to stderr): the protocol gets the
    // channel socket or keeps the real stdout, and fd 1 goes to stderr.
    Args args;
    bool help = false;
    const int argsRc = parseArgs(argc, argv, args, help);
    std::optional<engine::EventSink> sink;
    if (argsRc == 0 && !help && args.channelFd >= 0) {
        std::string why;
        auto channel = engine::EventSink::onChannel(args.channelFd, why);
        if (!channel) {
            std::cerr << "pitlane-worker: --channel-fd: " << why << "\n";
            return 2;
        }
        sink.emplace(std::move(*channel));
    } else {
        sink.emplace(engine::EventSink::takeOverStdout());
    }
    if (argsRc != 0 || help) return argsRc;
    std::signal(SIGPIPE, SIG_IGN);
    engine::installStopHandler();
#ifdef __linux__
    // Dies with the process that started it: a killed pitlane-cli or window must not leave a
    // worker running under init, maybe inside a forward that takes minutes.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    // Confined before torch starts a thread or sees the model (sandbox.h). jemalloc's background
    // threads, started before main, are stopped first and started again confined.
    const bool jemallocThreads = engine::setJemallocBackgroundThreads(false);
    // The CUDA module (libtorch_cuda and the CUDA libraries) is loaded now, before the sandbox
    // (whose memory limit then counts only what the model and its run take), for an arm on a
    // CUDA device (the runner sets PITLANE_WORKER_CUDA=preload) or where an NVIDIA driver exists
    // (the hello's cuda_available is torch's answer). A CPU arm's worker on a machine without a
    // driver never loads it: 31 libraries mapped before, 17 now (docs/PERFORMANCE.md).
    const char* cudaEnv = std::getenv("PITLANE_WORKER_CUDA");
    engine::loadCudaModuleIfUseful(cudaEnv && std::string(cudaEnv) == "preload");
    // NVML and the RAPL powercap files are opened before the sandbox too (issue 46): the blocks
    // read the energy counters through what is open, never by path.
    engine::EnergyMeter::instance();
    engine::applySandbox(args.sandbox);
    if (jemallocThreads) engine::setJemallocBackgroundThreads(true);

    engine::Engine eng(*sink);
    if (!sink->emit(helloEvent(eng))) return 0;

    // The sampler starts with the first command, not at hello: the session starts the worker
    // processes of later replicates ahead of their turn, and an idle worker must cost nothing
    // (no thread waking every period) while other processes are measured.
    engine::MetricsSampler sampler(*sink, args.metricsPeriodMs);
    const int malformed = serve(eng, *sink, sampler, args.channelFd >= 0 ? args.channelFd : STDIN_FILENO);
    sampler.stop();
    eng.finish();
    sink->emit(byeEvent(sampler, malformed));
    // Everything is said and flushed. Leave without running static destructors: libtorch's and
    // the CUDA libraries' teardown took 0.19-0.45 s per process after bye here (issue 25), paid
    // by every process replicate, and none of it writes anything anyone reads.
    std::fflush(nullptr);
    std::_Exit(0);
}
