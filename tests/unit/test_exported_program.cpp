// Exported programs (issue 40) in the spec: what models/model.json says (detail::exportedMetadata
// on JSON written the way torch/_export/serde writes it), the knobs an exported program takes and
// refuses (checkKnobsForFormat), the `inductor` knob's validation, and validate's words.
#include "pitlane/spec/knob_table.h"
#include "pitlane/spec/model_file.h"
#include "pitlane/spec/model_preset.h"
#include "pitlane/spec/preset.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using pitlane::spec::json;
namespace spec = pitlane::spec;

// A SymInt the way torch.export.save writes one.
json symbolic(const std::string& symbol, int hint) {
    return {{"as_expr", {{"expr_str", "Symbol('" + symbol + "', positive=True, integer=True)"}, {"hint", {{"as_int", hint}}}}}};
}
json fixed(int n) { return {{"as_int", n}}; }

json tensorMeta(int dtype, json sizes, const std::string& device = "cpu") {
    return {{"dtype", dtype}, {"sizes", std::move(sizes)}, {"device", {{"type", device}, {"index", nullptr}}}};
}

// A program with one parameter and two user inputs: ids (int64 [B, 5]) and x (float32 [B, 8]).
json program(json batchDim, const std::string& device = "cpu") {
    json values = {{"p_w", tensorMeta(7, {fixed(4), fixed(8)}, device)},
                   {"ids", tensorMeta(5, {batchDim, fixed(5)}, device)},
                   {"x", tensorMeta(7, {batchDim, fixed(8)}, device)}};
    json specs = json::array({{{"parameter", {{"arg", {{"name", "p_w"}}}, {"parameter_name", "w"}}}},
                              {{"user_input", {{"arg", {{"as_tensor", {{"name", "ids"}}}}}}}},
                              {{"user_input", {{"arg", {{"as_tensor", {{"name", "x"}}}}}}}}});
    return {{"torch_version", "2.11.0+cu130"},
            {"range_constraints", {{"s23", {{"min_val", 1}, {"max_val", 1024}}}}},
            {"graph_module", {{"graph", {{"tensor_values", values}}}, {"signature", {{"input_specs", specs}}}}}};
}

TEST(ExportedProgram, DynamicBatchRangeExampleBatchAndInputs) {
    const auto m = spec::detail::exportedMetadata(program(symbolic("s23", 2)));
    EXPECT_EQ(m.at("batch"), "dynamic 1-1024");
    EXPECT_EQ(m.at("batch_symbol"), "s23");
    EXPECT_EQ(m.at("batch_input"), "ids");
    EXPECT_EQ(m.at("example_batch"), "2");
    EXPECT_EQ(m.at("device"), "cpu");
    EXPECT_EQ(m.at("torch_version"), "2.11.0+cu130");
    EXPECT_EQ(m.at("inputs"), "2");
    const json input = json::parse(m.at("input"));
    ASSERT_EQ(input.size(), 2u);
    EXPECT_EQ(input[0], (json{{"dtype", "int64"}, {"example", true}, {"shape", {5}}}));
    EXPECT_EQ(input[1], (json{{"dtype", "float32"}, {"example", true}, {"shape", {8}}}));
    // The described input parses as a preset input, example values and all.
    const auto parsed = spec::parseInputs(input, "model.pt2", "input");
    EXPECT_TRUE(parsed[0].example);
    EXPECT_EQ(parsed[0].dtype, "int64");
}

TEST(ExportedProgram, StaticBatchCudaWeightsAndAnUnboundedRange) {
    auto m = spec::detail::exportedMetadata(program(fixed(3), "cuda"));
    EXPECT_EQ(m.at("batch"), "static 3");
    EXPECT_EQ(m.at("example_batch"), "3");
    EXPECT_EQ(m.at("device"), "cuda");
    EXPECT_EQ(m.count("batch_symbol"), 0u);
    json j = program(symbolic("s7", 4));
    j["range_constraints"] = {{"s7", {{"min_val", 2}, {"max_val", nullptr}}}};
    m = spec::detail::exportedMetadata(j);
    EXPECT_EQ(m.at("batch"), "dynamic 2-" + std::to_string(1LL << 31));
}

TEST(ExportedProgram, DamagedGraphJsonGivesWhatItCanNeverThrows) {
    for (const json& j : {json(), json::array(), json{{"graph_module", 3}}, json{{"graph_module", {{"graph", "x"}}}},
                          json{{"graph_module", {{"signature", {{"input_specs", {1, "a", nullptr}}}}}}}}) {
        const auto m = spec::detail::exportedMetadata(j);
        EXPECT_EQ(m.count("input"), 0u) << j.dump();
    }
}

