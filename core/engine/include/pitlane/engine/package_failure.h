#pragma once
// Why an AOTInductor package did not load, in words that blame what failed (issue 42): a damaged
// or malformed package is said to be one, naming the entry that failed, and the libtorch or CPU
// version is blamed only where the evidence is a version mismatch. Pure (no torch): the engine
// gives it the loader's reason; tested on the reasons libtorch 2.11 gives.
#include <map>
#include <string>

namespace pitlane::engine {

struct PackageFailure {
    // "malformed" (the package's own files: an entry that is not a loadable library, metadata
    // that does not parse, no model in it), "version_mismatch" (a symbol or C++ runtime the
    // package needs that this libtorch / system lacks, another device, another torch version),
    // "missing_library" (a library the package's .so links is not on this machine),
    // "extraction" (the folder it is extracted into cannot be made or written), "other".
    std::string cause;
    std::string entry;    // the package's entry that failed, as the zip names it ("" when none)
    std::string message;  // what follows "cannot load PATH as an AOTInductor package: "
};

// `reason`: the loader's error (its informative line); `extractedTo`: the folder the loader's
// mkdtemp made, as it made it ("./pl2XXXXXX", "/tmp/XXXXXX"; "" when none), whose prefix is taken
// off the paths in `reason` to name the entry; `metadata`: what the package says of itself
// (torch_version, AOTI_DEVICE_KEY, AOTI_CPU_ISA); `torchVersion`: this worker's libtorch
// ("2.11.0"); `cpuFlags`: this CPU's flags as /proc/cpuinfo lists them ("" when unknown).
PackageFailure explainPackageFailure(const std::string& reason, const std::string& extractedTo,
                                     const std::map<std::string, std::string>& metadata,
                                     const std::string& torchVersion, const std::string& cpuFlags);

// This CPU's "flags" line of /proc/cpuinfo ("" where there is none).
std::string readCpuFlags();

}  // namespace pitlane::engine
