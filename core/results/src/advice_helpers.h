#pragma once
// Internal to the advisor's rules (advice_rules.cpp, advice_rules_more.cpp): reading the
// cold costs' JSON (the read-back and the knobs are typed: protocol::Applied, spec::Knobs),
// formatting figures, the operator profile's groups, making an Advice.
#include "advice_rules.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace pitlane::results::advice_detail {

inline std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}
inline std::string pct(double share) { return fmt("%.0f %%", 100.0 * share); }
inline std::string ms(double v) { return fmt(v >= 10 ? "%.1f ms" : "%.2f ms", v); }

inline double num(const json& j, const char* key, double def = -1) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : def;
}

// Operators of the profile, in ms per profiled iteration.
struct OpSum {
    double total = 0;
    std::vector<std::pair<std::string, double>> ops;  // the matching operators, largest first
    std::string names(std::size_t n = 3) const {
        std::string s;
        for (std::size_t i = 0; i < ops.size() && i < n; ++i)
            s += (i ? ", " : "") + ops[i].first + " " + ms(ops[i].second);
        return s;
    }
};

inline OpSum opsMatching(const ArmCtx& c, const std::function<bool(const std::string&)>& pred) {
    OpSum sum;
    for (const auto& [name, v] : c.op_ms)
        if (pred(name)) {
            sum.total += v;
            sum.ops.emplace_back(name, v);
        }
    std::sort(sum.ops.begin(), sum.ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return sum;
}

inline bool in(const std::string& name, std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (name == n) return true;
    return false;
}

inline bool isConv(const std::string& n) {
    return in(n, {"aten::_slow_conv2d_forward", "aten::mkldnn_convolution", "aten::thnn_conv2d",
                  "aten::slow_conv_dilated2d", "aten::slow_conv3d_forward", "aten::_convolution",
                  "aten::convolution", "aten::conv1d", "aten::conv2d", "aten::conv3d",
                  "aten::_nnpack_spatial_convolution", "aten::cudnn_convolution"});
}
inline bool isBatchNorm(const std::string& n) {
    return in(n, {"aten::native_batch_norm", "aten::batch_norm", "aten::_batch_norm_impl_index",
                  "aten::_native_batch_norm_legit", "aten::cudnn_batch_norm"});
}
inline bool isDropout(const std::string& n) {
    return in(n, {"aten::dropout", "aten::dropout_", "aten::native_dropout", "aten::bernoulli_",
                  "aten::feature_dropout", "aten::alpha_dropout"});
}
inline bool isActivation(const std::string& n) {
    return in(n, {"aten::relu", "aten::relu_", "aten::clamp_min", "aten::clamp_min_",
                  "aten::hardtanh", "aten::hardtanh_", "aten::hardswish", "aten::hardswish_"});
}
inline bool isCopy(const std::string& n) {
    return in(n, {"aten::copy_", "aten::to", "aten::_to_copy", "aten::contiguous", "aten::clone",
                  "aten::_copy_from", "aten::_copy_from_and_resize"});
}
inline bool isBlas(const std::string& n) {
    return in(n, {"aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::addmv",
                  "aten::mv", "aten::dot", "aten::_slow_conv2d_forward", "aten::addbmm"});
}

inline Advice make(const ArmCtx& c, const char* rule, AdviceTier tier, std::string title) {
    Advice a;
    a.rule = rule;
    a.arm = c.index;
    a.tier = tier;
    a.title = std::move(title);
    return a;
}

// TorchScript's profiling executor was on (read back).
inline bool profilingExecutor(const ArmCtx& c) {
    const auto& js = c.applied().jit_state;
    return js && js->profiling_executor.value_or(false);
}

inline bool inference(const ArmCtx& c) {
    return spec::readBackOf(c.applied().workload, spec::Workload::Inference) == spec::Workload::Inference;
}

}  // namespace pitlane::results::advice_detail
