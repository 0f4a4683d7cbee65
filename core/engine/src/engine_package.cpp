// AOTInductor packages (issue 26): a `.pt2` written by torch._inductor.aoti_compile_and_package,
// loaded with torch::inductor::AOTIModelPackageLoader and run under inference_mode.
//
// The loader extracts the package (its compiled .so, kernels and weights) into a folder it makes
// with mkdtemp("/tmp/XXXXXX"): a fixed /tmp, which the sandbox does not let the worker write
// (Landlock: the scratch folder only), and which nobody removes after the worker's _Exit. So the
// worker exports its own mkdtemp (app/CMakeLists.txt: --export-dynamic-symbol=mkdtemp), and while
// a package loads it turns that one template into "./pl2XXXXXX" — the same length, so the
// loader's string stays whole — relative to the working directory, which is then the scratch
// folder ($TMPDIR; the session gives every local worker one, sandbox on or off). The package's
// files land in the scratch folder, which the run removes. The folder the loader made is known
// either way (redirected or torch's own /tmp one): a package that fails to load leaves it behind
// (the loader throws from its constructor, so its destructor never removes it), and the worker
// removes it then (issue 42: five such folders were left in /tmp with the sandbox off).
#include "engine_impl.h"

#include "pitlane/engine/package_failure.h"

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/nativert/ModelRunnerHandle.h>  // the complete type for Impl's destructor

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <ftw.h>
#include <iterator>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

std::atomic<bool> gLoadingPackage{false};      // a package loads: its folder is recorded
std::atomic<bool> gRedirectPackageDir{false};  // ... and made beneath the working directory
char gExtractedTo[4096] = {0};  // the folder the loader's mkdtemp made ("./pl2…" when redirected)

// Removes `name` (beneath the directory `parent`) and everything in it, with system calls only
// (async-signal-safe: it runs in the crash handler below). Each folder is read again until a
// pass removes nothing, so entries removed while it is read are not skipped.
struct Dirent64 {
    std::uint64_t d_ino;
    std::int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[1];
};
void removeTreeAt(int parent, const char* name, int depth) {
    const int fd = depth > 32 ? -1 : openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    for (int pass = 0; fd >= 0 && pass < 64; ++pass) {
        bool removed = false;
        alignas(8) char buf[4096];
        lseek(fd, 0, SEEK_SET);
        for (long n; (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;)
            for (long off = 0; off < n;) {
                const auto* d = reinterpret_cast<const Dirent64*>(buf + off);
                off += d->d_reclen;
                if (!std::strcmp(d->d_name, ".") || !std::strcmp(d->d_name, "..")) continue;
                if (d->d_type == DT_DIR) removeTreeAt(fd, d->d_name, depth + 1);
                else unlinkat(fd, d->d_name, 0);
                removed = true;
            }
        if (!removed) break;
    }
    if (fd >= 0) close(fd);
    unlinkat(parent, name, AT_REMOVEDIR);
}

// A package whose .so crashes the loader (a truncated library faults with SIGBUS inside dlopen;
// a hostile constructor may fault on purpose): the folder it was extracted into is removed,
// then the signal takes its default course (the session still sees the worker die by it).
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
struct sigaction gSavedActions[std::size(kCrashSignals)];

void onCrashWhileLoading(int sig) {
    if (gExtractedTo[0]) removeTreeAt(AT_FDCWD, gExtractedTo, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
    raise(sig);  // delivered when the handler returns
}

// Installs onCrashWhileLoading for the loader's constructor; the old handlers come back after.
struct CrashCleanup {
    CrashCleanup() {
        struct sigaction sa {};
        sa.sa_handler = onCrashWhileLoading;
        sigemptyset(&sa.sa_mask);
        for (std::size_t i = 0; i < std::size(kCrashSignals); ++i) sigaction(kCrashSignals[i], &sa, &gSavedActions[i]);
    }
    ~CrashCleanup() {
        for (std::size_t i = 0; i < std::size(kCrashSignals); ++i) sigaction(kCrashSignals[i], &gSavedActions[i], nullptr);
    }
};

}  // namespace

extern "C" char* mkdtemp(char* tmpl) {
    using Fn = char* (*)(char*);
    static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "mkdtemp"));
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    static constexpr char kTorchTemplate[] = "/tmp/XXXXXX";
    static constexpr char kScratchTemplate[] = "./pl2XXXXXX";
    static_assert(sizeof kTorchTemplate == sizeof kScratchTemplate, "the loader's string keeps its length");
    // glibc declares tmpl nonnull (mkdtemp(NULL) is undefined): no null test here.
    const bool loader = gLoadingPackage.load() && std::strcmp(tmpl, kTorchTemplate) == 0;
    if (loader && gRedirectPackageDir.load()) std::memcpy(tmpl, kScratchTemplate, sizeof kScratchTemplate);
    char* made = real(tmpl);
    if (loader && made) std::snprintf(gExtractedTo, sizeof gExtractedTo, "%s", made);
    return made;
}

