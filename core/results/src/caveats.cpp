// Caveats at the verdict (issue 41): what ran differs from what was asked. A comparison is of
// what ran, so each difference is said with the verdict it touches, not only in a log line.
#include "pitlane/results/run_result.h"

#include <algorithm>
#include <set>

namespace pitlane::results {

namespace {

void addOnce(std::vector<std::string>& out, std::string s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
}

std::string plural(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

// A choice knob asked against its read-back: "ran grad no_grad where inference_mode was asked".
template <typename E>
void choice(std::vector<std::string>& out, const ArmResult& arm, const char* knob, E asked,
            const std::optional<std::string>& readBack) {
    if (!readBack || *readBack == spec::choiceName(asked)) return;
    out.push_back(arm.name + " ran " + knob + " " + *readBack + " where " + spec::choiceName(asked) + " was asked");
}

// Whether a worker caveat already speaks of this knob (its message starts with the knob's name).
bool saidBy(const ArmResult& arm, const std::string& knob) {
    for (const auto& c : arm.caveats)
        if (c.rfind(knob + " ", 0) == 0 || c.rfind(knob + ":", 0) == 0) return true;
    return false;
}

}  // namespace

bool isCaveatCode(const std::string& code) {
    static const std::set<std::string> codes = {"knob_not_applicable", "cuda_only_knob", "workload_not_applied",
                                                "flush_denormal_partial", "flush_denormal_unsupported",
                                                "sandbox_incomplete"};
    return codes.count(code) > 0;
}

std::vector<std::string> armCaveats(const ArmResult& arm) {
    std::vector<std::string> out;
    const auto& k = arm.knobs;
    const auto& a = arm.applied;
    // Nothing read back (a worker that failed to configure): nothing to compare.
    const bool readBack = a.intra_op_threads || a.mode || a.grad;
    // An AOTInductor package's own kernels run the OpenMP thread count compiled into them.
    const json& package = a.extraField("package");
    const bool fixedThreads = package.is_object() && package.contains("kernel_threads") &&
                              package["kernel_threads"].is_number_integer();
    if (readBack && fixedThreads) {
        const int compiled = package["kernel_threads"].get<int>();
        const int asked = k.intra_op_threads.value_or(a.intra_op_threads.value_or(compiled));
        if (compiled != asked)
            out.push_back(arm.name + " ran " + plural(compiled, "OpenMP thread", "OpenMP threads") +
                          " in its package's own kernels where " + std::to_string(asked) +
                          " was asked (the count is compiled into the package; compile it with "
                          "torch._inductor.config.cpp.dynamic_threads=True to follow intra_op_threads)");
    }
    for (const auto& c : arm.caveats) {
        // The worker's own line for the package's threads is the one above, in other words.
        if (fixedThreads && c.find("package's own kernels") != std::string::npos) continue;
        addOnce(out, arm.name + ": " + c);
    }
    if (!readBack) return out;
    if (k.intra_op_threads && a.intra_op_threads && *a.intra_op_threads != *k.intra_op_threads &&
        !saidBy(arm, "intra_op_threads"))
        out.push_back(arm.name + " ran " + plural(*a.intra_op_threads, "intra-op thread", "intra-op threads") +
                      " where " + std::to_string(*k.intra_op_threads) + " was asked");
    if (a.inter_op_threads && *a.inter_op_threads != k.inter_op_threads && !saidBy(arm, "inter_op_threads"))
        out.push_back(arm.name + " ran " + plural(*a.inter_op_threads, "inter-op thread", "inter-op threads") +
                      " where " + std::to_string(k.inter_op_threads) + " was asked");
    if (!saidBy(arm, "mode")) choice(out, arm, "mode", k.mode, a.mode);
    if (!saidBy(arm, "grad")) choice(out, arm, "grad", k.grad, a.grad);
    if (!saidBy(arm, "jit")) choice(out, arm, "jit", k.jit, a.jit);
    if (!saidBy(arm, "precision")) choice(out, arm, "precision", k.precision, a.precision);
    if (!saidBy(arm, "memory_format")) choice(out, arm, "memory_format", k.memory_format, a.memory_format);
    if (!saidBy(arm, "allocator")) choice(out, arm, "allocator", k.allocator, a.allocator);
    if (!saidBy(arm, "workload")) choice(out, arm, "workload", k.workload, a.workload);
    if (a.device && *a.device != k.device && !saidBy(arm, "device"))
        out.push_back(arm.name + " ran on device " + *a.device + " where " + k.device + " was asked");
    const json& batch = a.extraField("batch_size");
    if (batch.is_number_integer() && k.batch_size.size() == 1 && batch.get<int>() != k.batch_size.front())
        out.push_back(arm.name + " ran batch size " + batch.dump() + " where " +
                      std::to_string(k.batch_size.front()) + " was asked");
    return out;
}

std::vector<std::string> comparisonCaveats(const RunResult& run, const stats::Comparison& c) {
    std::vector<std::string> out;
    for (const auto& a : run.arms)
        if (a.name == c.baseline || a.name == c.arm)
            for (auto& s : armCaveats(a)) addOnce(out, kCaveatPrefix + s);
    return out;
}

std::vector<std::string> runCaveats(const RunResult& run) {
    std::vector<std::string> out;
    for (const auto& c : compareArms(run))
        for (auto& s : comparisonCaveats(run, c)) addOnce(out, std::move(s));
    return out;
}

}  // namespace pitlane::results
