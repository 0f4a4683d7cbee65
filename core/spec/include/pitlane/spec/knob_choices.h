#pragma once
// The choice knobs' values as enums (spec::Knobs holds these). Their names, as written in presets
// and the results JSON, are the knob table's (knob_table.cpp): each enumerator is the row's
// choice of the same position, so a name is never spelled twice. A test checks that each enum
// and its row have the same number of values. No Qt, no torch.
#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace pitlane::spec {

enum class Mode { Train, Eval };
enum class Grad { Enabled, NoGrad, InferenceMode };
enum class Jit { None, Freeze, FreezeOptimize };
enum class Precision { Fp32, AutocastBf16, AutocastFp16, Half };
enum class MemoryFormat { Contiguous, ChannelsLast };
enum class Allocator { System, Jemalloc, Tcmalloc };
enum class Sandbox { On, Off };
enum class Workload { Inference, TrainStep };
// The affinity knob's placement: a name, or List (the knob is a list of core ids,
// Knobs::affinity_cores; its name is "list", as applied.affinity_policy says).
enum class Affinity { None, Compact, Spread, List };
// An exported program (torch.export.save): run through NativeRT, or compiled by Pitlane into an
// AOTInductor package first (session/compile_step.h).
enum class Compile { None, Aoti };

// Which knob table row names an enum's values.
template <class E>
struct ChoiceKnob {
    static constexpr bool value = false;
};
#define PITLANE_CHOICE_KNOB(E, row, n)                 \
    template <>                                        \
    struct ChoiceKnob<E> {                             \
        static constexpr bool value = true;            \
        static constexpr const char* knob = row;       \
        static constexpr int count = n;                \
    };
PITLANE_CHOICE_KNOB(Mode, "mode", 2)
PITLANE_CHOICE_KNOB(Grad, "grad", 3)
PITLANE_CHOICE_KNOB(Jit, "jit", 3)
PITLANE_CHOICE_KNOB(Precision, "precision", 4)
PITLANE_CHOICE_KNOB(MemoryFormat, "memory_format", 2)
PITLANE_CHOICE_KNOB(Allocator, "allocator", 3)
PITLANE_CHOICE_KNOB(Sandbox, "sandbox", 2)
PITLANE_CHOICE_KNOB(Workload, "workload", 2)
PITLANE_CHOICE_KNOB(Affinity, "affinity", 4)
PITLANE_CHOICE_KNOB(Compile, "compile", 2)
#undef PITLANE_CHOICE_KNOB

template <class E>
using IfChoice = std::enable_if_t<ChoiceKnob<E>::value, int>;

namespace detail {
// The row's choices ("list" appended for affinity); throws std::logic_error when the row and the
// enum disagree (knob_table.cpp).
const std::string& choiceName(const char* knob, int index, int count);
std::optional<int> choiceIndex(const char* knob, const std::string& name, int count);
}  // namespace detail

// The value's name as written in presets ("no_grad").
template <class E, IfChoice<E> = 0>
const std::string& choiceName(E e) {
    return detail::choiceName(ChoiceKnob<E>::knob, static_cast<int>(e), ChoiceKnob<E>::count);
}
// The value of a name; nothing for a name the row does not offer.
template <class E, IfChoice<E> = 0>
std::optional<E> choiceFromName(const std::string& name) {
    const auto i = detail::choiceIndex(ChoiceKnob<E>::knob, name, ChoiceKnob<E>::count);
    return i ? std::optional<E>(static_cast<E>(*i)) : std::nullopt;
}
// A read-back's value (protocol::Applied's knob fields hold the worker's words): `absent` when it
// sent none, nothing for a name this build does not know.
template <class E, IfChoice<E> = 0>
std::optional<E> readBackOf(const std::optional<std::string>& sent) {
    return sent ? choiceFromName<E>(*sent) : std::nullopt;
}
template <class E, IfChoice<E> = 0>
std::optional<E> readBackOf(const std::optional<std::string>& sent, E absent) {
    return sent ? choiceFromName<E>(*sent) : std::optional<E>(absent);
}

// Streams and gtest print the name.
template <class E, IfChoice<E> = 0>
std::ostream& operator<<(std::ostream& os, E e) {
    return os << choiceName(e);
}
// nlohmann's conversions: the name; an unknown name throws std::invalid_argument (values from
// outside are checked first: validateKnob, readWrittenKnobs).
template <class E, IfChoice<E> = 0>
void to_json(nlohmann::json& j, E e) {
    j = choiceName(e);
}
template <class E, IfChoice<E> = 0>
void from_json(const nlohmann::json& j, E& e) {
    const auto v = choiceFromName<E>(j.get<std::string>());
    if (!v)
        throw std::invalid_argument(std::string(ChoiceKnob<E>::knob) + ": unknown value \"" +
                                    j.get<std::string>() + "\"");
    e = *v;
}

}  // namespace pitlane::spec