spec::ModelFormat exportedFormat(json batchDim, const std::string& device = "cpu") {
    spec::ModelFormat f;
    f.format = spec::kFormatExported;
    f.metadata = spec::detail::exportedMetadata(program(std::move(batchDim), device));
    return f;
}

std::vector<spec::SpecError> refusals(const json& knobs, const spec::ModelFormat& f) {
    std::vector<spec::SpecError> errors;
    const auto k = spec::parseKnobs(knobs, "p.json", "knobs");
    spec::checkKnobsForFormat(k, knobs, f, "p.json", "arms[0].knobs", errors);
    return errors;
}

TEST(ExportedProgram, KnobsItTakesAndKnobsItRefusesWithTheReason) {
    const auto f = exportedFormat(symbolic("s23", 2));
    EXPECT_TRUE(refusals({{"intra_op_threads", 1}, {"batch_size", {1, 64}}, {"allocator", "jemalloc"}}, f).empty());
    EXPECT_TRUE(refusals({{"compile", "aoti"}, {"inductor", {{"freezing", true}}}}, f).empty());
    // The defaults written out, as the worker receives every knob (grad: the format's default,
    // inference_mode), change nothing; grad "enabled" written is refused.
    spec::Knobs defaults;
    spec::applyFormatDefaults(defaults, json::object(), spec::kFormatExported);
    EXPECT_EQ(defaults.grad, spec::Grad::InferenceMode);
    EXPECT_TRUE(refusals(spec::knobsToJson(defaults), f).empty());
    EXPECT_EQ(refusals({{"grad", "enabled"}}, f).size(), 1u);
    for (const auto& [knob, value] : std::vector<std::pair<std::string, json>>{
             {"jit", "freeze"}, {"precision", "autocast_bf16"}, {"mode", "train"}, {"workload", "train_step"}}) {
        const auto e = refusals({{knob, value}}, f);
        ASSERT_EQ(e.size(), 1u) << knob;
        EXPECT_EQ(e[0].field(), "arms[0].knobs." + knob);
        EXPECT_NE(e[0].reason().find("exported program"), std::string::npos) << e[0].reason();
    }
    auto e = refusals({{"batch_size", 2048}}, f);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_NE(e[0].reason().find("a batch dimension (dimension 0 of input \"ids\") from 1 to 1024"), std::string::npos) << e[0].reason();
    e = refusals({{"inductor", {{"freezing", true}}}}, f);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].field(), "arms[0].knobs.inductor");
    EXPECT_NE(e[0].reason().find("\"compile\": \"aoti\""), std::string::npos);
    e = refusals({{"device", "cuda:0"}}, f);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_NE(e[0].reason().find("weights are on cpu"), std::string::npos) << e[0].reason();
}

TEST(ExportedProgram, StaticBatchRefusesAnotherSizeNamingTheDimension) {
    const auto f = exportedFormat(fixed(1));
    EXPECT_TRUE(refusals({{"batch_size", 1}}, f).empty());
    const auto e = refusals({{"batch_size", {1, 8}}}, f);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].field(), "arms[0].knobs.batch_size");
    EXPECT_NE(e[0].reason().find("a static batch of 1 (dimension 0 of input \"ids\")"), std::string::npos) << e[0].reason();
    EXPECT_NE(e[0].reason().find("batch_size 8"), std::string::npos);
}

