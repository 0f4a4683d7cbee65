// What is computed from an arm's samples and memoized on the arm (keyed by the samples' stamp and
// the batch size; read and written atomically, so any thread may ask): the summary, the sorted
// latencies it can be read from, the per-process medians and the variance shares, and
// warmArmMemos, which computes them all (the window's reader thread, before a stored run is
// shown).
#include "pitlane/results/run_result.h"

#include <algorithm>
#include <map>
#include <system_error>
#include <thread>
#include <utility>

namespace pitlane::results {

namespace {
std::shared_ptr<const ArmResult::ProcessMedians> processMedians(const ArmResult& arm) {
    auto memo = std::atomic_load(&arm.process_medians);
    if (memo && memo->stamp == arm.samples.stamp() && memo->batch_size == arm.batch_size)
        return memo;
    std::map<std::pair<int, int>, std::vector<double>> byProcess;  // (replicate, worker)
    std::map<std::pair<int, int>, std::size_t> counts;
    for (const auto& r : arm.samples.runs())
        if (r.batch_size == arm.batch_size) counts[{r.process, r.worker}] += r.count;
    const auto sorted = std::atomic_load(&arm.sorted_memo);
    if (counts.size() == 1 && sorted && sorted->stamp == arm.samples.stamp() &&
        sorted->batch_size == arm.batch_size) {
        // One process: its median is the arm's, read from the sorted latencies (the same middle
        // values as stats::median's selection: the same bits).
        const auto& v = *sorted->sorted_ns;
        const std::size_t mid = v.size() / 2;
        auto fresh = std::make_shared<ArmResult::ProcessMedians>();
        fresh->stamp = arm.samples.stamp();
        fresh->batch_size = arm.batch_size;
        fresh->of[counts.begin()->first] = {v.size(), v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2};
        std::shared_ptr<const ArmResult::ProcessMedians> done = fresh;
        std::atomic_store(&arm.process_medians, done);
        return done;
    }
    for (const auto& [key, n] : counts) byProcess[key].reserve(n);  // exactly: no doubling
    arm.samples.forEachSpan([&](const SampleSeries::Run& r, std::size_t, const std::int64_t* ns,
                                std::size_t count) {
        if (r.batch_size != arm.batch_size) return;
        auto& v = byProcess[{r.process, r.worker}];
        for (std::size_t k = 0; k < count; ++k) v.push_back(double(ns[k]));
    });
    auto fresh = std::make_shared<ArmResult::ProcessMedians>();
    fresh->stamp = arm.samples.stamp();
    fresh->batch_size = arm.batch_size;
    for (auto& [key, v] : byProcess) {
        const std::size_t n = v.size();
        fresh->of[key] = {n, stats::median(std::move(v))};
    }
    std::shared_ptr<const ArmResult::ProcessMedians> done = fresh;
    std::atomic_store(&arm.process_medians, done);
    return done;
}
}  // namespace

std::vector<ProcessSummary> processSummaries(const ArmResult& arm) {
    std::vector<ProcessSummary> out;
    const auto medians = processMedians(arm);
    for (const auto& info : arm.processes) {
        ProcessSummary ps;
        ps.info = info;
        auto it = medians->of.find({info.replicate, info.worker});
        if (it != medians->of.end()) {
            ps.n = it->second.first;
            ps.median_ns = it->second.second;
        }
        out.push_back(ps);
    }
    return out;
}


stats::VarianceShares varianceShares(const ArmResult& arm) {
    const auto memo = std::atomic_load(&arm.variance_memo);
    if (memo && memo->stamp == arm.samples.stamp() && memo->batch_size == arm.batch_size)
        return memo->shares;
    auto fresh = std::make_shared<ArmResult::VarianceMemo>();
    fresh->stamp = arm.samples.stamp();
    fresh->batch_size = arm.batch_size;
    fresh->shares = stats::varianceShares(arm.blocked());
    std::atomic_store(&arm.variance_memo, std::shared_ptr<const ArmResult::VarianceMemo>(fresh));
    return fresh->shares;
}


namespace {
std::shared_ptr<const ArmResult::SortedMemo> currentSorted(const ArmResult& arm) {
    auto memo = std::atomic_load(&arm.sorted_memo);
    if (memo && memo->stamp == arm.samples.stamp() && memo->batch_size == arm.batch_size) return memo;
    return nullptr;
}
}  // namespace

namespace {
// The arm's latencies at its batch size, ascending. They are integers: a least-significant-digit
// radix sort of them, 11 bits a pass, skipping a pass whose digit every value shares (latencies
// under 2^33 ns take 3 passes), is ~10x std::sort of 5 M doubles. int64 -> double is
// non-decreasing, so the doubles come out sorted: the same values as sorting the doubles.
std::vector<double> sortedOf(const ArmResult& arm) {
    constexpr std::uint64_t kSign = std::uint64_t{1} << 63;  // negative values first
    std::vector<std::uint64_t> keys;
    keys.reserve(arm.samples.size());
    arm.samples.forEachSpan([&](const SampleSeries::Run& r, std::size_t, const std::int64_t* ns, std::size_t n) {
        if (r.batch_size != arm.batch_size) return;
        for (std::size_t k = 0; k < n; ++k) keys.push_back(std::uint64_t(ns[k]) ^ kSign);
    });
    std::vector<std::uint64_t> spare(keys.size());
    constexpr int kBits = 11;
    constexpr std::uint64_t kMask = (std::uint64_t{1} << kBits) - 1;
    for (int shift = 0; shift < 64; shift += kBits) {
        std::vector<std::size_t> start(kMask + 1, 0);
        for (const auto k : keys) ++start[(k >> shift) & kMask];
        if (std::find(start.begin(), start.end(), keys.size()) != start.end()) continue;
        std::size_t sum = 0;
        for (auto& c : start) sum += std::exchange(c, sum);
        for (const auto k : keys) spare[start[(k >> shift) & kMask]++] = k;
        keys.swap(spare);
    }
    std::vector<double> out;
    out.reserve(keys.size());
    for (const auto k : keys) out.push_back(double(std::int64_t(k ^ kSign)));
    return out;
}
}  // namespace

std::shared_ptr<const std::vector<double>> sortedLatencies(const ArmResult& arm) {
    if (const auto memo = currentSorted(arm)) return memo->sorted_ns;
    auto fresh = std::make_shared<ArmResult::SortedMemo>();
    fresh->stamp = arm.samples.stamp();
    fresh->batch_size = arm.batch_size;
    fresh->sorted_ns = std::make_shared<const std::vector<double>>(sortedOf(arm));
    std::atomic_store(&arm.sorted_memo, std::shared_ptr<const ArmResult::SortedMemo>(fresh));
    return fresh->sorted_ns;
}

std::shared_ptr<const std::vector<double>> memoizedSortedLatencies(const ArmResult& arm) {
    const auto memo = currentSorted(arm);
    return memo ? memo->sorted_ns : nullptr;
}

void warmArmMemos(const RunResult& run) {
    const auto warm = [](const ArmResult& a) {
        sortedLatencies(a);
        summarize(a);
        processSummaries(a);
        varianceShares(a);
    };
    std::vector<std::thread> others;
    std::size_t i = 1;
    try {
        for (; i < run.arms.size(); ++i) others.emplace_back(warm, std::cref(run.arms[i]));
    } catch (const std::system_error&) {  // no thread to be had: the rest on this one
    }
    if (!run.arms.empty()) warm(run.arms.front());
    for (; i < run.arms.size(); ++i) warm(run.arms[i]);
    for (auto& t : others) t.join();
}

stats::Summary summarize(const ArmResult& arm) {
    const auto memo = std::atomic_load(&arm.summary_memo);
    if (memo && memo->stamp == arm.samples.stamp() && memo->batch_size == arm.batch_size)
        return memo->summary;
    auto fresh = std::make_shared<ArmResult::SummaryMemo>();
    fresh->stamp = arm.samples.stamp();
    fresh->batch_size = arm.batch_size;
    if (const auto sorted = currentSorted(arm))  // the same sorted values: the same bits
        fresh->summary = stats::summarizeSorted(*sorted->sorted_ns, arm.batch_size);
    else
        fresh->summary = stats::summarize(arm.latencies(), arm.batch_size);
    std::atomic_store(&arm.summary_memo, std::shared_ptr<const ArmResult::SummaryMemo>(fresh));
    return fresh->summary;
}


}  // namespace pitlane::results
