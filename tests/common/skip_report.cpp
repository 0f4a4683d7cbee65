// Skipped tests are visible: linked into every gtest binary (pitlane_add_test), this listener
// collects each GTEST_SKIP with its reason. At the end it prints them, writes them to
// $PITLANE_SKIP_LOG (tools/run_tests.sh lists every file at the end of the suite), and, when
// nothing failed, prints the line ctest's SKIP_REGULAR_EXPRESSION turns into "Skipped" (never
// when a test failed: ctest would then report the failure as a skip).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

class SkipReport : public testing::EmptyTestEventListener {
public:
    void OnTestEnd(const testing::TestInfo& info) override {
        const auto* r = info.result();
        if (!r || !r->Skipped()) return;
        std::string why;
        for (int i = 0; i < r->total_part_count(); ++i) {
            const auto& part = r->GetTestPartResult(i);
            if (part.skipped() && part.message()) why = part.message();
        }
        while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
        if (why.empty()) why = "(no reason given)";
        skipped_.push_back(std::string(info.test_suite_name()) + "." + info.name() + ": " + why);
    }
    void OnTestProgramEnd(const testing::UnitTest& unit) override {
        if (const char* path = std::getenv("PITLANE_SKIP_LOG")) {
            std::ofstream log(path, std::ios::trunc);
            for (const auto& s : skipped_) log << s << "\n";
        }
        if (skipped_.empty()) return;
        std::cout << "\n";
        for (const auto& s : skipped_) std::cout << "skipped: " << s << "\n";
        if (unit.Passed())  // no test failed, nor a suite's set-up (which skips its tests)
            std::cout << "PITLANE-SKIPPED: " << skipped_.size() << " test(s) did not check anything\n";
        std::cout.flush();
    }

private:
    std::vector<std::string> skipped_;
};

// Before main: gtest_main and our test_main.cpp both leave appended listeners in place.
const bool kInstalled = [] {
    testing::UnitTest::GetInstance()->listeners().Append(new SkipReport);
    return true;
}();

}  // namespace