// compile "aoti" makes a package that checks every static size: an arm feeding other sizes is
// refused before a minute of compiling (resnet18.exported.pt2 with --input 3x64x64 compiled for
// 54 s, then "the package refused it: unmatched dim value at 2, expected: 224, but got: 64").
TEST(ExportedProgram, ACompiledArmFeedsTheExportedSizesOrIsRefusedBeforeCompiling) {
    json j = program(symbolic("s23", 2));
    // x: [B, 8, S] with S dynamic (a sequence length), to check a dynamic size passes.
    j["graph_module"]["graph"]["tensor_values"]["x"] = tensorMeta(7, {symbolic("s23", 2), fixed(8), symbolic("s5", 16)});
    spec::ModelFormat f;
    f.format = spec::kFormatExported;
    f.metadata = spec::detail::exportedMetadata(j);
    EXPECT_EQ(json::parse(f.metadata.at("input_dims")), json::parse("[[null, 5], [null, 8, null]]"));
    const auto check = [&](std::vector<spec::InputSpec> input, const json& knobs) {
        std::vector<spec::SpecError> errors;
        spec::checkCompiledInput(input, spec::parseKnobs(knobs, "p.json", "knobs"), f, "/m/prog.pt2", "p.json",
                                 "arms[1].input", errors);
        return errors;
    };
    spec::InputSpec ids, x;
    ids.dtype = "int64";
    ids.shape = {5};
    x.shape = {8, 64};
    const json aoti = {{"compile", "aoti"}};
    EXPECT_TRUE(check({ids, x}, aoti).empty()) << "any size where the program is dynamic";
    x.shape = {9, 64};
    auto e = check({ids, x}, aoti);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].field(), "arms[1].input");
    EXPECT_NE(e[0].reason().find("prog.pt2"), std::string::npos) << e[0].reason();
    EXPECT_NE(e[0].reason().find("input 1 was exported as [N, 8, any] (N the batch, any a dynamic size), this arm "
                                 "feeds [N, 9, 64]"),
              std::string::npos)
        << e[0].reason();
    EXPECT_TRUE(check({ids, x}, json::object()).empty()) << "NativeRT is not refused";
    x.shape = {8};
    EXPECT_EQ(check({ids, x}, aoti).size(), 1u) << "another rank";
    // A varying-shape input: each shape it feeds.
    x.shape = {8, 4};
    x.shapes = {{8, 4}, {7, 4}};
    EXPECT_EQ(check({ids, x}, aoti).size(), 1u);
    // The program's own example inputs: its sizes, nothing to check.
    x.shapes.clear();
    x.shape = {1};
    x.example = true;
    EXPECT_TRUE(check({ids, x}, aoti).empty());
    // ids static [B, 5]: the message names no dynamic size.
    ids.shape = {6};
    e = check({ids}, aoti);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_NE(e[0].reason().find("input 0 was exported as [N, 5] (N the batch), this arm feeds [N, 6]"),
              std::string::npos)
        << e[0].reason();
}

TEST(ExportedProgram, CompileAndInductorAreRefusedForOtherFormats) {
    for (const char* format : {spec::kFormatTorchScript, spec::kFormatAoti}) {
        spec::ModelFormat f;
        f.format = format;
        auto e = refusals({{"compile", "aoti"}}, f);
        ASSERT_EQ(e.size(), 1u) << format;
        EXPECT_EQ(e[0].field(), "arms[0].knobs.compile");
        EXPECT_NE(e[0].reason().find("only an exported program"), std::string::npos);
        EXPECT_TRUE(refusals({{"compile", "none"}}, f).empty()) << format;
        EXPECT_FALSE(spec::knobNotForFormat("inductor", format).empty());
    }
    EXPECT_TRUE(spec::knobNotForFormat("compile", spec::kFormatExported).empty());
    EXPECT_FALSE(spec::knobNotForFormat("jit", spec::kFormatExported).empty());
}

TEST(InductorKnob, PartialObjectsKeepDefaultsAndBadOptionsAreNamed) {
    auto k = spec::parseKnobs({{"inductor", {{"freezing", true}}}}, "p.json", "knobs");
    EXPECT_TRUE(k.inductor.freezing);
    EXPECT_FALSE(k.inductor.max_autotune);
    EXPECT_TRUE(k.inductor.dynamic_threads);  // the default, so intra_op_threads reaches the kernels
    EXPECT_EQ(spec::knobsToJson(k)["inductor"],
              (json{{"freezing", true}, {"max_autotune", false}, {"dynamic_threads", true}}));
    k = spec::parseKnobs({{"compile", "aoti"}}, "p.json", "knobs");
    EXPECT_EQ(k.compile, spec::Compile::Aoti);
    try {
        spec::parseKnobs({{"inductor", {{"max_autotunes", true}}}}, "p.json", "knobs");
        FAIL() << "an unknown option was accepted";
    } catch (const spec::SpecError& e) {
        EXPECT_EQ(e.field(), "knobs.inductor.max_autotunes");
        EXPECT_NE(e.reason().find("freezing, max_autotune, dynamic_threads"), std::string::npos) << e.reason();
    }
    try {
        spec::parseKnobs({{"inductor", {{"freezing", 1}}}}, "p.json", "knobs");
        FAIL() << "a number was accepted as a boolean";
    } catch (const spec::SpecError& e) {
        EXPECT_EQ(e.field(), "knobs.inductor.freezing");
    }
    try {
        spec::parseKnobs({{"inductor", true}}, "p.json", "knobs");
        FAIL() << "a boolean was accepted as the options object";
    } catch (const spec::SpecError& e) {
        EXPECT_EQ(e.field(), "knobs.inductor");
    }
}

