#pragma once
// Small text helpers shared by the spec's validators (internal).
#include <string>
#include <vector>

namespace pitlane::spec::detail {

// "a, b, c"
inline std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
    return out;
}

}  // namespace pitlane::spec::detail
