// The CSV of samples and the formatting helpers shared by the table, the window and the
// reports.
#include "pitlane/results/run_result.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

namespace pitlane::results {

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string samplesCsv(const RunResult& run) {
    std::ostringstream os;
    os << "arm,block,iteration,batch_size,latency_ns,process\n";
    for (const auto& a : run.arms)
        for (const auto& s : a.samples)
            os << csvField(a.name) << ',' << s.block << ',' << s.iter << ',' << s.batch_size << ','
               << s.latency_ns << ',' << s.process << '\n';
    return os.str();
}

std::string formatDuration(double ns) {
    char buf[64];
    const double a = std::fabs(ns);
    if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
    else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
    else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
    else std::snprintf(buf, sizeof buf, "%.0f ns", ns);
    return buf;
}

std::string formatBytes(double bytes) {
    char buf[64];
    if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    else if (bytes >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
    else if (bytes >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
    else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
    return buf;
}

std::string isoNowUtc() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace pitlane::results
