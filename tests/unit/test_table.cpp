// The pitlane-cli table's process level: the faults/iter column and the per-process block.
#include "pitlane/results/run_result.h"

#include <gtest/gtest.h>

#include <sstream>

namespace R = pitlane::results;

namespace {

// Three replicates per arm; `slow` (if >= 0) is a process twice as slow that faults every
// iteration. Medians: 1.00 ms, 2.00 ms (slow) or 1.10 ms, 1.20 ms.
R::ArmResult arm(const std::string& name, int slow, int processes = 3, bool faults = true) {
    R::ArmResult a;
    a.name = name;
    a.status = R::kOk;
    int iter = 0;
    for (int p = 0; p < processes; ++p) {
        R::ProcessInfo info;
        info.replicate = p;
        info.pid = 100 + p;
        if (faults) {
            info.fault_iters = 10;
            info.minor_faults = p == slow ? 10 * 300 : 5;
        }
        a.processes.push_back(info);
        const double base = p == slow ? 2e6 : 1e6 + 1e5 * p;
        for (int k = 0; k < 10; ++k, ++iter)
            a.samples.push_back({p, iter, 1, 0, std::int64_t(base) + 100 * k, p});
    }
    return a;
}

std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

std::string lineStarting(const std::string& table, const std::string& prefix) {
    for (const auto& l : lines(table))
        if (l.rfind(prefix, 0) == 0) return l;
    return {};
}

}  // namespace

TEST(Table, FaultsPerIterationColumn) {
    R::RunResult run;
    run.preset.name = "t";
    run.arms = {arm("A", 1), arm("B", -1, 3, false)};
    const auto t = R::comparisonTable(run);
    const auto header = lineStarting(t, "arm ");
    ASSERT_FALSE(header.empty()) << t;
    EXPECT_NE(header.find("faults/iter"), std::string::npos) << header;
    // A: (5 + 3000 + 5) / 30 iterations = 100.33 -> "100"; B reported none -> "-".
    const auto a = lineStarting(t, "A    "), b = lineStarting(t, "B    ");
    ASSERT_FALSE(a.empty()) << t;
    ASSERT_FALSE(b.empty()) << t;
    EXPECT_EQ(a.substr(a.size() - 4), " 100") << a;
    EXPECT_EQ(b.substr(b.size() - 2), " -") << b;
    EXPECT_EQ(a.size(), header.size());  // right-aligned under its header
}

TEST(Table, ProcessMediansInRunOrderWithSpreadAndShares) {
    R::RunResult run;
    run.preset.name = "t";
    run.arms = {arm("A", -1), arm("long name", 1)};
    const auto t = R::comparisonTable(run);
    const auto a = lineStarting(t, "A          processes:");
    const auto b = lineStarting(t, "long name  processes:");
    ASSERT_FALSE(a.empty()) << t;
    ASSERT_FALSE(b.empty()) << t;
    // Run order, not sorted; the slowest over the fastest.
    EXPECT_NE(a.find("processes:  1.00 ms  1.10 ms  1.20 ms  (1.20x apart; between processes "),
              std::string::npos)
        << a;
    EXPECT_NE(b.find("processes:  1.00 ms  2.00 ms  1.20 ms  (2.00x apart; between processes "),
              std::string::npos)
        << b;
    const auto shares = R::varianceShares(run.arms[1]);
    ASSERT_TRUE(shares.computed);
    char expect[128];
    std::snprintf(expect, sizeof expect, "between processes %.0f%% / blocks %.0f%% / within %.0f%%)",
                  100 * shares.between_processes, 100 * shares.between_blocks,
                  100 * shares.within_blocks);
    EXPECT_NE(b.find(expect), std::string::npos) << b << "\nexpected " << expect;
    EXPECT_EQ(a.find('('), b.find('('));  // aligned
    // The block sits between the arm table and the comparison.
    EXPECT_LT(t.find("faults/iter"), t.find("processes:"));
    EXPECT_LT(t.find("processes:"), t.find("comparison"));
    EXPECT_NE(t.find("nested ANOVA"), std::string::npos);
}

TEST(Table, UnmeasuredProcessesAndLongListsStayAligned) {
    R::RunResult run;
    run.preset.name = "t";
    run.arms = {arm("A", -1, 10), arm("B", -1, 2)};
    // A process that started but measured nothing (failed before its first block).
    R::ProcessInfo dead;
    dead.replicate = 2;
    run.arms[1].processes.push_back(dead);
    const auto t = R::comparisonTable(run);
    const auto all = lines(t);
    std::size_t at = 0;
    while (at < all.size() && all[at].rfind("A  processes:", 0) != 0) ++at;
    ASSERT_LT(at + 2, all.size()) << t;
    // Ten processes: eight on the first line, two on an indented second line.
    const auto& first = all[at];
    const auto& second = all[at + 1];
    EXPECT_EQ(first.find('('), std::string::npos) << first;
    EXPECT_EQ(second.rfind("               1.80 ms", 0), 0u) << second;  // under the first median
    EXPECT_NE(second.find("  1.80 ms  1.90 ms  "), std::string::npos) << second;
    const auto& b = all[at + 2];
    EXPECT_EQ(b.rfind("B  processes:  1.00 ms  1.10 ms        -  ", 0), 0u) << b;
    EXPECT_NE(b.find("(1.10x apart"), std::string::npos) << b;
    EXPECT_EQ(b.find('('), second.find('(')) << t;
}