namespace pitlane::engine {

using namespace detail;

namespace {

json metadataJson(const std::unordered_map<std::string, std::string>& m) {
    json j = json::object();
    for (const auto& [k, v] : m) j[k] = v;
    return j;
}

// The threads of the package's own OpenMP regions, read from the C++ it was compiled from (in
// the extracted folder): a number when Inductor wrote one in (`num_threads(N)`, the compiling
// machine's count unless cpp.threads said otherwise), "dynamic" when it asks OpenMP at run time
// (cpp.dynamic_threads: the intra_op_threads knob), "none" without any OpenMP region, null when
// the folder is not known.
json kernelThreads(const json& extractedTo) {
    if (!extractedTo.is_string()) return nullptr;
    int fixed = 0;
    bool dynamic = false, parallel = false;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(extractedTo.get<std::string>(), ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->path().extension() != ".cpp") continue;
        std::ifstream in(it->path());
        std::stringstream text;
        text << in.rdbuf();
        const std::string s = text.str();
        for (std::size_t at = s.find("#pragma omp parallel"); at != std::string::npos;
             at = s.find("#pragma omp parallel", at + 1)) {
            parallel = true;
            const auto eol = s.find('\n', at);
            const std::string line = s.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
            const auto n = line.find("num_threads(");
            if (n == std::string::npos) continue;
            const std::string arg = line.substr(n + 12, line.find(')', n) - n - 12);
            if (!arg.empty() && std::all_of(arg.begin(), arg.end(), ::isdigit)) fixed = std::max(fixed, std::stoi(arg));
            else dynamic = true;
        }
    }
    if (fixed > 0) return fixed;
    return dynamic ? json("dynamic") : (parallel ? json("dynamic") : json("none"));
}

std::string cwd() {
    char buf[4096];
    return getcwd(buf, sizeof buf) ? std::string(buf) : std::string();
}

// Removes `dir` and everything beneath it, links not followed; "" when it is gone, else why not.
// (nftw, not std::filesystem::remove_all: the worker resolved that to libtorch.so's own copy,
// which crashed through a null function pointer.)
std::string removeTree(const std::string& dir) {
    static thread_local std::string failed;
    failed.clear();
    const auto removeOne = [](const char* path, const struct stat*, int, struct FTW*) -> int {
        if (::remove(path) != 0 && failed.empty()) failed = std::string(path) + ": " + std::strerror(errno);
        return 0;
    };
    if (nftw(dir.c_str(), removeOne, 16, FTW_DEPTH | FTW_PHYS) != 0 && failed.empty())
        failed = dir + ": " + std::strerror(errno);
    struct stat st {};
    if (failed.empty() && lstat(dir.c_str(), &st) == 0) failed = dir + ": still there";
    return failed;
}

// The folder the loader's mkdtemp made during the last load, absolute ("" when none): beneath
// `extractIn` when redirected ("./pl2…"), torch's own otherwise ("/tmp/…").
std::string extractedFolder(const std::string& extractIn) {
    const std::string made(gExtractedTo);
    if (made.empty()) return {};
    if (made.rfind("./", 0) == 0) return extractIn.empty() ? std::string() : extractIn + "/" + made.substr(2);
    return made;
}

// The package's constants and the elements of those defined (its parameters); an older package
// without the constants map counts none.
std::pair<std::size_t, std::int64_t> countConstants(torch::inductor::AOTIModelPackageLoader& package) {
    std::int64_t params = 0;
    std::size_t constants = 0;
    try {
        for (const auto& [name, t] : package.get_runner()->extract_constants_map(/*use_inactive=*/false)) {
            ++constants;
            if (t.defined()) params += t.numel();
        }
    } catch (const std::exception&) {
    }
    return {constants, params};
}

}  // namespace

