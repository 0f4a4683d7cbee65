#include "pitlane/engine/system.h"

#include <dirent.h>
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdlib>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <tuple>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace pitlane::engine {

namespace {

std::string readFirstLine(const std::string& path) {
    std::ifstream f(path);
    std::string line;
    std::getline(f, line);
    return line;
}

int readInt(const std::string& path, int def) {
    const auto s = readFirstLine(path);
    try {
        return s.empty() ? def : std::stoi(s);
    } catch (...) {
        return def;
    }
}

std::vector<int> maskToVector(const cpu_set_t& set) {
    std::vector<int> out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
}

}  // namespace

std::vector<int> allowedCores() { return threadAffinity(0); }

std::vector<int> threadAffinity(int tid) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(tid, sizeof(set), &set) != 0) return {};
    return maskToVector(set);
}

std::vector<int> taskIds() {
    std::vector<int> ids;
    if (DIR* d = opendir("/proc/self/task")) {
        while (auto* e = readdir(d))
            if (e->d_name[0] != '.') ids.push_back(std::atoi(e->d_name));
        closedir(d);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

std::vector<CoreInfo> topology(const std::vector<int>& cpus) {
    std::vector<CoreInfo> out;
    for (int c : cpus) {
        const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
        out.push_back({c, readInt(base + "physical_package_id", 0), readInt(base + "core_id", c)});
    }
    return out;
}

std::vector<int> coresForPolicy(Placement policy, int count, const std::vector<int>& allowed) {
    auto topo = topology(allowed);
    count = std::max(1, std::min<int>(count, static_cast<int>(allowed.size())));
    std::vector<int> chosen;
    if (policy == Placement::Compact) {
        std::stable_sort(topo.begin(), topo.end(), [](const CoreInfo& a, const CoreInfo& b) {
            return std::tie(a.package, a.core, a.cpu) < std::tie(b.package, b.core, b.cpu);
        });
        for (int i = 0; i < count; ++i) chosen.push_back(topo[i].cpu);
    } else {  // spread: first SMT thread of each core, alternating packages; siblings last
        std::map<std::pair<int, int>, int> rankInCore;  // (package, core) -> seen threads
        std::vector<std::tuple<int, int, int, int>> keyed;  // smt rank, core idx in pkg, pkg, cpu
        std::map<int, int> coreIndexInPackage;
        std::map<std::pair<int, int>, int> coreIdx;
        for (const auto& ci : topo) {
            const int smt = rankInCore[{ci.package, ci.core}]++;
            auto key = std::make_pair(ci.package, ci.core);
            if (!coreIdx.count(key)) coreIdx[key] = coreIndexInPackage[ci.package]++;
            keyed.emplace_back(smt, coreIdx[key], ci.package, ci.cpu);
        }
        std::sort(keyed.begin(), keyed.end());
        for (int i = 0; i < count; ++i) chosen.push_back(std::get<3>(keyed[i]));
    }
    std::sort(chosen.begin(), chosen.end());
    return chosen;
}

std::string pinProcess(const std::vector<int>& cores) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cores) CPU_SET(c, &set);
    for (int tid : taskIds()) {
        if (sched_setaffinity(tid, sizeof(set), &set) != 0) {
            std::ostringstream os;
            os << "sched_setaffinity(thread " << tid << ") failed: " << strerror(errno);
            return os.str();
        }
    }
    return {};
}

ProcMemory readMemory() {
    ProcMemory m;
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line)) {
        auto value = [&](const char* key) -> std::int64_t {
            return std::stoll(line.substr(std::string(key).size())) * 1024;
        };
        if (line.rfind("VmRSS:", 0) == 0) m.rss_bytes = value("VmRSS:");
        if (line.rfind("VmHWM:", 0) == 0) m.peak_rss_bytes = value("VmHWM:");
    }
    return m;
}

ProcCpu readCpu() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    ProcCpu c;
    c.user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    c.sys_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    c.voluntary_ctx = ru.ru_nvcsw;
    c.involuntary_ctx = ru.ru_nivcsw;
    c.minor_faults = ru.ru_minflt;
    c.major_faults = ru.ru_majflt;
    return c;
}

std::vector<CoreTimes> readCoreTimes() {
    std::vector<CoreTimes> out;
    std::ifstream f("/proc/stat");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !isdigit(line[3])) continue;
        std::istringstream is(line.substr(3));
        CoreTimes t;
        std::uint64_t user = 0, nice = 0, sys = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                      steal = 0;
        is >> t.cpu >> user >> nice >> sys >> idle >> iowait >> irq >> softirq >> steal;
        t.busy = user + nice + sys + irq + softirq + steal;
        t.total = t.busy + idle + iowait;
        out.push_back(t);
    }
    return out;
}

std::int64_t readMigrations() {
    std::int64_t total = 0;
    bool any = false;
    for (int tid : taskIds()) {
        std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/sched");
        std::string line;
        while (std::getline(f, line)) {
            if (line.rfind("se.nr_migrations", 0) == 0) {
                const auto colon = line.find(':');
                if (colon != std::string::npos) {
                    total += std::stoll(line.substr(colon + 1));
                    any = true;
                }
            }
        }
    }
    return any ? total : -1;
}

