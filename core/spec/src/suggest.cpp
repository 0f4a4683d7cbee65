#include "pitlane/spec/suggest.h"

#include <algorithm>
#include <cctype>

namespace pitlane::spec {

namespace {

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring).
std::size_t editDistance(const std::string& a, const std::string& b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

std::string lower(std::string s) {
    for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

std::string nearestName(const std::string& name, const std::vector<std::string>& candidates) {
    if (name.empty() || name.size() > 256) return {};
    const std::string key = lower(name);
    std::string best;
    std::size_t bestDistance = std::string::npos;
    for (const auto& c : candidates) {
        const std::size_t d = editDistance(key, lower(c));
        const std::size_t allowed = std::max<std::size_t>(1, std::max(name.size(), c.size()) / 3);
        if (d <= allowed && d < bestDistance) {
            best = c;
            bestDistance = d;
        }
    }
    return best;
}

std::string didYouMean(const std::string& name, const std::vector<std::string>& candidates) {
    const std::string near = nearestName(name, candidates);
    return near.empty() ? std::string() : " (did you mean " + near + "?)";
}

}  // namespace pitlane::spec