Engine::Impl::Impl(EventSink& s) : sink(s) {}
Engine::Impl::~Impl() = default;

// The same refusals as validation (spec::checkKnobsForFormat), for a worker driven directly:
// the first one as a bad_knob error naming the knob; false when there was one.
bool Engine::Impl::refuseKnobsForFormat(const ConfigureState& s, const spec::ModelFormat& format) {
    std::vector<spec::SpecError> refused;
    spec::checkKnobsForFormat(knobs, s.arm.value("knobs", json::object()), format, "<configure>", "knobs", refused);
    if (refused.empty()) return false;
    const auto& e = refused.front();
    const std::string knob = e.field().substr(e.field().find('.') + 1);
    sink.error(code::kBadKnob, e.field() + ": " + e.reason(), {{"knob", knob}, {"field", e.field()}, {"reason", e.reason()}});
    return true;
}

bool Engine::Impl::loadPackage(ConfigureState& s, const spec::ModelFormat& format) {
    json& loaded = s.loaded;
    if (refuseKnobsForFormat(s, format)) return false;
    // The generated code checks each input's dtype, device and sizes against what it was
    // compiled for only when this is set (read once, at the first run): a wrong batch size is
    // then an error naming the input, not a read past the end of a buffer.
    setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 1);
    const char* scratch = std::getenv("TMPDIR");
    std::string extractIn;
    if (scratch && *scratch && chdir(scratch) == 0) {
        extractIn = cwd();
        gRedirectPackageDir = true;
    }
    gExtractedTo[0] = '\0';
    gLoadingPackage = true;
    const auto t0 = Clock::now();
    try {
        CrashCleanup cleanup;
        package = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
            modelPath, "model", /*run_single_threaded=*/false, /*num_runners=*/1,
            device.is_cuda() ? device.index() : c10::DeviceIndex(-1));
    } catch (const std::exception& e) {
        gLoadingPackage = false;
        gRedirectPackageDir = false;
        // The loader threw from its constructor: its destructor, which removes the folder it
        // extracted into, never runs. Removed here, on every failure, sandbox on or off.
        const std::string folder = extractedFolder(extractIn);
        json detail = {{"path", modelPath}, {"format", spec::kFormatAoti}, {"torch", std::string(e.what()).substr(0, 2000)}};
        if (!folder.empty()) {
            const std::string left = removeTree(folder);
            detail["extracted_to"] = folder;
            detail["extraction_removed"] = left.empty();
            if (!left.empty())
                sink.warning("package_extraction_left", "could not remove " + folder + ", where the package was extracted: " + left);
        }
        const PackageFailure why = explainPackageFailure(torchReason(e), gExtractedTo, format.metadata,
                                                         TORCH_VERSION, readCpuFlags());
        detail["cause"] = why.cause;
        if (!why.entry.empty()) detail["entry"] = why.entry;
        sink.error(code::kModelLoadFailed, "cannot load " + modelPath + " as an AOTInductor package: " + why.message, detail);
        return false;
    }
    gLoadingPackage = false;
    gRedirectPackageDir = false;
    loaded["load_ms"] = msSince(t0);
    const auto metadata = package->get_metadata();
    json info = {{"metadata", metadataJson(metadata)}, {"input_checks", true}};
    if (const auto spec = package->get_call_spec(); spec.size() == 2)
        info["call_spec"] = {{"in", spec[0]}, {"out", spec[1]}};
    const std::string folder = extractedFolder(extractIn);
    info["extracted_to"] = folder.empty() ? json(nullptr) : json(folder);  // removed by releasePackage()
    const auto [constants, params] = countConstants(*package);
    info["constants"] = constants;
    loaded["parameters"] = params;
    // "2.11.0+cu130" (the wheel's local version) is libtorch "2.11.0".
    const auto made = metadata.find("torch_version");
    if (made != metadata.end() && made->second.substr(0, made->second.find('+')) != TORCH_VERSION)
        sink.warning("package_torch_version",
                     "the package was compiled by torch " + made->second + ", this worker runs libtorch " +
                         std::string(TORCH_VERSION) + ": AOTInductor packages are tied to the libtorch that made them");
    info["kernel_threads"] = kernelThreads(info["extracted_to"]);
    // A count compiled into the package's OpenMP regions is what they use, whatever the
    // intra_op_threads knob says (it still sizes the extern kernels: oneDNN, BLAS).
    if (info["kernel_threads"].is_number_integer() && info["kernel_threads"].get<int>() != at::get_num_threads())
        sink.warning("knob_not_applicable",
                     "intra_op_threads " + std::to_string(at::get_num_threads()) +
                         " does not reach this package's own kernels: it was compiled with " +
                         std::to_string(info["kernel_threads"].get<int>()) +
                         " OpenMP threads written into them (compile it with "
                         "torch._inductor.config.cpp.dynamic_threads=True to follow the knob)");
    packageInfo = info;
    loaded["format"] = spec::kFormatAoti;
    loaded["package"] = info;
    return true;
}