json mappedBlas(bool torchHasMkl) {
    std::ifstream f("/proc/self/maps");
    std::string line;
    std::set<std::string> paths;
    while (std::getline(f, line)) {
        const auto slash = line.find('/');
        if (slash == std::string::npos) continue;
        const auto path = line.substr(slash);
        const auto file = path.substr(path.rfind('/') + 1);
        if (file.find("blas") != std::string::npos || file.find("mkl_") != std::string::npos ||
            file.find("blis") != std::string::npos || file.find("lapack") != std::string::npos)
            paths.insert(path);
    }
    auto kind = [](const std::string& p) -> std::string {
        if (p.find("openblas") != std::string::npos) return "openblas";
        if (p.find("mkl") != std::string::npos) return "mkl";
        if (p.find("blis") != std::string::npos) return "blis";
        if (p.find("atlas") != std::string::npos) return "atlas";
        if (p.find("/blas/") != std::string::npos || p.find("libblas") != std::string::npos) return "reference";
        return "";
    };
    std::string name = "none";
    std::string chosen;
    // The library that really serves a matrix product: the one the dynamic linker resolves
    // sgemm_ to (several can be mapped: e.g. OpenBLAS's LAPACK next to the reference BLAS when
    // LD_LIBRARY_PATH points libblas.so.3 elsewhere).
    for (const char* sym : {"sgemm_", "cblas_sgemm"}) {
        Dl_info info{};
        if (void* f = dlsym(RTLD_DEFAULT, sym); f && dladdr(f, &info) && info.dli_fname) {
            // The file itself, not the name it was loaded by (Debian's libblas.so.3 is an
            // update-alternatives link to the BLAS chosen).
            char real[PATH_MAX];
            chosen = realpath(info.dli_fname, real) ? real : info.dli_fname;
            name = kind(chosen);
            if (name.empty() && torchHasMkl && chosen.find("libtorch_cpu") != std::string::npos) name = "mkl";
            if (name.empty()) name = "other";
            break;
        }
    }
    if (chosen.empty())
        for (const auto& p : paths) {
            const std::string n = kind(p);
            if (n.empty()) continue;
            if (name == "none" || name == "reference") {
                name = n;
                chosen = p;
            }
        }
    return {{"name", name}, {"path", chosen}, {"mapped", std::vector<std::string>(paths.begin(), paths.end())}};
}

namespace {

std::string allocatorKind(const std::string& path) {
    const auto file = path.substr(path.rfind('/') + 1);
    if (file.find("jemalloc") != std::string::npos) return "jemalloc";
    if (file.find("tcmalloc") != std::string::npos) return "tcmalloc";
    if (file.find("mimalloc") != std::string::npos) return "mimalloc";
    if (file.rfind("libc.so", 0) == 0 || file.rfind("libc-", 0) == 0) return "system";
    return "";
}

std::string canonical(const std::string& path) {
    char buf[PATH_MAX];
    return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

json jemallocOptions() {
    using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
    auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
    json o = json::object();
    if (!mallctl) return o;
    auto str = [&](const char* name) {
        const char* v = nullptr;
        std::size_t n = sizeof(v);
        if (mallctl(name, &v, &n, nullptr, 0) == 0 && v) o[name] = v;
    };
    auto ssize = [&](const char* name) {
        ssize_t v = 0;
        std::size_t n = sizeof(v);
        if (mallctl(name, &v, &n, nullptr, 0) == 0) o[name] = static_cast<std::int64_t>(v);
    };
    auto size = [&](const char* name) {
        std::size_t v = 0, n = sizeof(v);
        if (mallctl(name, &v, &n, nullptr, 0) == 0) o[name] = static_cast<std::uint64_t>(v);
    };
    auto boolean = [&](const char* name) {
        bool v = false;
        std::size_t n = sizeof(v);
        if (mallctl(name, &v, &n, nullptr, 0) == 0) o[name] = v;
    };
    auto uns = [&](const char* name) {
        unsigned v = 0;
        std::size_t n = sizeof(v);
        if (mallctl(name, &v, &n, nullptr, 0) == 0) o[name] = v;
    };
    str("version");
    ssize("opt.dirty_decay_ms");
    ssize("opt.muzzy_decay_ms");
    boolean("opt.background_thread");
    boolean("background_thread");  // running now
    size("opt.oversize_threshold");
    str("opt.metadata_thp");
    str("opt.thp");
    uns("opt.narenas");
    return o;
}

json tcmallocOptions() {
    json o = json::object();
    using Version = const char* (*)(int*, int*, const char**);
    if (auto v = reinterpret_cast<Version>(dlsym(RTLD_DEFAULT, "tc_version"))) {
        int major = 0, minor = 0;
        const char* patch = nullptr;
        if (const char* s = v(&major, &minor, &patch)) o["version"] = s;
    }
    using Numeric = int (*)(const char*, std::size_t*);
    if (auto get =
            reinterpret_cast<Numeric>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"))) {
        std::size_t value = 0;
        if (get("tcmalloc.max_total_thread_cache_bytes", &value))
            o["tcmalloc.max_total_thread_cache_bytes"] = static_cast<std::uint64_t>(value);
    }
    return o;
}

}  // namespace

json mappedAllocator() {
    // Every allocator library mapped, as the kernel names it.
    std::set<std::string> mapped;
    {
        std::ifstream f("/proc/self/maps");
        std::string line;
        while (std::getline(f, line)) {
            const auto slash = line.find('/');
            if (slash == std::string::npos) continue;
            const auto path = line.substr(slash);
            if (!allocatorKind(path).empty()) mapped.insert(path);
        }
    }
    // The library whose malloc the program's calls reach: the first definition in the global
    // lookup scope (the executable, then LD_PRELOAD, then the libraries in load order).
    std::string path, name = "other";
    Dl_info info{};
    void* sym = dlsym(RTLD_DEFAULT, "malloc");
    if (sym && dladdr(sym, &info) && info.dli_fname) {
        path = info.dli_fname;
        const auto real = canonical(path);
        for (const auto& m : mapped)
            if (canonical(m) == real) path = m;  // the name /proc/self/maps gives it
        const auto kind = allocatorKind(path);
        if (!kind.empty() && kind != "mimalloc") name = kind;
    }
    json conf = json::object();
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        const auto eq = entry.find('=');
        if (eq == std::string::npos) continue;
        const auto key = entry.substr(0, eq);
        const bool mine =
            name == "jemalloc"   ? key == "MALLOC_CONF"
            : name == "tcmalloc" ? key.rfind("TCMALLOC_", 0) == 0
            : name == "system"
                ? (key.rfind("MALLOC_", 0) == 0 && key != "MALLOC_CONF") || key == "GLIBC_TUNABLES"
                : false;
        if (mine) conf[key] = entry.substr(eq + 1);
    }
    json options = json::object();
    if (name == "jemalloc")
        options = jemallocOptions();
    else if (name == "tcmalloc")
        options = tcmallocOptions();
    else if (name == "system")
        options["version"] = std::string("glibc ") + gnu_get_libc_version();
    return {{"name", name},
            {"path", path},
            {"mapped", std::vector<std::string>(mapped.begin(), mapped.end())},
            {"conf", conf},
            {"options", options}};
}

