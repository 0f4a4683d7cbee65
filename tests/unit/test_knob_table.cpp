// The knob table drives parsing, the JSON, the window and docs/KNOBS.md: these tests hold the
// table, the Knobs struct and the doc together.
#include "pitlane/spec/knob_table.h"
#include "pitlane/spec/suggest.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

using pitlane::spec::findKnob;
using pitlane::spec::json;
using pitlane::spec::KnobKind;
using pitlane::spec::knobTable;
using pitlane::spec::SpecError;

namespace {

const char* kBegin = "<!-- knob-table:begin (generated from core/spec/src/knob_table.cpp) -->\n";
const char* kEnd = "<!-- knob-table:end -->";

std::string docPath() {
    const char* src = std::getenv("PITLANE_SOURCE_DIR");
    return std::string(src ? src : ".") + "/docs/KNOBS.md";
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

// docs/KNOBS.md carries the table between two markers. PITLANE_UPDATE_DOCS=1 rewrites it.
TEST(KnobTable, DocsSectionIsTheTable) {
    const std::string doc = readFile(docPath());
    const auto b = doc.find(kBegin), e = doc.find(kEnd);
    ASSERT_NE(b, std::string::npos) << docPath() << " lacks the marker " << kBegin;
    ASSERT_NE(e, std::string::npos) << docPath() << " lacks the marker " << kEnd;
    const std::string section = doc.substr(b + std::string(kBegin).size(), e - b - std::string(kBegin).size());
    const std::string want = pitlane::spec::knobTableMarkdown();
    if (section != want && std::getenv("PITLANE_UPDATE_DOCS")) {
        std::ofstream(docPath()) << doc.substr(0, b) << kBegin << want << doc.substr(e);
        GTEST_SKIP() << "rewrote " << docPath();
    }
    EXPECT_EQ(section, want) << "docs/KNOBS.md differs from the knob table; run "
                                "PITLANE_UPDATE_DOCS=1 build/bin/test_unit --gtest_filter=KnobTable.*";
}

// The struct's defaults are the table's: absent (torch's default) exactly when the row says null.
TEST(KnobTable, DefaultsOfTheStructAreTheTables) {
    const json defaults = pitlane::spec::knobsToJson(pitlane::spec::Knobs{});
    for (const auto& k : knobTable()) {
        SCOPED_TRACE(k.name);
        EXPECT_EQ(defaults.value(k.name, json()), k.defaultValue);
        EXPECT_FALSE(k.label.empty());
        EXPECT_FALSE(k.help.empty());
        EXPECT_FALSE(k.defaultText.empty());
        if (k.cudaOnly) {
            EXPECT_FALSE(k.unavailable.empty());
        }
    }
    // Absent by default: intra_op_threads, memory_limit_mb and 7 torch defaults.
    EXPECT_EQ(defaults.size() + 9, knobTable().size());
}

TEST(Suggest, TheNearestKnownNameWhenCloseEnough) {
    std::vector<std::string> knobs;
    for (const auto& k : knobTable()) knobs.push_back(k.name);
    EXPECT_EQ(pitlane::spec::nearestName("intra_op_thread", knobs), "intra_op_threads");   // a deletion
    EXPECT_EQ(pitlane::spec::nearestName("INTRA_OP_THREADS", knobs), "intra_op_threads");  // case
    EXPECT_EQ(pitlane::spec::nearestName("batchsize", knobs), "batch_size");
    EXPECT_EQ(pitlane::spec::nearestName("gard", knobs), "grad");                          // a swap
    EXPECT_EQ(pitlane::spec::nearestName("threads", knobs), "");                           // too far from any
    EXPECT_EQ(pitlane::spec::nearestName("", knobs), "");
    EXPECT_EQ(pitlane::spec::nearestName("valdiate", {"run", "validate", "report"}), "validate");
    EXPECT_EQ(pitlane::spec::didYouMean("reprot", {"run", "validate", "report"}), " (did you mean report?)");
    EXPECT_EQ(pitlane::spec::didYouMean("zzz", {"run", "validate", "report"}), "");
}

TEST(KnobTable, NamesAreUniqueAndFound) {
    std::set<std::string> names;
    for (const auto& k : knobTable()) {
        EXPECT_TRUE(names.insert(k.name).second) << k.name;
        EXPECT_EQ(findKnob(k.name), &k);
    }
    EXPECT_EQ(findKnob("no_such_knob"), nullptr);
    for (const char* contract :
         {"device", "mode", "grad", "jit", "precision", "batch_size", "intra_op_threads",
          "inter_op_threads", "affinity", "cudnn_benchmark", "cudnn_enabled", "cudnn_deterministic",
          "allow_tf32", "memory_format", "workers", "host_sync_each_iter", "input_on_host",
          "allocator"})
        EXPECT_NE(findKnob(contract), nullptr) << contract << " (CONTRACT.md)";
}

// The limits written in the table are the ones validation enforces.
TEST(KnobTable, LimitsComeFromTheRow) {
    for (const auto& k : knobTable()) {
        if (k.kind != KnobKind::Count && k.kind != KnobKind::OptionalCount) continue;
        SCOPED_TRACE(k.name);
        const std::string f = "knobs." + k.name;
        EXPECT_EQ(pitlane::spec::validateKnob(k, k.max, "<t>", f), json(k.max));
        try {
            pitlane::spec::validateKnob(k, k.max + 1, "<t>", f);
            ADD_FAILURE() << "accepted " << k.max + 1;
        } catch (const SpecError& e) {
            EXPECT_EQ(e.field(), f);
            EXPECT_EQ(e.reason(), "must be <= " + std::to_string(k.max) + ", got " +
                                      std::to_string(k.max + 1));
        }
        EXPECT_THROW(pitlane::spec::validateKnob(k, k.min - 1, "<t>", f), SpecError);
    }
    const auto* workers = findKnob("workers");
    ASSERT_NE(workers, nullptr);
    EXPECT_EQ(workers->max, 64);
    EXPECT_EQ(pitlane::spec::knobValuesText(*workers), "integer 1..64");
}

// Every value validateKnob accepts goes into the struct and comes back out unchanged.
TEST(KnobTable, EveryRowRoundTripsThroughTheStruct) {
    const std::vector<std::pair<std::string, json>> values = {
        {"device", "cuda:3"}, {"mode", "train"}, {"grad", "no_grad"}, {"jit", "freeze"},
        {"precision", "half"}, {"memory_format", "channels_last"}, {"allocator", "tcmalloc"},
        {"batch_size", 8}, {"batch_size", json({1, 8, 32})}, {"intra_op_threads", 3},
        {"inter_op_threads", 2}, {"affinity", "spread"}, {"affinity", json({0, 2})},
        {"workers", 4}, {"host_sync_each_iter", true}, {"profiling_executor", false},
        {"fuser", true}, {"flush_denormal", true}, {"workload", "train_step"}, {"cudnn_enabled", false}, {"cudnn_benchmark", true},
        {"cudnn_deterministic", true}, {"allow_tf32", false}, {"input_on_host", true},
        {"cuda_graph", true}, {"sandbox", "off"}, {"memory_limit_mb", 512},
        {"max_batch", 8}, {"max_wait_ms", 10}, {"compile", "aoti"},
        {"inductor", json{{"freezing", true}, {"max_autotune", false}, {"dynamic_threads", false}}}};
    std::set<std::string> covered;
    for (const auto& [name, v] : values) {
        SCOPED_TRACE(name + " = " + v.dump());
        const auto* k = findKnob(name);
        ASSERT_NE(k, nullptr);
        pitlane::spec::Knobs knobs;
        k->set(knobs, pitlane::spec::validateKnob(*k, v, "<t>", name));
        EXPECT_EQ(k->get(knobs), v);
        covered.insert(name);
    }
    EXPECT_EQ(covered.size(), knobTable().size()) << "a knob without a round-trip value here";
}

// An arm's knobs as written (results::ArmResult): typed, with which were written, and written back
// exactly, even what this build does not know or refuses (a run stored by another build).
TEST(KnobTable, WrittenKnobsReadTypedAndWriteBackAsWritten) {
    const json written = {{"grad", "no_grad"},       {"intra_op_threads", 2}, {"affinity", json({0, 1})},
                          {"batch_size", json({4})}, {"retired_knob", 7},     {"jit", "warp_speed"}};
    pitlane::spec::WrittenKnobs w;
    const auto k = pitlane::spec::readWrittenKnobs(written, &w);
    EXPECT_EQ(k.grad, pitlane::spec::Grad::NoGrad);
    EXPECT_EQ(k.intra_op_threads, std::optional<int>(2));
    EXPECT_EQ(k.affinity, pitlane::spec::Affinity::List);
    EXPECT_EQ(k.affinity_cores, std::vector<int>({0, 1}));
    EXPECT_EQ(k.batch_size, std::vector<int>({4}));
    EXPECT_EQ(k.jit, pitlane::spec::Jit::None) << "a refused value leaves the default";
    EXPECT_EQ(w.names, std::vector<std::string>({"grad", "intra_op_threads", "affinity"}));
    EXPECT_EQ(w.verbatim, json({{"batch_size", json({4})}, {"retired_knob", 7}, {"jit", "warp_speed"}}));
    EXPECT_TRUE(w.contains("jit"));
    EXPECT_FALSE(w.contains("mode"));
    EXPECT_EQ(pitlane::spec::writtenKnobsJson(k, w).dump(), written.dump());
    // A knob changed in the struct is written back with its new value.
    auto changed = k;
    changed.grad = pitlane::spec::Grad::InferenceMode;
    EXPECT_EQ(pitlane::spec::writtenKnobsJson(changed, w)["grad"], "inference_mode");
    EXPECT_NE(changed, k);
    EXPECT_EQ(pitlane::spec::readWrittenKnobs(json(), &w), pitlane::spec::Knobs());
    EXPECT_TRUE(w.names.empty() && w.verbatim.empty());
}

// The choice knobs are enums whose names are the table's choices, in the row's order: every
// value of each enum has its row's name, each name reads back as its value, and the JSON of a
// value is its name.
template <class E>
void expectEnumIsRow(const std::vector<std::string>& expected) {
    namespace S = pitlane::spec;
    const auto* row = findKnob(S::ChoiceKnob<E>::knob);
    ASSERT_NE(row, nullptr);
    std::vector<std::string> names;
    for (int i = 0; i < S::ChoiceKnob<E>::count; ++i) {
        const E e = static_cast<E>(i);
        names.push_back(S::choiceName(e));
        EXPECT_EQ(S::choiceFromName<E>(names.back()), std::optional<E>(e));
        EXPECT_EQ(json(e), json(names.back()));
        EXPECT_EQ(json(names.back()).get<E>(), e);
        std::ostringstream os;
        os << e;
        EXPECT_EQ(os.str(), names.back());
    }
    EXPECT_EQ(names, expected);
    std::vector<std::string> offered = row->choices;
    if (row->kind == KnobKind::ChoiceOrCores) offered.push_back("list");
    EXPECT_EQ(names, offered) << "the enum's values are the row's choices, in order";
    EXPECT_EQ(S::choiceFromName<E>("sometimes"), std::nullopt);
    EXPECT_THROW(json("sometimes").get<E>(), std::invalid_argument);
}

TEST(KnobTable, ChoiceEnumsAreTheRowsChoices) {
    namespace S = pitlane::spec;
    expectEnumIsRow<S::Mode>({"train", "eval"});
    expectEnumIsRow<S::Grad>({"enabled", "no_grad", "inference_mode"});
    expectEnumIsRow<S::Jit>({"none", "freeze", "freeze_optimize"});
    expectEnumIsRow<S::Precision>({"fp32", "autocast_bf16", "autocast_fp16", "half"});
    expectEnumIsRow<S::MemoryFormat>({"contiguous", "channels_last"});
    expectEnumIsRow<S::Allocator>({"system", "jemalloc", "tcmalloc"});
    expectEnumIsRow<S::Sandbox>({"on", "off"});
    expectEnumIsRow<S::Workload>({"inference", "train_step"});
    expectEnumIsRow<S::Affinity>({"none", "compact", "spread", "list"});
    expectEnumIsRow<S::Compile>({"none", "aoti"});
    // Every choice row has its enum here.
    int choiceRows = 0;
    for (const auto& k : knobTable()) choiceRows += k.kind == KnobKind::Choice || k.kind == KnobKind::ChoiceOrCores;
    EXPECT_EQ(choiceRows, 10);
}

// A read-back (protocol::Applied holds the worker's words) by its knob's enum.
TEST(KnobTable, ReadBacksReadAsTheirEnum) {
    namespace S = pitlane::spec;
    EXPECT_EQ(S::readBackOf<S::Grad>(std::string("no_grad")), S::Grad::NoGrad);
    EXPECT_EQ(S::readBackOf<S::Grad>(std::nullopt), std::nullopt);
    EXPECT_EQ(S::readBackOf(std::nullopt, S::Allocator::System), S::Allocator::System) << "absent: the fallback";
    EXPECT_EQ(S::readBackOf(std::string("mimalloc"), S::Allocator::System), std::nullopt) << "unknown: nothing";
    EXPECT_EQ(S::readBackOf<S::Affinity>(std::string("list")), S::Affinity::List);
}