TEST(ExportedProgram, DescribeModelFormatNamesWhatTheFileIs) {
    auto f = exportedFormat(symbolic("s23", 2));
    const std::string text = spec::describeModelFormat(f);
    EXPECT_NE(text.find("a torch.export archive"), std::string::npos) << text;
    EXPECT_NE(text.find("NativeRT"), std::string::npos);
    EXPECT_NE(text.find("dynamic 1-1024"), std::string::npos);
    spec::ModelFormat pkg;
    pkg.format = spec::kFormatAoti;
    pkg.metadata["AOTI_DEVICE_KEY"] = "cuda";
    EXPECT_NE(spec::describeModelFormat(pkg).find("an AOTInductor package compiled for cuda"), std::string::npos);
}

}  // namespace

namespace {

// A pickle as torch.save (protocol 2) writes one for ((ids,), {}) with ids int64 [1, 32]: the
// opcodes pickletools shows for tiny_lm.exported.pt2's data/sample_inputs/model.pt.
std::string unicode(const std::string& s) {
    std::string out = "X";
    for (int i = 0; i < 4; ++i) out += char((s.size() >> (8 * i)) & 0xff);
    return out + s;
}

std::string tensorPickle(int rows, int cols) {
    using namespace std::string_literals;  // "...\x00..."s keeps its NUL bytes
    std::string p = "\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\nq\x00(("s;
    p += unicode("storage") + "q\x01" + "ctorch\nLongStorage\nq\x02" + unicode("0") + "q\x03" + unicode("cpu") + "q\x04";
    p += "K" + std::string(1, char(rows * cols)) + "tq\x05Q";
    p += "K\x00"s + "K" + std::string(1, char(rows)) + "K" + std::string(1, char(cols)) + "\x86q\x06";  // offset, size
    p += "K" + std::string(1, char(cols)) + "K\x01\x86q\x07\x89" "ccollections\nOrderedDict\nq\x08)Rq\x09tq\x0aRq\x0b";
    p += "\x85q\x0c}q\x0d\x86q\x0e.";
    return p;
}

TEST(ExportedProgram, SampleInputSizesFromTheTorchSavePickle) {
    const auto sizes = pitlane::spec::detail::pickledTensorSizes(tensorPickle(1, 32));
    ASSERT_EQ(sizes.size(), 1u);
    EXPECT_EQ(sizes[0], (std::vector<long long>{1, 32}));
    EXPECT_EQ(pitlane::spec::detail::pickledTensorSizes(tensorPickle(3, 7))[0], (std::vector<long long>{3, 7}));
    // Cut anywhere, or garbage: what was found so far, never a crash.
    const std::string whole = tensorPickle(2, 5);
    for (std::size_t n = 0; n < whole.size(); ++n) pitlane::spec::detail::pickledTensorSizes(whole.substr(0, n));
    EXPECT_TRUE(pitlane::spec::detail::pickledTensorSizes("garbage").empty());
    EXPECT_TRUE(pitlane::spec::detail::sampleInputSizes("PK\x03\x04 too short").empty());
}

}  // namespace

namespace {

// Integer inputs' value range (issue 41 item 4): "low" / "high" in a preset and "[lo,hi)" in the
// typed syntax; refused for float inputs and for an empty range, naming the field.
TEST(InputRange, PresetFieldsAndTheTypedSyntax) {
    namespace spec = pitlane::spec;
    const auto typed = spec::parseInputText("16:int64[0,50); 8 float32");
    EXPECT_EQ(typed, (json::array({{{"shape", {16}}, {"dtype", "int64"}, {"low", 0}, {"high", 50}},
                                   {{"shape", {8}}, {"dtype", "float32"}}})));
    const auto in = spec::parseInputs(typed, "p.json", "input");
    ASSERT_EQ(in.size(), 2u);
    EXPECT_EQ(in[0].low, 0);
    EXPECT_EQ(in[0].high, 50);
    EXPECT_FALSE(in[1].low.has_value());
    EXPECT_EQ(spec::inputsToJson(in)[0], typed[0]);
    EXPECT_EQ(spec::parseInputText("[128]:int32[-5, 5)")[0]["low"], -5);
    const auto refused = [](const json& input, const std::string& field) {
        try {
            spec::parseInputs(input, "p.json", "input");
            ADD_FAILURE() << "accepted " << input.dump();
        } catch (const spec::SpecError& e) {
            EXPECT_EQ(e.field(), field) << e.what();
        }
    };
    refused(json::array({{{"shape", {4}}, {"dtype", "float32"}, {"low", 0}, {"high", 4}}}), "input[0].low");
    refused(json::array({{{"shape", {4}}, {"dtype", "int64"}, {"low", 9}, {"high", 9}}}), "input[0].high");
    refused(json::array({{{"shape", {4}}, {"dtype", "int64"}, {"high", 0.5}}}), "input[0].high");
}

}  // namespace
