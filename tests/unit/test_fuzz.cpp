// Seeded mutation fuzzing of the two parsers that read what others wrote: presets (every
// presets/*.json, mutated as bytes and as JSON trees) and protocol lines (events and commands).
// Property: an input is accepted, or refused with the library's own error (SpecError naming a
// field, a decode error saying why) — never another exception, a crash or a hang; an accepted
// preset round-trips. Budget: PITLANE_FUZZ_SECONDS (default 2) per target; the seed is printed
// (fixed unless PITLANE_FUZZ_SEED says otherwise). A failing input is written to
// $TMPDIR/pitlane-fuzz-*.txt.
#include "pitlane/protocol/events.h"
#include "pitlane/protocol/protocol.h"
#include "pitlane/spec/preset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace {

using json = nlohmann::json;
namespace spec = pitlane::spec;
namespace protocol = pitlane::protocol;

double budgetSeconds() {
    const char* s = std::getenv("PITLANE_FUZZ_SECONDS");
    return s ? std::max(0.1, std::atof(s)) : 2.0;
}

// A fixed seed by default (the suite repeats itself); PITLANE_FUZZ_SEED=N replays N, =random
// explores.
std::uint64_t seed() {
    const char* s = std::getenv("PITLANE_FUZZ_SEED");
    if (!s) return 20261123;
    if (std::string(s) == "random")
        return std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    return std::strtoull(s, nullptr, 10);
}

std::string sourceDir() {
    const char* src = std::getenv("PITLANE_SOURCE_DIR");
    return src ? src : ".";
}

std::string modelDir() {
    const char* m = std::getenv("PITLANE_MODEL_DIR");
    return m ? m : "";
}

// Keeps the input that broke a property, and says where.
std::string keep(const std::string& input, const std::string& what) {
    const char* tmp = std::getenv("TMPDIR");
    const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/pitlane-fuzz-" + what + "-" +
                             std::to_string(std::hash<std::string>{}(input)) + ".txt";
    std::ofstream(path, std::ios::binary) << input;
    return path;
}

class Mutator {
public:
    explicit Mutator(std::uint64_t s) : rng_(s) {}
    std::size_t below(std::size_t n) { return n ? std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_) : 0; }

    // A byte-level mutation of `s` (one to four edits), sometimes spliced with `other`.
    std::string bytes(std::string s, const std::string& other) {
        const int edits = 1 + int(below(4));
        for (int e = 0; e < edits; ++e) {
            const std::size_t at = below(s.size() + 1);
            switch (below(6)) {
                case 0: if (!s.empty()) s[std::min(at, s.size() - 1)] ^= char(1u << below(8)); break;
                case 1: s.insert(at, 1, char(below(256))); break;
                case 2: s.erase(at, below(16)); break;
                case 3: s.insert(at, s.substr(below(s.size() + 1), below(32))); break;
                case 4: s = s.substr(0, at); break;
                default: s = s.substr(0, at) + other.substr(below(other.size() + 1)); break;
            }
        }
        return s;
    }

    // A value of a random kind: what a hostile or mistyped preset puts where it should not.
    json value() {
        switch (below(12)) {
            case 0: return nullptr;
            case 1: return bool(below(2));
            case 2: return std::int64_t(below(5)) - 2;
            case 3: return std::numeric_limits<std::int64_t>::max();
            case 4: return -1e300;
            case 5: return 1e8;
            case 6: return std::string(below(3) ? 3 : 100000, 'x');
            case 7: return std::string("a\0b", 3);
            case 8: return json::array({1, 8, 32, 32});
            case 9: { json deep = 1; for (int i = 0; i < 200; ++i) deep = json::array({deep}); return deep; }
            case 10: return json::object({{"model", 42}});
            default: return "cuda:99999999999";
        }
    }

    // A JSON-aware mutation: one node of the tree replaced, removed or duplicated.
    void tree(json& j) {
        json* node = &j;
        for (int depth = 0; depth < 6 && (node->is_object() || node->is_array()) && !node->empty(); ++depth) {
            auto it = node->begin();
            std::advance(it, std::ptrdiff_t(below(node->size())));
            if (below(3) == 0) break;
            node = &*it;
        }
        if ((node->is_object() || node->is_array()) && !node->empty() && below(3) == 0) {
            auto it = node->begin();
            std::advance(it, std::ptrdiff_t(below(node->size())));
            if (node->is_object()) node->erase(it.key());
            else if (below(2)) node->push_back(*it);  // an arm twice, an input twice
            else node->erase(std::size_t(std::distance(node->begin(), it)));
            return;
        }
        *node = value();
    }

private:
    std::mt19937_64 rng_;
};

std::vector<std::string> presetCorpus() {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(sourceDir() + "/presets"))
        if (e.path().extension() == ".json") {
            std::ifstream in(e.path());
            std::stringstream ss;
            ss << in.rdbuf();
            out.push_back(ss.str());
        }
    return out;
}

