// What an exported program (torch.export.save) says about itself, from its models/model.json:
// its user inputs (dtype, sizes, which are symbolic), the range of a dynamic batch, the device
// of its weights and the torch that saved it. The schema is torch/_export/serde/schema.py
// (ScalarType codes, SymInt as {"as_int": n} or {"as_expr": {"expr_str", "hint"}}).
#include "pitlane/spec/model_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>

namespace pitlane::spec::detail {

namespace {

using json = nlohmann::json;

// torch/_export/serde/schema.py ScalarType.
std::string dtypeOfCode(int code) {
    switch (code) {
        case 1: return "uint8";
        case 2: return "int8";
        case 3: return "int16";
        case 4: return "int32";
        case 5: return "int64";
        case 6: return "float16";
        case 7: return "float32";
        case 8: return "float64";
        case 12: return "bool";
        case 13: return "bfloat16";
        default: return "";
    }
}

// "Symbol('s23', positive=True, integer=True)" or "s23" → "s23"; "" for an expression.
std::string symbolOf(const std::string& expr) {
    static const std::regex sym(R"(^\s*(?:Symbol\('([A-Za-z_][A-Za-z0-9_]*)'.*\)|([A-Za-z_][A-Za-z0-9_]*))\s*$)");
    std::smatch m;
    if (!std::regex_match(expr, m, sym)) return {};
    return m[1].matched ? m[1].str() : m[2].str();
}

struct Dim {
    long long value = -1;  // a static size, or the example's (the hint) for a symbolic one
    std::string symbol;    // "" when static
};

std::vector<Dim> dimsOf(const json& meta) {
    std::vector<Dim> dims;
    for (const auto& s : meta.value("sizes", json::array())) {
        Dim d;
        if (s.contains("as_int") && s["as_int"].is_number_integer()) {
            d.value = s["as_int"].get<long long>();
        } else if (s.contains("as_expr") && s["as_expr"].is_object()) {
            const json& e = s["as_expr"];
            d.symbol = symbolOf(e.value("expr_str", std::string()));
            if (d.symbol.empty()) d.symbol = "?";
            if (e.contains("hint") && e["hint"].is_object() && e["hint"].contains("as_int") &&
                e["hint"]["as_int"].is_number_integer())
                d.value = e["hint"]["as_int"].get<long long>();
        }
        dims.push_back(d);
    }
    return dims;
}

}  // namespace

std::map<std::string, std::string> exportedMetadata(const json& model) {
    std::map<std::string, std::string> m;
    if (!model.is_object()) return m;
    if (model.contains("torch_version") && model["torch_version"].is_string())
        m["torch_version"] = model["torch_version"].get<std::string>();
    const json gm = model.value("graph_module", json::object());
    if (!gm.is_object()) return m;
    const json graph = gm.value("graph", json::object());
    const json values = graph.is_object() ? graph.value("tensor_values", json::object()) : json::object();
    const json specs = gm.contains("signature") && gm["signature"].is_object()
                           ? gm["signature"].value("input_specs", json::array())
                           : json::array();
    const json ranges = model.value("range_constraints", json::object());
    json input = json::array();
    int users = 0, nonTensor = 0;
    bool batchSet = false;
    for (const auto& spec : specs) {
        if (!spec.is_object()) continue;
        // Parameters and buffers are "devices of the weights"; user inputs are what we feed.
        for (const char* weight : {"parameter", "buffer"})
            if (spec.contains(weight) && m.find("device") == m.end()) {
                const json& arg = spec[weight].value("arg", json::object());
                const std::string name = arg.is_object() ? arg.value("name", std::string()) : std::string();
                if (values.is_object() && values.contains(name) && values[name].is_object() &&
                    values[name].contains("device") && values[name]["device"].is_object())
                    m["device"] = values[name]["device"].value("type", std::string("cpu"));
            }
        if (!spec.contains("user_input")) continue;
        ++users;
        const json arg = spec["user_input"].value("arg", json::object());
        if (!arg.is_object() || !arg.contains("as_tensor") || !arg["as_tensor"].is_object()) {
            ++nonTensor;
            continue;
        }
        const std::string name = arg["as_tensor"].value("name", std::string());
        if (!values.is_object() || !values.contains(name) || !values[name].is_object()) continue;
        const json& meta = values[name];
        const std::vector<Dim> dims = dimsOf(meta);
        const std::string dtype = dtypeOfCode(meta.value("dtype", 0));
        json e = {{"dtype", dtype.empty() ? std::string("float32") : dtype}, {"example", true}};
        json shape = json::array();
        for (std::size_t i = 1; i < dims.size(); ++i) shape.push_back(dims[i].value > 0 ? dims[i].value : 1);
        if (dims.empty()) {
            e["batch_dim"] = false;
        } else if (!batchSet) {
            batchSet = true;
            m["batch_input"] = name;
            const Dim& b = dims.front();
            if (b.symbol.empty()) {
                m["batch"] = "static " + std::to_string(b.value);
            } else {
                long long lo = 0, hi = 0;
                const json r = ranges.is_object() ? ranges.value(b.symbol, json::object()) : json::object();
                if (r.is_object()) {
                    lo = r.value("min_val", json(0)).is_number_integer() ? r["min_val"].get<long long>() : 0;
                    hi = r.contains("max_val") && r["max_val"].is_number_integer() ? r["max_val"].get<long long>() : 0;
                }
                // An unbounded range (max_val null / "int_oo") is written as this build's ceiling.
                if (hi <= 0) hi = 1LL << 31;
                m["batch"] = "dynamic " + std::to_string(std::max(1LL, lo)) + "-" + std::to_string(hi);
                m["batch_symbol"] = b.symbol;
            }
            if (b.value > 0) m["example_batch"] = std::to_string(b.value);
        }
        e["shape"] = shape;
        input.push_back(e);
    }
    m["inputs"] = std::to_string(users);
    if (nonTensor > 0) m["non_tensor_inputs"] = std::to_string(nonTensor);
    if (!input.empty()) m["input"] = input.dump();
    if (m.find("device") == m.end()) m["device"] = "cpu";
    return m;
}

}  // namespace pitlane::spec::detail
