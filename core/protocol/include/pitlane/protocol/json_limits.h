#pragma once
// Bounded JSON parsing (issue 28). nlohmann's parser is iterative, but copying, comparing or
// dumping a parsed tree recurses once per level: 60 000 nested objects (or 300 000 nested arrays)
// overflowed the stack (SIGSEGV) when a preset was copied. Every JSON we read from outside (files,
// history rows, protocol lines, model metadata, settings) is parsed here, with its nesting depth
// refused beyond a limit *while parsing*, before a deep tree exists (its copy and its destructor
// would recurse too).
//
// The builder is also linear: nlohmann's callback parser (json::parse(in, callback)) scans the
// parent container for a discarded value after every object it closes, so a preset of 256 k arms
// took 28 s to parse (1.5 M arms: past 120 s). Duplicate keys are found here instead, by a lookup
// in the object being built.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pitlane::protocol {

// Deepest nesting of objects and arrays accepted anywhere (a preset needs 6; a results JSON, which
// embeds its preset, a few more; spec::kMaxPresetDepth is the tighter limit of a preset).
inline constexpr int kMaxJsonDepth = 100;

struct JsonLimits {
    int max_depth = kMaxJsonDepth;
    bool refuse_duplicate_keys = false;
    // A top-level key whose array may hold at most max_items elements (a preset's "arms": 64):
    // the parse stops at the first element too many, before the rest of the file is read.
    std::string counted_key;
    std::size_t max_items = 0;
};

// Why a bounded parse stopped.
struct JsonFailure {
    enum Kind { None, Syntax, Depth, DuplicateKey, TooManyItems } kind = None;
    std::string reason;  // a sentence: "not valid JSON: …", "nested more than 100 levels deep …"
    std::string field;   // where it stopped, as a JSON path ("run.iters", "arms[2].knobs"); "" at the top
};

// A SAX handler that builds the DOM under JsonLimits (json::sax_parse(input, &builder)).
class BoundedJsonBuilder {
public:
    using json = nlohmann::json;
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    BoundedJsonBuilder(json& root, JsonLimits limits) : root_(root), limits_(std::move(limits)) {}

    bool null() { return value(json(nullptr)); }
    bool boolean(bool b) { return value(json(b)); }
    bool number_integer(number_integer_t n) { return value(json(n)); }
    bool number_unsigned(number_unsigned_t n) { return value(json(n)); }
    bool number_float(number_float_t n, const string_t&) { return value(json(n)); }
    bool string(string_t& s) { return value(json(std::move(s))); }
    bool binary(binary_t& b) { return value(json::binary(std::move(b))); }
    bool start_object(std::size_t) { return open(json::object()); }
    bool start_array(std::size_t) { return open(json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(string_t& k) {
        Level& top = stack_.back();
        if (limits_.refuse_duplicate_keys && top.node->contains(k)) {
            // JSON allows a key twice and parsers keep the last value: a second "model" would
            // silently run another model.
            return fail(JsonFailure::DuplicateKey,
                        "the key \"" + shortened(k) +
                            "\" appears twice in one object (only one value can be meant; JSON "
                            "parsers keep the last silently)");
        }
        top.key = std::move(k);
        return true;
    }
    template <class Exception>
    bool parse_error(std::size_t, const std::string&, const Exception& ex) {
        // 406: a number out of range ("1e999"): name the field it was written in.
        const bool overflow = ex.id == 406;
        return fail(JsonFailure::Syntax,
                    overflow ? std::string("number out of range: ") + plainMessage(ex.what())
                             : std::string("not valid JSON: ") + ex.what());
    }

    const JsonFailure& failure() const { return failure_; }

    // At most `max` characters of `s` (cut at a UTF-8 boundary), "…" when cut: what an error
    // echoes of a value (a 10 MB key was echoed whole).
    static std::string shortened(std::string_view s, std::size_t max = 80) {
        if (s.size() <= max) return std::string(s);
        std::size_t cut = max;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
        return std::string(s.substr(0, cut)) + "\u2026";
    }

private:
    struct Level {
        json* node;
        std::string key;  // objects: the key of the value being read
        bool counted = false;
    };

    static std::string plainMessage(const std::string& what) {
        // "[json.exception.out_of_range.406] number overflow parsing '1e999'" -> the sentence
        const auto close = what.find("] ");
        return close == std::string::npos ? what : what.substr(close + 2);
    }

    // Where the parse is, as a JSON path of at most `levels` levels.
    std::string path(std::size_t levels = SIZE_MAX) const {
        std::string p;
        for (std::size_t i = 0; i < stack_.size() && i < levels; ++i) {
            const Level& l = stack_[i];
            if (l.node->is_array()) {
                p += "[" + std::to_string(l.node->size()) + "]";
            } else {
                if (!p.empty()) p += ".";
                p += l.key.empty() ? std::string("\"\"") : shortened(l.key);
            }
        }
        return shortened(p, 120);
    }

    bool fail(JsonFailure::Kind kind, std::string reason) {
        // Too deep: the top-level field it is in ("lesson"), not 64 levels of path.
        if (failure_.kind == JsonFailure::None)
            failure_ = {kind, std::move(reason),
                        kind != JsonFailure::Depth ? path()
                        : stack_.empty() || stack_.front().node->is_array() ? std::string()
                                                                            : path(1)};
        return false;
    }

    // Places `v` where the parse is (the root, the next array element, the current key's value);
    // nullptr when the counted array is full.
    json* place(json&& v) {
        if (stack_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        Level& top = stack_.back();
        if (top.node->is_array()) {
            if (top.counted && top.node->size() >= limits_.max_items) {
                fail(JsonFailure::TooManyItems,
                     "has more than " + std::to_string(limits_.max_items) + " elements");
                failure_.field = limits_.counted_key;
                return nullptr;
            }
            top.node->push_back(std::move(v));
            // Stays valid while it is open: nothing is added to this array until it is closed.
            return &top.node->back();
        }
        json& slot = (*top.node)[top.key];
        slot = std::move(v);
        return &slot;
    }

    bool value(json&& v) { return place(std::move(v)) != nullptr; }

    bool open(json&& container) {
        if (static_cast<int>(stack_.size()) >= limits_.max_depth)
            return fail(JsonFailure::Depth,
                        "nested more than " + std::to_string(limits_.max_depth) +
                            " levels deep (objects and arrays within each other); refused before "
                            "it is read further");
        const bool counted = !limits_.counted_key.empty() && stack_.size() == 1 &&
                             stack_.back().node->is_object() && stack_.back().key == limits_.counted_key &&
                             container.is_array();
        json* node = place(std::move(container));
        if (!node) return false;
        stack_.push_back({node, {}, counted});
        return true;
    }

    bool close() {
        stack_.pop_back();
        return true;
    }

    json& root_;
    JsonLimits limits_;
    std::vector<Level> stack_;
    JsonFailure failure_;
};

// Parses `text` under `limits`: the value, or a discarded value with *failure filled in.
inline nlohmann::json parseJsonBounded(std::string_view text, JsonFailure* failure = nullptr,
                                       const JsonLimits& limits = {}) {
    nlohmann::json out;
    BoundedJsonBuilder builder(out, limits);
    const bool ok = nlohmann::json::sax_parse(text, &builder);
    if (ok) return out;
    if (failure) *failure = builder.failure();
    return nlohmann::json(nlohmann::json::value_t::discarded);
}

}  // namespace pitlane::protocol