// One preset input through validation and parsing; "" when every property held.
std::string checkPreset(const json& j) {
    try {
        // The field is empty only for the document itself ("a preset must be a JSON object").
        for (const auto& e : spec::validatePreset(j, "fuzz.json", modelDir()))
            if (e.reason().empty() || (e.field().empty() && j.is_object()))
                return "an error without field or reason: " + std::string(e.what());
    } catch (const std::exception& e) {
        return std::string("validatePreset threw: ") + e.what();
    }
    try {
        const auto p = spec::parsePreset(j, "fuzz.json", modelDir());
        if (p.arms.size() > spec::kMaxArms) return "more arms than kMaxArms accepted";
        const json once = spec::presetToJson(p);
        const json twice = spec::presetToJson(spec::parsePreset(once, "fuzz.json", modelDir()));
        if (once != twice) return "an accepted preset does not round-trip";
    } catch (const spec::SpecError& e) {
        if (e.field().empty() && std::string(e.what()).empty()) return "a SpecError without words";
    } catch (const std::exception& e) {
        return std::string("parsePreset threw a non-SpecError: ") + e.what();
    }
    return {};
}

TEST(Fuzz, PresetParserAcceptsOrRefusesWithItsOwnErrors) {
    const auto corpus = presetCorpus();
    ASSERT_FALSE(corpus.empty()) << "no presets under " << sourceDir() << "/presets";
    const std::uint64_t s = seed();
    Mutator m(s);
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(budgetSeconds());
    long tried = 0, parsed = 0;
    while (std::chrono::steady_clock::now() < end) {
        const std::string& base = corpus[m.below(corpus.size())];
        json j;
        std::string input;
        if (m.below(2)) {
            input = m.bytes(base, corpus[m.below(corpus.size())]);
            j = json::parse(input, nullptr, false);
            if (j.is_discarded()) { ++tried; continue; }  // not JSON: readJsonFile's job
        } else {
            j = json::parse(base);
            m.tree(j);
            input = j.dump();
        }
        ++tried;
        ++parsed;
        const std::string broken = checkPreset(j);
        ASSERT_TRUE(broken.empty()) << broken << " (seed " << s << ", input kept in " << keep(input, "preset") << ")";
    }
    std::cout << "[ fuzz     ] presets: " << tried << " inputs (" << parsed << " valid JSON), seed " << s << "\n";
    EXPECT_GT(tried, 100);
}

// Found by this fuzzer (seed 6627854881561): a key "" gave "fuzz.json: unknown field …" without
// naming the key.
TEST(Fuzz, RegressionAnEmptyKeyIsNamed) {
    const json j = json::parse(R"({"name": "x", "model": "mlp", "": 1, "arms": [{"name": "A"}]})");
    const auto errors = spec::validatePreset(j, "fuzz.json", modelDir());
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors.front().field(), "\"\"");
    EXPECT_NE(std::string(errors.front().what()).find("\"\": unknown field"), std::string::npos)
        << errors.front().what();
}

std::vector<std::string> protocolCorpus() {
    return {
        R"({"v":1,"type":"hello","pid":12,"protocol":1,"worker_version":"0.1","environment":{"libtorch":"1.13.1"}})",
        R"({"v":1,"type":"applied","device":"cpu","mode":"eval","intra_op_threads":1,"sandbox":{"enabled":true}})",
        R"({"v":1,"type":"samples","block":0,"phase":"measure","batch_size":1,"latency_ns":[100,200,300]})",
        R"({"v":1,"type":"block_done","block":2,"iters":10,"phase":"measure","batch_size":8,"wall_ms":3.5})",
        R"({"v":1,"type":"metrics","t_ms":12.5,"rss_bytes":1024,"cpu":[0.5,0.25]})",
        R"({"v":1,"type":"warning","code":"oversubscribed","message":"more threads than cores"})",
        R"({"v":1,"type":"error","code":"model_load_failed","message":"","detail":{"torch":"\nreal reason"}})",
        R"({"v":1,"type":"bye","malformed_commands":0,"peak_rss_bytes":123})",
        R"({"v":1,"cmd":"configure","arm":{"model_path":"m.pt","knobs":{"intra_op_threads":2,"grad":"no_grad"},"input":[{"shape":[4],"dtype":"float32"}]}})",
        R"({"v":1,"cmd":"run","block":0,"iters":10,"phase":"measure","batch_size":1})",
        R"({"v":1,"cmd":"quit"})",
    };
}

