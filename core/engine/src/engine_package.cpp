// AOTInductor packages (issue 26): a `.pt2` written by torch._inductor.aoti_compile_and_package,
// loaded with torch::inductor::AOTIModelPackageLoader and run under inference_mode.
//
// The loader extracts the package (its compiled .so, kernels and weights) into a folder it makes
// with mkdtemp("/tmp/XXXXXX"): a fixed /tmp, which the sandbox does not let the worker write
// (Landlock: the scratch folder only), and which nobody removes after the worker's _Exit. So the
// worker exports its own mkdtemp (app/CMakeLists.txt: --export-dynamic-symbol=mkdtemp), and while
// a package loads it turns that one template into "./pl2XXXXXX" — the same length, so the
// loader's string stays whole — relative to the working directory, which is then the scratch
// folder ($TMPDIR). The package's files land in the scratch folder, which the run removes.
#include "engine_impl.h"

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/nativert/ModelRunnerHandle.h>  // the complete type for Impl's destructor

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <sys/mman.h>
#include <unistd.h>

namespace {

std::atomic<bool> gRedirectPackageDir{false};
char gExtractedTo[4096] = {0};  // the folder the last redirected mkdtemp made (relative)

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
    const bool redirect = gRedirectPackageDir.load() && tmpl && std::strcmp(tmpl, kTorchTemplate) == 0;
    if (redirect) std::memcpy(tmpl, kScratchTemplate, sizeof kScratchTemplate);
    char* made = real(tmpl);
    if (redirect && made) std::snprintf(gExtractedTo, sizeof gExtractedTo, "%s", made);
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

// Why a package did not load, with what made it (its metadata) against this worker's libtorch.
std::string packageLoadError(const std::string& modelPath, const spec::ModelFormat& format,
                             const std::exception& e) {
    std::string made;
    for (const auto& [k, v] : format.metadata)
        if (k == "torch_version" || k == "AOTI_DEVICE_KEY" || k == "AOTI_CPU_ISA") made += " " + k + "=" + v;
    return "cannot load " + modelPath + " as an AOTInductor package: " + torchReason(e) +
           " — this worker's libtorch is " + std::string(TORCH_VERSION) +
           (made.empty() ? std::string("; the package does not say what made it") : "; the package says:" + made) +
           " (a package runs only with the libtorch and the CPU / GPU it was compiled for: "
           "compile it again with the project's .venv/bin/python)";
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
    const auto t0 = Clock::now();
    try {
        package = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
            modelPath, "model", /*run_single_threaded=*/false, /*num_runners=*/1,
            device.is_cuda() ? device.index() : c10::DeviceIndex(-1));
    } catch (const std::exception& e) {
        gRedirectPackageDir = false;
        sink.error(code::kModelLoadFailed, packageLoadError(modelPath, format, e),
                   {{"path", modelPath}, {"format", spec::kFormatAoti}, {"torch", std::string(e.what()).substr(0, 2000)}});
        return false;
    }
    gRedirectPackageDir = false;
    loaded["load_ms"] = msSince(t0);
    const auto metadata = package->get_metadata();
    json info = {{"metadata", metadataJson(metadata)}, {"input_checks", true}};
    if (const auto spec = package->get_call_spec(); spec.size() == 2)
        info["call_spec"] = {{"in", spec[0]}, {"out", spec[1]}};
    info["extracted_to"] = gExtractedTo[0] && !extractIn.empty()
                               ? json(extractIn + "/" + std::string(gExtractedTo + (gExtractedTo[0] == '.' ? 2 : 0)))
                               : json(nullptr);  // torch's own /tmp folder (no scratch folder given)
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