TEST(Table, NoProcessBlockWithoutSamples) {
    R::RunResult run;
    run.preset.name = "t";
    run.arms.resize(1);
    run.arms[0].name = "A";
    const auto t = R::comparisonTable(run);
    EXPECT_EQ(t.find("processes:"), std::string::npos) << t;
    EXPECT_NE(t.find("faults/iter"), std::string::npos);
}

// p99.9 is in the reports and the results JSON: the CLI table shows it too, after p99; the
// throughput column is the whole arm's (armThroughput: summed over concurrent workers).
TEST(Table, P999ColumnAndArmThroughput) {
    R::RunResult run;
    run.preset.name = "t";
    run.arms = {arm("A", -1)};
    const auto t = R::comparisonTable(run);
    const auto header = lineStarting(t, "arm ");
    ASSERT_FALSE(header.empty()) << t;
    const auto p99 = header.find(" p99 "), p999 = header.find("p99.9");
    ASSERT_NE(p999, std::string::npos) << header;
    EXPECT_LT(p99, p999) << header;
    const auto s = R::summarize(run.arms[0]);
    EXPECT_NE(lineStarting(t, "A    ").find(R::formatDuration(s.p999)), std::string::npos) << t;

    R::ArmResult two = arm("K", -1);
    two.workers = 2;
    {
        R::SampleSeries split;
        for (auto sample : two.samples) {
            sample.worker = sample.iter % 2;
            split.push_back(sample);
        }
        two.samples = split;
    }
    EXPECT_DOUBLE_EQ(R::armThroughput(two, R::summarize(two)), R::aggregateThroughput(two));
    EXPECT_DOUBLE_EQ(R::armThroughput(run.arms[0], s), s.throughput_per_s);
}

// Issue 44: an arm name longer than the column (13+ characters) shifted every column after it;
// the p-value column said "<1e-4" where the verdict said "p < 1e-16". The columns now fit the
// longest name, and the p-value is written one way (stats::pValueText) in the table and the verdict.
TEST(Table, LongArmNamesKeepTheColumnsAlignedAndThePValueIsWrittenOneWay) {
    R::RunResult run;
    run.preset.name = "t";
    run.arms = {arm("A", -1), arm("inference_mode × frozen", -1)};
    // B 2x slower: the same samples, each latency doubled.
    R::SampleSeries slower;
    for (std::size_t k = 0; k < run.arms[1].samples.size(); ++k) {
        R::Sample x = run.arms[1].samples[k];
        x.latency_ns *= 2;
        slower.push_back(x);
    }
    run.arms[1].samples = slower;
    const auto t = R::comparisonTable(run);
    const auto header = lineStarting(t, "arm ");
    const auto a = lineStarting(t, "A "), b = lineStarting(t, "inference_mode × frozen ");
    ASSERT_FALSE(a.empty()) << t;
    ASSERT_FALSE(b.empty()) << t;
    // Every row as wide as the header, in characters ("×" is one), the last column right-aligned.
    const auto width = [](const std::string& s) {
        std::size_t n = 0;
        for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
        return n;
    };
    EXPECT_EQ(width(a), width(header)) << t;
    EXPECT_EQ(width(b), width(header)) << t;
    EXPECT_EQ(a.find(" ok ") + 1, header.find("status")) << t;
    EXPECT_EQ(width(b.substr(0, b.find(" ok ") + 1)), header.find("status")) << t;
    // The comparison row: its ratio starts after the name, with room.
    const auto cmpHeader = lineStarting(t, "comparison");
    const auto cmp = lineStarting(t, "inference_mode × frozen vs A");
    ASSERT_FALSE(cmp.empty()) << t;
    EXPECT_EQ(width(cmp.substr(0, cmp.find("0.500"))) + 5, width(cmpHeader.substr(0, cmpHeader.find("ratio") + 5))) << t;
    const auto comps = R::compareArms(run);
    ASSERT_EQ(comps.size(), 1u);
    EXPECT_NE(cmp.find("  " + pitlane::stats::pValueText(comps[0].p_value) + "  "), std::string::npos) << cmp;
    EXPECT_EQ(pitlane::stats::pValueText(0.0774), "0.077");
    EXPECT_EQ(pitlane::stats::pValueText(7.1e-12), "7.1e-12");
    EXPECT_EQ(pitlane::stats::pValueText(1e-17), "< 1e-16");
    EXPECT_EQ(pitlane::stats::pValueText(0), "< 1e-16");
    EXPECT_EQ(pitlane::stats::pValueText(1), "1");
}
