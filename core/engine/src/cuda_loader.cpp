// The worker's side of the CUDA module (cuda_support.h): finds libpitlane_cuda.so beside the
// worker and loads it on demand, so a CPU arm never maps libtorch_cuda and the CUDA libraries
// it needs (issue 43). Nothing here includes a CUDA header or links a CUDA library.
#include "cuda_support.h"
#include "pitlane/engine/engine.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

namespace pitlane::engine::cuda {

#ifdef PITLANE_WITH_CUDA

namespace {

std::string moduleFile() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::string name = "libpitlane_cuda.so";
    return ec ? name : (exe.parent_path() / name).string();
}

struct Loaded {
    bool attempted = false;
    const Module* module = nullptr;
    std::string why;
};

Loaded& state() {
    static Loaded s;
    return s;
}

std::string versionText(int v) {  // 13000 -> "13.0"
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

bool compiledIn() { return true; }

const Module* load(std::string* why) {
    static std::once_flag once;
    std::call_once(once, [] {
        auto& s = state();
        s.attempted = true;
        const std::string file = moduleFile();
        // RTLD_GLOBAL: libtorch_cuda's symbols serve what is loaded later (an AOTInductor
        // package compiled for CUDA). Its static initialisers register the CUDA kernels and hooks.
        void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (!handle) {
            const char* err = dlerror();
            s.why = "the CUDA module " + file + " could not be loaded: " + (err ? err : "unknown error");
            return;
        }
        auto entry = reinterpret_cast<ModuleEntry>(dlsym(handle, PITLANE_CUDA_MODULE_ENTRY));
        if (!entry) {
            s.why = "the CUDA module " + file + " has no " PITLANE_CUDA_MODULE_ENTRY;
            return;
        }
        s.module = entry();
    });
    if (why) *why = state().why;
    return state().module;
}

const Module* loaded() { return state().module; }

bool attempted(std::string* why) {
    if (why) *why = state().why;
    return state().attempted;
}

bool driverPresent() {
    static const bool present = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) != nullptr;
    return present;
}

nlohmann::json versionsWithoutModule() {
    if (const Module* m = loaded()) return m->versions();
    using GetVersion = int (*)(int*);  // cudaError_t f(int*); cudaSuccess is 0
    int runtime = 0, driver = 0;
    if (auto f = reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion")); !f || f(&runtime) != 0)
        runtime = 0;
    if (auto f = reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "cudaDriverGetVersion")); !f || f(&driver) != 0)
        driver = 0;
    std::string cudnn = "unknown";
#ifdef PITLANE_CUDNN_LIBRARY
    // The wheel's cuDNN front library (CMake found it beside libtorch); its version is the one
    // libtorch_cuda was built with in the pinned wheel (9.19.0 both ways here).
    if (void* h = dlopen(PITLANE_CUDNN_LIBRARY, RTLD_LAZY | RTLD_LOCAL)) {
        if (auto f = reinterpret_cast<std::size_t (*)()>(dlsym(h, "cudnnGetVersion"))) {
            const std::size_t v = f();
            cudnn = std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
        }
    }
#endif
    return {{"runtime", runtime ? versionText(runtime) : "unknown"},
            {"driver", driver ? versionText(driver) : "none"},
            {"cudnn", cudnn}};
}

#else  // a libtorch without CUDA: no module to load

bool compiledIn() { return false; }
const Module* load(std::string* why) {
    if (why) *why = "this libtorch has no CUDA (a CPU-only build)";
    return nullptr;
}
const Module* loaded() { return nullptr; }
bool attempted(std::string* why) {
    if (why) why->clear();
    return false;
}
bool driverPresent() { return false; }
nlohmann::json versionsWithoutModule() { return nlohmann::json::object(); }

#endif

}  // namespace pitlane::engine::cuda

namespace pitlane::engine {
bool loadCudaModuleIfUseful(bool cudaArm) {
    if (!cuda::compiledIn() || !(cudaArm || cuda::driverPresent())) return false;
    return cuda::load() != nullptr;
}
}  // namespace pitlane::engine
