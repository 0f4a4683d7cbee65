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
    // Each tensor input's sizes as exported, batch included: a number where the size is static,
    // null where it is symbolic (torch.export.Dim). What an AOTInductor package compiled from the
    // program accepts (spec::checkCompiledInput).
    json dimsJson = json::array();
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
        json sizes = json::array();
        for (const Dim& d : dims) sizes.push_back(d.symbol.empty() && d.value >= 0 ? json(d.value) : json());
        dimsJson.push_back(sizes);
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
    if (!dimsJson.empty()) m["input_dims"] = dimsJson.dump();
    if (m.find("device") == m.end()) m["device"] = "cpu";
    return m;
}

}  // namespace pitlane::spec::detail

namespace pitlane::spec::detail {

namespace {

std::uint32_t le(const std::string& s, std::size_t at, int bytes) {
    std::uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | std::uint8_t(s[at + std::size_t(i)]);
    return v;
}

// The bytes of the stored entry "<folder>/data.pkl" of a zip held in memory (torch.save writes
// its records stored, their sizes in data descriptors: read from the central directory); ""
// when there is none. Every length is bounded by the buffer before it is used.
std::string storedDataPkl(const std::string& zip) {
    if (zip.size() < 22) return {};
    std::size_t eocd = std::string::npos;
    for (std::size_t at = zip.size() - 22 + 1; at-- > 0 && zip.size() - at <= 22 + 65535;)
        if (le(zip, at, 4) == 0x06054b50u) {
            eocd = at;
            break;
        }
    if (eocd == std::string::npos) return {};
    const std::size_t entries = le(zip, eocd + 10, 2);
    std::size_t at = le(zip, eocd + 16, 4);
    for (std::size_t i = 0; i < entries && at + 46 <= zip.size(); ++i) {
        if (le(zip, at, 4) != 0x02014b50u) return {};
        const std::uint32_t method = le(zip, at + 10, 2), size = le(zip, at + 20, 4);
        const std::size_t nameLen = le(zip, at + 28, 2), extraLen = le(zip, at + 30, 2), commentLen = le(zip, at + 32, 2);
        const std::size_t local = le(zip, at + 42, 4);
        if (at + 46 + nameLen > zip.size()) return {};
        const std::string name = zip.substr(at + 46, nameLen);
        at += 46 + nameLen + extraLen + commentLen;
        if (method != 0 || name.size() < 9 || name.compare(name.size() - 9, 9, "/data.pkl") != 0) continue;
        if (local + 30 > zip.size() || le(zip, local, 4) != 0x04034b50u) return {};
        const std::size_t data = local + 30 + le(zip, local + 26, 2) + le(zip, local + 28, 2);
        if (data > zip.size() || size > zip.size() - data) return {};
        return zip.substr(data, size);
    }
    return {};
}

}  // namespace

// The sizes of the tensors a torch.save pickle rebuilds (torch._utils._rebuild_tensor_v2(storage,
// offset, size, stride, ...)): after each persistent id (the storage) comes the offset, then the
// size tuple. A small stack machine over the opcodes torch.save (protocol 2) writes; anything
// else ends the scan with what was found.
std::vector<std::vector<long long>> pickledTensorSizes(const std::string& pkl) {
    struct Item {
        enum Kind { Int, Tuple, Mark, Other } kind = Other;
        long long value = 0;
        std::vector<long long> ints;  // a tuple of ints
        bool intsOnly = true;
        static Item of(Kind k, long long v = 0) {
            Item i;
            i.kind = k;
            i.value = v;
            return i;
        }
    };
    std::vector<Item> stack;
    std::vector<std::vector<long long>> sizes;
    // After a BINPERSID (the storage): 0 waits for the offset (an int), 1 for the size tuple
    // (the ints pushed meanwhile are its elements).
    int afterStorage = -1;
    const auto push = [&](Item it) {
        stack.push_back(std::move(it));
        const Item& top = stack.back();
        if (afterStorage == 0 && top.kind == Item::Int) {
            afterStorage = 1;
        } else if (afterStorage == 1 && top.kind == Item::Tuple) {
            if (top.intsOnly) sizes.push_back(top.ints);
            afterStorage = -1;
        } else if (afterStorage >= 0 && top.kind != Item::Int) {
            afterStorage = -1;  // not what _rebuild_tensor_v2's arguments look like
        }
    };
    const auto tupleOf = [&](std::size_t n) {
        Item t;
        t.kind = Item::Tuple;
        if (n > stack.size()) return t;
        for (std::size_t i = stack.size() - n; i < stack.size(); ++i) {
            t.intsOnly = t.intsOnly && stack[i].kind == Item::Int;
            t.ints.push_back(stack[i].value);
        }
        stack.resize(stack.size() - n);
        return t;
    };
    std::size_t p = 0;
    const auto need = [&](std::size_t n) { return p + n <= pkl.size(); };
    while (p < pkl.size() && sizes.size() < 4096) {
        const unsigned char op = std::uint8_t(pkl[p++]);
        switch (op) {
            case 0x80: if (!need(1)) return sizes; p += 1; break;  // PROTO
            case 'c': {  // GLOBAL "module\nname\n"
                for (int lines = 0; lines < 2 && p < pkl.size(); ++p) lines += pkl[p] == '\n';
                push({});
                break;
            }
            case 'q': if (!need(1)) return sizes; p += 1; break;  // BINPUT
            case 'r': if (!need(4)) return sizes; p += 4; break;  // LONG_BINPUT
            case 'h': if (!need(1)) return sizes; p += 1; push({}); break;  // BINGET
            case 'j': if (!need(4)) return sizes; p += 4; push({}); break;  // LONG_BINGET
            case '(': stack.push_back(Item::of(Item::Mark)); break;
            case 'X': {  // BINUNICODE
                if (!need(4)) return sizes;
                const std::size_t n = le(pkl, p, 4);
                if (!need(4 + n)) return sizes;
                p += 4 + n;
                push({});
                break;
            }
            case 0x8c: {  // SHORT_BINUNICODE
                if (!need(1)) return sizes;
                const std::size_t n = std::uint8_t(pkl[p]);
                if (!need(1 + n)) return sizes;
                p += 1 + n;
                push({});
                break;
            }
            case 'K': if (!need(1)) return sizes; push(Item::of(Item::Int, std::uint8_t(pkl[p]))); p += 1; break;
            case 'M': if (!need(2)) return sizes; push(Item::of(Item::Int, le(pkl, p, 2))); p += 2; break;
            case 'J': if (!need(4)) return sizes; push(Item::of(Item::Int, std::int32_t(le(pkl, p, 4)))); p += 4; break;
            case 0x8a: {  // LONG1
                if (!need(1)) return sizes;
                const std::size_t n = std::uint8_t(pkl[p]);
                if (!need(1 + n) || n > 8) return sizes;
                long long v = 0;
                for (std::size_t i = 0; i < n; ++i) v |= (long long)(std::uint8_t(pkl[p + 1 + i])) << (8 * i);
                p += 1 + n;
                push(Item::of(Item::Int, v));
                break;
            }
            case 't': {  // TUPLE: back to the mark
                std::size_t m = stack.size();
                while (m > 0 && stack[m - 1].kind != Item::Mark) --m;
                if (m == 0) return sizes;
                Item t = tupleOf(stack.size() - m);
                stack.pop_back();  // the mark
                push(std::move(t));
                break;
            }
            case ')': push(Item::of(Item::Tuple)); break;
            case 0x85: case 0x86: case 0x87: push(tupleOf(std::size_t(op - 0x84))); break;
            case 'Q':  // BINPERSID: pops the persistent id, pushes the storage
                if (stack.empty()) return sizes;
                stack.pop_back();
                stack.push_back({});
                afterStorage = 0;
                break;
            case 'R':  // REDUCE: callable, args -> result
                if (stack.size() < 2) return sizes;
                stack.resize(stack.size() - 2);
                push({});
                break;
            case 0x88: case 0x89: case 'N': case '}': case ']': push({}); break;  // True False None {} []
            case 'G': if (!need(8)) return sizes; p += 8; push({}); break;  // BINFLOAT
            case 's': if (stack.size() < 2) return sizes; stack.resize(stack.size() - 2); break;  // SETITEM
            case 'a': if (stack.empty()) return sizes; stack.pop_back(); break;  // APPEND
            case 'u': case 'e': {  // SETITEMS / APPENDS: back to the mark
                while (!stack.empty() && stack.back().kind != Item::Mark) stack.pop_back();
                if (stack.empty()) return sizes;
                stack.pop_back();
                break;
            }
            case '.': return sizes;  // STOP
            default: return sizes;
        }
        if (stack.size() > 100000) return sizes;
    }
    return sizes;
}

std::vector<std::vector<long long>> sampleInputSizes(const std::string& savedZip) {
    const std::string pkl = storedDataPkl(savedZip);
    return pkl.empty() ? std::vector<std::vector<long long>>{} : pickledTensorSizes(pkl);
}

}  // namespace pitlane::spec::detail