std::vector<at::Tensor> Engine::Impl::runPackage(const std::vector<c10::IValue>& in) {
    std::vector<at::Tensor> tensors;
    tensors.reserve(in.size());
    const bool copy = knobs.input_on_host && device.is_cuda();
    for (const auto& v : in) tensors.push_back(copy ? v.toTensor().to(device, /*non_blocking=*/true) : v.toTensor());
    return package->run(tensors);
}

// AOTInductor's runtime turns an exception inside the package into an error code and prints
// the reason ("Error: input_handles[0]: unmatched stride value ...") on stderr; libtorch then
// throws a bare "run_func_(...) API call failed". After a failed forward, run it once more with
// stderr in a memfd to read that reason (never in a timed iteration).
std::string Engine::Impl::packageRefusal(const std::vector<c10::IValue>& in) {
    std::fflush(stderr);
    const int saved = dup(2);
    const int mfd = memfd_create("pitlane-aoti-stderr", MFD_CLOEXEC);
    if (saved < 0 || mfd < 0 || dup2(mfd, 2) < 0) {
        if (saved >= 0) close(saved);
        if (mfd >= 0) close(mfd);
        return {};
    }
    try {
        c10::InferenceMode guard;
        runPackage(in);
    } catch (const std::exception&) {
        // Expected: the reason is what was printed.
    }
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::string text(8192, '\0');
    const ssize_t n = pread(mfd, text.data(), text.size(), 0);
    close(mfd);
    text.resize(n > 0 ? std::size_t(n) : 0);
    std::string reason;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("Error: ", 0) == 0) reason += (reason.empty() ? "" : "; ") + line.substr(7);
    return reason.empty() ? firstLine(text) : reason;
}

void Engine::Impl::releasePackage() {
    package.reset();  // its destructor removes the folder it extracted into
}

void Engine::finish() {
    impl_->releasePackage();
    impl_->releaseProgram();
}

}  // namespace pitlane::engine
