#pragma once
// One description per record (issue 30): a record type lists its fields once, as a table of
// (JSON name, member, SQL column), and that table drives its JSON codec (protocol events, the
// results JSON), its SQLite columns, inserts and row reads (store/src/record_sql.h), and its
// equality. A record R is described by a function found by argument-dependent lookup:
//
//     inline auto fieldsOf(const R*) { return std::make_tuple(field("pid", &R::pid), ...); }
//
// A field of type std::optional<T> is written only when it holds a value and read as absent when
// its key is missing. Reading: a missing key keeps the member's default; a key of the wrong JSON
// type throws std::exception (readers count and report it; DESIGN.md "Worker protocol").
// No Qt, no torch.
#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace pitlane::protocol::record {

using json = nlohmann::json;

template <class S, class T>
struct Field {
    using Struct = S;
    using Type = T;
    const char* name;      // the JSON key
    T S::*member;
    const char* column;    // the SQLite column (nullptr: the JSON key)
    const char* sqlName() const { return column ? column : name; }
    template <class R>
    auto& of(R& r) const { return r.*member; }
};

// A member of a member (`record.scheduled` of a serving level).
template <class S, class M, class T>
struct NestedField {
    using Struct = S;
    using Type = T;
    const char* name;
    M S::*outer;
    T M::*member;
    const char* column;
    const char* sqlName() const { return column ? column : name; }
    template <class R>
    auto& of(R& r) const { return (r.*outer).*member; }
};

template <class S, class T>
constexpr Field<S, T> field(const char* name, T S::*member, const char* column = nullptr) {
    return {name, member, column};
}

template <class S, class M, class T>
constexpr NestedField<S, M, T> field(const char* name, M S::*outer, T M::*member,
                                     const char* column = nullptr) {
    return {name, outer, member, column};
}

// The record's table (by ADL on a null pointer of its type).
template <class R>
auto fields() {
    return fieldsOf(static_cast<const R*>(nullptr));
}

template <class R, class F>
void forEachField(F&& f) {
    std::apply([&](const auto&... fld) { (f(fld), ...); }, fields<R>());
}

namespace detail {
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};

template <class T>
void put(json& j, const char* key, const T& v) {
    if constexpr (IsOptional<T>::value) {
        if (v) j[key] = *v;
    } else {
        j[key] = v;
    }
}

template <class T>
void get(const json& j, const char* key, T& v) {
    const auto it = j.find(key);
    if (it == j.end()) return;
    if constexpr (IsOptional<T>::value)
        v = it->template get<typename T::value_type>();
    else
        v = it->template get<T>();
}
}  // namespace detail

// Adds every field of `r` to the object `j`.
template <class R>
void write(json& j, const R& r) {
    forEachField<R>([&](const auto& f) { detail::put(j, f.name, f.of(r)); });
}

template <class R>
json toJson(const R& r) {
    json j = json::object();
    write(j, r);
    return j;
}

// Reads every field of `r` present in the object `j`; the others keep their values.
template <class R>
void read(const json& j, R& r) {
    forEachField<R>([&](const auto& f) { detail::get(j, f.name, f.of(r)); });
}

template <class R>
R fromJson(const json& j) {
    R r;
    read(j, r);
    return r;
}

// Field by field, as the table lists them.
template <class R>
bool equal(const R& a, const R& b) {
    bool same = true;
    forEachField<R>([&](const auto& f) { same = same && f.of(a) == f.of(b); });
    return same;
}

// Copies every field of the table from `from` to `to` (the rest of `to` is left as it is).
template <class R>
void copy(const R& from, R& to) {
    forEachField<R>([&](const auto& f) { f.of(to) = f.of(from); });
}

}  // namespace pitlane::protocol::record

// For a described record R nested in another (an optional object field, a list): nlohmann's
// to_json / from_json and ==, through its table. Written in R's namespace.
#define PITLANE_RECORD_OPERATORS(R)                                                           \
    inline void to_json(nlohmann::json& j, const R& r) {                                      \
        j = ::pitlane::protocol::record::toJson(r);                                            \
    }                                                                                          \
    inline void from_json(const nlohmann::json& j, R& r) {                                    \
        if (!j.is_object()) throw std::invalid_argument(#R " must be a JSON object");           \
        r = R{};                                                                               \
        ::pitlane::protocol::record::read(j, r);                                               \
    }                                                                                          \
    inline bool operator==(const R& a, const R& b) {                                          \
        return ::pitlane::protocol::record::equal(a, b);                                       \
    }                                                                                          \
    inline bool operator!=(const R& a, const R& b) { return !(a == b); }