TEST(Fuzz, ProtocolDecodersAcceptOrRefuseWithoutCrashing) {
    const auto corpus = protocolCorpus();
    const std::uint64_t s = seed();
    Mutator m(s);
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(budgetSeconds());
    long tried = 0, decoded = 0;
    protocol::LineBuffer lines;
    while (std::chrono::steady_clock::now() < end) {
        std::string line = m.bytes(corpus[m.below(corpus.size())], corpus[m.below(corpus.size())]);
        if (m.below(4) == 0) {
            json j = json::parse(corpus[m.below(corpus.size())]);
            m.tree(j);
            line = j.dump();
        }
        ++tried;
        for (const auto kind : {protocol::Kind::Event, protocol::Kind::Command}) {
            std::string why;
            std::optional<json> j;
            try {
                j = protocol::decode(line, kind, &why);
            } catch (const std::exception& e) {
                FAIL() << "decode threw " << e.what() << " (seed " << s << ", kept in " << keep(line, "protocol") << ")";
            }
            if (!j) {
                ASSERT_FALSE(why.empty()) << "refused without a reason: " << keep(line, "protocol");
                continue;
            }
            ++decoded;
            try {
                (void)protocol::decodeEvent(*j);  // documented: std::exception on a wrong type
            } catch (const std::exception&) {
            }
            const json* cmd = j->contains("cmd") ? &(*j)["cmd"] : nullptr;
            const json* arm = j->contains("arm") ? &(*j)["arm"] : nullptr;
            if (kind == protocol::Kind::Command && cmd && *cmd == "configure" && arm && arm->is_object()) {
                try {
                    (void)spec::parseKnobs(arm->contains("knobs") ? (*arm)["knobs"] : json::object(),
                                           "<configure>", "knobs");
                } catch (const spec::SpecError&) {
                } catch (const std::exception& e) {
                    FAIL() << "parseKnobs threw a non-SpecError: " << e.what() << " (kept in "
                           << keep(line, "protocol") << ")";
                }
            }
        }
        lines.feed(line.data(), line.size());  // the splitter sees the same bytes, in pieces
    }
    std::cout << "[ fuzz     ] protocol: " << tried << " lines, " << decoded << " decoded, seed " << s << "\n";
    EXPECT_GT(tried, 100);
}


// Nested and huge JSON (issue 28): a preset file nested up to a million deep (objects, arrays,
// mixed, unclosed, inside strings where it is no nesting at all), with thousands of arms or a
// huge string, through the file reader and validation: refused with an error naming the file
// (or accepted), never a crash (the stack overflowed at 60 000 objects) or an exception.
TEST(Fuzz, NestedAndHugePresetFilesNeverCrashTheParser) {
    const std::uint64_t s = seed();
    Mutator m(s);
    const auto dir = std::filesystem::temp_directory_path() / ("pitlane-fuzz-nested-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string file = (dir / "nested.json").string();
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(budgetSeconds());
    long tried = 0, refusedDeep = 0;
    const std::vector<std::pair<std::string, std::string>> brackets = {
        {"{\"a\":", "}"}, {"[", "]"}, {"{\"a\":[", "]}"}, {"[{\"b\":", "}]"}};
    while (std::chrono::steady_clock::now() < end || tried < 20) {
        const std::size_t depths[] = {1, 10, 63, 64, 65, 99, 100, 101, 1000, 60000, 300000, 1000000};
        const std::size_t depth = depths[m.below(std::size(depths))];
        const auto& [open, close] = brackets[m.below(brackets.size())];
        std::string deep;
        for (std::size_t i = 0; i < depth; ++i) deep += open;
        deep += m.below(2) ? "1" : "\"x\"";
        const bool unclosed = m.below(5) == 0;
        if (!unclosed)
            for (std::size_t i = 0; i < depth; ++i) deep += close;
        std::string text;
        switch (m.below(4)) {
            case 0: text = deep; break;  // the document itself
            case 1: text = R"({"model": "mlp", "arms": [{"name": "A"}], "lesson": )" + deep + "}"; break;
            case 2: text = R"({"model": "mlp", "arms": [{"name": "A", "knobs": )" + deep + "}]}"; break;
            default: {
                // Huge rather than deep: many arms, or a long string where the nesting would be.
                std::string arms;
                const std::size_t n = m.below(2) ? 100000 : 65;
                for (std::size_t i = 0; i < n; ++i) arms += std::string(i ? "," : "") + "{\"name\":\"a" + std::to_string(i) + "\"}";
                text = m.below(2) ? R"({"model": "mlp", "arms": [)" + arms + "]}"
                                  : R"({"model": "mlp", "arms": [{"name": ")" + std::string(depth, '[') + "\"}]}";
            }
        }
        std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
        ++tried;
        try {
            const auto errors = spec::validatePresetFile(file, modelDir());
            for (const auto& e : errors) {
                ASSERT_EQ(e.where(), file);
                ASSERT_FALSE(e.reason().empty()) << "(seed " << s << ", kept in " << keep(text.substr(0, 4096), "nested") << ")";
                refusedDeep += e.reason().find("nested more than") != std::string::npos;
            }
            json j;
            std::string why;
            (void)spec::readJsonFile(file, &j, &why);
        } catch (const std::exception& e) {
            FAIL() << "threw " << e.what() << " (seed " << s << ", kept in " << keep(text.substr(0, 4096), "nested") << ")";
        }
    }
    std::filesystem::remove_all(dir);
    std::cout << "[ fuzz     ] nested: " << tried << " files, " << refusedDeep << " refused as too deep, seed " << s << "\n";
    EXPECT_GT(refusedDeep, 0);
}

}  // namespace