namespace {
volatile std::sig_atomic_t g_stop = 0;
void onStopSignal(int) { g_stop = 1; }
}  // namespace

void installStopHandler() {
    struct sigaction sa {};
    sa.sa_handler = onStopSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocking read of stdin returns EINTR
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
}

bool stopRequested() { return g_stop != 0; }

json systemManifest() {
    json m;
    std::string model;
    std::vector<std::string> flags;
    std::set<std::pair<int, int>> physical;
    {
        std::ifstream f("/proc/cpuinfo");
        std::string line;
        while (std::getline(f, line))
        {
            if (model.empty() && line.rfind("model name", 0) == 0)
                model = line.substr(line.find(':') + 2);
            if (flags.empty() && line.rfind("flags", 0) == 0) {
                // The instruction sets that decide which kernels oneDNN and ATen can use (the
                // advisor's "no native bf16" rule reads them).
                static const std::set<std::string> wanted = {
                    "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16",
                    "avx_vnni", "amx_tile", "amx_bf16", "amx_int8"};
                std::istringstream words(line.substr(line.find(':') + 1));
                std::string w;
                while (words >> w)
                    if (wanted.count(w)) flags.push_back(w);
                if (flags.empty()) flags.push_back("none");
            }
        }
    }
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    std::vector<int> all;
    for (int c = 0; c < online; ++c) all.push_back(c);
    for (const auto& ci : topology(all)) physical.insert({ci.package, ci.core});
    std::set<int> packages;
    for (const auto& p : physical) packages.insert(p.first);
    m["cpu"] = model;
    m["cpu_flags"] = flags;
    m["cores"] = online;  // logical CPUs online
    m["physical_cores"] = physical.size();
    m["sockets"] = packages.size();
    m["smt"] = static_cast<long>(physical.size()) < online;
    m["allowed_cores"] = allowedCores();
    const auto gov = readFirstLine("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    m["governor"] = gov.empty() ? "unknown (no cpufreq)" : gov;
    m["memory_bytes"] = static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
    utsname u{};
    if (uname(&u) == 0) m["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
    // The moment the worker started, not the machine: the drift guard skips it, `compare` shows it.
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) == 3)
        m["load_average"] = {std::round(load[0] * 100) / 100, std::round(load[1] * 100) / 100,
                             std::round(load[2] * 100) / 100};
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    m["hostname"] = host;
    return m;
}

bool setJemallocBackgroundThreads(bool on) {
    using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
    auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
    if (!mallctl) return false;
    bool running = false;
    std::size_t n = sizeof(running);
    if (mallctl("background_thread", &running, &n, nullptr, 0) != 0) return false;
    if (running != on) mallctl("background_thread", nullptr, nullptr, &on, sizeof(on));
    return running;
}

}  // namespace pitlane::engine
