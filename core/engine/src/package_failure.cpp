// Why an AOTInductor package did not load (package_failure.h). The reasons are libtorch 2.11's
// (torch/csrc/inductor/aoti_package/model_package_loader.cpp and dlopen's): a damaged .so entry
// gives "Error in dlopen: <folder>/<entry>: invalid ELF header" (or "file too short", "wrong ELF
// class"), a package built against another libtorch "undefined symbol: <symbol>", one built with a
// newer C++ runtime "version `GLIBCXX_3.4.32' not found".
#include "pitlane/engine/package_failure.h"

#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace pitlane::engine {

namespace {

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

std::string meta(const std::map<std::string, std::string>& m, const char* key) {
    const auto it = m.find(key);
    return it == m.end() ? std::string() : it->second;
}

// What the package says made it, in words ("torch 2.11.0+cu130 for cpu (CPU ISA AVX512)").
std::string madeBy(const std::map<std::string, std::string>& m) {
    std::string s;
    if (!meta(m, "torch_version").empty()) s += "torch " + meta(m, "torch_version");
    if (!meta(m, "AOTI_DEVICE_KEY").empty()) s += (s.empty() ? "" : " ") + std::string("for ") + meta(m, "AOTI_DEVICE_KEY");
    if (!meta(m, "AOTI_CPU_ISA").empty()) s += (s.empty() ? "" : " ") + std::string("(CPU ISA ") + meta(m, "AOTI_CPU_ISA") + ")";
    return s;
}

// The ISA names of the package (AOTI_CPU_ISA: Inductor's pick_vec_isa, upper case) this CPU
// lacks, by the /proc/cpuinfo flags each one compiles with (torch/_inductor/cpu_vec_isa.py).
std::string missingIsa(const std::string& isa, const std::string& cpuFlags) {
    if (isa.empty() || cpuFlags.empty()) return {};
    static const std::map<std::string, std::vector<std::string>> needs = {
        {"AVX2", {"avx2", "fma", "f16c"}},
        {"AVX512", {"avx512f", "avx512dq", "avx512vl", "avx512bw", "fma"}},
        {"AVX512_VNNI", {"avx512_vnni"}},
        {"AMX_TILE", {"amx_tile", "amx_bf16", "amx_int8"}},
    };
    std::set<std::string> flags;
    std::istringstream in(cpuFlags);
    for (std::string f; in >> f;) flags.insert(f);
    std::istringstream names(isa);
    std::string missing;
    for (std::string name; names >> name;) {
        const auto it = needs.find(name);
        if (it == needs.end()) continue;
        for (const auto& f : it->second)
            if (!flags.count(f)) {
                missing += (missing.empty() ? "" : ", ") + name + " (" + f + ")";
                break;
            }
    }
    return missing;
}

// "2.11.0+cu130" → "2.11.0" (a wheel's local version is the same libtorch).
std::string baseVersion(const std::string& v) { return v.substr(0, v.find('+')); }

// Takes the extraction folder off the paths in `reason` ("./pl2Ab12Cd/.m.tmp/data/…so: …" →
// ".m.tmp/data/…so: …") and returns the entry the first such path names.
std::string withoutFolder(std::string reason, const std::string& folder, std::string& entry) {
    if (folder.empty()) return reason;
    const std::string prefix = folder + "/";
    for (std::size_t at = reason.find(prefix); at != std::string::npos; at = reason.find(prefix, at)) {
        reason.erase(at, prefix.size());
        if (entry.empty()) {
            const std::size_t end = reason.find_first_of(": \n", at);
            entry = reason.substr(at, end == std::string::npos ? std::string::npos : end - at);
        }
    }
    return reason;
}

}  // namespace

