#include "pitlane/session/startup_watch.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

namespace pitlane::session {

namespace {

std::string readSmallFile(const std::string& path) {
    std::ifstream in(path);
    if (!in) return {};
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string oneDecimal(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

}  // namespace

std::string seconds(double ms) {
    const double s = std::max(0.0, ms) / 1000.0;
    if (s < 10) return oneDecimal(s) + " s";
    return std::to_string(long(std::lround(s))) + " s";
}

double MachineLoad::factor() const { return known() ? std::max(1.0, load1 / cores) : 1.0; }

std::string MachineLoad::text() const {
    if (!known()) return "load unknown";
    return "load " + oneDecimal(load1) + " on " + std::to_string(cores) + (cores == 1 ? " core" : " cores");
}

bool parseProcStat(const std::string& text, double ticksPerSecond, ProcStat* out) {
    // "PID (comm) S ppid ... utime stime ...": comm may hold anything but ends at the last ')'.
    const auto close = text.rfind(')');
    if (close == std::string::npos || ticksPerSecond <= 0) return false;
    std::istringstream rest(text.substr(close + 1));
    std::vector<std::string> fields;
    for (std::string f; rest >> f;) fields.push_back(f);
    // fields[0] is the state (field 3 of proc(5)); utime and stime are fields 14 and 15.
    if (fields.size() < 13 || fields[0].size() != 1) return false;
    try {
        const double utime = std::stod(fields[11]), stime = std::stod(fields[12]);
        if (utime < 0 || stime < 0) return false;
        out->ok = true;
        out->state = fields[0][0];
        out->cpuMs = (utime + stime) * 1000.0 / ticksPerSecond;
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

bool parseLoadavg(const std::string& text, double* load1) {
    std::istringstream in(text);
    double v = -1;
    if (!(in >> v) || v < 0 || !std::isfinite(v)) return false;
    *load1 = v;
    return true;
}

ProcStat readProcStat(long pid) {
    ProcStat st;
    if (pid <= 0) return st;
    const std::string text = readSmallFile("/proc/" + std::to_string(pid) + "/stat");
    if (text.empty() || !parseProcStat(text, double(::sysconf(_SC_CLK_TCK)), &st)) return {};
    return st;
}

MachineLoad readMachineLoad() {
    MachineLoad load;
    double v = -1;
    if (!parseLoadavg(readSmallFile("/proc/loadavg"), &v)) return load;
    // The load average counts the whole machine's tasks, so it is spread over the machine's
    // cores (not this process's affinity mask).
    const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (cores <= 0) return load;
    load.load1 = v;
    load.cores = int(cores);
    return load;
}

double StartupPolicy::cpuCapMs() const { return std::max(allowanceMs, kCpuCapMinMs); }

double StartupPolicy::overloadCapMs(const MachineLoad& load) const {
    return kOverloadFactor * allowanceMs * load.factor();
}

StartupJudgement judgeStartup(const StartupPolicy& policy, const StartupReading& r, const MachineLoad& load) {
    StartupJudgement j;
    const std::string used =
        r.cpuMs >= 0 ? "the worker used " + seconds(r.cpuMs) + " of CPU in " + seconds(r.elapsedMs) : std::string();
    const bool overloaded = load.factor() > 1.0;
    if (r.cpuMs < 0) {
        // What it does cannot be seen: a fixed deadline, longer on a loaded machine.
        const double deadline = policy.allowanceMs * load.factor();
        if (r.elapsedMs < deadline) return j;
        j.verdict = overloaded ? StartupVerdict::Overloaded : StartupVerdict::Hung;
        j.message = "the worker did not start (no hello) within " + std::to_string(long(std::lround(deadline))) +
                    " ms" +
                    (overloaded ? ": the machine is overloaded: " + load.text() + " (the start-up allowance of " +
                                      std::to_string(long(policy.allowanceMs)) + " ms was scaled by it)"
                                : std::string(": it was declared hung and killed"));
        return j;
    }
    if (r.sinceProgressMs >= policy.allowanceMs) {
        j.verdict = StartupVerdict::Hung;
        j.message = "the worker did not start (no hello) within " + seconds(r.elapsedMs) + " and used no CPU for the last " +
                    seconds(r.sinceProgressMs) +
                    ", neither waiting for a CPU nor for the disk: it was declared hung and killed (" + used + "; " +
                    load.text() + ")";
        return j;
    }
    if (r.cpuMs >= policy.cpuCapMs()) {
        j.verdict = StartupVerdict::Hung;
        j.message = "the worker did not start (no hello) after using " + seconds(r.cpuMs) + " of CPU in " +
                    seconds(r.elapsedMs) + " (a start-up takes about a second of CPU): it was declared hung and killed (" +
                    load.text() + ")";
        return j;
    }
    if (r.elapsedMs >= policy.overloadCapMs(load)) {
        j.verdict = StartupVerdict::Overloaded;
        j.message = "the worker did not start (no hello) within " + seconds(r.elapsedMs) + " although it was making progress: " +
                    (overloaded ? "the machine is overloaded: " + load.text() : load.text()) + "; " + used +
                    ": it was stopped (start fewer runs or workers at once)";
        return j;
    }
    // Slow, said so, only while it shows progress: one without any for half the allowance may
    // be hung, and is judged when the allowance has passed.
    if (r.elapsedMs >= policy.allowanceMs && r.sinceProgressMs < policy.allowanceMs / 2) {
        j.verdict = StartupVerdict::Slow;
        j.message = "slow to start, waiting while it makes progress: " +
                    (overloaded ? "the machine is overloaded: " + load.text() : load.text()) + "; " + used;
    }
    return j;
}

void StartupProgress::start(double nowMs) {
    startedMs = lastProgressMs = nowMs;
    lastCpuMs = -1;
    slowSaid = false;
}

StartupReading StartupProgress::observe(double nowMs, const ProcStat& st) {
    if (startedMs < 0) start(nowMs);
    StartupReading r;
    r.elapsedMs = nowMs - startedMs;
    if (!st.ok) {
        r.cpuMs = -1;
        r.sinceProgressMs = nowMs - lastProgressMs;
        return r;
    }
    // Runnable (waiting for a CPU on a loaded machine) or in disk wait is not a hang; nor is CPU
    // time that grew since the last look.
    if (st.cpuMs > lastCpuMs || st.state == 'R' || st.state == 'D') lastProgressMs = nowMs;
    lastCpuMs = std::max(lastCpuMs, st.cpuMs);
    r.cpuMs = st.cpuMs;
    r.sinceProgressMs = nowMs - lastProgressMs;
    return r;
}

}  // namespace pitlane::session
