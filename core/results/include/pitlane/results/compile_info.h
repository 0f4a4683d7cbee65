#pragma once
// What Pitlane's compile step (issue 40, knob `compile: "aoti"`, session/compile_step.h) did for
// an arm whose exported program it compiled into an AOTInductor package: results JSON
// `arms[].compile` (CONTRACT.md), the history's arms.compile (schema v11), the CLI table's and
// the reports' "compiled in 41.2 s" line. No Qt, no torch.
#include "pitlane/spec/preset.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace pitlane::results {

struct CompileInfo {
    double seconds = 0;      // spent in this run (a cache hit: checking the cached package)
    bool cache_hit = false;  // the package was already in the cache: nothing was compiled
    // A cache hit: how long the compile that made the package took (0 when not recorded).
    double compiled_seconds = 0;
    spec::InductorOptions options;  // the knob `inductor` it was compiled with
    std::string torch;              // torch.__version__ of the Python that compiled it
    std::string package;            // the cached package the arm measured
    std::string target;             // what it was compiled for: "cpu avx2", "cuda:0"
    bool operator==(const CompileInfo& o) const {
        return seconds == o.seconds && cache_hit == o.cache_hit && compiled_seconds == o.compiled_seconds &&
               options == o.options && torch == o.torch && package == o.package && target == o.target;
    }
};

// {"seconds", "cache_hit", "options", "torch", "package", "target"[, "compiled_seconds"]}.
nlohmann::json compileJson(const CompileInfo& c);
// The inverse; nullopt for null / not an object (an arm that was not compiled). Lenient: a
// missing field keeps its default.
std::optional<CompileInfo> compileFromJson(const nlohmann::json& j);
// One line for tables and reports, without the arm's name: "compiled in 41.2 s (AOTInductor,
// freezing, dynamic threads; torch 2.11.0)" or "AOTInductor package from the cache (compiled
// in 41.2 s; dynamic threads; torch 2.11.0)".
std::string compileLine(const CompileInfo& c);

}  // namespace pitlane::results