PackageFailure explainPackageFailure(const std::string& reasonIn, const std::string& extractedTo,
                                     const std::map<std::string, std::string>& metadata,
                                     const std::string& torchVersion, const std::string& cpuFlags) {
    PackageFailure f;
    const std::string reason = withoutFolder(reasonIn, extractedTo, f.entry);
    const std::string made = madeBy(metadata);
    const std::string madeTorch = meta(metadata, "torch_version");
    const bool otherTorch = !madeTorch.empty() && baseVersion(madeTorch) != torchVersion;
    const std::string lacks = missingIsa(meta(metadata, "AOTI_CPU_ISA"), cpuFlags);
    const std::string worker = "this worker's libtorch is " + torchVersion;
    const std::string said = made.empty() ? std::string("the package does not say what made it")
                                          : "the package says it was made by " + made;
    const std::string entryText = f.entry.empty() ? std::string() : "entry " + f.entry + ": ";
    const std::string dlopenPrefix = "Error in dlopen: ";
    const bool dlopen = has(reason, "Error in dlopen");
    // The text after "Error in dlopen: <entry>: " (what the dynamic loader said of the entry).
    std::string loaderSaid = reason;
    if (const auto p = reason.find(dlopenPrefix); p != std::string::npos) loaderSaid = reason.substr(p + dlopenPrefix.size());
    if (!f.entry.empty() && loaderSaid.rfind(f.entry + ": ", 0) == 0) loaderSaid = loaderSaid.substr(f.entry.size() + 2);

    // Evidence of a version mismatch: a symbol or a versioned C++ runtime the .so needs that
    // this machine lacks, or a device this libtorch has no runner for.
    if ((dlopen && (has(reason, "undefined symbol") || has(reason, "version `"))) ||
        has(reason, "Unsupported device found")) {
        f.cause = "version_mismatch";
        f.message = entryText + loaderSaid + " — " + worker + "; " + said +
                    " (the package was compiled against another libtorch or system than this worker's: it "
                    "runs only with the libtorch and the CPU / GPU it was compiled for; compile it again "
                    "with the project's .venv/bin/python)";
        return f;
    }
    if (dlopen && has(reason, "cannot open shared object file") &&
        (f.entry.empty() || loaderSaid.find(".so") < loaderSaid.find("cannot open shared object file"))) {
        f.cause = "missing_library";
        f.message = entryText + "a library it links is not on this machine: " + loaderSaid + " (" + said + ")";
        return f;
    }
    if (has(reason, "Failed to create temporary directory") || has(reason, "Failed to create directory") ||
        has(reason, "No space left") || has(reason, "Failed to open output")) {
        f.cause = "extraction";
        f.message = "it could not be extracted: " + reason +
                    " (a package is extracted beneath $TMPDIR, the run's scratch folder, before it loads)";
        return f;
    }
    // The package's own files: an entry that is not a loadable library, metadata that does not
    // parse, no model in it. Versions are not the cause unless they also differ (said apart).
    const bool malformed = dlopen || has(reason, "json.exception") || has(reason, "parse_error") ||
                           has(reason, "No AOTInductor generate") || has(reason, "No files found in zip") ||
                           has(reason, "zip") || has(reason, "No device information found") ||
                           has(reason, "Failed to find parent path") || has(reason, "File found:");
    // What differs from what made it, when something does.
    std::string differs;
    if (otherTorch) differs = "it was compiled by torch " + madeTorch + " and " + worker;
    if (!lacks.empty())
        differs += (differs.empty() ? "" : "; ") + std::string("it was compiled for CPU features this CPU lacks: ") + lacks;
    const std::string versions =
        !differs.empty() ? "; besides, " + differs
                         : "; " + said + (made.empty() ? std::string()
                                                       : std::string(", which matches this worker's libtorch ") + torchVersion +
                                                             (cpuFlags.empty() ? "" : " and CPU") + ": not a version mismatch");
    if (malformed) {
        f.cause = "malformed";
        f.message = "the package is malformed: " +
                    (dlopen ? entryText + "not a shared library the dynamic loader can load (" + loaderSaid + ")"
                            : reason) +
                    versions + " (the file is damaged, or was not written by aoti_compile_and_package: "
                               "use an intact copy or compile it again)";
        return f;
    }
    // Nothing says what: the reason as given, and the versions only as the evidence allows.
    if (!differs.empty()) {
        f.cause = "version_mismatch";
        f.message = reason + " — " + differs +
                    " (a package runs only with the libtorch and the CPU / GPU it was compiled for: compile it "
                    "again with the project's .venv/bin/python)";
        return f;
    }
    f.cause = "other";
    f.message = reason + versions;
    return f;
}

std::string readCpuFlags() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("flags", 0) == 0) {
            const auto colon = line.find(':');
            return colon == std::string::npos ? std::string() : line.substr(colon + 1);
        }
    return {};
}

}  // namespace pitlane::engine
